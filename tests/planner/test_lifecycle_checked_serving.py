"""plan lifecycle's serving side is plan serve's answer (simulated, splits allowed), and its rows name the system."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import InfeasibleError
from chipwise.planner.lifecycle import plan_lifecycle
from chipwise.planner.serving_plan import plan_serving
from chipwise.workload.load import Load

SLO = {"ttft_p99": 2.0, "tpot_p99": 0.05}


def test_the_serving_fleet_is_plan_serves_simulated_answer(catalog: Catalog) -> None:
    """Llama 3.1 70B at 50 req/s on Gaudi3: the lifecycle priced the steady-state estimate's 20 chips in one pool
    ($45.40/hour), which plan serve's simulated check resizes to 24; plan serve answers a Gaudi3 prefill/decode split
    on 18 chips ($40.86/hour), which the lifecycle could not consider."""
    r = plan_lifecycle(catalog, "llama-3.1-70b", 1e11, 50.0, 12.0, ["gaudi3"], train_chips=256, slo=SLO)
    ps = plan_serving(catalog, "llama-3.1-70b", ["gaudi3"], Load("rate", rate=50.0), 1024, 256, slo=SLO,
                      precision="fp8")  # fmt: skip
    answer = ps["best"]
    assert answer["keeps_up"] and answer["slo_met"]
    serve = r["best"]["serve"]
    assert (serve["hardware"], serve["chips"]) == (answer["hardware"], answer["chips"])  # gaudi3>gaudi3, 18
    assert serve["usd_per_hour"] == pytest.approx(answer["cost_usd_per_hour"])
    assert (serve["system"], serve["plan"]) == (answer["system"], answer["plan"])
    assert r["serve_answer"] == answer["system"]
    # every serving fleet priced met the SLO in plan serve's simulated check
    for p in r["top"]:
        assert p["serve"]["simulated"]["slo_met"] is True


def test_a_split_serving_fleet_is_energy_of_both_pools(catalog: Catalog) -> None:
    """A split's energy an hour is its two pools', each chips x [busy power x its busy share + idle power x the
    rest] x PUE (plan serve's convention, the lifecycle's too): between idle and busy power all hour."""
    r = plan_lifecycle(catalog, "llama-3.1-70b", 1e11, 50.0, 12.0, ["gaudi3"], train_chips=256, slo=SLO)
    split = next(p["serve"] for p in r["top"] if p["serve"]["disaggregated"])
    one = next(p["serve"] for p in r["top"] if not p["serve"]["disaggregated"])
    # same system, same site and no scale-out network past one 8-chip node either way: the same per-chip bounds,
    # idle and busy all hour (the lifecycle had charged busy power all hour, whatever the load)
    from chipwise.economics.power import power_model
    from chipwise.hardware import hardware
    from chipwise.planner.serving_economics import chip_hour_price, serving_site

    system = hardware(catalog).system(one["system"])
    power = power_model(catalog, system, scaleout=True)
    pue = serving_site(catalog, system, "on-demand", chip_hour_price(catalog, system, "on-demand", None, None)[2]).pue
    for s in (split, one):
        # busy all hour, with the scale-out network's power where the fleet passes one 8-chip node
        busy_all_hour = float(s["chips"]) * power.busy_w * 3600.0 * pue.value
        share = s["energy_j_per_hour"] / busy_all_hour
        assert power.idle_w / power.busy_w < share <= 1.0 + 1e-9


def test_lifecycle_rows_name_the_system(catalog: Catalog, capsys: pytest.CaptureFixture[str]) -> None:
    """Two H100 systems (p5.48xlarge, Azure's ND H100 v5) gave four rows all reading 'h100-sxm' on both sides at
    different prices, and the JSON had no system."""
    from chipwise.interfaces.cli.plan_fleet_cmd import print_lifecycle

    hw = ["p5.48xlarge", "azure-nd-h100-v5"]
    r = plan_lifecycle(catalog, "llama-3.1-8b", 1e12, 5.0, 12.0, hw, train_chips=64, slo=SLO)
    for p in r["top"]:
        assert p["train"]["system"] in hw
        assert all(s in hw for s in p["serve"]["system"].split(">"))
    capsys.readouterr()
    print_lifecycle(r)
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line[:1] == "#" and line[1:2].isdigit() and " is the best" not in line]
    # the system, where a chip has two (a long one folds on an 80-column terminal)
    assert len(rows) == min(6, len(r["top"])) and all(any(s.startswith(row.split()[1]) for s in hw) for row in rows)
    assert rows[0].split()[1] == r["top"][0]["train"]["system"] == "p5.48xlarge"


def test_a_serving_side_whose_checks_all_miss_says_so(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where plan serve ranks options but none of its simulated checks meets the SLO, the lifecycle prices none of
    them and says why (it had priced the estimate's fleet)."""
    from chipwise.planner import lifecycle, serving_plan

    real = serving_plan.plan_serving  # what lifecycle calls

    def missing(*args: object, **kwargs: object) -> dict[str, object]:
        report = real(*args, **kwargs)  # type: ignore[arg-type]
        for v in report["verified"]:
            v["slo_met"] = False
            v["ttft_s"] = {**v["ttft_s"], "p99": 9.0}
        return report

    monkeypatch.setattr(lifecycle, "plan_serving", missing)
    with pytest.raises(InfeasibleError, match=r"^the serving side fails: .*none of the options plan serve simulated "
                                              r"meets the SLO \(the closest, .*, missing ttft_p99\)"):  # fmt: skip
        plan_lifecycle(catalog, "llama-3.1-8b", 1e11, 5.0, 12.0, ["h100-sxm"], train_chips=64, slo=SLO)
