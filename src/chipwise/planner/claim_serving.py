"""Claim 7, on serving (planner.claims): that earlier Trainium generations lagged the H100 in latency and in $ per
million tokens serving a 70B model, checked with chipwise's serving simulator on one fleet of each."""

from __future__ import annotations

import math
from typing import Any

from chipwise.catalog.overrides import SET_ON_COMMAND_LINE, USER_PROVIDER
from chipwise.economics.pricing import PriceQuote
from chipwise.errors import ChipwiseError
from chipwise.planner.claim_runs import CLAIM_MODEL, ClaimRuns, charged_price, plan_reason
from chipwise.planner.claim_verdicts import (
    ESTIMATED,
    HOLDS,
    LAUNCH_COVERAGE,
    NOT_ON_WORKLOAD,
    UNCHECKABLE,
    Check,
    Claim,
)
from chipwise.planner.claim_wording import price_is_estimate, times
from chipwise.planner.serving_predict import predict_serving
from chipwise.workload.scenario import load_scenario
from chipwise.workload.serve_scenario import ServeScenario

COST_TIE = 0.10  # $/Mtok ratios this close to 1 are a tie: the model's throughput and some prices are estimates
SERVE_SCENARIO = (
    "kind: serve\nmodel: {model}\nhardware: {hw}\nchips: {chips}\nprecision: bf16\ninput_tokens: 1024\n"
    "output_tokens: 256\nconcurrency: 32\nrequests: 256\npricing: {pricing}\n"
)


def serve(runs: ClaimRuns, text: str) -> dict[str, Any]:
    """The serving simulator's prediction for a scenario of the claims (`text`: YAML), at the workload's region."""
    region = runs.workload.region
    scenario = load_scenario(text + (f"region: {region}\n" if region else ""))
    assert isinstance(scenario, ServeScenario)  # kind: serve
    try:
        return predict_serving(runs.catalog, scenario)
    finally:
        runs.counted()


def _rate(quote: PriceQuote) -> str:
    """'its published $2.235 a chip-hour' or 'its $1.500 a chip-hour set on the command line' (a price the user gives
    is no estimate, and not published either: --set trn2.price.capacity-block=1.5 had read 'its published $1.500')."""
    if quote.provider == USER_PROVIDER:
        return f"its ${quote.usd_per_chip_hour:.3f} a chip-hour {SET_ON_COMMAND_LINE}"
    return f"its published ${quote.usd_per_chip_hour:.3f} a chip-hour"


