"""`chipwise plan serve`: for every chip asked for, the cheapest replica shape and count that meets the SLO at the
load (steady-state estimates over every candidate, serve.estimate), the throughput-latency Pareto front, and
prefill/decode-disaggregated pool splits (also across two chip types: serving_split); the cheapest options are then
simulated and sized up until the simulation meets the SLO (serving_shortlist, serving_check)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.economics.pricing import catalog_estimate
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.planner.serving_check import VERIFY_REQUESTS
from chipwise.planner.serving_choice import choose_any
from chipwise.planner.serving_deployment import SPLIT_MARK
from chipwise.planner.serving_economics import (
    RankingPrice,
    chip_hour_price,
    network_price,
    price_note,
    priced_system,
)
from chipwise.planner.serving_inputs import (
    Targets,
    check_engine_drafts,
    check_slo,
    check_tpot_target,
    drafting_for,
    engine_for,
    precisions,
    speculation_options,
)
from chipwise.planner.serving_plan_rows import ChipSearch, PrefillOption, colocated_row, rank_order
from chipwise.planner.serving_report import fleet_problem
from chipwise.planner.serving_shortlist import Progress, second_looks, verify_options
from chipwise.planner.serving_split import decode_option, disaggregated_rows, prefill_option
from chipwise.planner.training import check_economics_options, check_workers
from chipwise.pools import forked_pool, stop_if_rerun, waited
from chipwise.serve.engine import check_engine_model, check_engine_name, engine_profile
from chipwise.serve.estimate import Estimate
from chipwise.serve.quant import KV_PRECISIONS, check_precision, check_weight_precision, dequantised_note
from chipwise.serve.search import pareto
from chipwise.serve.sim.policies import check_router
from chipwise.serve.speculation import Drafting, check_drafter_context
from chipwise.workload.bounds import MAX_CHIPS, MAX_SIMULATED
from chipwise.workload.counts import is_count
from chipwise.workload.lengths import LengthDist
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model
from chipwise.workload.serve_scenario import DEFAULT_ROUTER
from chipwise.workload.serving_job import ServingJob

#: decode pools are searched on the chips of this many of the cheapest colocated options
DECODE_CHIPS = 4


def plan_serving(
    catalog: Catalog,
    model_name: str,
    hardware_ids: Sequence[str],
    load: Load,
    input_tokens: int | LengthDist,
    output_tokens: int | LengthDist,
    slo: str | Mapping[str, Any] | None = None,
    precision: str = "auto",
    kv_precision: str | None = None,
    engine: str | None = None,
    pricing: str = "on-demand",
    region: str | None = None,
    requests: int | None = None,
    disaggregated: bool | None = None,
    verify: int = 3,
    speculative: str | None = None,
    progress: Progress | None = None,
    router: str = DEFAULT_ROUTER,
    workers: int = 1,
    provider: str | None = None,
    utilisation: float | None = None,
) -> dict[str, Any]:
    """Rank the listed hardware by the cost of the cheapest fleet that serves the load within the SLO: per hour
    under an open-loop rate, per million output tokens under a fixed concurrency or offline (`speculative`:
    'mtp:3', 'eagle:3@0.8', 'draft:MODEL:K@A' for the decoding replicas, or several of them and 'none' separated
    by commas, each priced as its own option; `router`: how requests are spread over the replicas,
    serve.sim.policies.ROUTERS; `provider`: only that cloud's prices; `utilisation`: an owned fleet's share of
    calendar hours in paid work, each hour served paying for the idle ones, as plan train prices it). The prompt and
    answer lengths are whole counts or distributions (LengthDist), which the checks draw. `progress(what, done,
    total)` hears of each chip searched and each option simulated. `workers` > 1 lets the chips' searches and the
    simulated checks run side by side in that many copies of this process where it may fork (pools.fork_safe),
    else the checks in fresh processes where they are long (verify_options); a caller that allows that runs from a
    script whose top level is guarded (`if __name__ == "__main__"`), as the `chipwise` command is. The answer is
    the same on any number of processes."""
    stop_if_rerun("plan_serving")  # a worker re-running an unguarded script: before the search, not after
    start = time.perf_counter()
    # a utilisation of rented chips, a provider of owned ones, a region of another cloud: one line each, as plan
    # train refuses them (--provider had been no option of plan serve, --utilisation neither)
    check_economics_options(catalog, pricing, region, provider, utilisation, None)
    check_router(router)
    _check_run_options(workers, verify, progress)
    verify = int(verify)  # 3.0 sliced no list
    model = load_model(catalog, model_name)
    if engine:
        check_engine_model(check_engine_name(engine), model)  # by the names users give: not the base profile
    asked_precision = precision  # 'auto' reaches each engine: Neuron loads gpt-oss's MXFP4 experts as bf16
    precision = check_weight_precision(precision, model)
    if kv_precision:
        check_precision(kv_precision, KV_PRECISIONS, "KV-cache")
    asked = [drafting_for(catalog, model, option) for option in speculation_options(speculative)]
    # an option given twice ('none,none', 'mtp:3,mtp:3') is searched once: its rows had been ranked twice
    draftings = [d for i, d in enumerate(asked) if d not in asked[:i]]
    for drafting in draftings:
        check_engine_drafts(engine, drafting)
    targets = _checked_targets(slo, load)
    job = _checked_job(model, load, LengthDist.of(input_tokens), LengthDist.of(output_tokens), requests, router)
    for drafting in draftings:  # before the search, which would find no shape (each set up with the drafter)
        if drafting is not None:
            check_drafter_context(drafting.model, job.max_input + job.max_output)
    check_tpot_target(targets, job.output.maximum)
    hw = hardware(catalog)
    # a hybrid scale-up system (the Trainium4 + GB300 NVLink Fusion rack) is searched as its member chips, each
    # on its own, and split between them with the KV cache over its fabric (kv_path): named as one system, it had
    # run only its first chip's options
    racks = {hid: list(hw.system(hid).members) for hid in hardware_ids if hw.system(hid).hybrid}
    hardware_ids = [c for hid in hardware_ids for c in racks.get(hid, [hid])]
    # prefill/decode splits: under an open-loop rate unless refused (False); under a closed loop where asked for
    # (True), sized for the rate its users bring (serving_split.sized_for_rate)
    splits = load.kind == "rate" if disaggregated is None else disaggregated and load.kind in ("rate", "closed")
    tell = progress or (lambda what, done, total: None)
    systems: dict[str, tuple[str, System]] = {}
    for hid in hardware_ids:  # a chip and its own system named both: planned once
        system = priced_system(hw.system(hid), pricing)
        systems.setdefault(system.id, (hid, system))

    def search(system_id: str) -> _Searched:
        """One system searched (_search_chip) into what it alone found."""
        found = _Searched()
        _search_chip(
            catalog, model, systems[system_id][1], job, targets, draftings, engine, asked_precision, kv_precision,
            pricing, region, splits, found, provider=provider, utilisation=utilisation,
        )  # fmt: skip
        return found

    found = _Searched()
    steps = len(hardware_ids) + verify
    # side by side in copies of this process where it can fork, each system's search its own and merged in the
    # order asked for, so the answer is the same (Llama-3.1-70B over 30 chips on two cores: 0.71 -> 0.39-0.44 s)
    with forked_pool(workers, search) as (submit, search_processes):
        pending = [(hid, submit(system_id)) for system_id, (hid, _) in systems.items()]
        for i, (hid, part) in enumerate(pending):
            found.merge(waited(part, partial(tell, f"searching {hid}", i, steps)))  # the bar kept moving meanwhile
    rows, skipped = found.rows, found.skipped
    if splits and found.prefill_options:
        # decode pools of the chips whose colocated fleets are cheapest (a decode pool carries the same answers)
        found.decode_inputs.sort(key=lambda d: d[0])
        decode_options = [o for _, args in found.decode_inputs[:DECODE_CHIPS] for o in decode_option(*args)]
        split, unpaired = disaggregated_rows(
            catalog, model, job, targets, found.prefill_options, decode_options, pricing
        )
        rows.extend(split)
        skipped.extend(unpaired)
    _drop_oversized(rows, skipped, load)
    for r in rows:  # the chips priced by a catalog estimate (no offer found), as the ranking marks them
        pools = zip(r["hardware"].split(SPLIT_MARK), r["system"].split(SPLIT_MARK), strict=True)
        r["price_estimated"] = list(dict.fromkeys(c for c, sid in pools if sid in found.estimated))
    rows.sort(key=lambda r: rank_order(r, load))
    verified, check_processes = _checked_cheapest(
        catalog, model, model_name, job, targets, rows, verify, pricing, region, tell, len(hardware_ids), workers,
        provider=provider, utilisation=utilisation,
    )  # fmt: skip
    for r in rows:
        for key in [k for k in r if k.startswith("_")]:
            del r[key]
    return {
        "kind": "plan-serve",
        "model": model.name,
        "model_alias": model.alias or None,  # as given, where not the id ("model" had read "alias = id")
        "load": {
            "kind": load.kind,
            "label": load.label(),
            "arrival_rate_per_s": load.rate or None,
            "concurrency": load.concurrency or None,
        },
        # the mean lengths (whole counts where every request has them), and each as a scenario takes it (a count
        # or a distribution's mapping)
        "input_tokens": _mean_length(job.input),
        "output_tokens": _mean_length(job.output),
        "input_lengths": job.input.scenario_value(),
        "output_lengths": job.output.scenario_value(),
        "precision": precision,
        "kv_precision": kv_precision,  # the KV cache asked for (None: each engine's default)
        "slo": targets,
        "router": router,
        "pricing": pricing,
        "region": region,
        "provider": provider,
        "utilisation": utilisation,
        "price_notes": list(found.price_notes.values()),
        "precision_notes": dict(found.precision_notes),  # by chip: a view notes the chips of the rows it shows
        "unpriced": found.unpriced,
        "price_estimates": dict(found.estimated.values()),  # by chip, as the footnote names them
        "splits": splits,  # whether prefill/decode pool splits were searched
        "best": verified[0] if verified else None,
        "results": rows,
        "verified": verified,
        "pareto": found.fronts,
        "skipped": skipped,
        "search": {
            "evaluated": found.evaluated,
            "seconds": time.perf_counter() - start,
            "search_processes": search_processes,  # 1: the chips were searched in this process
            "check_processes": check_processes,  # 1: the simulated checks ran in this process
            **({"hybrid_members": racks} if racks else {}),
        },
    }


def _check_run_options(workers: int, verify: int, progress: Progress | None) -> None:
    """Refuse, in one line, worker and check counts that are not whole numbers and a progress that is no function."""
    check_workers(workers)
    # 0 ranks by the estimate alone (the API asks for 1 or more); -1 had done so in silence, 'x' raised a TypeError
    if not (is_count(verify) or (verify == 0 and not isinstance(verify, bool))):
        raise ChipwiseError(
            f"verify {verify!r} is not a whole number of options to simulate. Fix: give e.g. 3 (the default)."
        )
    if progress is not None and not callable(progress):  # 5 had raised a TypeError at the first chip searched
        raise ChipwiseError(
            f"progress {progress!r} is not a function. Fix: give a function of (what, done, total), or None."
        )


def _checked_targets(slo: str | Mapping[str, Any] | None, load: Load) -> Targets:
    """The SLO's targets (check_slo); a target on first tokens or whole requests of an offline run, whose requests
    all queue at once, is refused."""
    targets = check_slo(slo)
    queued = [k for k in targets if k.startswith(("ttft", "e2e")) and load.kind == "offline"]
    if queued:
        raise ChipwiseError(
            f"an offline run queues every request at once, so its first tokens wait for the requests ahead of them, "
            f"as many as the run has: {', '.join(queued)} does not describe the deployment. Fix: give a TPOT target "
            "only, or an arrival rate or a number of users."
        )
    return targets


def _mean_length(dist: LengthDist) -> float:
    """A length's mean as the report gives it: a whole count where every request has it."""
    return int(dist.mean) if dist.kind == "fixed" else dist.expected


