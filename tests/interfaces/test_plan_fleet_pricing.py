"""`chipwise plan fleet` and `plan lifecycle` take --pricing and --region as plan serve does (its options, names and
help), and the API's plan_fleet and plan_lifecycle pricing= and region=: the tables and --json name the mode and the
region used; a mode or region the catalog does not know is one line, exit 2."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise import api
from chipwise.errors import ChipwiseError
from cli_run import run, run_error, run_json

FLEET = ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", "examples/chat-mix.yaml", "--hardware", "h100-sxm"]
FLEET += ["--slo", "ttft_p99=2s,tpot_p99=50ms", "--no-replay", "--precision", "bf16"]
LIFECYCLE = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "100G", "--serve-rate", "5"]
LIFECYCLE += ["--hardware", "h100-sxm", "--train-chips", "64", "--serve-months", "6"]
#: p5.48xlarge's 1-year reservation: 52 x 55.04 / 98.32 / 8 = $3.6387 a GPU-hour (tests/planner/test_fleet_pricing)
H100_RESERVED_1Y = 52 * 55.04 / 98.32 / 8


def _out(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert run(argv) == 0
    return " ".join(capsys.readouterr().out.split())  # the title and notes wrap at the terminal's width


def test_plan_fleet_prices_in_the_mode_and_region_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*FLEET, "--pricing", "reserved-1y", "--region", "us-east-2"]
    data = run_json(capsys, [*argv, "--json"])
    assert (data["pricing"], data["region"]) == ("reserved-1y", "us-east-2")
    assert all(f["usd_per_hour"] == pytest.approx(f["chips"] * H100_RESERVED_1Y) for f in data["fleet"])
    out = _out(capsys, argv)
    assert "within ttft_p99 2.00 s, tpot_p99 50.0 ms (reserved-1y prices, us-east-2)" in out
    assert "reserved-1y prices, in us-east-2: p5.48xlarge at aws us-east-1" in out
    assert "priced elsewhere: p5.48xlarge (h100-sxm): no us-east-2 reserved-1y price; us-east-1's" in out
    assert "§ h100-sxm: priced by an estimate, not a published reserved-1y price" in out


def test_plan_fleet_names_the_owned_cost_and_where_it_is_reckoned(capsys: pytest.CaptureFixture[str]) -> None:
    out = _out(capsys, [*FLEET, "--pricing", "owned"])
    assert "(owned prices)" in out
    assert (
        "owned prices, no region chosen: each instance type's owned cost at the owner's default site (country-usa)"
        in out
    )
    assert "§ the owned cost of h100-sxm rests on estimated inputs" in out


def test_plan_fleet_names_what_capacity_blocks_leave_out(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*FLEET[:7], "h100-sxm,mi300x", *FLEET[8:], "--pricing", "capacity-block"]
    out = _out(capsys, argv)
    assert "not considered: mi300x: capacity-block is sold by aws only, and the catalog has no aws price" in out


@pytest.mark.parametrize("command", [FLEET, LIFECYCLE])
@pytest.mark.parametrize(
    ("option", "line"),
    [
        (
            ["--region", "us-east-9"],
            "error: unknown region 'us-east-9'. Did you mean 'us-east-2', 'us-east-1', 'us-east5'? Fix: use a cloud "
            "region (us-east-1), a US state (us-va), a country (country-usa) from the catalog's "
            "datacenter.grid_intensity.",
        ),
        (
            ["--pricing", "cheap"],
            "error: unknown pricing mode 'cheap'. Fix: use one of on-demand, capacity-block, reserved-1y, "
            "reserved-3y, spot, owned.",
        ),
    ],
)
def test_an_unknown_region_or_mode_is_one_line(
    capsys: pytest.CaptureFixture[str], command: list[str], option: list[str], line: str
) -> None:
    assert run_error(capsys, [*command, *option]) == line


@pytest.mark.parametrize("command", ["fleet", "lifecycle"])
def test_the_options_are_plan_serves(capsys: pytest.CaptureFixture[str], command: str) -> None:
    """The same flags and help as plan serve's, read from its own definitions."""
    run(["plan", command, "--help"])
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "--pricing TEXT on-demand, capacity-block, reserved-1y, reserved-3y, spot or owned." in out
    assert "--region TEXT Cloud region for prices and carbon." in out


def test_plan_lifecycle_prices_both_sides_in_the_mode_and_region(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [*LIFECYCLE, "--pricing", "reserved-1y", "--region", "us-east-1"]
    data = run_json(capsys, [*argv, "--json"])
    assert (data["pricing"], data["region"]) == ("reserved-1y", "us-east-1")
    serve = data["best"]["serve"]
    assert serve["usd_per_hour"] == pytest.approx(serve["billed_chips"] * H100_RESERVED_1Y)
    out = _out(capsys, argv)
    assert "then serve 5 req/s for 6 months (ranked by cost, reserved-1y prices, us-east-1)" in out
    assert "reserved-1y prices in us-east-1 (an offer not listed there at its nearest listed price" in out
    assert "both sides' energy and CO2e reckoned at us-east-1" in out
    assert "a reserved-1y reservation is paid every hour of its 8,766 h term" in out


def test_the_api_takes_pricing_and_region() -> None:
    fleet = api.plan_fleet(
        "llama-3.1-8b", "examples/chat-mix.yaml", "ttft_p99=2s,tpot_p99=50ms", "h100-sxm", replay=False,
        precision="bf16", pricing="reserved-1y", region="us-east-1",
    )  # fmt: skip
    assert (fleet["pricing"], fleet["region"], fleet["price_notes"]) == ("reserved-1y", "us-east-1", [])
    assert all(f["usd_per_hour"] == pytest.approx(f["chips"] * H100_RESERVED_1Y) for f in fleet["fleet"])
    life = api.plan_lifecycle(
        "llama-3.1-8b", "100G", 5, 6, "h100-sxm", train_chips=64, pricing="owned", region="us-east-1"
    )
    assert (life["pricing"], life["region"]) == ("owned", "us-east-1")
    assert life["best"]["train"]["cost"] > 0 and life["best"]["serve"]["usd_per_hour"] > 0


@pytest.mark.parametrize(
    ("options", "line"),
    [({"pricing": 5}, "pricing 5 is not text. Fix: give e.g. 'on-demand'."), ({"region": 5}, "region 5 is not text")],
)
def test_the_api_refuses_a_mode_or_region_of_another_type(options: dict[str, Any], line: str) -> None:
    with pytest.raises(ChipwiseError, match=line):
        api.plan_fleet("llama-3.1-8b", "examples/chat-mix.yaml", "ttft_p99=2s", "h100-sxm", replay=False, **options)
    with pytest.raises(ChipwiseError, match=line):
        api.plan_lifecycle("llama-3.1-8b", "100G", 5, 6, "h100-sxm", **options)
