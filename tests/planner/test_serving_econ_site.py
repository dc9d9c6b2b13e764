"""A serving deployment's economics: why a pool has no price, the site its energy is reckoned at (PUE, region, grid,
with their sources), and energy at idle power for the share of the hour its replicas wait for requests."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.power import power_model
from chipwise.hardware import Hardware
from chipwise.planner.serving_economics import economics
from chipwise.planner.serving_predict import predict_serving
from chipwise.serve.sim.run import SimOutput
from chipwise.serve.simulate import Pool
from scenario_kinds import serve_scenario

SCENARIO = (
    "kind: serve\nmodel: llama-3.1-8b\nhardware: {hw}\nchips: {chips}\nprecision: bf16\ninput_tokens: 512\n"
    "output_tokens: 64\narrival_rate: 0.5\nrequests: 40\n{extra}"
)


def _predict(catalog: Catalog, hw: str, chips: int, extra: str = "") -> dict[str, Any]:
    return predict_serving(catalog, serve_scenario(SCENARIO.format(hw=hw, chips=chips, extra=extra)))


def test_an_unpriced_deployment_says_why(catalog: Catalog) -> None:
    """Owned TPU v5e (no unit price) and a Capacity Block asked of Lambda (AWS sells them) printed '-/h' with no
    reason and an empty price_sources."""
    owned = _predict(catalog, "tpu-v5e", 4, "pricing: owned\n")
    assert "no unit price for tpu-v5e" in owned["price_note"]
    lambda_cb = _predict(catalog, "h100-sxm", 1, "provider: lambda\npricing: capacity-block\n")
    assert lambda_cb["price_sources"] == [] and "sold by aws only, not by lambda" in lambda_cb["price_note"]


def test_the_cost_row_prints_the_reason(catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    from chipwise.interfaces.cli.serve_views import print_serving

    print_serving(_predict(catalog, "tpu-v5e", 4, "pricing: owned\n"))
    cells = [line.split("│")[2].strip() for line in capsys.readouterr().out.splitlines() if line.count("│") >= 3]
    assert "(no price: tpu-v5e-256: no unit price for tpu-v5e in the catalog" in " ".join(cells)


def test_serving_reports_its_site_and_its_figures(catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    """Serving predict --json had no pue, region or grid intensity, and --sources listed no PUE, grid or power
    figures, where training reports them. A GB200 priced in AWS's Dallas Local Zone runs on Texas's grid."""
    r = _predict(catalog, "h100-sxm", 1)
    assert (r["region"], r["pue"]) == ("us-east-1", pytest.approx(1.15))
    assert r["grid_kg_co2e_per_kwh"] == pytest.approx(0.379)
    figures = r["economics_figures"]
    for key in ("datacenter.pue.aws", "datacenter.grid_intensity.us-east-1", "datacenter.opex.idle_power_fraction",
                "datacenter.opex.utilisation_power_fraction", "datacenter.opex.host_idle_power_fraction"):  # fmt: skip
        assert key in figures, key
    from chipwise.interfaces.cli.serve_views import print_serving

    print_serving(r, sources=True)
    out = capsys.readouterr().out
    assert "datacenter.pue.aws" in out and "PUE 1.15" in out
    gb200 = _predict(catalog, "gb200", 4)
    assert gb200["region"] == "us-tx" and gb200["price_sources"][0]["region"] == "us-east-1-dfw"


def test_energy_mixes_busy_and_idle_power_by_the_runs_busy_share(catalog: Catalog, hw: Hardware) -> None:
    """Eight H100s at 0.2 requests/s were charged 8 x 1,020 W x PUE all hour: a pool busy a share b of the run
    draws P_busy b + P_idle (1 - b), the busy share measured by the simulator (busy_shares)."""
    from chipwise.planner.serving_economics import busy_shares

    system = hw.system("p5.48xlarge")
    pools = [Pool(SimpleNamespace(system=system, chips=1.0), 8)]  # type: ignore[arg-type]
    full = economics(catalog, pools, 100.0, 500.0)
    light = economics(catalog, pools, 100.0, 500.0, busy=[0.1])
    p = power_model(catalog, system, scaleout=False)
    assert full["energy_j_per_hour"] == pytest.approx(8 * p.busy_w * 3600 * 1.15)
    assert light["energy_j_per_hour"] == pytest.approx(8 * (0.1 * p.busy_w + 0.9 * p.idle_w) * 3600 * 1.15)
    assert light["busy_share"] == pytest.approx(0.1) and light["busy_share_basis"].startswith("simulated")
    assert full["busy_share_basis"].startswith("not measured")
    out = SimOutput(
        requests={},
        replicas=[
            {"role": "prefill", "busy_s": 9.0},
            {"role": "decode", "busy_s": 2.0},
            {"role": "decode", "busy_s": 4.0},
        ],
        last_admit=0.0,
        end=10.0,
        wall_s=0.0,
        closed_loop=False,
        roles=["prefill", "decode"],
    )
    assert busy_shares(out) == pytest.approx([0.9, 0.3])


def test_a_lightly_loaded_deployment_is_charged_idle_power_while_it_waits(catalog: Catalog, hw: Hardware) -> None:
    """`predict` passes the simulated busy share to the economics: 0.5 requests/s on eight H100s keeps them busy a
    small share of the run, and energy per hour lies between all-idle and all-busy, near idle."""
    r = _predict(catalog, "h100-sxm", 8)
    p = power_model(catalog, hw.system("p5.48xlarge"), scaleout=False)
    assert r["busy_share_basis"].startswith("simulated") and 0 < r["busy_share"] < 0.2
    busy_h, idle_h = (8 * w * 3600 * r["pue"] for w in (p.busy_w, p.idle_w))
    assert idle_h < r["energy_j_per_hour"] < idle_h + 0.2 * (busy_h - idle_h)


def test_plan_serve_says_why_a_fleet_has_no_owned_price(catalog: Catalog) -> None:
    """`plan serve --pricing owned` listed TPU v5e at '-' with only 'no owned price'."""
    from chipwise.planner.serving_plan import plan_serving
    from chipwise.workload.load import Load

    report = plan_serving(
        catalog, "llama-3.1-8b", ["h100-sxm", "tpu-v5e"], Load("rate", rate=2.0), 512, 64, pricing="owned", verify=0
    )
    assert "no unit price for tpu-v5e" in " ".join(report["unpriced"].values())


def test_a_provider_with_owned_pricing_is_refused(catalog: Catalog) -> None:
    """An owned serving fleet rents from no one: a provider with it had been dropped in silence."""
    from chipwise.errors import ChipwiseError

    with pytest.raises(ChipwiseError, match="provider lambda chooses whom chips are rented from"):
        _predict(catalog, "h100-sxm", 1, "pricing: owned\nprovider: lambda\n")


def test_an_unpriced_fleet_runs_at_the_site_of_the_provider_asked_for() -> None:
    """Capacity blocks from Lambda have no price in the catalog: the fleet is unpriced, and its energy had been
    reckoned at the system's own provider's site (AWS, PUE 1.15) instead of the colocation facility a provider
    without a PUE of its own runs in (1.42), as training reckons it."""
    import chipwise.api as cw

    scenario = {
        "kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8, "input_tokens": 1024,
        "output_tokens": 256, "arrival_rate": 0.2, "requests": 200, "pricing": "capacity-block", "provider": "lambda",
    }  # fmt: skip
    assert cw.predict(scenario)["pue"] == 1.42
    assert cw.predict({**scenario, "pricing": "on-demand", "provider": "aws"})["pue"] == 1.15
