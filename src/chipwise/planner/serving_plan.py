"""`chipwise plan serve`: for every chip asked for, the cheapest replica shape and count that meets the SLO at the
load (steady-state estimates over every candidate, serve.search), the throughput-latency Pareto front, and
prefill/decode-disaggregated pool splits (also across two chip types); the cheapest options are then simulated
and sized up until the simulation meets the SLO."""

from __future__ import annotations

import json
import math
import multiprocessing
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.economics.pricing import catalog_estimate, check_mode
from chipwise.economics.providers import network_gap
from chipwise.economics.rental import filled
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.planner.serving import (
    PREFILL_SIZING_LOAD,
    STEADY_WAVES,
    choose_any,
    delivered_share,
    drafting_for,
    engine_carried,
    engine_fitted_on,
    fleet_problem,
    keeps_up,
    kv_path,
    precisions,
    prefill_replicas,
    served_tokens,
    serving_track_record,
    speculation_options,
    stat_ok,
    steady_breakdown,
    transfer_dict,
    whole_count,
)
from chipwise.planner.serving_choice import PREFILL_POOL_BATCH, Choice, check_slo, decode_targets, engine_for
from chipwise.planner.serving_economics import (
    busy_shares,
    chip_hour_price,
    economics,
    per_mtok,
    price_note,
    priced_system,
    rented_chips,
)
from chipwise.serve.build import setup_replica
from chipwise.serve.disaggregated import KVTransfer
from chipwise.serve.engine import (
    EngineProfile,
    check_engine_model,
    check_engine_name,
    engine_profile,
    token_budget,
)
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.quant import (
    KV_PRECISIONS,
    check_precision,
    check_weight_precision,
)
from chipwise.serve.search import BATCHES, Estimate, pareto, slot_wait
from chipwise.serve.sim.arrivals import offered_request_rate
from chipwise.serve.sim.policies import check_router
from chipwise.serve.simulate import Pool, ServingSetup, load_against_capacity, mean_prompt_s, run_job
from chipwise.serve.speculation import Drafting
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import allow_files, files_allowed, load_model
from chipwise.workload.serving import DEFAULT_ROUTER, MAX_CHIPS, MAX_SIMULATED, LengthDist, Load, ServingJob, is_count

VERIFY_REQUESTS = 1200
#: a simulated check of an open loop issues requests over this many of its estimated request latencies (a closed
#: loop's users each STEADY_WAVES requests, an offline run STEADY_WAVES batches), up to VERIFY_MAX requests (or
#: the user's --requests, if more)
STEADY_LATENCIES = 3.0
#: the fewest requests a check of an open loop issues: a Poisson count of 100 arrivals is within 10% of its rate at
#: one standard deviation, the tolerance a check that keeps up is given (serving.KEEPS_UP); 31 requests at 5 req/s
#: (a user's --requests 10 raised to three request latencies) read a one-chip fleet as overloaded and grew it to four
OPEN_LOOP_MIN_REQUESTS = 100
VERIFY_MAX = 20000
#: the fewest replicas a check of a fleet too large for VERIFY_MAX requests simulates
SLICE_MIN = 4
SIZE_UP_TRIES = 3
#: the simulated checks of one `plan serve` run side by side in worker processes where together they would
#: simulate this many requests or more (a worker's start, about 0.7 s, is then a few % of the work): at 10,000
#: req/s each check simulates up to VERIFY_MAX requests, and some run again
PARALLEL_CHECK_REQUESTS = 40_000
#: A check that meets a percentile target within this share of it, or whose upper confidence bound of that
#: percentile passes the target, runs again on CONFIRM_FACTOR times the requests (another seed) and stands on that:
#: 1,200 requests hold a dozen past their p99, and Llama-3.1-70B on four H100s at 5 req/s read a p99 TPOT of
#: 49.2 ms against 50 ms where 5,000-20,000 requests read 52-55 ms (and five seeds of 1,200 read 47-61 ms).
CONFIRM_MARGIN = 0.05
CONFIRM_FACTOR = 4
#: An open-loop check that meets its SLO passes only below this share of what the fleet delivers with its batch
#: always full (_utilisation): near capacity a queue settles slower than a check runs, and a planned fleet meets its
#: SLO with room for the load's swings. Llama-3.1-70B at 10 req/s on two TP4 MI300X replicas (97% of their offline
#: rate, 95% of the 10.5 req/s they sustain) read a p99 TTFT of 0.90 s on 1,200 requests against a 2 s target, and
#: 2.1-4.8 s on 5,000-20,000; at 4 req/s on four TP16 trn2 replicas (87%), 2.04 s against 3 s, then 2.89 s on 5,000
#: and 3.53 s on 20,000. Below it, loaded queues run longer (SETTLE_LOAD), at most as long as a narrow pass's.
MAX_CHECK_LOAD = 0.85
#: without an SLO, a passing check whose window delivered less than this share of its load's tokens is measured
#: against what its fleet sustains: a healthy deployment's short window reads up to ~5% under its load, and so does
#: a fleet a few % past its capacity (8 H200s at 101% read 89%); a window reading 97% or more leaves a fleet at most
#: about 3% past what it sustains, which no run of the check's length tells apart
CAPACITY_DOUBT = 0.97
MAX_SETTLING = CONFIRM_FACTOR
#: the fewest requests of the offline run that measures a checked fleet's capacity (_utilisation)
CAPACITY_PROBE = 256
#: that run's requests on a fleet of one pool stop here: it runs as many of the fleet's identical replicas as take
#: them two batches each, and the fleet delivers what they do times its replicas over theirs (a slice of 128
#: replicas of 64 slots had 16,384 requests simulated to learn what 32 of them show)
CAPACITY_PROBE_MAX = 4096
#: the load up to which a check's requests are taken to reach its steady state; past it the check runs longer
#: (_settling). A chosen threshold, not fitted: the loaded checks measured above ran at 87-97%
SETTLE_LOAD = 0.7


def _settling(load: float) -> float:
    """How many times longer a queue at `load` takes to settle than one at SETTLE_LOAD (at least 1, at most
    MAX_SETTLING): the ratio of their relaxation times, (1 - sqrt(load))^-2 (Morse 1955, the M/M/1 queue)."""
    if load <= SETTLE_LOAD:
        return 1.0
    ratio = ((1.0 - math.sqrt(SETTLE_LOAD)) / max(1.0 - math.sqrt(min(load, 0.999)), 1e-9)) ** 2
    return float(min(ratio, MAX_SETTLING))


#: decode pools are searched on the chips of this many of the cheapest colocated options
DECODE_CHIPS = 4


#: what plan_serving tells of its work: (what it is doing, steps done, steps in all)
Progress = Callable[[str, int, int], None]


