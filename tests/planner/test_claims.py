"""`chipwise claims`: all seven claims, each check with numbers and one of the verdicts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.interfaces.cli.app import run
from chipwise.planner.claims import VERDICTS, check_claims


@pytest.fixture(scope="module")
def report(catalog: Catalog) -> dict[str, Any]:
    return check_claims(catalog)


def test_seven_claims_with_verdicts(report: dict[str, Any]) -> None:
    assert [c["claim"] for c in report["claims"]] == [1, 2, 3, 4, 5, 6, 7]
    for c in report["claims"]:
        assert c["made"] and c["workload"] and c["checks"]
        assert c["verdict"] in VERDICTS
        for k in c["checks"]:
            assert k["verdict"] in VERDICTS, k
            assert k["computed"], k
            if k["verdict"] == "cannot be checked":
                assert k["why"], k


def _check(report: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(k for c in report["claims"] for k in c["checks"] if k["id"] == cid)


def test_spec_ratios(report: dict[str, Any]) -> None:
    a = _check(report, "1a")["numbers"]
    assert a["peak_fp8_ratio"] == pytest.approx(144 * 2517 / (64 * 1299))  # 4.36x
    c = _check(report, "1c")["numbers"]
    assert c["capacity_ratio"] == pytest.approx(144 * 144 / (64 * 96))  # 3.375x, not 4x
    assert _check(report, "1c")["verdict"] == "does not hold"
    assert _check(report, "5a")["verdict"] == "holds only at peak specs"  # 4 PF is the sparse figure
    assert _check(report, "4a")["verdict"] == "cannot be checked"  # Trn4 figures are the claim itself
    assert _check(report, "1d")["verdict"] == "rests on estimates"  # Trainium power is not published


def test_claims_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["claims", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["claims"]) == 7


def test_claim7_compares_simulated_serving(report: dict[str, Any]) -> None:
    """Claim 7 runs the serving simulator on 8 H100, 16 Trainium2 and 16 Trainium1 and states the ratios."""
    check = _check(report, "7a")
    n = check["numbers"]
    assert set(n) == {"h100-sxm", "trn2", "trn1"}
    h = n["h100-sxm"]
    for chip in ("trn2", "trn1"):  # both Trainium generations are slower on both latencies
        assert n[chip]["ttft_p50_s"] > h["ttft_p50_s"] and n[chip]["tpot_p50_s"] > h["tpot_p50_s"]
    # 'holds' exactly when no Trainium is clearly (over 10%) cheaper per million tokens than the H100
    cheaper = any(n[c]["usd_per_mtok"] < 0.9 * h["usd_per_mtok"] for c in ("trn2", "trn1"))
    assert check["verdict"] in (("does not hold on this workload",) if cheaper else ("holds", "rests on estimates"))
    ratio = n["trn2"]["ttft_p50_s"] / n["h100-sxm"]["ttft_p50_s"]
    assert f"trn2 {ratio:.2f}x TTFT" in check["why"] and "is an estimate" in check["why"]


def test_claim3_reads_once_and_names_a_price_set_on_the_command_line(report: dict[str, Any]) -> None:
    """The check read 'saving vs vs h100-sxm', and with --set trn3.price=1.0 still called Trn3's price the
    catalog's estimate scaled from Trn2."""
    from chipwise.catalog import load_catalog

    assert "vs vs" not in _check(report, "3a")["computed"]
    assert "a chipwise estimate" in _check(report, "3a")["why"]
    negotiated = _check(check_claims(load_catalog(sets=["trn3.price=1.0"])), "3a")
    assert "set on the command line ($1.000 a chip-hour)" in negotiated["why"]
    assert "estimate" not in negotiated["why"]


def test_claim1_power_thresholds_reproduce_their_targets(report: dict[str, Any]) -> None:
    """1d/1e print the Trn3 TDP that would give 1.4x and 4x the tokens per joule. They took the host as 0.3 of the
    TDP (1,000 W x 0.905 / 1.4 = 646 W), while --set trn3.tdp holds the host at 300 W a chip: set, 646 W gave 1.24x.
    The threshold is solved under --set's rule now, and --set trn3.tdp alone gives the target within 0.5%; 4x is out
    of reach of any TDP."""
    from chipwise.catalog.loader import load_catalog
    from chipwise.planner.claims import _claim1, _Runs

    watts = _check(report, "1d")["numbers"]["trn3_tdp_for_target_w"]
    assert f"<= {watts:,.0f} W per chip for 1.4x" in _check(report, "1d")["why"]
    claim = _claim1(_Runs(load_catalog(sets=[f"trn3.tdp={watts}W"])))
    got = next(c for c in claim.checks if c.id == "1d").numbers["tokens_per_joule_ratio"]
    assert got == pytest.approx(1.4, rel=0.005)
    assert "no Trn3 TDP gives 4x" in _check(report, "1e")["why"]


def test_a_verdict_that_turns_on_an_estimate_says_so(report: dict[str, Any]) -> None:
    """'cannot be checked' was used for 1d/1e (Trainium power not published) while 3a held on an unpublished Trn3
    price estimate, and 3b (48% against a 49.5% cut) and 6a were decided on Trainium's estimated unit price: each now
    rests on estimates, saying which way chipwise's estimates lean and what would decide it."""
    for cid in ("1d", "1e", "3a", "3b", "6a"):
        check = _check(report, cid)
        assert check["verdict"] == "rests on estimates", cid
        assert check["why"].startswith("on chipwise's estimates it would"), cid
    assert "needs Trn3 at <= $" in _check(report, "3a")["why"]
    assert _check(report, "4a")["verdict"] == "cannot be checked"  # the figures are the claim itself


def test_claim5_texts_come_from_the_prices_its_ratios_use() -> None:
    """With --set trn2.price=4.8, 5e's text still read 'on-demand 0.40x' and 'half holds on price' and 5d 'on-demand
    estimate $2.73' (the catalog's cheapest listed price), while the runs were charged $4.80."""
    from chipwise.catalog import load_catalog

    report = check_claims(load_catalog(sets=["trn2.price=4.8"]))
    d, e = _check(report, "5d"), _check(report, "5e")
    assert "on-demand $4.80 [set on the command line]" in d["computed"] and "$2.73" not in d["computed"]
    assert e["numbers"]["price_ratio_od"] == pytest.approx(4.8 / 6.88)
    assert f"= {e['numbers']['price_ratio_od']:.2f}x" in e["computed"] and "half holds on price" not in e["why"]
    assert f"{e['numbers']['per_token_ratio']:.2f}x the H100's cost" in e["why"]


def test_claim7_names_which_trainium_prices_are_estimates(report: dict[str, Any]) -> None:
    """7a said every Trainium on-demand price is an estimate; trn1.32xlarge's $21.50 is AWS's list price."""
    why = _check(report, "7a")["why"]
    assert "trn1's is trn1.32xlarge's list price" in why and "trn2's on-demand price (trn2) is an estimate" in why
    assert "The Trainium on-demand prices are chipwise estimates" not in why
