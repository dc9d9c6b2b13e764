"""A training run on a reservation pays its whole term; an owned fleet below full utilisation reports the energy and
carbon of the idle hours its price carries; a ranking by cost where nothing can be priced is one line in every mode."""

from __future__ import annotations

from typing import Any

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.catalog.units import SECONDS_PER_HOUR
from chipwise.errors import ChipwiseError
from chipwise.planner.training import plan_training

HOURS_A_YEAR = 8766.0


def _row(catalog: Catalog, tokens: float, pricing: str, **options: Any) -> dict[str, Any]:
    report = plan_training(catalog, "llama-3.1-8b", 8, ["h100-sxm"], tokens=tokens, pricing=pricing, **options)
    (row,) = report["results"]
    return dict(row)


def test_a_reserved_run_pays_its_hours_and_says_what_the_term_commits(catalog: Catalog) -> None:
    """8 H100s for 43.8 h of Llama-3.1-8B on 10B tokens at p5's reserved-1y rate: the cost is the run's own hours
    ($1,274 ideal), the term's others taken as used by other work, and the record says what the year commits, 8 x
    $3.6387 x 8,766 h = $255,177 (the run had been charged with no word of it). Charging the whole term instead had
    ranked the cheapest hour whatever its speed."""
    row = _row(catalog, 10e9, "reserved-1y")
    rate = row["price_usd_per_chip_hour"]
    assert rate == pytest.approx(52 * 55.04 / 98.32 / 8, rel=1e-9)  # $3.6387: the reservation at today's rate
    assert row["cost_usd"] == pytest.approx(8 * rate * row["time_to_train_s"] / SECONDS_PER_HOUR, rel=1e-9)
    res = row["reservation"]
    assert res["term_s"] == HOURS_A_YEAR * SECONDS_PER_HOUR
    assert res["term_cost_usd"] == pytest.approx(255_177, abs=1)
    assert res["note"] == (
        "a reserved-1y reservation is paid every hour of its 8,766 h term: the cost is the run's own hours at its "
        "rate, the term's others taken as used by other work (the term commits the fleet to its rate for every hour "
        "of it)"
    )


def test_a_run_past_its_reservation_says_it_outlasts_the_term(catalog: Catalog) -> None:
    """3T tokens take 8 H100s ~13,100 h, past a 1-year term: the run's hours at the rate."""
    row = _row(catalog, 3e12, "reserved-1y")
    hours = row["time_to_train_s"] / SECONDS_PER_HOUR
    assert hours > HOURS_A_YEAR
    assert row["cost_usd"] == pytest.approx(8 * row["price_usd_per_chip_hour"] * hours, rel=1e-9)
    assert "the run outlasts it, and pays its own hours at the rate" in row["reservation"]["note"]


def test_a_three_year_reservation_commits_three_years(catalog: Catalog) -> None:
    row = _row(catalog, 10e9, "reserved-3y")
    term = row["reservation"]["term_cost_usd"]
    assert term == pytest.approx(8 * row["price_usd_per_chip_hour"] * 3 * HOURS_A_YEAR, rel=1e-9)


def test_an_owned_fleet_reports_the_idle_hours_its_price_carries(catalog: Catalog) -> None:
    """At utilisation 0.5 the owned price carries, for each hour of the run, an hour of the 8 H100s at idle power
    (700 W x 0.11 + 575 W x 0.25 = 220.75 W a chip, one node: no network) x PUE 1.42; energy_j, the run's own, had
    left them out with no word. Their kWh at $0.0862 is what the price adds over the fixed terms' 1/u."""
    full, half = _row(catalog, 10e9, "owned"), _row(catalog, 10e9, "owned", utilisation=0.5)
    assert "owned_idle_hours" not in full
    idle = half["owned_idle_hours"]
    seconds = half["time_to_train_s"]
    assert idle["idle_s"] == pytest.approx(seconds)
    assert idle["energy_j"] == pytest.approx(220.75 * 1.42 * 8 * seconds, rel=1e-9)
    assert idle["co2e_kg"] == pytest.approx(idle["energy_j"] * half["grid_kg_co2e_per_kwh"] / 3.6e6, rel=1e-9)
    assert half["energy_j"] == pytest.approx(full["energy_j"], rel=1e-12)  # the run's own, as it says
    # the price's extra at u = 0.5: the fixed terms once more (0.8544 + 0.1709 + 0.3213 a chip-hour) and the idle kWh
    extra = 8 * (0.8544 + 0.1709 + 0.3213) * seconds / SECONDS_PER_HOUR + idle["energy_j"] / 3.6e6 * 0.0862
    assert half["cost_usd"] - full["cost_usd"] == pytest.approx(extra, rel=1e-3)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"pricing": "owned"}, "--pricing owned: no unit price for tpu-v5e in the catalog"),
        ({"pricing": "capacity-block"}, "--pricing capacity-block: capacity-block is sold by aws only"),
        ({"provider": "lambda"}, "--provider lambda: the catalog has no lambda on-demand price for tpu-v5e"),
    ],
)
def test_a_cost_ranking_with_nothing_priced_is_one_line_in_every_mode(
    catalog: Catalog, options: dict[str, str], named: str
) -> None:
    """An owned TPU v5e ranked by cost had printed '-' rows and exited 0 where a capacity-block one was refused."""
    with pytest.raises(ChipwiseError) as err:
        plan_training(catalog, "llama-3.1-8b", 64, ["tpu-v5e"], tokens=10e9, objective="cost", **options)  # type: ignore[arg-type]
    text = str(err.value)
    assert text.startswith(f"nothing can be priced with {named}") and "\n" not in text
    assert text.endswith(
        "Fix: choose hardware that can be priced so, drop "
        + options_flag(options)
        + ", or rank by another --objective."
    )


def options_flag(options: dict[str, str]) -> str:
    return "--provider" if "provider" in options else "--pricing"


def test_a_ranking_by_time_with_nothing_priced_says_why_in_every_mode(catalog: Catalog) -> None:
    """A capacity-block TPU v5e ranked by time had been refused where an owned one printed: both rank, '-' cost."""
    for pricing in ("owned", "capacity-block"):
        (row,) = plan_training(catalog, "llama-3.1-8b", 64, ["tpu-v5e"], tokens=10e9, pricing=pricing)["results"]
        assert row["price_usd_per_chip_hour"] is None and row["price_note"]


def test_the_api_refuses_a_cost_ranking_priced_by_nothing_as_of_a_date() -> None:
    line = r"^nothing can be priced with as_of 1990-01: .* Fix: .*drop as_of, or rank by another objective\.$"
    with pytest.raises(ChipwiseError, match=line):
        cw.plan_train("llama-3.1-8b", chips=8, tokens=10e9, hardware="h100-sxm", objective="cost", as_of="1990-01")


def test_the_tables_say_what_a_reserved_or_owned_cost_rests_on(capsys: pytest.CaptureFixture[str]) -> None:
    """The JSON's reservation and idle-hours records are said under plan train's table and in predict's: the table
    had shown a reserved run's cost with no word of the year it commits to."""
    from chipwise.interfaces.cli.app import run

    argv = ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "10e9", "--chips", "8", "--hardware", "h100-sxm",
            "--pricing", "reserved-1y"]  # fmt: skip
    assert run(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "a reserved-1y reservation is paid every hour of its 8,766 h term" in out and "$255,177" in out
    scenario = "{kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, tokens: 10e9, pricing: owned, "
    assert run(["predict", scenario + "utilisation: 0.5}"]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "owned idle hours, ideal 110 kWh" in out and "not in the energy and carbon rows" in out
