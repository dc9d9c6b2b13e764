"""A training run on a reservation pays its whole term; an owned fleet below full utilisation reports the energy and
carbon of the idle hours its price carries; a ranking by cost where nothing can be priced is one line in every mode."""

from __future__ import annotations

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.catalog.units import SECONDS_PER_HOUR
from chipwise.errors import ChipwiseError
from chipwise.planner.training import plan_training

HOURS_A_YEAR = 8766.0


def _row(catalog: Catalog, tokens: float, pricing: str, **options: object) -> dict[str, object]:
    (row,) = plan_training(catalog, "llama-3.1-8b", 8, ["h100-sxm"], tokens=tokens, pricing=pricing, **options)[
        "results"
    ]  # type: ignore[arg-type]
    return row


def test_a_run_shorter_than_its_reservation_pays_the_term(catalog: Catalog) -> None:
    """8 H100s for 43.8 h of Llama-3.1-8B on 10B tokens had been charged 43.8 h at p5's reserved-1y rate, $1,274
    ideal ($1,304 expected, beside $2,466 on demand), where the year committed to costs 8 x $3.6387 x 8,766 h =
    $255,177."""
    row = _row(catalog, 10e9, "reserved-1y")
    rate = row["price_usd_per_chip_hour"]
    assert rate == pytest.approx(52 * 55.04 / 98.32 / 8, rel=1e-9)  # $3.6387: the reservation at today's rate
    assert row["time_to_train_s"] < HOURS_A_YEAR * SECONDS_PER_HOUR
    assert row["cost_usd"] == pytest.approx(8 * rate * HOURS_A_YEAR, rel=1e-9)
    assert row["cost_usd"] == pytest.approx(255_177, abs=1)
    # the expected run pays its spares (2% of the 8 chips) for the term too
    assert row["expected_cost_usd"] == pytest.approx(8 * 1.02 * rate * HOURS_A_YEAR, rel=1e-9)
    res = row["reservation"]
    assert res["term_s"] == res["paid_s"] == HOURS_A_YEAR * SECONDS_PER_HOUR
    assert res["note"].startswith("the whole reserved-1y term (8,766 h) is paid, the run being shorter")
    # the energy is the run's own, as on demand
    assert row["energy_j"] == pytest.approx(_row(catalog, 10e9, "on-demand")["energy_j"], rel=1e-12)


def test_a_run_past_its_reservation_pays_its_own_hours(catalog: Catalog) -> None:
    """3T tokens take 8 H100s ~13,100 h, past a 1-year term: the run's hours at the rate, as before."""
    row = _row(catalog, 3e12, "reserved-1y")
    hours = row["time_to_train_s"] / SECONDS_PER_HOUR
    assert hours > HOURS_A_YEAR
    assert row["cost_usd"] == pytest.approx(8 * row["price_usd_per_chip_hour"] * hours, rel=1e-9)
    assert (
        row["reservation"]["note"]
        == "the run outlasts the reserved-1y term: its hours are paid at the reservation's rate"
    )


def test_a_three_year_reservation_pays_three_years(catalog: Catalog) -> None:
    row = _row(catalog, 10e9, "reserved-3y")
    assert row["cost_usd"] == pytest.approx(8 * row["price_usd_per_chip_hour"] * 3 * HOURS_A_YEAR, rel=1e-9)


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
    had shown $260k for a 44-hour run with no word of the year it pays for."""
    from chipwise.interfaces.cli.app import run

    argv = ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "10e9", "--chips", "8", "--hardware", "h100-sxm",
            "--pricing", "reserved-1y"]  # fmt: skip
    assert run(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the whole reserved-1y term (8,766 h) is paid, the run being shorter" in out
    scenario = "{kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, tokens: 10e9, pricing: owned, "
    assert run(["predict", scenario + "utilisation: 0.5}"]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "owned idle hours, ideal 110 kWh" in out and "not in the energy and carbon rows" in out