def _checked_job(
    model: ModelSpec, load: Load, input_tokens: LengthDist, output_tokens: LengthDist, requests: int | None, router: str
) -> ServingJob:
    """The job every option is searched and simulated for: the lengths at the load, routed by `router`, with the
    requests a check simulates (VERIFY_REQUESTS unless given: a whole number up to MAX_SIMULATED)."""
    if requests is not None and not (is_count(requests) and requests <= MAX_SIMULATED):
        raise ChipwiseError(
            f"requests {requests!r} is not a whole number from 1 to {MAX_SIMULATED:,} (the requests each check "
            "simulates). Fix: give e.g. 5000."
        )
    return ServingJob(
        model=model,
        input=input_tokens,
        output=output_tokens,
        load=load,
        requests=requests or VERIFY_REQUESTS,
        router=router,
    )


@dataclass
class _Searched:
    """What the search of the chips found: the ranking rows and the chips not ranked, each chip's Pareto front, the
    systems priced outside the region, unpriced or priced by a catalog estimate, a split's prefill options and its
    decode options' arguments, and the replica shapes evaluated."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    fronts: dict[str, list[dict[str, float | None]]] = field(default_factory=dict)
    price_notes: dict[str, str] = field(default_factory=dict)  # systems priced outside the region asked for
    unpriced: dict[str, str] = field(default_factory=dict)  # systems with no price, and why
    estimated: dict[str, tuple[str, str]] = field(default_factory=dict)  # priced by a catalog estimate: (chip, how)
    precision_notes: dict[str, str] = field(default_factory=dict)  # chips whose engine loads the weights otherwise
    prefill_options: list[PrefillOption] = field(default_factory=list)
    decode_inputs: list[tuple[float, tuple[Any, ...]]] = field(default_factory=list)  # ($/h, decode_option's args)
    evaluated: int = 0

    def merge(self, part: _Searched) -> None:
        """Add what another system's search found, as if it had been searched into this one (_search_chip): a
        chip's first front stays, a later note on a system or chip replaces an earlier one."""
        self.rows.extend(part.rows)
        self.skipped.extend(part.skipped)
        for chip, front in part.fronts.items():
            self.fronts.setdefault(chip, front)
        self.price_notes.update(part.price_notes)
        self.unpriced.update(part.unpriced)
        self.estimated.update(part.estimated)
        self.precision_notes.update(part.precision_notes)
        self.prefill_options.extend(part.prefill_options)
        self.decode_inputs.extend(part.decode_inputs)
        self.evaluated += part.evaluated