def claim7_serving(runs: ClaimRuns) -> Claim:
    """Claim 7, earlier Trainium lagged the H100 serving (7a): p50 TTFT, TPOT and $/Mtok of one fleet of each, from the
    serving simulator."""
    fleets = (("h100-sxm", 8), ("trn2", 16), ("trn1", 16))
    head = (
        "Earlier Trainium generations lagged the H100 in latency and cost-effectiveness for serving "
        "(TTFT/TPOT and $/million tokens for a 70B model)."
    )
    work = runs.workload
    pricing = work.pricing if work.pricing != "owned" else "on-demand"  # a rented fleet's $/Mtok, as the claim's
    workload = (
        f"{work.label(CLAIM_MODEL)} serving, bf16, 1,024 in / 256 out tokens, 32 concurrent users; 8 x H100 vs one "
        "trn2.48xlarge (16 Trainium2) and one trn1.32xlarge (16 Trainium1)"
        + (f"; {work.pricing_text()}" if work.pricing != "on-demand" or work.region else "")
        + (
            "; the serving load is the claim's (--seq-len, --precision, --chips and --tokens are training's)"
            if work.given
            else ""
        )
    )
    results: dict[str, dict[str, Any]] = {}
    errors: dict[str, str] = {}
    for hw_id, chips in fleets:
        try:
            text = SERVE_SCENARIO.format(model=work.model_or(CLAIM_MODEL), hw=hw_id, chips=chips, pricing=pricing)
            results[hw_id] = serve(runs, text)
        except ChipwiseError as exc:
            errors[hw_id] = plan_reason(str(exc))
    if "h100-sxm" not in results or not (set(results) - {"h100-sxm"}):
        why = "; ".join(f"{k}: {v}" for k, v in errors.items()) or "no result"
        return Claim(
            7, head, [LAUNCH_COVERAGE], workload, [Check("7a", "lagged H100", "-", UNCHECKABLE, f"serving: {why}")]
        )

    def fig(r: dict[str, Any], key: str) -> float:
        v = r.get(key)
        if isinstance(v, dict):
            v = v.get("p50")
        return float(v) if isinstance(v, int | float) else math.nan

    keys = {"ttft": "ttft_s", "tpot": "tpot_s", "usd": "cost_usd_per_mtok"}
    base = {m: fig(results["h100-sxm"], k) for m, k in keys.items()}
    parts, ratios, ties, prices = [], [], [], []
    lags: dict[str, bool] = {}
    at_published: dict[str, bool] = {}  # the lag with an estimated on-demand price replaced by a published one
    numbers: dict[str, Any] = {}

    def lagging(x: dict[str, float]) -> bool:
        """Slower on both latencies and clearly dearer: a tie on cost (within COST_TIE either way) is no lag, as it is
        no lead (5% cheaper per Mtok had counted as lagging, the why itself calling it a tie)."""
        return x["ttft"] > 1.0 and x["tpot"] > 1.0 and x["usd"] > 1.0 + COST_TIE

    # the H100's own capacity-block rate over its on-demand one: a Trainium at its published capacity-block rate is
    # set against the H100 at its own, one pricing mode for both sides as 5e's are (trn2's $2.235 had been set
    # against the H100's $6.88 on demand: 1.52x the H100's $/Mtok, where at both capacity-block rates it is 2.02x)
    h100_cb, h100_od = charged_price(runs, "h100-sxm", "capacity-block"), charged_price(runs, "h100-sxm", "on-demand")
    h100_cb_usd = h100_cb.usd_per_chip_hour if h100_cb is not None else math.nan
    h100_scale = h100_cb_usd / h100_od.usd_per_chip_hour if h100_od and h100_od.usd_per_chip_hour > 0 else math.nan
    for hw_id, r in results.items():
        v = {m: fig(r, k) for m, k in keys.items()}
        numbers[hw_id] = {"ttft_p50_s": v["ttft"], "tpot_p50_s": v["tpot"], "usd_per_mtok": v["usd"]}
        parts.append(f"{hw_id}: TTFT {v['ttft'] * 1e3:,.0f} ms, TPOT {v['tpot'] * 1e3:,.1f} ms, ${v['usd']:.2f}/Mtok")
        source = (r.get("price_sources") or [None])[0]
        entry = source.get("entry", hw_id) if isinstance(source, dict) else hw_id
        if price_is_estimate(source):
            prices.append(f"{hw_id}'s {pricing} price ({entry}) is an estimate")
        elif isinstance(source, dict) and source.get("provider") == USER_PROVIDER:
            prices.append(f"{hw_id}'s is set on the command line")
        else:
            prices.append(f"{hw_id}'s is {entry}'s list price")
        if hw_id == "h100-sxm":
            continue
        x = {m: v[m] / base[m] for m in keys}
        ratios.append(f"{hw_id} {times(x['ttft'])} TTFT, {times(x['tpot'])} TPOT, {times(x['usd'])} $/Mtok")
        lags[hw_id] = lagging(x)
        if abs(x["usd"] - 1.0) <= COST_TIE:
            ties.append(hw_id)
        od = r.get("cost_usd_per_hour")
        cb = charged_price(runs, hw_id, "capacity-block")
        if (
            price_is_estimate(source)
            and cb is not None
            and not price_is_estimate(cb.record())
            and isinstance(od, int | float)
            and math.isfinite(h100_scale)
        ):
            # its published capacity-block rate in place of the estimated on-demand one, against the H100's
            # capacity-block rate: $/Mtok scales with the price on both sides
            quote = charged_price(runs, hw_id, "on-demand")
            scale = cb.usd_per_chip_hour / quote.usd_per_chip_hour if quote and quote.usd_per_chip_hour > 0 else 1.0
            at_cb = x["usd"] * scale / h100_scale
            at_published[hw_id] = lagging({**x, "usd": at_cb})
            prices[-1] += (
                f"; at capacity-block rates for both ({_rate(cb)}, the H100's ${h100_cb_usd:.3f}"
                + (f" {SET_ON_COMMAND_LINE}" if h100_cb is not None and h100_cb.provider == USER_PROVIDER else "")
                + f") it is {times(at_cb)} the H100's $/Mtok"
            )
    verdict = HOLDS if lags and all(lags.values()) else NOT_ON_WORKLOAD
    other = HOLDS if lags and all({**lags, **at_published}.values()) else NOT_ON_WORKLOAD
    if other != verdict:  # an estimated price decides it
        verdict = ESTIMATED
    tie = f"; {', '.join(ties)} within {COST_TIE:.0%} of the H100 per Mtok, a tie on cost-effectiveness" if ties else ""
    why = (
        f"p50 latencies from the serving simulator, {pricing} $/Mtok; against the H100: {'; '.join(ratios)}{tie}. "
        f"Prices: {'; '.join(prices)}"
        + ("; not run: " + "; ".join(f"{k}: {v}" for k, v in errors.items()) if errors else "")
    )
    return Claim(
        7,
        head,
        [LAUNCH_COVERAGE],
        workload,
        [Check("7a", "lagged H100 in latency and $/Mtok", "; ".join(parts), verdict, why, numbers)],
    )
