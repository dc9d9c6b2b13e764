"""A serve scenario's deployment: one pool, or a split's prefill and decode pools (the hardware of each, the stated
chips shared between them, the KV-cache precision they hand over in, the prefill replicas the load needs, the
decode pool's share of a TTFT target) and the KV path between them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from chipwise.catalog.loader import Catalog
from chipwise.economics.providers import network_gap
from chipwise.economics.rental import filled
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.planner.serving_breakdown import prefill_full
from chipwise.planner.serving_economics import shares_domain
from chipwise.planner.serving_inputs import engine_for, precisions
from chipwise.planner.serving_pool import build_pool
from chipwise.serve.build import ReplicaSetup
from chipwise.serve.disaggregated import KVTransfer, kv_transfer, pools_rack
from chipwise.serve.engine import engine_profile
from chipwise.serve.plan import chip_count
from chipwise.serve.quant import check_weight_precision, default_kv_precision
from chipwise.serve.simulate import Pool, ServingSetup
from chipwise.workload.lengths import LengthDist
from chipwise.workload.model import ModelSpec
from chipwise.workload.serve_scenario import ServePlan, ServeScenario
from chipwise.workload.serving_job import ServingJob

#: what joins a split's two pools' hardware in its name, prefill first ('h100-sxm>b200'), as predict prints it
SPLIT_MARK = ">"

#: A split's decode pool may take this share of a TTFT target: a request's first token waits there for a batch
#: slot once its KV cache has arrived (the prefill pool's share is held to the other half by
#: serving_split.prefill_option).
DECODE_TTFT_SHARE = 0.5


def decode_targets(targets: Mapping[str, float]) -> dict[str, float]:
    """The targets a split's decode pool is sized for: its TPOT and end-to-end ones, and its share of a TTFT one
    (a decode pool sized without it had a p99 slot wait of 5 s under a 6 s TTFT target)."""
    return {k: v * DECODE_TTFT_SHARE if k.startswith("ttft") else v for k, v in targets.items()}


def build_deployment(
    catalog: Catalog, model: ModelSpec, sc: ServeScenario, job: ServingJob, targets: Mapping[str, float]
) -> tuple[ServingSetup, str, str, str]:
    """The deployment, where its plan came from ('given', 'partial', 'searched'), why a searched one leaves
    some of the scenario's chips idle ('' where it fills them: a split's pools share them out, _spread), and why a
    searched size is what it is: a colocated one's batch limit (build_pool), a split's prefill replicas where the
    load's rate sized them (prefill_sizing_note; '' otherwise)."""
    plan = sc.plan
    router = job.router
    if plan is not None and plan.disaggregated:
        pre_hw, dec_hw = _pool_hardware(catalog, sc.hardware, plan)
        _check_split_sizing(job, plan, sc.chips)
        pre_job = replace(job, output=LengthDist.fixed(1))
        sc = _handed_over_kv(catalog, model, sc, (pre_hw, dec_hw))
        # a prefill replica is set up for the deployment's longest request (a compiled engine's sequence length)
        longest = job.max_input + job.max_output
        pre, n_pre, s1, _, _ = build_pool(catalog, model, sc, pre_job, pre_hw, plan.prefill, None, {}, longest=longest)
        decoding = decode_targets(targets)
        dec, n_dec, s2, _, _ = build_pool(
            catalog, model, sc, job, dec_hw, plan.decode, None, decoding, decode_only=True
        )
        pre_given = getattr(plan.prefill, "replicas", None) is not None
        dec_given = getattr(plan.decode, "replicas", None) is not None
        sized = ""
        if job.load.kind == "rate" and not pre_given:  # sized for the prompt tokens/s, the decode pool as chosen
            encodes = prefill_tokens_per_s(pre, job)
            n_pre = prefill_replicas(job, encodes)
            sized = prefill_sizing_note(job, pre, encodes, n_pre)
        n_pre = n_pre if pre_given else filled(pre.system.rental_chips, pre.chips, n_pre)
        n_dec = n_dec if dec_given else filled(dec.system.rental_chips, dec.chips, n_dec)
        if sc.chips:  # the stated chips, shared out, size the pools
            n_pre, n_dec = _spread(sc.chips, (pre, n_pre, pre_given), (dec, n_dec, dec_given))
            sized = ""
        transfer = kv_path(catalog, model, pre, n_pre, dec, n_dec, sc.pricing)
        pools = (Pool(pre, n_pre, "prefill"), Pool(dec, n_dec, "decode"))
        return ServingSetup(pools, router, transfer), "given" if s1 == s2 == "given" else "partial", "", sized
    if SPLIT_MARK in sc.hardware:  # predict's name for a split's pools ('unknown chip' had pointed to the catalog)
        raise ChipwiseError(
            f"hardware '{sc.hardware}' names a split's two pools (prefill{SPLIT_MARK}decode), but the plan is "
            "colocated. Fix: add plan: {disaggregated: true} to split it (or name each pool's in "
            "plan.prefill.hardware / plan.decode.hardware), or name one chip or system."
        )
    setup, replicas, source, idle, why = build_pool(catalog, model, sc, job, sc.hardware, plan, sc.chips, targets)
    return ServingSetup((Pool(setup, replicas),), router), source, idle, why