def _search_chip(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    job: ServingJob,
    targets: Mapping[str, float],
    draftings: Sequence[Drafting | None],
    engine: str | None,
    precision: str,
    kv_precision: str | None,
    pricing: str,
    region: str | None,
    splits: bool,
    found: _Searched,
    *,
    provider: str | None = None,
    utilisation: float | None = None,
) -> None:
    """One chip's system searched for each drafting option, into `found`: the cheapest colocated fleet's ranking row
    and price, the chip's Pareto front, and (`splits`) its prefill option and its decode options' arguments; a chip
    that no option runs on is not ranked, with the first option's reason."""
    failures: list[str] = []
    prefilled = False
    for drafting in draftings:
        try:
            name = engine_for(system, engine, model)
            eng = engine_profile(catalog, name, system.chip.family)
            weight, kv = precisions(precision, kv_precision, eng, model, system)
            if note := dequantised_note(model.released_precision, weight, eng.engine, system.chip):
                found.precision_notes[system.chip.id] = note  # the header's precision is not what this chip holds
            choice, est, _ = choose_any(model, system, eng, job, weight, kv, targets, drafting)
        except (InfeasibleError, ChipwiseError) as exc:
            failures.append(str(exc))
            missed = exc.estimate if isinstance(exc, InfeasibleError) else None
            found.evaluated += exc.searched if isinstance(exc, InfeasibleError) else 0
            if isinstance(missed, Estimate) and system.chip.id not in found.fronts:
                found.fronts[system.chip.id] = _front(missed)  # saturated replicas: no SLO in it
            continue
        found.evaluated += len(est.cand)
        price = _chip_price(catalog, system, pricing, region, found, provider, utilisation)
        row = colocated_row(catalog, system, name, choice, price, job.load, job.mean_output)
        row["_search"] = ChipSearch(eng, weight, kv, drafting, price, tuple(np.unique(est.cand.tp).tolist()))
        found.rows.append(row)
        if system.chip.id not in found.fronts:  # the front does not depend on how decoding drafts
            found.fronts[system.chip.id] = _front(est)
        # every system its prefill pool, once (it does not depend on how decoding drafts): keyed by chip with the
        # front, only the first-listed of two systems of one chip had one, the answer following --hardware's order
        # (Llama 3.1 70B fp8 at 10 req/s, 8,192 in / 512 out, on azure-nd-h100-v5,p5.48xlarge had read 36 H100s
        # at $247.68/h; it now reads p5.48xlarge>p5.48xlarge, 24 at $165.12/h, as the other order did)
        if splits and not prefilled:
            ttft_limit = targets.get("ttft_p99", math.inf)
            found.prefill_options.append(
                prefill_option(model, system, name, eng, est, weight, kv, job, price, ttft_limit)
            )
            prefilled = True
        if splits:
            args = (model, system, name, eng, job, weight, kv, targets, drafting, price)
            found.decode_inputs.append((row["cost_usd_per_hour"], args))
    if len(failures) == len(draftings):
        found.skipped.append({"hardware": system.chip.id, "system": system.id, "reason": failures[0]})


