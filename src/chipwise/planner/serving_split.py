"""`plan serve`'s prefill/decode-disaggregated options: each chip's prefill option and decode options, paired
across chips (or on one), sized for the load and for the KV links between the pools, and priced."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.economics.providers import network_gap
from chipwise.economics.rental import filled
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware.objects import System
from chipwise.planner.serving_breakdown import prefill_alone, prefill_full
from chipwise.planner.serving_choice import choose_any
from chipwise.planner.serving_deployment import (
    PREFILL_SIZING_LOAD,
    decode_targets,
    prefill_replicas,
    prefill_tokens_per_s,
)
from chipwise.planner.serving_economics import RankingPrice, per_mtok, rented_chips, split_network
from chipwise.planner.serving_figures import engine_carried, engine_fitted_on
from chipwise.planner.serving_plan_rows import (
    DecodeOption,
    PrefillOption,
    SplitPools,
    plan_brief,
    ranking_cost,
    row_setup,
)
from chipwise.planner.serving_pool import PREFILL_POOL_BATCH
from chipwise.planner.serving_report import whole_count
from chipwise.serve.build import cached_prefix, setup_replica
from chipwise.serve.disaggregated import KVTransfer
from chipwise.serve.engine import EngineProfile, engine_has, engines_with, token_budget
from chipwise.serve.estimate import Estimate
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.queueing import slot_wait
from chipwise.serve.sim.arrivals import offered_request_rate
from chipwise.serve.speculation import Drafting
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.serving_job import ServingJob


def prefill_option(
    model: ModelSpec,
    system: System,
    engine: str,
    eng: EngineProfile,
    est: Estimate,
    weight: str,
    kv: str,
    job: ServingJob,
    price: RankingPrice,
    ttft_limit: float = math.inf,
) -> PrefillOption:
    """The replica shape with the most prompt tokens/s per chip, of those whose prompt alone leaves room in the
    TTFT target (disaggregated_rows' test: twice the prompt within it), with its chip-hour `price` (a PrefillOption).
    A prefill replica encodes the prompts queued for it together, each adding its own work to the iteration
    (Estimate.prefill_work_s, without the per-iteration costs a lone prompt pays). Its batch cap is what its KV
    cache holds of such prompts (of the job's mean length), at most PREFILL_POOL_BATCH: a stated plan is held to
    it; its token budget takes the longest prompt."""
    prompt = job.mean_input
    ok = est.fits & (2.0 * est.prefill_s <= ttft_limit)
    ok = ok if ok.any() else est.fits  # none in time: the fastest per chip, which the pairing then drops
    pf_tps = np.where(ok, prompt / np.maximum(est.prefill_work_s, 1e-9), 0.0)
    per_chip = pf_tps / est.chips
    i = int(np.argmax(per_chip))
    c = est.cand
    held = int(est.kv_tokens[i] // (prompt + 1))
    plan = ReplicaPlan(
        int(c.tp[i]),
        int(c.pp[i]),
        int(c.ep[i]),
        bool(c.adp[i]),
        max(1, min(PREFILL_POOL_BATCH, held)),
        token_budget(eng, job.max_input, memory_bytes=system.chip.hbm_capacity),
        eng.chunked_prefill,
        weight,
        kv,
        adp_balance=bool(c.balance[i]),
    )
    return PrefillOption(system, engine, plan, float(est.chips[i]), float(est.prefill_s[i]), price)


def decode_option(
    model: ModelSpec,
    system: System,
    engine: str,
    eng: EngineProfile,
    job: ServingJob,
    weight: str,
    kv: str,
    targets: Mapping[str, float],
    drafting: Drafting | None,
    price: RankingPrice,
) -> list[DecodeOption]:
    """The decode pool this chip would run beside a prefill pool: the shape and count that carry the load within
    the TPOT and end-to-end targets when no prompt shares its iterations, with its chip-hour `price`: one
    DecodeOption (none if none does)."""
    decoding = decode_targets(targets)
    try:
        choice, _, _ = choose_any(model, system, eng, job, weight, kv, decoding, drafting, decode_only=True)
    except (InfeasibleError, ChipwiseError):
        return []
    return [DecodeOption(system, engine, choice, price)]


def disaggregated_rows(
    catalog: Catalog,
    model: ModelSpec,
    job: ServingJob,
    targets: Mapping[str, float],
    prefills: list[PrefillOption],
    decodes: list[DecodeOption],
    pricing: str = "on-demand",
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Prefill pool of one chip, decode pool of another (or the same): sized for the load, priced; the cheapest
    pairs are kept, and a note of the chips left unpaired because their engines cache KV in different precisions.
    The decode pool runs without prefill interference, so its TPOT is its decode step. A chip whose engine hands no
    KV cache over (serve.engine.engine_has kv_handover) makes no split, with a note. `pricing`: the mode the options
    are priced in, which decides which pairs a network joins (providers.network_gap)."""
    prefills, decodes, kept_whole = _handing_over(catalog, prefills, decodes)
    out: list[dict[str, Any]] = []
    unpaired: dict[str, str] = {}  # chips left unpaired for their engine's KV precision
    apart: dict[str, str] = {}  # pairs no network joins (providers.network_gap), each with its fix
    searched = {p.system.id for p in prefills} | {d.system.id for d in decodes}
    label = _pair_label(prefills, decodes)
    ttft_limit = targets.get("ttft_p99", math.inf)
    longest = job.max_input + job.max_output
    for pf in prefills:
        if not math.isfinite(pf.price.usd) or pf.prefill_s * 2.0 > ttft_limit:
            continue
        try:  # the replica the split's check and predict run (row_setup), sized as predict sizes its pool
            hits = cached_prefix(job.mean_input, job.prefix_hit_rate)
            pre = setup_replica(
                catalog, model, pf.system, pf.engine, pf.plan, job.mean_input, 1.0, longest, typical_cached=hits
            )
        except (InfeasibleError, ChipwiseError):
            continue  # a prefill replica that cannot be set up makes no split
        # its first token: one mean prompt alone at the job's prefix-cache hits, as the pool is sized, and the queue;
        # where prompt lengths vary, at least the 99th-percentile prompt's own prefill (lognormal prompts of mean
        # 2,000 tokens had ranked an MI300X TP1 prefill pool at a p99 of 1.03 s, whose check read 2.58 s)
        alone = prefill_alone(pre, job.mean_input, job.prefix_hit_rate)["seconds"]
        full = prefill_full(pre, job.mean_input, job.prefix_hit_rate)
        encodes = prefill_tokens_per_s(pre, job)  # prompt tokens/s a replica: the pool's count follows the rate
        tail = job.input_quantile(0.99)
        longest_alone = prefill_alone(pre, tail, job.prefix_hit_rate)["seconds"] if tail > job.mean_input else 0.0
        for dc in decodes:
            choice = dc.choice
            if not math.isfinite(dc.price.usd):
                continue
            sizing = sized_for_rate(job, alone, choice.tpot)
            lam = sizing.load.rate
            n_pre = filled(pf.system.rental_chips, pf.chips, prefill_replicas(sizing, encodes))
            first = max(prefill_p99(alone, n_pre, lam, full, pre.steps.ranks), longest_alone)
            gap = network_gap(catalog, pf.system, dc.system, searched, pricing)
            if gap:  # the KV cache would cross providers
                apart[label(pf.system, dc.system)] = gap.partition("no network joins them. ")[2]
                continue
            kv_pre, kv_dec = pf.plan.kv_precision, choice.plan.kv_precision
            if kv_pre != kv_dec:  # the handed-over cache has one format (planner.serving_deployment._handed_over_kv)
                unpaired[pf.system.chip.id] = kv_pre
                unpaired[dc.system.chip.id] = kv_dec
                continue
            row: dict[str, Any] = {
                "hardware": f"{pf.system.chip.id}>{dc.system.chip.id}",
                "system": f"{pf.system.id}>{dc.system.id}",
                "engine": f"{pf.engine}>{dc.engine}",
                "projected": pf.system.projected or dc.system.projected,
                "projected_chips": sorted({o.system.chip.id for o in (pf, dc) if o.system.projected}),
                "engine_defaults": sorted(
                    {o.system.chip.id for o in (pf, dc) if not engine_fitted_on(catalog, o.engine, o.system)}
                ),
                "engine_carried": engine_carried(catalog, [(o.engine, o.system) for o in (pf, dc)]),
                "disaggregated": True,
                "estimate": {
                    "tpot_s": choice.tpot,
                    "ttft_p99_s": first,
                    "output_tokens_per_s": lam * job.mean_output,
                },
            }
            row["_sizing"] = sizing
            out.append(_sized_split(catalog, row, pf, n_pre, dc, choice.replicas, lam * job.mean_output))
    out.sort(key=lambda r: ranking_cost(r, job.load))
    # the cheapest pairs' KV links, each pool's replicas sending or receiving one prompt's cache at a time
    sized = [_link_sized(catalog, model, r.pop("_sizing"), r, pricing) for r in out[:10]]
    out = sorted(
        (r for r in sized if r["estimate"]["ttft_p99_s"] <= ttft_limit), key=lambda r: ranking_cost(r, job.load)
    )
    notes: list[dict[str, str]] = []
    late = [r for r in sized if r["estimate"]["ttft_p99_s"] > ttft_limit]
    if late:
        notes.append(
            {
                "hardware": "splits",
                "system": "",
                "reason": f"{len(late)} of the cheapest splits ({', '.join(r['hardware'] for r in late[:3])}"
                f"{', ...' if len(late) > 3 else ''}) were dropped: their estimated TTFT p99 with the KV handover "
                "(the transfer, its wait for a link, the decode pool's wait for a slot) exceeds the target",
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
        notes.append({"hardware": "splits", "system": "", "reason": _apart_note(apart)})
    if kept_whole:
        notes.append(kept_whole)
    return out[:5], notes


def sized_for_rate(job: ServingJob, prefill_s: float, tpot: float) -> ServingJob:
    """The open-loop job a split's pools and KV links are sized for: the job itself under an arrival rate; under a
    closed loop, its users each sending a request as their last one ends, at most N / (a mean prompt's prefill
    alone + a mean answer at the decode pool's TPOT) requests/s. The most the users can bring: queued prompts and
    the KV handover slow them (the simulated check measures what they do). DeepSeek-R1's 64 users of 16,000-token
    prompts and 64-token answers on TPU v7 (TTFT p99 10 s, TPOT p99 30 ms) had no split to try ('a closed loop has
    no arrival rate'), and no count of colocated replicas met both targets."""
    if job.load.kind == "rate":
        return job
    rate = job.load.concurrency / max(prefill_s + job.mean_output * tpot, 1e-9)
    return replace(job, load=Load("rate", rate=rate))


def _handing_over(
    catalog: Catalog, prefills: list[PrefillOption], decodes: list[DecodeOption]
) -> tuple[list[PrefillOption], list[DecodeOption], dict[str, str] | None]:
    """The prefill and decode options whose engine hands a prompt's KV cache from a prefill pool to a decode pool
    (serve.engine.engine_has kv_handover), and a 'not ranked' note naming the others (None where there are none):
    optimum-neuron on inf2 and transformers-neuronx (neuron) on trn1, which have no such transfer, had been ranked as
    inf2>inf2 and trn1>trn1 splits."""

    def hands_over(o: PrefillOption | DecodeOption) -> bool:
        return engine_has(catalog, o.engine, o.system.chip.family, "kv_handover")

    options: list[PrefillOption | DecodeOption] = [*prefills, *decodes]
    whole = list(dict.fromkeys(f"{o.engine} on {o.system.chip.id}" for o in options if not hands_over(o)))
    if not whole:
        return prefills, decodes, None
    first = next(o for o in options if not hands_over(o))
    chip = first.system.chip
    others = [e for e in engines_with(catalog, "kv_handover", chip.family, chip.vendor) if e != first.engine]
    # the engines by name beside the line, for a planner or an interface that words its fix otherwise (plan
    # lifecycle; the web page and the Python API: worded_for)
    note = {
        "hardware": "splits",
        "system": "",
        "reason": handover_note(whole, handover_fix(others)),
        "no_handover": ", ".join(whole),
        "handover_engines": ", ".join(others),
    }
    return [p for p in prefills if hands_over(p)], [d for d in decodes if hands_over(d)], note


#: how each interface names the engine option in a fix: (the option, the quote around each engine). The web page's
#: split note had named the command line's '--engine', where its field is `engine` and the Python API's keyword
#: engine=
ENGINE_OPTIONS: dict[str, tuple[str, str]] = {
    "cli": ("--engine ", ""),
    "web": ("engine ", '"'),
    "api": ("engine=", "'"),
}


def handover_fix(engines: Sequence[str], interface: str = "cli") -> str:
    """The fix of the handover note ('. Fix: --engine vllm-neuron to price such splits'), naming `engines` as
    `interface` (ENGINE_OPTIONS) takes them; '' where there are none."""
    if not engines:
        return ""
    option, quote = ENGINE_OPTIONS[interface]
    named = " or ".join(f"{quote}{e}{quote}" for e in engines)
    return f". Fix: {option}{named} to price such splits"


def worded_for(skipped: Sequence[dict[str, Any]], interface: str) -> list[dict[str, Any]]:
    """plan serve's 'not ranked' lines with the handover note's fix worded for `interface` (ENGINE_OPTIONS), from
    the engines it carries by name (`no_handover`, `handover_engines`); every other line as it is."""

    def worded(entry: dict[str, Any]) -> dict[str, Any]:
        missing = entry.get("no_handover")
        if not missing or "handover_engines" not in entry:
            return entry
        engines = [e for e in str(entry["handover_engines"]).split(", ") if e]
        return {**entry, "reason": handover_note(str(missing).split(", "), handover_fix(engines, interface))}

    return [worded(e) for e in skipped]


def handover_note(missing: Sequence[str], fix: str) -> str:
    """The line on the `missing` engines ('neuron on trn1') that make no prefill>decode split, then `fix`."""
    theirs = "its engine has" if len(missing) == 1 else "their engines have"
    return (
        f"{', '.join(missing)} made no prefill>decode split: {theirs} no KV-cache hand-over from a prefill to a "
        f"decode pool (engines.ENGINE.kv_handover){fix}"
    )


def _pair_label(prefills: list[PrefillOption], decodes: list[DecodeOption]) -> Callable[[System, System], str]:
    """How a pair left unpaired is named: 'a>b' by chip, or by system where a chip is searched in several systems,
    as the ranking's rows name them ('h100-sxm>tpu-v6e' had stood for p5.48xlarge>tpu-v6e-256, the pair skipped,
    beside gcp-a3-megagpu-8g>tpu-v6e-256, ranked)."""
    options: list[PrefillOption | DecodeOption] = [*prefills, *decodes]
    systems = {o.system.id: o.system.chip.id for o in options}
    by_system = len(set(systems.values())) < len(systems)
    return lambda p, d: f"{p.id}>{d.id}" if by_system else f"{p.chip.id}>{d.chip.id}"


def _apart_note(apart: dict[str, str]) -> str:
    """The 'not ranked' line of the pairs no network joins: how many, the first three, and the first's fix (or that
    its chips are paired already on systems searched too: network_gap)."""
    pairs = sorted(apart)
    head, _, fix = apart[pairs[0]].partition(": ")  # 'Fix: ...', or 'Nothing to fix: ...'
    return (
        f"{len(pairs)} prefill>decode {'pair' if len(pairs) == 1 else 'pairs'} ({', '.join(pairs[:3])}"
        f"{', ...' if len(pairs) > 3 else ''}) {'was' if len(pairs) == 1 else 'were'} not paired: no provider rents "
        f"both and they cannot both be bought, so no network carries their KV cache. {head} ({pairs[0]}): {fix}"
    )


def _sized_split(
    catalog: Catalog,
    row: dict[str, Any],
    pf: PrefillOption,
    n_pre: int,
    dc: DecodeOption,
    n_dec: int,
    out_tps: float,
    network: bool | None = None,
) -> dict[str, Any]:
    """`row` with its pools' replica counts, chips and prices (the pools under '_split'): each pool's chips at its
    price with the scale-out network's where the split uses it, `network` (None: as its pools' sizes say,
    serving_economics.split_network), as its check charges them. Owned, Llama 3.1 70B's TP2 x3 prefill and TP4 x1
    decode pools on p5.48xlarge, 10 H100 past one system's 8, had ranked at $14.65/h beside a check of $16.61/h over
    efa-v2; they now rank with the fabric's capex, colocation and power."""
    choice = dc.choice
    pools = [(pf.system, pf.chips, n_pre), (dc.system, choice.chips, n_dec)]
    billed = rented_chips(pools)
    network = split_network(catalog, pools) if network is None else network
    cost = billed[0] * pf.price.per_chip_hour(network) + billed[1] * dc.price.per_chip_hour(network)
    return {
        **row,
        "plan": {"prefill": plan_brief(pf.plan, n_pre), "decode": plan_brief(choice.plan, n_dec)},
        "chips": whole_count(n_pre * pf.chips + n_dec * choice.chips),
        "billed_chips": whole_count(sum(billed)),
        "cost_usd_per_hour": cost,
        "cost_usd_per_mtok": per_mtok(cost, out_tps),
        "_split": SplitPools(pf, n_pre, dc, n_dec),
    }


#: A split's KV links are sized to carry its prompts' caches at this share of their time at most, the headroom its
#: prefill pool is sized with (a link at 140% of its capacity was priced as meeting a 3 s TTFT: 7 TPU v6e prefill
#: replicas sending 2.9 prompts/s each, 491 ms apiece, over their share of the data-centre network).
LINK_LOAD = PREFILL_SIZING_LOAD


def _link_sized(
    catalog: Catalog, model: ModelSpec, job: ServingJob, row: dict[str, Any], pricing: str = "on-demand"
) -> dict[str, Any]:
    """A split with as many replicas in each pool as its KV links need: lam x (one prompt's transfer time) over
    LINK_LOAD replicas at each end (the simulator queues each replica's transfers on its links), sized again once
    if the pools then leave their scale-up domain for a slower network. Its estimated TTFT gains the handover: the
    client's first token comes from the decode pool (_handover_p99)."""
    resized = 0
    out_tps = job.load.rate * job.mean_output
    while True:
        split: SplitPools = row["_split"]
        pf, n_pre, dc, n_dec = split.prefill, split.prefill_replicas, split.decode, split.decode_replicas
        try:
            transfer = row_setup(catalog, model, job, row, pricing).transfer
        except (InfeasibleError, ChipwiseError):
            return row  # its check reports it
        if transfer is None:
            return row
        need = math.ceil(link_busy(job, transfer) / LINK_LOAD - 1e-9)
        sized = (
            filled(pf.system.rental_chips, pf.chips, max(n_pre, need)),
            filled(dc.system.rental_chips, dc.choice.chips, max(n_dec, need)),
        )
        if sized == (n_pre, n_dec) or resized == 2:
            # priced again by the path the set-up split takes (a hybrid rack's link --set slower than the network)
            spans = pf.chips > pf.system.chips or dc.choice.chips > dc.system.chips
            row = _sized_split(catalog, row, pf, n_pre, dc, n_dec, out_tps, network=transfer.network or spans)
            est = row["estimate"]
            handover = _handover_p99(job, transfer, min(n_pre, n_dec), dc.choice.ttft_p99)
            return {**row, "estimate": {**est, "ttft_p99_s": est["ttft_p99_s"] + handover}}
        row = _sized_split(catalog, row, pf, sized[0], dc, sized[1], out_tps)
        resized += 1


def prefill_p99(prefill_s: float, replicas: int, rate: float, full_s: float = 0.0, ranks: int = 1) -> float:
    """A split's first token out of its prefill pool, at the 99th percentile: one prompt's prefill alone S and the
    wait for one of the pool's `replicas`, each taking a prompt for S at load lambda S over them (an M/D/c queue,
    priced as a batch slot's wait is: queueing.slot_wait), which vanishes as the load does. It had read 2 S at any
    load: Llama 4 Scout's 10.4M-token prompts at 0.001 req/s on two GB200 prefill replicas (S = 1,310 s) had read
    2,620 s where the simulation reads 4,294 s; they read 5,059 s, beside 5,094 s of the colocated option of the
    same capacity (serve.operating.at_rate). A replica of `ranks` attention-DP ranks encodes that many prompts at
    once in `full_s` (serving_breakdown.prefill_full): it is `ranks` servers of full_s each, and a prompt takes from
    S, its replica idle, to full_s, its ranks all busy, in proportion to their share busy. Its lone prompt's S as the
    replica's time had read DeepSeek-R1's TP4 EP4 ADP prefill pool on TPU v7 (S 1.08 s), sized at 27 req/s, as
    loaded past its capacity: a TTFT p99 of 2.5e12 s, and its split was dropped; with its KV handover it reads
    1.90 s where its check reads 2.11 s (four prompts at once take 1.94 s, not four lone prompts' 4.3 s)."""
    if ranks <= 1 or full_s <= 0.0:
        full_s, ranks = prefill_s, 1
    busy = min(rate * full_s / (max(replicas, 1) * ranks), 1.0)
    encoded = prefill_s + busy * max(full_s - prefill_s, 0.0)
    servers = np.asarray(float(max(replicas, 1) * ranks))
    wait = slot_wait(servers, np.asarray(rate * full_s), np.asarray(full_s))[1]
    return encoded + float(wait)


def _handover_p99(job: ServingJob, transfer: KVTransfer, links: int, decode_wait: float) -> float:
    """A split's first token beyond its prefill, at the 99th percentile: a mean prompt's transfer S, its wait for a
    link, and the decode pool's wait for a slot (`decode_wait`, its estimate's TTFT). The routers send each cache
    to the least busy of `links` replicas at each end, so the link queue is an M/D/c one, priced as a batch slot's
    wait is (queueing.slot_wait: Erlang C over c = links at load lambda S, then an exponential tail)."""
    service = transfer.latency_s + transfer.seconds(job.mean_input)
    offered = (offered_request_rate(job) or 0.0) * service
    queue = slot_wait(np.asarray(float(max(links, 1))), np.asarray(offered), np.asarray(service))[1]
    return service + float(queue) + decode_wait


def link_busy(job: ServingJob, transfer: KVTransfer) -> float:
    """Seconds per second the load's KV transfers keep a link busy, all of them on one replica's links."""
    return (offered_request_rate(job) or 0.0) * transfer.seconds(job.mean_input)