def _check_split_sizing(job: ServingJob, plan: ServePlan, chips: int | None) -> None:
    """A split's prefill pool is sized for its prompts' arrival rate (prefill_replicas); a closed loop or an offline
    run has none, so its replicas must be given (or the chips, which the pools share out; plan serve sizes a closed
    loop's split for the most its users bring, serving_split.sized_for_rate, and refuses an offline one): 16 users
    of Llama 3.1 8B on H100s had been given six prefill replicas, searched as 16 users sending one-token requests
    back to back, $48.16/h where one replica meets the same TTFT at $13.76/h."""
    if job.load.kind == "rate" or getattr(plan.prefill, "replicas", None) is not None or chips:
        return
    what = "a closed loop" if job.load.kind == "closed" else "an offline run"
    raise ChipwiseError(
        f"a split's prefill pool is sized by an arrival rate, and {what} has none. Fix: give arrival_rate, or state "
        "plan.prefill.replicas (or chips, which the pools share)."
    )


def _pool_hardware(catalog: Catalog, named: str, plan: ServePlan) -> tuple[str, str]:
    """The (prefill, decode) pools' hardware of a split: each pool's own, else the scenario's `hardware`, which is
    one chip or system for both, or a split's two as predict prints them ('h100-sxm>trn2', each pool its side). A
    `hardware` that contradicts the pools' (a side other than that pool's own, or one chip neither pool runs on) is
    refused: it had been dropped unsaid (h100-sxm above h200 and trn2 pools ran as h200>trn2)."""
    sides = [s.strip() for s in named.split(SPLIT_MARK)]
    if len(sides) > 2 or not all(sides):
        raise ChipwiseError(
            f"hardware '{named}' is not one chip or system, nor a split's two (prefill{SPLIT_MARK}decode, as "
            f"h100-sxm{SPLIT_MARK}b200). Fix: name one for both pools, or one for each."
        )
    given = {role: getattr(getattr(plan, role), "hardware", None) for role in ("prefill", "decode")}
    hw = hardware(catalog)

    def chips(name: str) -> set[str]:  # the chip types a name runs on (a hybrid rack's members)
        system = hw.system(name)
        return {system.chip.id, *system.members}

    if len(sides) == 2:
        for role, side in zip(given, sides, strict=True):
            own = given[role]
            if own is not None and not chips(own) & chips(side):
                raise ChipwiseError(
                    f"hardware '{named}' names {side} for the {role} pool, but plan.{role}.hardware is {own}. Fix: "
                    "make them agree, or drop one."
                )
        return given["prefill"] or sides[0], given["decode"] or sides[1]
    pre, dec = given["prefill"] or named, given["decode"] or named
    if not chips(named) & (chips(pre) | chips(dec)):
        raise ChipwiseError(
            f"hardware '{named}' is neither pool's: plan.prefill.hardware is {pre} and plan.decode.hardware is "
            f"{dec}. Fix: set hardware: {pre}{SPLIT_MARK}{dec} (prefill first), or drop a pool's hardware to run it "
            f"on {named}."
        )
    return pre, dec


