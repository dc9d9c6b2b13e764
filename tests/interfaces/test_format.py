"""Human-readable latencies at the edge: three significant figures, one unit for a percentile triple."""

from __future__ import annotations

import math
from typing import Any

import pytest

from chipwise.interfaces import format as fmt


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.00085, "850 us"), (0.0267, "26.7 ms"), (0.9503, "950 ms"), (1.3655, "1.37 s"), (196.2, "196 s")],
)
def test_latency_three_significant_figures(seconds: float, text: str) -> None:
    assert fmt.latency(seconds) == text


def test_latency_of_nothing_is_a_dash() -> None:
    assert fmt.latency(None) == fmt.latency(math.inf) == fmt.latency(math.nan) == "-"


def test_percentiles_share_the_unit_of_the_largest() -> None:
    assert fmt.latencies([0.118, 0.3176, 0.95]) == "118 / 318 / 950 ms"
    assert fmt.latencies([0.118, 0.3176, 1.3655]) == "0.118 / 0.318 / 1.37 s"
    assert fmt.latencies([0.0336, None, 0.0377]) == "33.6 / - / 37.7 ms"
    assert fmt.latencies([None, math.nan]) == "-"


def test_percentiles_in_a_given_unit_come_bare() -> None:
    unit = fmt.latency_unit([0.0377, 0.2])
    assert unit == (1e-3, "ms")
    assert fmt.latencies([0.0336, 0.037, 0.0377], unit, sep="/") == "33.6/37.0/37.7"
    assert fmt.latency_unit([]) == (1e-6, "us")


def _report(slo_met: bool | None, keeps_up: bool, kind: str = "rate") -> dict[str, Any]:
    best = {"hardware": "b200>h200", "chips": 3.0, "cost_usd_per_mtok": 0.0654, "slo_met": slo_met,
            "keeps_up": keeps_up, "plan": {"prefill": {"tp": 1, "max_batch": 64, "replicas": 1},
                                           "decode": {"tp": 2, "ep": 2, "max_batch": 128, "replicas": 1}}}  # fmt: skip
    return {"best": best, "load": {"kind": kind}}


def test_plan_serve_verdict_names_the_answer_or_what_to_relax() -> None:
    text, found = fmt.plan_serve_verdict(_report(True, True))
    assert found
    assert text == (
        "Cheapest that meets the SLO in simulation: b200 -> h200, P: TP1 b64 x1 | D: TP2 EP2 b128 x1 "
        "(3 chips, $0.0654 per M output tokens)"
    )
    assert fmt.plan_serve_verdict(_report(None, True, "closed"))[0].startswith("Cheapest per token in simulation")
    assert fmt.plan_serve_verdict(_report(None, True))[0].startswith("Cheapest that keeps up with the load")
    text, found = fmt.plan_serve_verdict(_report(False, False))
    assert not found and "(3 chips, $0.0654 per M output tokens, NOT met, overloaded): relax the SLO" in text
    nothing = "No option could be simulated: add hardware or lower the load"
    assert fmt.plan_serve_verdict({"best": None, "results": [{}]}) == (nothing, False)
    unmet = fmt.plan_serve_verdict({"best": None, "results": [], "slo": {"ttft_p99": 2.0}})
    assert unmet == ("No option meets the SLO at this load on the hardware searched (each chip's reason below)", False)
    unserved = fmt.plan_serve_verdict({"best": None, "results": []})  # no SLO given: nothing fits or keeps up
    assert unserved == ("No option serves this load on the hardware searched (each chip's reason below)", False)


def test_a_missed_ttft_says_whether_its_time_was_the_wait_or_the_prompts() -> None:
    """The closest option missed its TTFT target: mostly waiting to start says more replicas help; mostly its
    prompts' own iterations says a faster prefill does; a TPOT miss alone says neither."""
    report: dict[str, Any] = _report(False, True)
    report["slo"] = {"ttft_p99": 1.0, "tpot_p99": 0.05}
    report["best"]["ttft_s"] = {"mean": 0.9, "p99": 1.6}
    report["best"]["ttft_wait_s"] = {"mean": 0.6}
    text = fmt.plan_serve_verdict(report)[0]
    assert text.endswith("its TTFT is mostly the wait to start (66.7% of the mean): more replicas help")
    report["best"]["ttft_wait_s"] = {"mean": 0.09}
    text = fmt.plan_serve_verdict(report)[0]
    assert "mostly its prompts' own iterations (the wait to start 10.0% of the mean): a faster prefill helps" in text
    report["best"]["ttft_s"] = {"mean": 0.5, "p99": 0.9}
    assert "TTFT is" not in fmt.plan_serve_verdict(report)[0]