def _chip_price(
    catalog: Catalog,
    system: System,
    pricing: str,
    region: str | None,
    found: _Searched,
    provider: str | None = None,
    utilisation: float | None = None,
) -> RankingPrice:
    """A system's chip-hour price (`provider`'s only where given; owned: at `utilisation`), with the scale-out
    network's beside it for the rows whose deployment uses it (serving_economics.network_price: owned only), noting in
    `found` a system with no price, one priced by a catalog estimate and one priced outside the region asked for."""
    price, record, quote = chip_hour_price(catalog, system, pricing, region, provider, utilisation=utilisation)
    if record is None:
        found.unpriced[system.id] = f"{system.chip.id}: {price_note(catalog, system, pricing, provider)}"
    if record is not None and catalog_estimate(record):  # a --set price is the user's: no §
        found.estimated[system.id] = (system.chip.id, str(record.get("derivation", "")))
    if quote is not None and not quote.region_matched:
        found.price_notes[system.id] = (
            f"{system.id} ({system.chip.id}): no {region} {pricing} price; {quote.region or 'another'}'s"
        )
    return RankingPrice(price, network_price(catalog, system, pricing, region, price, utilisation))


def _drop_oversized(rows: list[dict[str, Any]], skipped: list[dict[str, str]], load: Load) -> None:
    """Take the fleets past the largest planned (MAX_CHIPS) out of `rows` into `skipped`, with their reason, as a
    chip that cannot run the load; a load that no chip serves within it is refused as input (1e9 req/s had sized
    67 million H100s)."""
    too_big = [r for r in rows if r["chips"] > MAX_CHIPS]
    if too_big and len(too_big) == len(rows):
        least = min(too_big, key=lambda r: r["chips"])
        where = f"serving {load.label()} on {least['hardware']}"
        raise ChipwiseError(f"{fleet_problem(least['chips'], where)}.")
    for r in too_big:
        rows.remove(r)
        reason = f"{fleet_problem(r['chips'], 'serving the load')}."
        skipped.append({"hardware": r["hardware"], "system": r["system"], "reason": reason})