def _spread(chips: int, pre: tuple[ReplicaSetup, int, bool], dec: tuple[ReplicaSetup, int, bool]) -> tuple[int, int]:
    """A disaggregated scenario's stated chips shared between its pools, each (setup, replicas, given): a pool
    whose replicas are given keeps them and the other takes the rest; with neither given, the whole chips go in
    proportion to what the load asks of each pool, at least one replica each."""
    (ps, n_pre, pre_given), (ds, n_dec, dec_given) = pre, dec

    def taken(n: int, setup: ReplicaSetup) -> int:  # whole chips n replicas occupy
        return round(Pool(setup, n).chips)

    least_pre, least_dec = taken(1, ps), taken(1, ds)
    if pre_given and dec_given:
        used = taken(n_pre, ps) + taken(n_dec, ds)
        if used != chips:
            raise ChipwiseError(
                f"the plan's pools take {chip_count(used)} ({n_pre} prefill and {n_dec} decode replicas), but the "
                f"scenario says chips: {chips}. Fix: set chips: {used}, or leave one pool's replicas out to fill "
                "the chips."
            )
        return n_pre, n_dec
    if chips < least_pre + least_dec:
        raise InfeasibleError(
            f"chips: {chips} cannot hold a prefill replica ({chip_count(ps.chips)}) and a decode replica "
            f"({chip_count(ds.chips)}). Fix: set chips: {least_pre + least_dec} or more, or lower the pools' tp."
        )
    if pre_given:
        options = [taken(n_pre, ps)]
    elif dec_given:
        options = [chips - taken(n_dec, ds)]
    else:  # the split that fills the most chips, nearest the load's proportion
        options = list(range(least_pre, chips - least_dec + 1))
    if not options or options[0] < least_pre or chips - options[0] < least_dec:
        raise InfeasibleError(
            f"chips: {chips} leaves no room for the {'decode' if pre_given else 'prefill'} pool beside the given "
            f"replicas. Fix: raise chips, or lower the given pool's replicas."
        )

    def split(to_pre: int) -> tuple[int, int, int]:
        pre_n = n_pre if pre_given else math.floor(to_pre / ps.chips + 1e-9)
        dec_n = n_dec if dec_given else math.floor((chips - to_pre) / ds.chips + 1e-9)
        return pre_n, dec_n, taken(pre_n, ps) + taken(dec_n, ds)

    want_pre, want_dec = n_pre * ps.chips, n_dec * ds.chips
    share = want_pre / max(want_pre + want_dec, 1e-9)
    best = max(options, key=lambda to_pre: (split(to_pre)[2], -abs(to_pre - chips * share)))
    n_pre, n_dec, used = split(best)
    if used != chips:
        raise ChipwiseError(
            f"chips: {chips} is not a whole number of prefill replicas ({chip_count(ps.chips)} each) and decode "
            f"replicas ({chip_count(ds.chips)} each); the nearest split takes {chip_count(used)} ({n_pre} prefill, "
            f"{n_dec} decode). Fix: set chips: {used}, or change the pools' tp."
        )
    return n_pre, n_dec


def _handed_over_kv(catalog: Catalog, model: ModelSpec, sc: ServeScenario, chips: tuple[str, str]) -> ServeScenario:
    """A split hands its KV cache from the prefill pool to the decode pool, so both cache it in one precision: the
    one stated, else the engines' default where they agree, else 16-bit (an engine that quantises the KV cache by
    default can keep it unquantised; the other way needs a conversion no engine pair ships)."""
    if sc.kv_precision is not None:
        return sc
    defaults = set()
    for chip in chips:
        system = hardware(catalog).system(chip)
        eng = engine_profile(catalog, engine_for(system, sc.engine, model), system.chip.family)
        defaults.add(precisions(sc.precision, None, eng, model, system)[1])
    if len(defaults) == 1:
        return sc
    weight = check_weight_precision(sc.precision, model)
    return sc.model_copy(update={"kv_precision": default_kv_precision(weight, quantised_kv=False)})


#: A split's prefill pool is sized to be busy this share of its time at most under an open-loop load: the headroom
#: for the bursts of its Poisson arrivals, whose prompts queue for the replicas' iterations while their TTFT runs
#: (plan serve's simulated check then adds replicas where the tail still misses its target).
PREFILL_SIZING_LOAD = 0.7


def prefill_replicas(job: ServingJob, tokens_per_s: float) -> int:
    """The replicas a split's prefill pool needs for an open-loop load's prompt tokens/s at PREFILL_SIZING_LOAD of
    the `tokens_per_s` each encodes (prefill_tokens_per_s), in predict and plan serve alike."""
    return max(1, math.ceil(job.load.rate * job.mean_input / (PREFILL_SIZING_LOAD * tokens_per_s)))