def test_a_closed_loop_verdict_says_when_its_users_queue_for_a_first_token() -> None:
    """gpt-oss-120b for 64 users under a TPOT target alone: one MI300X replica of 16 slots meets it while 48 users
    queue for a slot (simulated TTFT p50 14.5 s): the verdict says so, and a TTFT target silences it."""
    report: dict[str, Any] = _report(True, True, "closed")
    report["best"]["ttft_s"] = {"p50": 14.53}
    report["slo"] = {"tpot_p99_s": 0.02}
    text = fmt.plan_serve_verdict(report)[0]
    assert text.endswith("its users wait 14.53 s for a first token (p50): give a TTFT target to size for it)")
    report["slo"] = {"tpot_p99_s": 0.02, "ttft_p99_s": 60.0}
    assert "first token" not in fmt.plan_serve_verdict(report)[0]
    report["best"]["ttft_s"] = {"p50": 0.5}
    report["slo"] = {"tpot_p99_s": 0.02}
    assert "first token" not in fmt.plan_serve_verdict(report)[0]


def test_a_verdict_on_engine_defaults_names_the_cheapest_option_on_fitted_figures() -> None:
    """Gaudi 3 wins on its engine's defaults and an estimated price: the verdict says both and names the cheapest
    simulated option whose figures were fitted (else the ranking's, an estimate)."""
    colocated = {"tp": 4, "max_batch": 128, "replicas": 1}
    best = {
        "hardware": "gaudi3",
        "chips": 2.0,
        "cost_usd_per_mtok": 0.841,
        "slo_met": True,
        "keeps_up": True,
        "engine_defaults": ["gaudi3"],
        "price_estimated": ["gaudi3"],
        "plan": {"both": dict(colocated, tp=2)},
    }
    fitted = {"hardware": "mi325x", "chips": 4.0, "cost_usd_per_mtok": 1.44, "slo_met": True, "keeps_up": True,
              "plan": {"both": colocated}}  # fmt: skip
    report: dict[str, Any] = {"best": best, "load": {"kind": "rate"}, "verified": [best, fitted]}
    text = fmt.plan_serve_verdict(report)[0]
    assert text.endswith(
        "gaudi3 on engine defaults, not fitted; gaudi3 priced by a catalog estimate; cheapest on fitted figures "
        "(simulated): mi325x, TP4 b128 x1, 4 chips, $1.44 per M)"
    )
    report["verified"] = [best, {**fitted, "slo_met": False}]
    report["results"] = [{"hardware": "gaudi3", "engine_defaults": ["gaudi3"]},
                         {**fitted, "chips": 5.0, "plan": colocated, "estimate": {}}]  # fmt: skip
    assert "cheapest on fitted figures (estimated): mi325x, TP4 b128 x1, 5 chips" in fmt.plan_serve_verdict(report)[0]
    best["engine_defaults"] = []
    assert "fitted figures" not in fmt.plan_serve_verdict(report)[0]


def test_a_serving_plan_names_its_scheduler_settings_where_set() -> None:
    plan = {"tp": 8, "ep": 8, "attention_dp": False, "max_batch": 64, "replicas": 1}
    assert fmt.serving_plan(plan) == "TP8 EP8 b64 x1"
    assert fmt.serving_plan({**plan, "recv_interval": 30}) == "TP8 EP8 b64 recv30 x1"
    assert fmt.serving_plan({**plan, "batch_wait_iters": 40, "batch_wait_ratio": 0.8}) == "TP8 EP8 b64 wait40@0.8 x1"


def test_the_answer_says_why_it_wins() -> None:
    """Its chips' hourly cost (per chip-hour where one chip kind), the three largest parts of its steady iteration
    with that iteration's length (40.3 ms, the breakdown's sum), and the next option that also passed; nothing when
    no option passed."""
    best = {
        "hardware": "gaudi3",
        "chips": 2.0,
        "cost_usd_per_hour": 4.54,
        "slo_met": True,
        "keeps_up": True,
        "price_estimated": ["gaudi3"],
        "breakdown": {"gemm": 0.029, "attention": 0.0048, "tp_comm": 0.0035, "overhead": 0.003, "moe": 0.0},
    }
    nxt = {"hardware": "mi325x", "chips": 4.0, "cost_usd_per_hour": 7.8, "slo_met": True, "keeps_up": True}
    report: dict[str, Any] = {"best": best, "verified": [best, nxt], "load": {"kind": "rate"}}  # fmt: skip
    assert fmt.plan_serve_why(report) == (
        "Why gaudi3: 2 chips at $4.54/h ($2.27 per chip-hour, an estimate) carry the load; its steady iteration "
        "(40.3 ms, a decode step with its share of the prompts) goes to weight GEMMs (attention and MLP) 72%, "
        "attention (KV-cache reads, prefill) 12%, tensor-parallel all-reduce 9%. Next that passed: mi325x, 4 chips "
        "at $7.80/h"
    )
    assert fmt.plan_serve_why({**report, "best": {**best, "slo_met": False}}) == ""