def plan_serving(
    catalog: Catalog,
    model_name: str,
    hardware_ids: Sequence[str],
    load: Load,
    input_tokens: int,
    output_tokens: int,
    slo: str | Mapping[str, Any] | None = None,
    precision: str = "auto",
    kv_precision: str | None = None,
    engine: str | None = None,
    pricing: str = "on-demand",
    region: str | None = None,
    requests: int | None = None,
    disaggregated: bool = True,
    verify: int = 3,
    speculative: str | None = None,
    progress: Progress | None = None,
    router: str = DEFAULT_ROUTER,
    workers: int = 1,
) -> dict[str, Any]:
    """Rank the listed hardware by the cost of the cheapest fleet that serves the load within the SLO: per hour
    under an open-loop rate, per million output tokens under a fixed concurrency or offline (`speculative`:
    'mtp:3', 'eagle:3@0.8', 'draft:MODEL:K@A' for the decoding replicas, or several of them and 'none' separated
    by commas, each priced as its own option; `router`: how requests are spread over the replicas,
    serve.sim.policies.ROUTERS). `progress(what, done, total)` hears of each chip searched and each option
    simulated. `workers` > 1 lets the simulated checks run side by side in that many fresh processes where they are
    long (_verify); a caller that allows it runs from a script whose top level is guarded (`if __name__ ==
    "__main__"`), as the `chipwise` command is."""
    start = time.perf_counter()
    check_mode(pricing)
    check_router(router)
    if not is_count(workers):
        raise ChipwiseError(
            f"workers {workers!r} is not a whole number of processes. Fix: give e.g. 4, or 1 to run the checks here."
        )
    # 0 ranks by the estimate alone (the API asks for 1 or more); -1 had done so in silence, 'x' raised a TypeError
    if not (is_count(verify) or (verify == 0 and not isinstance(verify, bool))):
        raise ChipwiseError(
            f"verify {verify!r} is not a whole number of options to simulate. Fix: give e.g. 3 (the default)."
        )
    verify = int(verify)  # 3.0 sliced no list
    if progress is not None and not callable(progress):  # 5 had raised a TypeError at the first chip searched
        raise ChipwiseError(
            f"progress {progress!r} is not a function. Fix: give a function of (what, done, total), or None."
        )
    model = load_model(catalog, model_name)
    if engine:
        check_engine_model(check_engine_name(engine), model)  # by the names users give: not the base profile
    precision = check_weight_precision(precision, model)
    if kv_precision:
        check_precision(kv_precision, KV_PRECISIONS, "KV-cache")
    asked = [drafting_for(catalog, model, option) for option in speculation_options(speculative)]
    # an option given twice ('none,none', 'mtp:3,mtp:3') is searched once: its rows had been ranked twice
    draftings = [d for i, d in enumerate(asked) if d not in asked[:i]]
    targets = check_slo(slo)
    queued = [k for k in targets if k.startswith(("ttft", "e2e")) and load.kind == "offline"]
    if queued:
        raise ChipwiseError(
            f"an offline run queues every request at once, so its first tokens wait for the requests ahead of them, "
            f"as many as the run has: {', '.join(queued)} does not describe the deployment. Fix: give a TPOT target "
            "only, or an arrival rate or a number of users."
        )
    if requests is not None and not (is_count(requests) and requests <= MAX_SIMULATED):
        raise ChipwiseError(
            f"requests {requests!r} is not a whole number from 1 to {MAX_SIMULATED:,} (the requests each check "
            "simulates). Fix: give e.g. 5000."
        )
    job = ServingJob(
        model=model,
        input=LengthDist.fixed(input_tokens),
        output=LengthDist.fixed(output_tokens),
        load=load,
        requests=requests or VERIFY_REQUESTS,
        router=router,
    )
    hw = hardware(catalog)
    # a hybrid scale-up system (the Trainium4 + GB300 NVLink Fusion rack) is searched as its member chips, each
    # on its own, and split between them with the KV cache over its fabric (kv_path): named as one system, it had
    # run only its first chip's options
    racks = {hid: list(hw.system(hid).members) for hid in hardware_ids if hw.system(hid).hybrid}
    hardware_ids = [c for hid in hardware_ids for c in racks.get(hid, [hid])]
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    fronts: dict[str, list[dict[str, float | None]]] = {}
    price_notes: dict[str, str] = {}  # systems priced outside the region asked for
    unpriced: dict[str, str] = {}  # systems with no price, and why
    estimated: dict[str, tuple[str, str]] = {}  # systems priced by a catalog estimate: (chip, derivation)
    prefill_options: list[dict[str, Any]] = []
    decode_inputs: list[tuple[float, tuple[Any, ...]]] = []  # (colocated $/h, _decode_option's arguments)
    evaluated = 0
    steps = len(hardware_ids) + verify
    tell = progress or (lambda what, done, total: None)
    searched: set[str] = set()
    for i, hid in enumerate(hardware_ids):
        tell(f"searching {hid}", i, steps)
        system = priced_system(hw.system(hid), pricing)
        if system.id in searched:  # a chip and its own system named both: planned once
            continue
        searched.add(system.id)
        failures: list[str] = []
        for drafting in draftings:
            try:
                name = engine_for(system, engine, model)
                eng = engine_profile(catalog, name, system.chip.family)
                weight, kv = precisions(precision, kv_precision, eng, model, system)
                choice, est, _ = choose_any(model, system, eng, job, weight, kv, targets, drafting)
            except (InfeasibleError, ChipwiseError) as exc:
                failures.append(str(exc))
                missed = exc.estimate if isinstance(exc, InfeasibleError) else None
                evaluated += exc.searched if isinstance(exc, InfeasibleError) else 0
                if isinstance(missed, Estimate) and system.chip.id not in fronts:
                    fronts[system.chip.id] = _front(missed)  # saturated replicas: no SLO in it
                continue
            evaluated += len(est.cand)
            price, record, quote = chip_hour_price(catalog, system, pricing, region, None)
            if record is None:
                unpriced[system.id] = f"{system.chip.id}: {price_note(catalog, system, pricing)}"
            if record is not None and catalog_estimate(record):  # a --set price is the user's: no §
                estimated[system.id] = (system.chip.id, str(record.get("derivation", "")))
            if quote is not None and not quote.region_matched:
                price_notes[system.id] = (
                    f"{system.id} ({system.chip.id}): no {region} {pricing} price; {quote.region or 'another'}'s"
                )
            row = _colocated_row(catalog, system, name, choice, price, load, output_tokens)
            row["_search"] = (eng, weight, kv, drafting, price, tuple(np.unique(est.cand.tp).tolist()))
            rows.append(row)
            if system.chip.id not in fronts:  # the front and the prefill pools do not depend on how decoding drafts
                fronts[system.chip.id] = _front(est)
                if disaggregated and load.kind == "rate":
                    prefill_options.append(
                        _prefill_option(
                            model,
                            system,
                            name,
                            eng,
                            est,
                            weight,
                            kv,
                            input_tokens,
                            price,
                            targets.get("ttft_p99", math.inf),
                        )
                    )
            if disaggregated and load.kind == "rate":
                args = (model, system, name, eng, job, weight, kv, targets, drafting, price)
                decode_inputs.append((row["cost_usd_per_hour"], args))
        if len(failures) == len(draftings):
            skipped.append({"hardware": system.chip.id, "system": system.id, "reason": failures[0]})
    if disaggregated and load.kind == "rate" and prefill_options:
        # decode pools of the chips whose colocated fleets are cheapest (a decode pool carries the same answers)
        decode_inputs.sort(key=lambda d: d[0])
        decode_options = [o for _, args in decode_inputs[:DECODE_CHIPS] for o in _decode_option(*args)]
        split, unpaired = _disaggregated_rows(catalog, model, job, targets, prefill_options, decode_options)
        rows.extend(split)
        skipped.extend(unpaired)
    # a fleet past the largest planned is not ranked, with its reason, as a chip that cannot run the load; a load
    # that no chip serves within it is refused as input (1e9 req/s had sized 67 million H100s)
    too_big = [r for r in rows if r["chips"] > MAX_CHIPS]
    if too_big and len(too_big) == len(rows):
        least = min(too_big, key=lambda r: r["chips"])
        where = f"serving {load.label()} on {least['hardware']}"
        raise ChipwiseError(f"{fleet_problem(least['chips'], where)}.")
    for r in too_big:
        rows.remove(r)
        reason = f"{fleet_problem(r['chips'], 'serving the load')}."
        skipped.append({"hardware": r["hardware"], "system": r["system"], "reason": reason})
    for r in rows:  # the chips priced by a catalog estimate (no offer found), as the ranking marks them
        pools = zip(r["hardware"].split(">"), r["system"].split(">"), strict=True)
        r["price_estimated"] = list(dict.fromkeys(c for c, sid in pools if sid in estimated))
    rows.sort(key=lambda r: _rank_order(r, load))
    checks = rows[:verify]
    # checks all on an engine's defaults (no serving run of its chip family fitted) are answered beside the
    # cheapest option on fitted figures, simulated too: the estimate's alone had named one that misses its SLO
    fitted = next((r for r in rows[len(checks) :] if not r.get("engine_defaults")), None)
    if checks and all(r.get("engine_defaults") for r in checks) and fitted is not None:
        fitted["_rank"] = rows.index(fitted) + 1
        checks.append(fitted)
        steps += 1
    verified, check_processes = _verify(
        catalog, model, model_name, job, targets, checks, pricing, region, tell, len(hardware_ids), steps, workers
    )
    if targets and load.kind == "rate":
        verified = _second_looks(catalog, model, model_name, job, targets, rows, verified, pricing, region)
    tell("done", steps, steps)
    for r in rows:
        for key in [k for k in r if k.startswith("_")]:
            del r[key]
    return {
        "kind": "plan-serve",
        "model": model.display,
        "load": {
            "kind": load.kind,
            "label": load.label(),
            "arrival_rate_per_s": load.rate or None,
            "concurrency": load.concurrency or None,
        },
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "precision": precision,
        "kv_precision": kv_precision,  # the KV cache asked for (None: each engine's default)
        "slo": targets,
        "router": router,
        "pricing": pricing,
        "region": region,
        "price_notes": list(price_notes.values()),
        "unpriced": unpriced,
        "price_estimates": dict(estimated.values()),  # by chip, as the footnote names them
        "best": verified[0] if verified else None,
        "results": rows,
        "verified": verified,
        "pareto": fronts,
        "skipped": skipped,
        "search": {
            "evaluated": evaluated,
            "seconds": time.perf_counter() - start,
            "check_processes": check_processes,  # 1: the simulated checks ran in this process
            **({"hybrid_members": racks} if racks else {}),
        },
    }