def prefill_sizing_note(job: ServingJob, setup: ReplicaSetup, tokens_per_s: float, replicas: int) -> str:
    """Why a split's prefill pool has the replicas prefill_replicas gave it (and those its rental then holds):
    predict had printed 'TP16 EP16 ADP b64 x8 (partial)' with no word of where the 8 came from."""
    load = job.load.rate * job.mean_input
    prompts = f"{job.mean_input:,.0f}-token prompts"
    prompts = prompts if job.input.kind == "fixed" else f"{prompts} on average"
    ranks = setup.steps.ranks
    each = f"its {ranks} attention-DP ranks a prompt each" if ranks > 1 else "one prompt at a time"
    hits = f", at {job.prefix_hit_rate:.0%} prefix-cache hits" if job.prefix_hit_rate > 0 else ""
    held = filled(setup.system.rental_chips, setup.chips, replicas)
    whole = f"; {held} fill whole {setup.system.id}" if held > replicas else ""
    return (
        f"{replicas} for {job.load.label()} of {prompts} ({load:,.0f} prompt tok/s), each "
        f"replica encoding {tokens_per_s:,.0f} tok/s ({each}{hits}) at most {PREFILL_SIZING_LOAD:.0%} busy{whole}"
    )


def prefill_tokens_per_s(setup: ReplicaSetup, job: ServingJob) -> float:
    """Prompt tokens/s a prefill replica of `setup` encodes with prompts queued for it: one mean prompt on each of
    its attention-DP ranks at once (serving_breakdown.prefill_full; one prompt alone where it has none), at the
    job's prefix-cache hit rate (its hits are cached, not encoded: 0.9 hits of 8,000-token prompts take 0.089 s, not
    0.36 s, and had sized 11 Llama 3.1 70B prefill replicas each busy 15% where 3 keep up). The capacity its queue
    is priced with (serving_split.prefill_p99) and its check's load is read against (serving_check._prefill_load):
    an attention-DP replica had been sized from a prompt spread over its ranks' heads, which it never runs
    (gpt-oss-120b's TP16 EP16 ADP prefill replicas on trn2, 0.56 s a prompt where sixteen take 2.78 s together)."""
    tokens = max(1, round(job.mean_input))
    return setup.steps.ranks * tokens / max(prefill_full(setup, job.mean_input, job.prefix_hit_rate), 1e-9)


def kv_path(
    catalog: Catalog,
    model: ModelSpec,
    pre: ReplicaSetup,
    n_pre: int,
    dec: ReplicaSetup,
    n_dec: int,
    pricing: str = "on-demand",
) -> KVTransfer:
    """The KV path between the pools: one system's scale-up domain, a hybrid domain holding both chip types
    (e.g. an NVLink Fusion rack) where it moves a mean prompt's cache faster than the scale-out network would, or
    that network (refused where no provider rents both systems and they cannot both be bought:
    providers.network_gap; a hybrid domain's link is then the only path). Pools of a system its provider rents in
    units (a TPU slice, an EC2 instance size) share a scale-up fabric only where one unit holds both
    (rental.split_rent); in units of their own, the network. `pricing`: the deployment's mode, whose rule decides
    which systems a network joins (owned: any two chips it buys)."""
    same = shares_domain(pre.system, pre.chips, n_pre, dec.system, dec.chips, n_dec)
    hybrid = pools_rack(catalog, pre.system, pre.chips * n_pre, dec.system, dec.chips * n_dec)
    gap = None if same else network_gap(catalog, pre.system, dec.system, pricing=pricing)
    if gap and hybrid is None:  # a TPU prefill pool beside an EC2 decode pool: the cache would cross clouds
        raise ChipwiseError(gap)
    path = kv_transfer(model, pre, dec, same, hybrid)
    if hybrid is None or gap:
        return path
    # the faster of the hybrid link and the network for the mean prompt: the link had been taken whenever both
    # pools fit (an 8,192-token Llama 3.1 70B prompt's fp8 cache, Trainium4 to GB300 with the link --set to 1 GB/s,
    # had read 872 ms over it; it now reads 134 ms over the network)
    network = kv_transfer(model, pre, dec, False)
    return min((path, network), key=lambda t: t.latency_s + t.seconds(pre.typical_prompt))