def test_a_count_of_chips_reads_as_english() -> None:
    """'1 chips' and '1 chip ... carry the load' were printed."""
    from chipwise.serve.plan import chip_count  # the count format prints with

    assert (chip_count(1), chip_count(8), chip_count(2.5)) == ("1 chip", "8 chips", "2.5 chips")


def test_a_large_fleet_is_counted_in_full() -> None:
    """A fleet sized for 1e9 requests/s printed as '4.57918e+08 chips at $3,150,476,995.84/h'."""
    from chipwise.serve.plan import chip_count  # the count format prints with

    assert chip_count(457_918_000) == "457,918,000 chips"
    assert fmt.serving_fleet({"chips": 1_000_000.0, "hardware": "h100-sxm"}) == "1,000,000 x h100-sxm"
    # the plan columns printed 'TP1 b342 x70531808' and '7.05318e+07', the simulated slice '0.0%'
    plan = {"tp": 1, "max_batch": 342, "replicas": 70_531_808}
    assert fmt.serving_plan(plan) == "TP1 b342 x70,531,808"
    assert (fmt.share(0.25), fmt.share(1.1e-6), fmt.share(1.0)) == ("25.0%", "0.00011%", "100.0%")
    load = {"utilisation": 0.279, "capacity_requests_per_s": 35_795.2}
    assert fmt.load_share(load) == "27.9% of the 35,795 req/s the deployment sustains"
    best = {
        "hardware": "h100-sxm",
        "chips": 1024.0,
        "billed_chips": 1032.0,
        "cost_usd_per_hour": 3250.8,
        "slo_met": True,
        "keeps_up": True,
        "breakdown": {"gemm": 0.02, "attention": 0.0069},
    }
    why = fmt.plan_serve_why({"best": best, "verified": [best], "load": {"kind": "rate"}})
    assert why.startswith("Why h100-sxm: 1,024 chips in 1,032 rented at $3,250.80/h")


def test_a_stated_acceptance_reads_in_the_plan() -> None:
    """Options that differ only in a stated acceptance printed as two identical 'TP2 b16 +EAGLE k3 x1' rows."""
    from chipwise.interfaces.format import serving_plan
    from chipwise.serve.speculation import parse_speculation

    plan = {"tp": 1, "pp": 1, "ep": 1, "attention_dp": False, "max_batch": 16, "replicas": 1}
    stated, prior = parse_speculation("eagle:3@0.99"), parse_speculation("eagle:3")
    assert stated is not None and prior is not None
    assert serving_plan({**plan, "speculative": stated.label()}) == "TP1 b16 +EAGLE k3@0.99 x1"
    assert serving_plan({**plan, "speculative": prior.label()}) == "TP1 b16 +EAGLE k3 x1"


def test_track_record_text_quotes_each_metric_with_its_scope() -> None:
    record = {
        "ttft_s": {"median_ape_pct": 24.4, "median_error_pct": -9.9, "n": 236, "scope": "sglang on blackwell"},
        "tpot_s": {"median_ape_pct": 12.6, "median_error_pct": 3.1, "n": 1233, "scope": "vllm on hopper"},
    }
    text = fmt.track_record_text(record)
    assert text.startswith("Track record: half of the published runs like it read ")
    assert "TTFT within 24% (236 runs, sglang on blackwell); TPOT within 13% (1,233 runs, vllm on hopper)" in text
    assert fmt.track_record_text({}) == ""
    report = fmt.explain_plan_serve({**_report(True, True), "results": [{}]})
    assert report["track_record_text"] == ""  # an option without a record quotes none