def check_split_load(disaggregated: bool | None, load: Load, option: str, rate_option: str) -> None:
    """A split asked for (`disaggregated` True, not just allowed) needs an arrival rate to size its pools: a closed
    loop or an offline run is one line naming `option` and the fix, not a ranking without splits."""
    if disaggregated and load.kind != "rate":
        what = "a closed loop" if load.kind == "closed" else "an offline run"
        raise ChipwiseError(
            f"{option}: pool splits are sized by an arrival rate, and {what} has none. "
            f"Fix: give {rate_option}, or leave {option} out."
        )


def _plan_brief(plan: ReplicaPlan, replicas: int) -> dict[str, Any]:
    return {
        "tp": plan.tp,
        "pp": plan.pp,
        "ep": plan.ep,
        "attention_dp": plan.attention_dp,
        "adp_balance": plan.adp_balance if plan.attention_dp else None,
        "max_batch": plan.max_batch,
        "replicas": replicas,
        "weight_precision": plan.weight_precision,
        "kv_precision": plan.kv_precision,
        "speculative": plan.speculation.label() if plan.speculation else None,
    }


def _front(est: Estimate) -> list[dict[str, float | None]]:
    """The throughput-per-chip vs TPOT Pareto front of a system's candidates at saturation."""
    tput = np.where(est.fits, est.throughput / est.chips, 0.0)
    idx = pareto(tput, np.where(est.fits, est.step, np.inf))
    c = est.cand
    return [
        {
            "tpot_s": float(est.step[i]),
            "output_tokens_per_s_per_chip": float(tput[i]),
            "tp": int(c.tp[i]),
            "pp": int(c.pp[i]),
            "ep": int(c.ep[i]),
            "attention_dp": bool(c.adp[i]),
            "adp_balance": bool(c.balance[i]) if c.adp[i] else None,
            "max_batch": int(c.max_batch[i]),
            "batch": float(est.batch[i]),
        }
        for i in idx
    ]