def _checked_cheapest(
    catalog: Catalog,
    model: ModelSpec,
    model_name: str,
    job: ServingJob,
    targets: Mapping[str, float],
    rows: list[dict[str, Any]],
    verify: int,
    pricing: str,
    region: str | None,
    tell: Progress,
    searched: int,
    workers: int,
    *,
    provider: str | None = None,
    utilisation: float | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The `verify` cheapest ranked options simulated (verify_options), and the processes they ran on: beside them
    the cheapest on fitted engine figures where every one of them runs on an engine's defaults, and (an open loop
    with an SLO) second looks at the other shapes of the chips whose check grew. Progress counts on from the
    `searched` chips; `provider` and `utilisation` price the checks as the ranking (plan_serving)."""
    steps = searched + verify
    checks = rows[:verify]
    # checks all on an engine's defaults (no serving run of its chip family fitted) are answered beside the
    # cheapest option on fitted figures, simulated too: the estimate's alone had named one that misses its SLO
    fitted = next((r for r in rows[len(checks) :] if not r.get("engine_defaults")), None)
    if checks and all(r.get("engine_defaults") for r in checks) and fitted is not None:
        fitted["_rank"] = rows.index(fitted) + 1
        checks.append(fitted)
        steps += 1
    verified, check_processes = verify_options(
        catalog, model, model_name, job, targets, checks, pricing, region, tell, searched, steps, workers,
        provider, utilisation,
    )  # fmt: skip
    if targets and job.load.kind == "rate":
        verified = second_looks(
            catalog, model, model_name, job, targets, rows, verified, pricing, region, provider, utilisation
        )
    tell("done", steps, steps)
    return verified, check_processes


def check_split_load(disaggregated: bool | None, load: Load, option: str, rate_option: str) -> None:
    """A split asked for (`disaggregated` True, not just allowed) needs a load to size its pools by, an arrival rate
    or a closed loop's users: an offline run is one line naming `option` and the fix, not a ranking without
    splits."""
    if disaggregated and load.kind == "offline":
        raise ChipwiseError(
            f"{option}: pool splits are sized by an arrival rate or a closed loop's users, and an offline run has "
            f"neither. Fix: give {rate_option}, or leave {option} out."
        )


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