def test_track_record_text_says_which_way_a_one_sided_record_leans() -> None:
    """vllm on cdna3's TTFT is predicted low in most runs (median signed error -84%): the one line had read 'within
    84%', as if the misses went both ways. A median of LEAN_PCT or more is quoted with its side, a smaller one not."""
    from chipwise.catalog.track_record import track_record

    record = track_record("serve", ("cdna3", "amd"), "vllm")
    assert {m: r["median_error_pct"] for m, r in record.items()} == {
        "output_tokens_per_s_per_chip": pytest.approx(-1.24, abs=0.01),
        "tpot_s": pytest.approx(-29.92, abs=0.01),
        "ttft_s": pytest.approx(-83.75, abs=0.01),
    }
    assert fmt.track_record_text(record) == (
        "Track record: half of the published runs like it read output tok/s per chip within 12% (88 runs, vllm on "
        "cdna3); TPOT within 30% (25 runs, vllm on cdna3; median -30%: predicted low); TTFT within 84% (21 runs, vllm "
        "on cdna3; median -84%: predicted low) (docs/accuracy.md)"
    )
    high = {"tpot_s": {"median_ape_pct": 20.0, "median_error_pct": 10.0, "n": 12, "scope": "any engine on x"}}
    assert "TPOT within 20% (12 runs, any engine on x; median +10%: predicted high)" in fmt.track_record_text(high)


def test_absurd_magnitudes_read_in_powers_of_ten() -> None:
    """1e30 training tokens printed '1,000,000,000,000,000,000 T tokens', '499429707884454336.00 y' and
    '41,203,163,769,425,568 GWh': past a million of the largest unit a figure reads in powers of ten."""
    year = 365.25 * 86400
    assert (fmt.duration(5 * year), fmt.duration(4991 * year), fmt.duration(4.99e9 * year)) == (
        "5.00 y",
        "4,991 y",
        "4.99e+09 y",
    )
    assert (fmt.usd(4.2e9), fmt.usd(2.5e12), fmt.usd(3e16)) == ("$4.20B", "$2.50T", "$3.00e+16")
    assert (fmt.count(1e30), fmt.count(1.5e13)) == ("1e+30", "15.0 T")
    assert fmt.energy(9e24) == "2.5e+09 TWh" and fmt.energy(1.8e10) == "5.00 MWh"
    # a year of a billion requests/s: TWh and Mt, not '685,789 GWh' beside '1.27e+06 GWh', or '246,896 kt'
    assert (fmt.energy(685_789e6 * 3.6e6), fmt.carbon(246_896e6)) == ("686 TWh", "247 Mt CO2e")


def test_a_ratio_figure_reads_bare() -> None:
    """--sources printed engines.vllm.memory_fraction as '0.9 1': a ratio's unit '1' is left off."""
    assert fmt.figure_value({"value": 0.9, "unit": "1"}) == "0.9"
    assert fmt.figure_value({"value": 5.3, "unit": "TB/s"}) == "5.3 TB/s"


def test_a_figure_reads_as_the_catalog_writes_it() -> None:
    """--sources wrote f['value'] as Python prints a float, '21.560000000000002 TB/s' (19.6 x 1.1)
    beside the WHAT-IF banner's 21.56, and '144.0 GiB' where `catalog show` writes 144 GiB."""
    assert fmt.figure_value({"value": 19.6 * 1.1, "unit": "TB/s"}) == "21.56 TB/s"
    assert fmt.figure_value({"value": 144.0, "unit": "GiB"}) == "144 GiB"
    assert fmt.figure_value({"value": 0.1 + 0.2, "unit": "1"}) == "0.3"
    assert fmt.figure_value({"value": "HBM3e", "unit": ""}) == "HBM3e"  # a text figure as given
    assert fmt.value_text(6e12, "B/s") == "6000000000000 B/s" and fmt.value_text(2.5e15, "FLOP/s") == "2.5e+15 FLOP/s"


def test_per_mtok_keeps_three_figures_past_a_billion() -> None:
    assert fmt.per_mtok(2.0777e29) == "2.08e+29"
    assert fmt.per_mtok(1234.5) == "1,234.50" and fmt.per_mtok(0.000357) == "0.000357"


@pytest.mark.parametrize(
    ("pricing", "note"),
    [
        ("spot", "§ h100-sxm, trn1: priced by an estimate, not a published spot price of the system's provider"),
        (
            "on-demand",
            "§ h100-sxm, trn1: priced by an estimate, not a published on-demand price of the system's provider",
        ),
        ("", "§ h100-sxm, trn1: priced by an estimate, not a published rental price of the system's provider"),
    ],
)
def test_the_estimate_footnote_says_what_the_estimate_stands_in_for(pricing: str, note: str) -> None:
    """It had said 'no rental offer in the catalog for h100-sxm' under spot pricing, though the catalog lists GCP's
    H100 spot price: AWS's p5 takes its own provider's spot price only, here on-demand x the spot ratio."""
    assert fmt.estimate_note(["h100-sxm", "trn1", "h100-sxm"], "price_estimates", pricing) == (
        f"{note} (--json: price_estimates gives its derivation)"
    )