def _prefill_option(
    model: ModelSpec,
    system: System,
    engine: str,
    eng: EngineProfile,
    est: Estimate,
    weight: str,
    kv: str,
    input_tokens: int,
    price: float,
    ttft_limit: float = math.inf,
) -> dict[str, Any]:
    """The replica shape with the most prompt tokens/s per chip, of those whose prompt alone leaves room in the
    TTFT target (_disaggregated_rows' test: twice the prompt within it), and its cost per prompt token/s. A prefill
    replica encodes the prompts queued for it together, each adding its own work to the iteration
    (Estimate.prefill_work_s, without the per-iteration costs a lone prompt pays). Its batch cap is what its KV
    cache holds of such prompts, at most PREFILL_POOL_BATCH: a stated plan is held to it."""
    ok = est.fits & (2.0 * est.prefill_s <= ttft_limit)
    ok = ok if ok.any() else est.fits  # none in time: the fastest per chip, which the pairing then drops
    pf_tps = np.where(ok, input_tokens / np.maximum(est.prefill_work_s, 1e-9), 0.0)
    per_chip = pf_tps / est.chips
    i = int(np.argmax(per_chip))
    c = est.cand
    held = int(est.kv_tokens[i] // (input_tokens + 1))
    plan = ReplicaPlan(
        int(c.tp[i]),
        int(c.pp[i]),
        int(c.ep[i]),
        bool(c.adp[i]),
        max(1, min(PREFILL_POOL_BATCH, held)),
        token_budget(eng, input_tokens, memory_bytes=system.chip.hbm_capacity),
        eng.chunked_prefill,
        weight,
        kv,
        adp_balance=bool(c.balance[i]),
    )
    return {
        "system": system,
        "engine": engine,
        "plan": plan,
        "chips": float(est.chips[i]),
        "prefill_s": float(est.prefill_s[i]),
        "price": price,
    }


def _decode_option(
    model: ModelSpec,
    system: System,
    engine: str,
    eng: EngineProfile,
    job: ServingJob,
    weight: str,
    kv: str,
    targets: Mapping[str, float],
    drafting: Drafting | None,
    price: float,
) -> list[dict[str, Any]]:
    """The decode pool this chip would run beside a prefill pool: the shape and count that carry the load within
    the TPOT and end-to-end targets when no prompt shares its iterations (none if none does)."""
    decoding = decode_targets(targets)
    try:
        choice, _, _ = choose_any(model, system, eng, job, weight, kv, decoding, drafting, decode_only=True)
    except (InfeasibleError, ChipwiseError):
        return []
    return [{"system": system, "engine": engine, "choice": choice, "price": price}]


#: A split's KV links are sized to carry its prompts' caches at this share of their time at most, the headroom its
#: prefill pool is sized with (a link at 140% of its capacity was priced as meeting a 3 s TTFT: 7 TPU v6e prefill
#: replicas sending 2.9 prompts/s each, 491 ms apiece, over their share of the data-centre network).
LINK_LOAD = PREFILL_SIZING_LOAD


def _sized_split(
    row: dict[str, Any], pf: Mapping[str, Any], n_pre: int, dc: Mapping[str, Any], n_dec: int, out_tps: float
) -> dict[str, Any]:
    """`row` with its pools' replica counts, chips and prices."""
    choice: Choice = dc["choice"]
    billed = rented_chips([(pf["system"], pf["chips"], n_pre), (dc["system"], choice.chips, n_dec)])
    cost = billed[0] * pf["price"] + billed[1] * dc["price"]
    return {
        **row,
        "plan": {"prefill": _plan_brief(pf["plan"], n_pre), "decode": _plan_brief(choice.plan, n_dec)},
        "chips": whole_count(n_pre * pf["chips"] + n_dec * choice.chips),
        "billed_chips": whole_count(sum(billed)),
        "cost_usd_per_hour": cost,
        "cost_usd_per_mtok": per_mtok(cost, out_tps),
        "_disagg": (pf, n_pre, dc, n_dec),
    }


def _link_sized(catalog: Catalog, model: ModelSpec, job: ServingJob, row: dict[str, Any]) -> dict[str, Any]:
    """A split with as many replicas in each pool as its KV links need: lam x (one prompt's transfer time) over
    LINK_LOAD replicas at each end (the simulator queues each replica's transfers on its links), sized again once
    if the pools then leave their scale-up domain for a slower network. Its estimated TTFT gains the handover: the
    client's first token comes from the decode pool (_handover_p99)."""
    resized = 0
    while True:
        pf, n_pre, dc, n_dec = row["_disagg"]
        try:
            transfer = _row_setup(catalog, model, job, row).transfer
        except (InfeasibleError, ChipwiseError):
            return row  # its check reports it
        if transfer is None:
            return row
        need = math.ceil(_link_busy(job, transfer) / LINK_LOAD - 1e-9)
        sized = (
            filled(pf["system"].rental_chips, pf["chips"], max(n_pre, need)),
            filled(dc["system"].rental_chips, dc["choice"].chips, max(n_dec, need)),
        )
        if sized == (n_pre, n_dec) or resized == 2:
            est = row["estimate"]
            handover = _handover_p99(job, transfer, min(n_pre, n_dec), dc["choice"].ttft_p99)
            return {**row, "estimate": {**est, "ttft_p99_s": est["ttft_p99_s"] + handover}}
        row = _sized_split(row, pf, sized[0], dc, sized[1], job.load.rate * job.mean_output)
        resized += 1


def _handover_p99(job: ServingJob, transfer: KVTransfer, links: int, decode_wait: float) -> float:
    """A split's first token beyond its prefill, at the 99th percentile: a mean prompt's transfer S, its wait for a
    link, and the decode pool's wait for a slot (`decode_wait`, its estimate's TTFT). The routers send each cache
    to the least busy of `links` replicas at each end, so the link queue is an M/D/c one, priced as a batch slot's
    wait is (search.slot_wait: Erlang C over c = links at load lambda S, then an exponential tail)."""
    service = transfer.latency_s + transfer.seconds(job.mean_input)
    offered = (offered_request_rate(job) or 0.0) * service
    queue = slot_wait(np.asarray(float(max(links, 1))), np.asarray(offered), np.asarray(service))[1]
    return service + float(queue) + decode_wait


def _link_busy(job: ServingJob, transfer: KVTransfer) -> float:
    """Seconds per second the load's KV transfers keep a link busy, all of them on one replica's links."""
    return (offered_request_rate(job) or 0.0) * transfer.seconds(job.mean_input)


def _disaggregated_rows(
    catalog: Catalog,
    model: ModelSpec,
    job: ServingJob,
    targets: Mapping[str, float],
    prefills: list[dict[str, Any]],
    decodes: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Prefill pool of one chip, decode pool of another (or the same): sized for the load, priced; the cheapest
    pairs are kept, and a note of the chips left unpaired because their engines cache KV in different precisions.
    The decode pool runs without prefill interference, so its TPOT is its decode step."""
    lam = job.load.rate
    out: list[dict[str, Any]] = []
    unpaired: dict[str, str] = {}  # chips left unpaired for their engine's KV precision
    apart: dict[str, str] = {}  # pairs no network joins (providers.network_gap), each with its fix
    ttft_limit = targets.get("ttft_p99", math.inf)
    longest = job.max_input + job.max_output
    for pf in prefills:
        if not math.isfinite(pf["price"]) or pf["prefill_s"] * 2.0 > ttft_limit:
            continue
        try:  # the replica the split's check and predict run (_row_setup), sized as predict sizes its pool
            pre = setup_replica(catalog, model, pf["system"], pf["engine"], pf["plan"], job.mean_input, 1.0, longest)
        except (InfeasibleError, ChipwiseError):
            continue  # a prefill replica that cannot be set up makes no split
        n_pre = filled(pf["system"].rental_chips, pf["chips"], prefill_replicas(pre, job))
        for dc in decodes:
            choice: Choice = dc["choice"]
            if not math.isfinite(dc["price"]):
                continue
            gap = network_gap(catalog, pf["system"], dc["system"])
            if gap:  # the KV cache would cross providers
                apart[f"{pf['system'].chip.id}>{dc['system'].chip.id}"] = gap.partition(" Fix: ")[2]
                continue
            kv_pre, kv_dec = pf["plan"].kv_precision, choice.plan.kv_precision
            if kv_pre != kv_dec:  # the handed-over cache has one format (planner.serving._handed_over_kv)
                unpaired[pf["system"].chip.id] = kv_pre
                unpaired[dc["system"].chip.id] = kv_dec
                continue
            row: dict[str, Any] = {
                "hardware": f"{pf['system'].chip.id}>{dc['system'].chip.id}",
                "system": f"{pf['system'].id}>{dc['system'].id}",
                "engine": f"{pf['engine']}>{dc['engine']}",
                "projected": pf["system"].projected or dc["system"].projected,
                "projected_chips": sorted({o["system"].chip.id for o in (pf, dc) if o["system"].projected}),
                "engine_defaults": sorted(
                    {o["system"].chip.id for o in (pf, dc) if not engine_fitted_on(catalog, o["engine"], o["system"])}
                ),
                "engine_carried": engine_carried(catalog, [(o["engine"], o["system"]) for o in (pf, dc)]),
                "disaggregated": True,
                "estimate": {
                    "tpot_s": choice.tpot,
                    "ttft_p99_s": pf["prefill_s"] * 2.0,
                    "output_tokens_per_s": lam * job.mean_output,
                },
            }
            out.append(_sized_split(row, pf, n_pre, dc, choice.replicas, lam * job.mean_output))
    out.sort(key=lambda r: r["cost_usd_per_hour"])
    # the cheapest pairs' KV links, each pool's replicas sending or receiving one prompt's cache at a time
    sized = [_link_sized(catalog, model, job, r) for r in out[:10]]
    out = sorted((r for r in sized if r["estimate"]["ttft_p99_s"] <= ttft_limit), key=lambda r: r["cost_usd_per_hour"])
    notes: list[dict[str, str]] = []
    late = [r for r in sized if r["estimate"]["ttft_p99_s"] > ttft_limit]
    if late:
        notes.append(
            {
                "hardware": "splits",
                "system": "",
                "reason": f"{len(late)} of the cheapest splits ({', '.join(r['hardware'] for r in late[:3])}"
                f"{', ...' if len(late) > 3 else ''}) were dropped: their estimated TTFT p99 with the KV handover "
                "(the transfer, its wait for a link, the decode pool's wait for a slot) passes the target",
            }
        )
    if unpaired:
        by_kv = {kv: ", ".join(c for c, k in unpaired.items() if k == kv) for kv in sorted(set(unpaired.values()))}
        notes.append(
            {
                "hardware": "splits",
                "system": "",
                "reason": "a prefill pool of one chip and a decode pool of another whose engines cache KV in different "
                f"precisions ({'; '.join(f'{chips}: {kv}' for kv, chips in by_kv.items())}) were not paired: the "
                "decode pool reads the cache the prefill pool writes. Fix: give one precision (--kv-precision) to "
                "pair them",
            }
        )
    if apart:
        pairs = sorted(apart)
        notes.append(
            {
                "hardware": "splits",
                "system": "",
                "reason": f"{len(pairs)} prefill>decode {'pair' if len(pairs) == 1 else 'pairs'} ("
                f"{', '.join(pairs[:3])}{', ...' if len(pairs) > 3 else ''}) {'was' if len(pairs) == 1 else 'were'}"
                " not paired: no provider rents both and they cannot "
                f"both be bought, so no network carries their KV cache. Fix ({pairs[0]}): {apart[pairs[0]]}",
            }
        )
    return out[:5], notes


def _colocated_row(
    catalog: Catalog, system: System, name: str, choice: Choice, price: float, load: Load, output_tokens: int
) -> dict[str, Any]:
    """The ranking row of a colocated fleet of `choice`'s replicas at `price` a chip-hour."""
    chips, billed = choice.replicas * choice.chips, choice.billed
    out_tps = choice.replicas * min(
        choice.throughput, (load.rate or 0.0) * output_tokens / choice.replicas or choice.throughput
    )
    if load.kind == "closed" and np.isfinite(choice.tpot) and choice.tpot > 0:
        out_tps = min(out_tps, load.concurrency / choice.tpot)  # each user gets a token per TPOT
    return {
        "hardware": system.chip.id,
        "system": system.id,
        "engine": name,
        "projected": system.projected,
        "projected_chips": [system.chip.id] if system.projected else [],
        "engine_defaults": [] if engine_fitted_on(catalog, name, system) else [system.chip.id],
        "engine_carried": engine_carried(catalog, [(name, system)]),
        "plan": _plan_brief(choice.plan, choice.replicas),
        "disaggregated": False,
        "chips": whole_count(chips),
        "billed_chips": whole_count(billed),
        "cost_usd_per_hour": price * billed,
        "cost_usd_per_mtok": per_mtok(price * billed, out_tps),
        "estimate": {
            "tpot_s": choice.tpot,
            # an offline request's first token waits for the batch ahead of it: the simulation's to say
            "ttft_p99_s": None if load.kind == "offline" else choice.ttft_p99,
            "output_tokens_per_s": out_tps,
        },
        "_choice": (system, name, choice),
    }


def _verify(
    catalog: Catalog,
    model: ModelSpec,
    model_name: str,
    job: ServingJob,
    targets: Mapping[str, float],
    rows: list[dict[str, Any]],
    pricing: str = "on-demand",
    region: str | None = None,
    tell: Progress = lambda what, done, total: None,
    done_before: int = 0,
    steps: int = 0,
    workers: int = 1,
) -> tuple[list[dict[str, Any]], int]:
    """The cheapest options simulated (_check), one after another, or side by side on up to `workers` processes
    where their runs add up to PARALLEL_CHECK_REQUESTS requests or more (each check is seeded, so it reads the
    same either way), and the processes they ran on."""
    limit = max(VERIFY_MAX, job.requests)  # a user who asks for more requests has them simulated
    work = sum(min(limit, _verify_requests(job, row)) for row in rows)
    workers = max(1, min(int(workers), len(rows))) if work >= PARALLEL_CHECK_REQUESTS else 1
    common = (catalog, model, model_name, job, targets)
    done: list[dict[str, Any]] = []
    if workers > 1:
        tell(f"simulating {len(rows)} options on {workers} processes", done_before, steps)
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: no threads carried over
        # each worker reads model names as this process does (files_allowed: the web page's no_files)
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=allow_files, initargs=(files_allowed(),)
        ) as pool:
            futures = [pool.submit(_check, *common, row, rank, pricing, region) for rank, row in enumerate(rows, 1)]
            for finished, future in enumerate(as_completed(futures), start=1):
                checked = future.result()
                if checked is not None:
                    done.append(checked)
                    tell(f"simulated {checked['hardware'].replace('>', ' -> ')}", done_before + finished, steps)
    else:
        for rank, row in enumerate(rows, start=1):
            tell(f"simulating {row['hardware'].replace('>', ' -> ')}", done_before + rank - 1, steps)
            checked = _check(*common, row, rank, pricing, region)
            if checked is not None:
                done.append(checked)
    done.sort(key=lambda r: _check_order(r, job.load))
    return done, workers


def _option_key(row: Mapping[str, Any]) -> tuple[str, str, str]:
    """What tells two ranked options apart: the system, engine and plan (each pool's shape, batch limit, replicas,
    precisions and drafting); rows alike in these are one option, priced and simulated alike."""
    return row["system"], row["engine"], json.dumps(row["plan"], sort_keys=True)


def _rank_order(row: Mapping[str, Any], load: Load) -> tuple[bool, float]:
    """How the options rank by the estimate: priced ones first, the cheapest first (unpriced: the fewest chips)."""
    priced = math.isfinite(row["cost_usd_per_hour"])
    return (not priced, _cost(row, load) if priced else float(row["chips"]))


def _check_order(checked: Mapping[str, Any], load: Load) -> tuple[bool, bool, float, int]:
    """How simulated checks rank: those that keep up, then meet the SLO, then the cheapest, then the estimate's."""
    met = checked["slo_met"]
    return (not checked["keeps_up"], not met if met is not None else False, _cost(checked, load), checked["rank"])


#: An open loop's check that had to grow its option past the estimate's fleet (the estimate was optimistic for that
#: shape) looks again at the chip's other tensor-parallel sizes: the cheapest of them by the estimate, up to this
#: many, are simulated too where their estimate undercuts every checked fleet that met the SLO. Llama 3.1 70B at 10
#: req/s on H200 under a 10 s / 100 ms SLO: TP2 x2 (4 chips) grew to x3 in its check and an H100 fleet won at $4.48
#: per M tokens, where TP1 x5 H200 met a tighter SLO at $4.29. Its own shape with the next batch limit is looked at
#: too: Llama 3.1 8B at 15 req/s on H200, TP1 b64 x1 ran at 92% of its capacity in its check and grew to x2 ($1.14
#: per M tokens), where TP1 b128 x1 meets the SLO at 81% ($0.57).
SECOND_LOOKS = 2


def _second_looks(
    catalog: Catalog,
    model: ModelSpec,
    model_name: str,
    job: ServingJob,
    targets: Mapping[str, float],
    rows: list[dict[str, Any]],
    verified: list[dict[str, Any]],
    pricing: str,
    region: str | None,
) -> list[dict[str, Any]]:
    """The checks, with those of the other shapes (SECOND_LOOKS: other TP sizes, or the next batch limit) of the
    chips whose check grew: their rows join the ranking (re-ranked, the checks' ranks following their rows)."""
    bar = min((_cost(v, job.load) for v in verified if v["keeps_up"] and v["slo_met"]), default=math.inf)
    looks: list[dict[str, Any]] = []
    seen = {_option_key(r) for r in rows}
    for v in verified:
        row = rows[v["rank"] - 1]
        if v["disaggregated"] or v["chips"] <= row["chips"] or "_search" not in row:
            continue
        system, name, choice = row["_choice"]
        eng, weight, kv, drafting, price, tps = row["_search"]
        shapes: list[dict[str, int]] = [{"tp": tp} for tp in tps if tp != choice.plan.tp]
        wider = [b for b in BATCHES if b > choice.plan.max_batch][:1]
        shapes += [{"tp": choice.plan.tp, "max_batch": b} for b in wider]  # its own shape, the next batch limit
        for shape in shapes:
            try:
                alt = choose_any(model, system, eng, job, weight, kv, targets, drafting, fixed=shape)[0]
            except (InfeasibleError, ChipwiseError):
                continue
            look = _colocated_row(catalog, system, name, alt, price, job.load, int(job.mean_output))
            look["price_estimated"] = row.get("price_estimated", [])  # its chip's price, as its row's (§)
            # a shape the estimate answers with an option already ranked (a next batch limit its KV cache
            # cannot hold: Llama 3.1 70B on trn2, TP32 b128 came back as the checked b104) is not a second look
            if _cost(look, job.load) < bar and _option_key(look) not in seen:
                seen.add(_option_key(look))
                looks.append(look)
    if not looks:
        return verified
    looks = sorted(looks, key=lambda r: _cost(r, job.load))[:SECOND_LOOKS]
    ranked = [rows[v["rank"] - 1] for v in verified]
    rows.extend(looks)
    extra = [_check(catalog, model, model_name, job, targets, look, len(rows) - len(looks) + i + 1, pricing, region)
             for i, look in enumerate(looks)]  # fmt: skip
    rows.sort(key=lambda r: _rank_order(r, job.load))
    position = {id(r): i + 1 for i, r in enumerate(rows)}
    checked = [{**v, "rank": position[id(r)]} for v, r in zip(verified, ranked, strict=True)]
    checked += [{**c, "rank": position[id(look)]} for c, look in zip(extra, looks, strict=True) if c is not None]
    return sorted(checked, key=lambda r: _check_order(r, job.load))


def _check(
    catalog: Catalog,
    model: ModelSpec,
    model_name: str,
    job: ServingJob,
    targets: Mapping[str, float],
    row: dict[str, Any],
    rank: int,
    pricing: str,
    region: str | None,
) -> dict[str, Any] | None:
    """Simulate one option: add replicas (up to a few times) until the simulation meets the SLO and keeps up with
    an open-loop load, or take replicas away (up to a few times) while it still does, since the steady-state
    estimate can err either way (None where the option cannot be built)."""
    limit = max(VERIFY_MAX, job.requests)
    probed: dict[int, tuple[ServingSetup, float | None]] = {}

    def load(s: ServingSetup, requests: int) -> float | None:
        """The fleet's utilisation (_utilisation, on the slice a check of it runs), probed once per fleet."""
        if id(s) not in probed:
            part, share, n = _slice(job, s, requests, limit)
            probed[id(s)] = (s, _utilisation(part, s if share == 1.0 else _replicas(s, n)) if targets else None)
        return probed[id(s)][1]

    def simulated(s: ServingSetup, requests: int, seed: int = 0) -> tuple[dict[str, Any], bool]:
        part, share, n = _slice(job, s, requests, limit)
        count = min(limit, math.ceil(requests * share))
        sim = s if share == 1.0 else _replicas(s, n)
        out, sim_out = run_job(part, sim, seed=seed, targets=dict(targets), requests=count, steady_latencies=True)
        out["busy_shares"] = busy_shares(sim_out)
        if share < 1.0:  # the fleet delivers what its slice does, once per slice
            for key in ("output_tokens_per_s", "throughput_tokens_per_s", "input_tokens_per_s"):
                out[key] /= share
        out["simulated"] = {"requests": count, "fleet_share": share, "steady_state": bool(out["steady_state"])}
        out["simulated"]["confirming"] = seed > 0  # the longer run of a check that met a target narrowly
        met = all(stat_ok(out, k, v) for k, v in targets.items()) and keeps_up(job, out)
        if met and not targets and delivered_share(job, out) < CAPACITY_DOUBT:
            # without an SLO (whose probe holds the load to MAX_CHECK_LOAD) a fleet just past its capacity passes
            # KEEPS_UP's tolerance: 8 H200s at 24 req/s (101% of the 23.8 they sustain) delivered 89% in a check of
            # 2,499 requests and were taken, priced on the load's tokens; what the fleet sustains tells them apart.
            # Measured only where the window leaves doubt: simulate.capacity's runs of a large fleet's slice cost
            # 25 times its check (1.3 million H100s or fewer B200s at 2e7 req/s: 170 s where the search took 7 s)
            out["capacity_utilisation"] = (load_against_capacity(part, sim, seed) or {}).get("utilisation", 0.0)
            met = keeps_up(job, out)
        util = load(s, requests) if met else None
        if util is not None:  # what its load takes of what the fleet sustains (the slice's of the slice's)
            out["simulated"]["utilisation"] = util
            met = util <= MAX_CHECK_LOAD
        if met and seed == 0 and count < limit:
            # a run that met a target narrowly runs again CONFIRM_FACTOR times longer; a loaded queue, whose
            # relaxation time grows as (1 - sqrt(load))^-2 (Morse 1955, M/M/1), _settling times longer
            narrow = _marginal(out, targets)
            longer = max(CONFIRM_FACTOR if narrow else 1.0, _settling(util or 0.0))
            if longer > 1.0:
                again, ok = simulated(s, math.ceil(requests * longer), seed=1)
                again["simulated"]["rerun"] = "narrow" if narrow else "loaded"  # why it ran again
                return again, ok
        return out, met

    def _rerouted(s: ServingSetup) -> ServingSetup:
        """A resized split's KV path, again: more or fewer chips may leave or join a hybrid domain."""
        if s.transfer is None or len(s.pools) != 2:
            return s
        pre, dec = s.pools
        return replace(s, transfer=kv_path(catalog, model, pre.setup, pre.replicas, dec.setup, dec.replicas))

    try:
        setup = _row_setup(catalog, model, job, row)
    except (InfeasibleError, ChipwiseError):
        return None
    requests = _verify_requests(job, row)
    grown = 0
    while True:
        summary, met = simulated(setup, requests)
        if met or job.load.kind == "offline" or grown == SIZE_UP_TRIES:
            break
        setup, grown = _rerouted(_grow(setup, summary, targets, keeps_up(job, summary))), grown + 1
    # fewer replicas only where something can fail: an open loop must keep up, a closed one meet its SLO (with
    # no SLO, fewer replicas would always 'pass' a fixed concurrency, its surplus users queueing for slots);
    # a grown split may give back what the pool that did not need it gained
    if met and (job.load.kind == "rate" or (targets and job.load.kind == "closed")):
        for _ in range(SIZE_UP_TRIES):
            for smaller in map(_rerouted, _shrinks(setup)):  # a split's decode pool, else its prefill pool
                if max(_prefill_load(job, smaller), _link_load(job, smaller)) > MAX_PREFILL_LOAD:
                    continue  # a queue a short check cannot see grow
                if (load(smaller, requests) or 0.0) > MAX_CHECK_LOAD:
                    continue  # nor one near the fleet's capacity: no run needed to refuse it
                trial, ok = simulated(smaller, requests)
                if ok and keeps_up(job, trial, nominal=True):  # fewer chips only for the load asked for
                    setup, summary = smaller, trial
                    break
            else:
                break
    kept_up = keeps_up(job, summary)
    econ = economics(
        catalog, setup.pools, *served_tokens(job, summary), pricing, region, busy=summary.get("busy_shares")
    )
    breakdown = steady_breakdown(setup, model, job, summary)
    return {
        # the ranking row it checks (results[rank - 1]), whose count it may have changed
        "rank": row.get("_rank", rank),
        "hardware": row["hardware"],
        "system": row["system"],
        "engine": row["engine"],
        "projected": row.get("projected", False),
        "projected_chips": row.get("projected_chips", []),
        "price_estimated": row.get("price_estimated", []),
        "disaggregated": row["disaggregated"],
        "engine_defaults": row.get("engine_defaults", []),
        "engine_carried": row.get("engine_carried", {}),
        "plan": {p.role: _plan_brief(p.setup.plan, p.replicas) for p in setup.pools},
        "chips": whole_count(setup.chips),
        "billed_chips": whole_count(econ["billed_chips"]),
        # met, and not so near the fleet's capacity that a longer run would miss it
        "slo_met": (
            all(stat_ok(summary, k, v) for k, v in targets.items())
            and summary["simulated"].get("utilisation", 0.0) <= MAX_CHECK_LOAD
        )
        if targets
        else None,
        "keeps_up": kept_up,
        "output_tokens_per_s": summary["output_tokens_per_s"],
        "output_tokens_per_s_per_chip": summary["output_tokens_per_s_per_chip"],
        "ttft_s": summary["ttft_s"],
        "ttft_wait_s": summary["ttft_wait_s"],
        "tpot_s": summary["tpot_s"],
        "e2e_s": summary["e2e_s"],
        **{
            k: econ[k]
            for k in ("cost_usd_per_hour", "cost_usd_per_mtok", "cost_usd_per_mtok_total", "energy_j_per_mtok")
        },
        "price_note": econ.get("price_note"),
        # an hour of the fleet, each pool at its simulated busy share (plan lifecycle prices its serving period so)
        "energy_j_per_hour": econ["energy_j_per_hour"],
        "co2e_kg_per_hour": econ["co2e_kg_per_hour"],
        "kv_transfer": transfer_dict(setup.transfer, job) if setup.transfer else None,
        "providers": sorted({str(q.get("provider")) for q in econ["price_sources"] if q.get("provider")}),
        "breakdown": breakdown,
        "dominated_by": max(breakdown, key=lambda k: breakdown[k]),
        "track_record": serving_track_record(setup.pools),
        "simulated": summary["simulated"],
        "scenario": _scenario(model_name, job, targets, setup, summary["simulated"], pricing, region),
    }


def _utilisation(job: ServingJob, setup: ServingSetup) -> float | None:
    """An open loop's requests/s over what the deployment delivers with its batch always full (an offline run of
    two batches of requests, at a fraction of simulate.capacity's runs; on a large fleet of one pool, of
    CAPACITY_PROBE_MAX requests over some of its replicas). Its fill and drain read the capacity under what
    simulate.capacity (predict's 'sustains') measures: 6-15% under on the README example's 13 probed fleets, the
    most for splits (its answer, 10 MI300X, at 84.8% here and 72.8% there); MAX_CHECK_LOAD was chosen on this
    probe, so its headroom is the larger for splits."""
    offered = offered_request_rate(job)
    if offered is None:
        return None
    probe, scale = setup, 1.0
    if len(setup.pools) == 1:
        pool = setup.pools[0]
        probed = min(pool.replicas, max(1, math.ceil(CAPACITY_PROBE_MAX / (2 * pool.setup.plan.max_batch))))
        probe, scale = _replicas(setup, probed), pool.replicas / probed
    slots = sum(p.setup.plan.max_batch * p.replicas for p in probe.pools)
    n = min(max(CAPACITY_PROBE, 2 * slots), VERIFY_MAX)
    full, _ = run_job(replace(job, load=Load("offline"), requests=n, duration_s=None), probe)
    delivered = scale * float(full["output_tokens_per_s"]) / job.mean_output
    return offered / delivered if delivered > 0 else math.inf


def _marginal(summary: Mapping[str, Any], targets: Mapping[str, float]) -> bool:
    """Whether a run met a percentile target narrowly: within CONFIRM_MARGIN of it, or with the percentile's upper
    confidence bound past it (metrics.percentile_bounds; a mean or a p50 is steady enough)."""
    bounds = summary.get("percentile_bounds") or {}
    for key, limit in targets.items():
        metric, _, stat = key.rpartition("_")
        value = (summary.get(f"{metric}_s") or {}).get(stat)
        if stat not in ("p90", "p99") or value is None or not value <= limit:
            continue
        if value > (1.0 - CONFIRM_MARGIN) * limit or bounds.get(key, 0.0) > limit:
            return True
    return False


def _scenario(
    model_name: str,
    job: ServingJob,
    targets: Mapping[str, float],
    setup: ServingSetup,
    simulated: Mapping[str, Any],
    pricing: str,
    region: str | None,
) -> dict[str, Any]:
    """The checked option as a serving scenario `chipwise predict` runs as it was checked (JSON or YAML): the
    model as the user named it (a config.json by its absolute path), its load, SLO, pools and precisions, the
    requests and seed of the check's run (the whole fleet's requests where a slice of it ran)."""
    named = Path(model_name)
    model_id = str(named.resolve()) if named.suffix == ".json" and named.is_file() else model_name
    pools = setup.pools
    plans = [p.setup.plan for p in pools]
    shape = ("tp", "pp", "ep", "attention_dp", "max_batch", "max_tokens")
    sc: dict[str, Any] = {
        "kind": "serve",
        "model": model_id,
        "hardware": pools[-1].setup.system.id,
        "chips": whole_count(setup.chips),
        "precision": plans[-1].weight_precision,
        "kv_precision": plans[-1].kv_precision,
        "input_tokens": round(job.mean_input),
        "output_tokens": round(job.mean_output),
        "requests": round(simulated["requests"] / simulated["fleet_share"]),
    }
    if simulated.get("confirming"):
        sc["seed"] = 1  # the confirming run's
    if len({p.setup.engine.engine for p in pools}) == 1:
        sc["engine"] = pools[0].setup.engine.engine
    load = job.load
    if load.kind == "rate":
        sc["arrival_rate"] = load.rate
        if load.burstiness != 1.0:
            sc["burstiness"] = load.burstiness
    elif load.kind == "closed":
        sc["concurrency"] = load.concurrency
    else:
        sc["offline"] = True
    if targets:
        sc["slo"] = {f"{k}_s": v for k, v in targets.items()}
    if len(pools) == 1:
        plan = plans[0]
        sc["plan"] = {k: getattr(plan, k) for k in shape} | {"replicas": pools[0].replicas}
        if plan.attention_dp and pools[0].setup.engine.adp_balance_timeout_iters > 0:
            sc["plan"]["adp_balance"] = plan.adp_balance  # a knob only engines that balance take (predict refuses it)
    else:
        sc["plan"] = {"disaggregated": True} | {
            p.role: {"hardware": p.setup.system.id, "replicas": p.replicas}
            | {k: getattr(p.setup.plan, k) for k in shape}
            for p in pools
        }
    if job.router != DEFAULT_ROUTER:
        sc["plan"]["router"] = job.router
    if plans[-1].speculation is not None:
        sc["speculative"] = plans[-1].speculation.text()
    if job.prefix_hit_rate:
        sc["prefix_hit_rate"] = job.prefix_hit_rate
    if job.prompt_pool:
        sc["prompt_pool"] = job.prompt_pool
    sc["pricing"] = pricing
    if region:
        sc["region"] = region
    return sc


def _verify_requests(job: ServingJob, row: Mapping[str, Any]) -> int:
    """Requests a simulated check of the whole fleet needs: the job's (VERIFY_REQUESTS unless the user asks for
    another count), or more where the load needs them to reach a steady state (an open loop's arrivals spanning
    STEADY_LATENCIES of the option's estimated request latencies, so that the batch fills and the throughput is
    measured in a steady window; a closed loop's users completing at least STEADY_WAVES requests each, an offline
    run's requests filling its batch slots STEADY_WAVES times). At 60 req/s
    of 1,024-token answers taking 40 s, 1,200 requests arrive in 20 s, before the first one ends: the run reads a
    fraction of what the fleet delivers. Beyond VERIFY_MAX the check simulates a slice of the fleet (_slice)."""
    base = job.requests  # the user's --requests, else VERIFY_REQUESTS
    if job.load.kind == "closed":
        return int(max(base, STEADY_WAVES * job.load.concurrency))
    if job.load.kind == "offline":
        plan = row["plan"]
        return int(max(base, STEADY_WAVES * plan["replicas"] * plan["max_batch"]))
    rate = offered_request_rate(job)
    est = row.get("estimate") or {}
    latency = float(est.get("ttft_p99_s") or 0.0) + job.mean_output * float(est.get("tpot_s", 0.0))
    if rate is None or not math.isfinite(latency):
        return base
    return int(max(base, OPEN_LOOP_MIN_REQUESTS, math.ceil(rate * STEADY_LATENCIES * latency)))


def _slice(
    job: ServingJob, setup: ServingSetup, requests: int, limit: int = VERIFY_MAX
) -> tuple[ServingJob, float, int]:
    """(job, share of the fleet, replicas) a check simulates: the whole fleet when `requests` fit `limit`, else
    as many of its (decode) replicas (at least SLICE_MIN) as `limit` requests keep steady, a prefill pool cut
    alike (_replicas), under their share of an open loop's rate or of a closed loop's users. Replicas behind a
    least-loaded router see the load their share of it brings, so a slice runs as the fleet does, for longer."""
    replicas = setup.pools[-1].replicas
    n = max(SLICE_MIN, math.floor(replicas * limit / requests))
    if requests <= limit or n >= replicas or job.load.kind not in ("rate", "closed"):
        return job, 1.0, replicas
    load = job.load
    if load.kind == "closed":
        users = max(1, round(load.concurrency * n / replicas))
        return replace(job, load=replace(load, concurrency=users)), users / load.concurrency, n
    return replace(job, load=replace(load, rate=load.rate * n / replicas)), n / replicas, n


def _replicas(setup: ServingSetup, n: int) -> ServingSetup:
    """`setup` with n replicas in its last (or only) pool and a prefill pool cut in the same proportion."""
    share = n / setup.pools[-1].replicas
    return replace(setup, pools=tuple(Pool(p.setup, max(1, round(p.replicas * share)), p.role) for p in setup.pools))


def _cost(row: Mapping[str, Any], load: Load) -> float:
    """What the ranking minimises: the fleet's $/h under an open-loop rate (every option is sized to deliver the
    same tokens), its $/M output tokens under a fixed concurrency or an offline batch, where the options deliver
    different throughputs (the cheapest fleet per hour would be the slowest)."""
    value = float(row["cost_usd_per_hour"] if load.kind == "rate" else row["cost_usd_per_mtok"])
    return value if math.isfinite(value) else math.inf


def _row_setup(catalog: Catalog, model: ModelSpec, job: ServingJob, row: dict[str, Any]) -> ServingSetup:
    longest = job.max_input + job.max_output
    if "_disagg" in row:
        pf, n_pre, dc, n_dec = row["_disagg"]
        pre = setup_replica(catalog, model, pf["system"], pf["engine"], pf["plan"], job.mean_input, 1.0, longest)
        choice: Choice = dc["choice"]
        dec = setup_replica(
            catalog, model, dc["system"], dc["engine"], choice.plan, job.mean_input, job.mean_output, longest
        )
        return ServingSetup(
            (Pool(pre, n_pre, "prefill"), Pool(dec, n_dec, "decode")),
            job.router,
            kv_path(catalog, model, pre, n_pre, dec, n_dec),
        )
    system, engine, choice = row["_choice"]
    setup = setup_replica(catalog, model, system, engine, choice.plan, job.mean_input, job.mean_output, longest)
    return ServingSetup((Pool(setup, choice.replicas),), job.router)


def _shrinks(setup: ServingSetup) -> list[ServingSetup]:
    """The fleet with one pool cut by a fifth of its replicas (at least one, to a rental that costs less, filled),
    the last (decode) pool first: one candidate per pool that has replicas to spare."""
    out = []
    for i in reversed(range(len(setup.pools))):
        p = setup.pools[i]
        cut = p.replicas - max(1, p.replicas // 5)
        n = filled(p.setup.system.rental_chips, p.setup.chips, cut, cheaper_than=p.replicas)
        if 1 <= n < p.replicas:
            pools = list(setup.pools)
            pools[i] = Pool(p.setup, n, p.role)
            out.append(replace(setup, pools=tuple(pools)))
    return out


def _grow(setup: ServingSetup, summary: Mapping[str, Any], targets: Mapping[str, float], kept_up: bool) -> ServingSetup:
    """The pools that missed with a fifth more replicas (at least one, filling what they rent), or as many more as
    bring the load the check measured down to MAX_CHECK_LOAD of what the fleet sustains where that is more: of a
    split, both pools where first tokens came late (a first token waits for the prefill pool, then for a link and a
    slot in the decode pool), the decode pool alone where only later ones did; otherwise every pool."""
    missed = {k.split("_")[0] for k, v in targets.items() if not stat_ok(summary, k, v)}
    roles = {"prefill": bool(missed & {"ttft", "e2e"}), "decode": bool(missed)}
    util = summary.get("simulated", {}).get("utilisation") or 0.0
    more = max(0.2, util / MAX_CHECK_LOAD - 1.0) if math.isfinite(util) else 0.2
    pools = tuple(
        Pool(
            p.setup,
            filled(p.setup.system.rental_chips, p.setup.chips, p.replicas + max(1, math.ceil(more * p.replicas))),
            p.role,
        )
        if not kept_up or not missed or roles.get(p.role, True)
        else p
        for p in setup.pools
    )
    return replace(setup, pools=pools)


#: A prefill pool is not cut below this headroom: its requests' prompts, each encoded alone, over its replicas. A
#: check of a thousand requests reads a pool at 96% of its capacity as meeting a 2 s TTFT target that thirty
#: thousand miss by half again (Llama 3.1 70B, 2,048-token prompts on four H100s at 16 req/s).
MAX_PREFILL_LOAD = 0.9


def _link_load(job: ServingJob, setup: ServingSetup) -> float:
    """A split's busiest KV links' share of time moving the open-loop load's caches (0 without a split)."""
    if setup.transfer is None or len(setup.pools) != 2:
        return 0.0
    return _link_busy(job, setup.transfer) / min(p.replicas for p in setup.pools)


def _prefill_load(job: ServingJob, setup: ServingSetup) -> float:
    """The busiest prefill pool's share of time encoding the open-loop load's prompts (0 without one)."""
    rate = offered_request_rate(job)
    pools = [p for p in setup.pools if p.role == "prefill"]
    if rate is None or not pools:
        return 0.0
    return max(rate * mean_prompt_s(p.setup, job) / p.replicas for p in pools)
