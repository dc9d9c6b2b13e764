"""`chipwise predict` for a serve scenario: pick what the scenario leaves open (serving_choice), build the
deployment (one pool, or prefill and decode pools with the KV path between them), simulate it, and attach what
dominated an iteration, the figures used, and the dollars, energy and carbon (serving_economics)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.catalog.track_record import track_record
from chipwise.catalog.units import BYTES_PER_GIB
from chipwise.economics.energy import check_region
from chipwise.economics.pricing import check_mode, check_rental_options
from chipwise.economics.providers import network_gap
from chipwise.economics.rental import filled, split_rent
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.objects import FigureRef, System
from chipwise.planner.serving_choice import PREFILL_POOL_BATCH, Choice, choose, decode_targets, engine_for
from chipwise.planner.serving_economics import busy_shares, economics, priced_system
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.disaggregated import KVTransfer, hybrid_domain, kv_transfer
from chipwise.serve.engine import (
    EngineProfile,
    check_engine_vendor,
    engine_carried_from,
    engine_fitted,
    engine_profile,
    engine_vendors,
    token_budget,
)
from chipwise.serve.iteration import COMPONENTS, IterationInputs, Shapes, iteration_breakdown
from chipwise.serve.plan import ReplicaPlan, chip_count
from chipwise.serve.quant import (
    KV_PRECISIONS,
    PrecisionUnsupportedError,
    check_precision,
    check_weight_precision,
    default_kv_precision,
    float8_fallback,
    matmul_precision,
)
from chipwise.serve.search import Estimate, prompt_share
from chipwise.serve.sim.arrivals import offered_request_rate
from chipwise.serve.sim.policies import bucket
from chipwise.serve.sim.run import SimOutput
from chipwise.serve.sim.steps import prompt_chunks
from chipwise.serve.simulate import Pool, ServingSetup, load_against_capacity, run_job
from chipwise.serve.speculation import EAGLE_PRIOR_MODELS, Drafting, drafter, parse_speculation
from chipwise.train.explain import efficiency_figures, fabric_figures
from chipwise.types import Array
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model
from chipwise.workload.serving import (
    MAX_CHIPS,
    LengthDist,
    ServePlan,
    ServeScenario,
    ServingJob,
    check_context,
    is_count,
    serving_job,
    speculation_asked,
)


def fleet_problem(chips: float, what: str) -> str | None:
    """Why a serving fleet sized for the load is refused, or None: past MAX_CHIPS, the largest fleet planned, the
    bound training's fleets keep (1e9 req/s had sized 67 million H100s, priced to the cent)."""
    if chips <= MAX_CHIPS:
        return None
    return (
        f"{what} takes {math.ceil(chips):,} chips, past the largest fleet planned (at most {MAX_CHIPS:,}). "
        "Fix: give the load of one deployment (a lower rate or fewer users)"
    )


#: An open loop is steady when its arrivals span at least two request latencies (its throughput window starts one
#: latency in: serve.sim.metrics.steady_state); a shorter run is flagged with the request count whose arrivals span
#: this many, a latency's margin over the least.
STEADY_FILLS = 3.0
#: A closed loop's users each issue, and an offline run's requests fill its batch slots, this many waves of requests
#: for a steady state: a run of one wave never has a request wait for a slot or join a running batch.
STEADY_WAVES = 4
#: A closed loop's run is flagged short under this many requests per user: the requests sent in its last cycle see
#: the final drain, and Little's law read lambda W 6% under the 64 users in the system at 4.7 (300 requests of
#: 64 users of Llama-3.1-8B on one H100) and 8% under 128 at 4; from 6 it is within 5% (3.3%, 4.6%).
CLOSED_WAVES = 6


def _fixed(spec: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    if spec is None:
        return out
    for key in ("tp", "pp", "ep", "max_batch"):
        v = getattr(spec, key, None)
        if v is not None:
            out[key] = int(v)
    for key in ("attention_dp", "adp_balance"):
        if getattr(spec, key, None) is not None:
            out[key] = int(bool(getattr(spec, key)))
    return out


def precisions(
    precision: str, kv_precision: str | None, eng: EngineProfile, model: ModelSpec, system: System
) -> tuple[str, str]:
    """The checked weight precision and the KV-cache one (stated, or the engine's default for those weights). An
    fp4 (NVFP4) KV cache is an engine feature of NVIDIA's Blackwell chips alone (its NVFP4 KV-cache blog, 2025-12-08:
    dequantised to FP8 for attention there, perf.serving.ATTENTION_PRECISION), none sourced elsewhere; fp8 and fp4
    weights on a chip without units for them run only where the engine has a fallback (quant.float8_fallback, whose
    note predict_serving shows)."""
    weight = check_weight_precision(precision, model)
    kv = (
        check_precision(kv_precision, KV_PRECISIONS, "KV-cache")
        if kv_precision
        else default_kv_precision(weight, eng.quantised_kv)
    )
    if kv == "fp4" and not (system.chip.vendor == "nvidia" and "fp4" in system.chip.flops):
        raise PrecisionUnsupportedError(
            f"an fp4 (NVFP4) KV cache runs on NVIDIA's Blackwell chips alone, and {system.chip.id} is not one",
            "use an fp8 KV cache",
        )
    float8_fallback(eng.engine, system.chip, weight, kv)  # refuses what the engine cannot run (predict notes the rest)
    return weight, kv


def choose_any(
    model: ModelSpec,
    system: System,
    eng: EngineProfile,
    job: ServingJob,
    weight: str,
    kv: str,
    targets: Mapping[str, float],
    drafting: Drafting | None = None,
    decode_only: bool = False,
    fixed: Mapping[str, int] | None = None,
) -> tuple[Choice, Estimate, np.ndarray]:
    """`choose` over every replica shape (those with the `fixed` settings), with the engine's token budget and
    chunking."""
    budget = token_budget(eng, job.max_input, memory_bytes=system.chip.hbm_capacity)
    chunked = eng.chunked_prefill
    return choose(
        model, system, eng, job, weight, kv, targets, fixed or {}, None, budget, chunked, drafting, decode_only
    )


def _setup(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    engine: str,
    plan: ReplicaPlan,
    job: ServingJob,
    explicit_batch: bool,
    longest: int | None = None,
) -> ReplicaSetup:
    setup = setup_replica(
        catalog,
        model,
        system,
        engine,
        plan,
        job.mean_input,
        job.mean_output,
        longest_request=longest or job.max_input + job.max_output,
    )
    # a compiled batch of slots (Neuron) holds each slot's KV whether a request fills it or not, so a given batch
    # must fit; elsewhere max_batch is a cap the KV cache may hold the batch under (TensorRT-LLM's
    # GUARANTEED_NO_EVICT declines to schedule a request whose blocks it cannot guarantee, as Replica._fits does)
    if explicit_batch and setup.engine.static_batch:
        need = plan.max_batch * (job.mean_input + job.mean_output)
        if need > setup.kv_tokens and setup.engine.admission == "reserve":
            # an MLA latent is cached whole on every tensor-parallel rank; attention DP gives each rank its own
            latent = model.attention.kind == "mla" and not plan.attention_dp and plan.tp > 1
            raise InfeasibleError(
                f"max_batch {plan.max_batch} needs {need:,.0f} tokens of KV cache but {plan.label()} on "
                f"{system.chip.id} holds {setup.kv_tokens:,}. Fix: lower max_batch, raise tp, "
                + ("use attention_dp: true (each rank then caches only its own requests), " if latent else "")
                + ("or quantise the KV cache." if plan.kv_precision != "fp4" else "or use more chips.")
            )
    return setup


def speculation_options(speculative: str | None) -> list[str | None]:
    """`plan serve --speculative` as the options to compare: 'none,mtp:1,mtp:3' -> [None, 'mtp:1', 'mtp:3']; None
    (no option given): [None]. Text that names none ('', ',') is one line: it had run without drafting."""
    if speculative is None:
        return [None]
    parts = [p.strip() for p in speculative.split(",") if p.strip()]
    if not parts:
        raise ChipwiseError(
            f"--speculative '{speculative}' names no option. Fix: give e.g. mtp:3, or none,mtp:1,mtp:3 to compare "
            "(none: no drafting), or leave --speculative out."
        )
    return [speculation_asked(p) for p in parts]


def engine_hardware(
    catalog: Catalog, hardware_ids: Sequence[str], engine: str | None
) -> tuple[list[str], list[dict[str, str]]]:
    """The hardware `engine` runs on, and a 'not ranked' entry for each listed chip it does not run on (plan serve's
    `skipped`); a one-line error when it runs on none of them. No engine named: every chip, with its default."""
    if not engine:
        return list(hardware_ids), []
    hw = hardware(catalog)
    keep: list[str] = []
    skipped: list[dict[str, str]] = []
    for hid in hardware_ids:
        system = hw.system(hid)
        try:
            check_engine_vendor(catalog, engine, system.chip.vendor, system.chip.id)
        except ChipwiseError as exc:
            if len(hardware_ids) == 1:
                raise
            skipped.append({"hardware": system.chip.id, "system": system.id, "reason": str(exc).split(" Fix:")[0]})
        else:
            keep.append(hid)
    if not keep:
        chips = ", ".join(s["hardware"] for s in skipped)
        vendors = ", ".join(engine_vendors(catalog, engine))
        raise ChipwiseError(
            f"{engine} runs on none of the hardware asked for ({chips}): it runs on {vendors} chips only. Fix: add "
            "such a chip to --hardware, or name another engine (or none: each vendor's default)."
        )
    return keep, skipped


def plan_serve_inputs(
    catalog: Catalog,
    model_name: str,
    hardware_ids: Sequence[str],
    input_tokens: int,
    output_tokens: int,
    engine: str | None = None,
    region: str | None = None,
) -> tuple[list[str], list[dict[str, str]]]:
    """What `plan serve` checks before its search (the CLI and the API alike): the region, that a prompt and its
    answer fit the model's context, and the hardware the engine runs on (engine_hardware: the ids to plan, and
    the 'not ranked' entries of the others)."""
    for name, value in (("input tokens", input_tokens), ("output tokens", output_tokens)):
        if not is_count(value):
            raise ChipwiseError(f"{name} {value!r} is not a whole number of at least 1. Fix: give e.g. 1024.")
    if region:
        check_region(catalog, region)
    model = load_model(catalog, model_name)
    check_context(model, LengthDist.fixed(input_tokens), LengthDist.fixed(output_tokens))
    return engine_hardware(catalog, hardware_ids, engine)


def drafting_for(catalog: Catalog, model: ModelSpec, speculative: str | None) -> Drafting | None:
    """The speculative decoding a scenario or `--speculative` asks for, with its drafter's model ('none': None)."""
    speculative = speculation_asked(speculative)
    if not speculative:
        return None
    spec = parse_speculation(speculative, catalog)
    if spec.method == "mtp" and not model.mtp_layers:
        # no model-specific draft example: llama-3.2-1b, once given, was refused for Qwen3 and Kimi K2 (another
        # vocabulary); eagle:K at the prior runs on the models it was measured on only (speculation.drafter)
        k = spec.draft_tokens
        eagle = f"eagle:{k}" + ("" if model.name in EAGLE_PRIOR_MODELS else "@0.7")
        raise ChipwiseError(
            f"{model.name} has no multi-token-prediction head (its config.json has no num_nextn_predict_layers). "
            f"Fix: use {eagle} or draft:MODEL:{k}@0.7 with a smaller model of {model.name}'s family."
        )
    return Drafting(spec, drafter(catalog, model, spec))


def check_drafter_tp(drafting: Drafting | None, plan: ReplicaPlan) -> None:
    """A draft model runs on its target's ranks at its tp (serve.kvcache puts its weights there, split as the
    target's are), so its heads must split as a target's (qwen2.5-7b's 28 had run padded over tp=8 under
    qwen2.5-72b, which as a target is refused); an EAGLE or MTP head has its target's attention."""
    if drafting is None or plan.attention_dp or drafting.spec.method != "draft":
        return
    if reason := drafting.model.attention.tp_problem(plan.tp):
        raise ChipwiseError(f"invalid plan for draft model {drafting.model.name}: {reason}, or another draft model.")


def _pool(
    catalog: Catalog,
    model: ModelSpec,
    sc: ServeScenario,
    job: ServingJob,
    hardware_name: str,
    spec: Any,
    chips: int | None,
    targets: Mapping[str, float],
    decode_only: bool = False,
    longest: int | None = None,
) -> tuple[ReplicaSetup, int, str, str, str]:
    """One pool: the replica shape given or searched, its replica count, where the shape came from, why a searched
    one leaves some of the stated `chips` idle (Choice.idle_reason; '' where none are), and why a searched batch
    limit is what it is (Choice.batch_reason; '' where it was given or the cache did not set it). `decode_only`: a
    disaggregated deployment's decode pool, which encodes no prompt: search.estimate; `longest`: the longest
    request the replica is set up for, where not the job's: a prefill pool's are the deployment's, answers
    included."""
    # a pool serves one chip type: the Trainium4 + GB300 rack had served as 72 Trainium4, priced and timed so
    fix = (
        "search both with 'chipwise plan serve --hardware {id}', or split prefill and decode between them with "
        "plan.prefill.hardware and plan.decode.hardware"
    )
    system = priced_system(
        hardware(catalog).system(hardware_name).one_chip_type("; a serving pool runs one", fix), sc.pricing
    )
    engine = engine_for(system, sc.engine, model)
    check_engine_vendor(catalog, engine, system.chip.vendor, system.chip.id)
    eng = engine_profile(catalog, engine, system.chip.family)
    if sc.plan is not None:  # the search sizes KV caches, schedules prompts and takes requests as stated
        eng = eng.as_deployed(sc.plan.memory_fraction or 0.0, sc.plan.mixed_batching, sc.plan.front_end or "engine")
    weight, kv = precisions(sc.precision, sc.kv_precision, eng, model, system)
    stated = _fixed(spec)
    _check_balancing(stated, engine, eng)
    fixed = dict(stated)
    if job.max_output <= 1 and "max_batch" not in fixed:
        fixed["max_batch"] = PREFILL_POOL_BATCH  # a prefill pool's, as plan serve sizes it
    max_tokens = int(
        getattr(spec, "max_tokens", None) or token_budget(eng, job.max_input, memory_bytes=system.chip.hbm_capacity)
    )
    chunked = sc.plan.chunked_prefill if sc.plan and sc.plan.chunked_prefill is not None else eng.chunked_prefill
    replicas_given = getattr(spec, "replicas", None)
    idle = why = ""
    drafting = drafting_for(catalog, model, sc.speculative) if job.max_output > 1 else None  # prefill pools draft none
    if "tp" in fixed:
        # a given shape: pipeline and expert parallelism default to none, as the plan's label shows them
        held = {"pp": 1, "ep": 1, "attention_dp": 0, "adp_balance": 1, **fixed}
        plan = ReplicaPlan(
            tp=held["tp"],
            pp=held["pp"],
            ep=held["ep"],
            attention_dp=bool(held["attention_dp"]),
            adp_balance=bool(held["adp_balance"]),
            max_batch=held.get("max_batch", eng.max_batch),
            max_tokens=max_tokens,
            chunked_prefill=chunked,
            weight_precision=weight,
            kv_precision=kv,
            speculation=drafting.spec if drafting else None,
        )
        if not plan.attention_dp and (reason := model.attention.tp_problem(plan.tp)):
            raise ChipwiseError(f"invalid plan for {model.name}: {reason}.")
        ranks = plan.ranks
        cores = system.chip.cores_per_chip
        if chips and chips * cores < ranks:
            raise InfeasibleError(
                f"plan tp={plan.tp}"
                + (f" x pp={plan.pp}" if plan.pp > 1 else "")
                + f" needs {math.ceil(ranks / cores)} chips but the scenario has {chips}. "
                "Fix: raise chips or lower tp/pp."
            )
        if chips and not replicas_given and (chips * cores) % ranks:
            raise ChipwiseError(
                f"chips: {chips} is not a whole number of tp={plan.tp}"
                + (f" x pp={plan.pp}" if plan.pp > 1 else "")
                + f" replicas ({chip_count(ranks / cores)} each on {system.chip.id}). Fix: give a multiple of "
                f"{ranks / cores:g} chips, or change tp/pp."
            )
        replicas = int(replicas_given or (chips * cores // ranks if chips else 0))
        if "max_batch" not in held or not replicas:
            # the batch limit (as a search sets it: what the KV cache holds) or the replica count left to the search
            try:
                choice, _, _ = choose(
                    model,
                    system,
                    eng,
                    job,
                    weight,
                    kv,
                    targets,
                    held,
                    replicas * ranks // cores or None,
                    max_tokens,
                    chunked,
                    drafting,
                    decode_only,
                )
            except InfeasibleError:
                _setup(catalog, model, system, engine, plan, job, False, longest)  # a shape that does not fit says why
                raise
            plan, replicas = replace(plan, max_batch=choice.plan.max_batch), replicas or choice.replicas
            why = "" if "max_batch" in held else choice.batch_reason
        source = "given" if "max_batch" in stated else "partial"
    else:
        try:
            choice, _, _ = choose(
                model, system, eng, job, weight, kv, targets, fixed, chips, max_tokens, chunked, drafting, decode_only
            )
        except InfeasibleError as exc:
            fraction = sc.plan.memory_fraction if sc.plan is not None else None
            if fraction and "fits no replica shape" in str(exc):
                # a stated memory share is the first thing to raise: the fix named chips and quantisation only
                exc.args = (str(exc).replace("Fix: ", f"Fix: raise plan.memory_fraction (now {fraction:g}), ", 1),)
            raise
        # a stated batch limit stands, as with a stated shape: the search no longer lowers it silently to what
        # the KV cache holds (_setup says when a reserving engine's cache cannot hold it)
        plan = replace(choice.plan, max_batch=stated["max_batch"]) if "max_batch" in stated else choice.plan
        replicas = int(replicas_given or choice.replicas)
        source = "searched" if not stated else "partial"
        idle = "" if replicas_given else choice.idle_reason
        why = "" if "max_batch" in stated else choice.batch_reason
    _check_chips(chips, replicas_given, plan, system)
    check_drafter_tp(drafting, plan)
    given = sc.plan
    if given is not None:
        knobs = (
            "recv_interval",
            "batch_wait_iters",
            "batch_wait_ratio",
            "piecewise_graphs",
            "graph_batch",
            "memory_fraction",
            "mixed_batching",
            "front_end",
        )
        for knob in knobs:
            value = getattr(given, knob)
            if value is not None:
                plan = replace(plan, **{knob: value})
    setup = _setup(catalog, model, system, engine, plan, job, "max_batch" in stated, longest)
    return setup, replicas, source, idle, why


def _check_balancing(stated: Mapping[str, int], engine: str, eng: EngineProfile) -> None:
    """plan.adp_balance is TensorRT-LLM's attention-DP context balancing: it needs attention DP and an engine that
    balances; anything else is one line, not a knob silently ignored."""
    if "adp_balance" not in stated:
        return
    if not stated.get("attention_dp"):
        raise ChipwiseError("plan.adp_balance applies to attention DP. Fix: add attention_dp: true, or leave it out.")
    if eng.adp_balance_timeout_iters <= 0:
        raise ChipwiseError(
            f"plan.adp_balance: {engine} has no attention-DP context balancing (TensorRT-LLM's "
            "attention_dp_config.enable_balance). Fix: leave adp_balance out."
        )


def _check_chips(chips: int | None, replicas: int | None, plan: ReplicaPlan, system: System) -> None:
    """A scenario that states both its chips and its replicas must agree: replicas x chips per replica = chips."""
    if not (chips and replicas):
        return
    cores = system.chip.cores_per_chip
    if replicas * plan.ranks == chips * cores:
        return
    per, fits = plan.ranks / cores, chips * cores // plan.ranks
    shape = f"tp={plan.tp}" + (f" x pp={plan.pp}" if plan.pp > 1 else "")
    used = replicas * per
    if used == int(used):
        fix = f"set chips: {used:g}" + (f" or replicas: {fits}" if fits else "")
    else:  # a count of chips is whole: five quarter-chip trn2 replicas were offered 'chips: 1.25', then refused it
        whole = math.ceil(used)
        fix = f"set replicas: {fits}" if fits else f"set chips: {whole} with replicas: {whole * cores // plan.ranks}"
    raise ChipwiseError(
        f"the plan's {replicas} replicas of {shape} ({chip_count(per)} each on {system.chip.id}) take "
        f"{chip_count(used)}, but the scenario says chips: {chips}. Fix: {fix}, or leave replicas out to fill the "
        "chips."
    )


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


#: what joins a split's two pools' hardware in its name, prefill first ('h100-sxm>b200'), as predict prints it
SPLIT_MARK = ">"


def _deployment(
    catalog: Catalog, model: ModelSpec, sc: ServeScenario, job: ServingJob, targets: Mapping[str, float]
) -> tuple[ServingSetup, str, str, str]:
    """The deployment, where its plan came from ('given', 'partial', 'searched'), why a searched one leaves
    some of the scenario's chips idle ('' where it fills them: a split's pools share them out, _spread) and why a
    colocated one's searched batch limit is what it is (_pool)."""
    plan = sc.plan
    router = job.router
    if plan is not None and plan.disaggregated:
        pre_hw, dec_hw = _pool_hardware(catalog, sc.hardware, plan)
        pre_job = replace(job, output=LengthDist.fixed(1))
        sc = _handed_over_kv(catalog, model, sc, (pre_hw, dec_hw))
        # a prefill replica is set up for the deployment's longest request (a compiled engine's sequence length)
        longest = job.max_input + job.max_output
        pre, n_pre, s1, _, _ = _pool(catalog, model, sc, pre_job, pre_hw, plan.prefill, None, {}, longest=longest)
        decoding = decode_targets(targets)
        dec, n_dec, s2, _, _ = _pool(catalog, model, sc, job, dec_hw, plan.decode, None, decoding, decode_only=True)
        pre_given = getattr(plan.prefill, "replicas", None) is not None
        dec_given = getattr(plan.decode, "replicas", None) is not None
        if job.load.kind == "rate" and not pre_given:  # sized for the prompt tokens/s, the decode pool as chosen
            n_pre = prefill_replicas(pre, job)
        n_pre = n_pre if pre_given else filled(pre.system.rental_chips, pre.chips, n_pre)
        n_dec = n_dec if dec_given else filled(dec.system.rental_chips, dec.chips, n_dec)
        if sc.chips:
            n_pre, n_dec = _spread(sc.chips, (pre, n_pre, pre_given), (dec, n_dec, dec_given))
        transfer = kv_path(catalog, model, pre, n_pre, dec, n_dec)
        pools = (Pool(pre, n_pre, "prefill"), Pool(dec, n_dec, "decode"))
        return ServingSetup(pools, router, transfer), "given" if s1 == s2 == "given" else "partial", "", ""
    if SPLIT_MARK in sc.hardware:  # predict's name for a split's pools ('unknown chip' had pointed to the catalog)
        raise ChipwiseError(
            f"hardware '{sc.hardware}' names a split's two pools (prefill{SPLIT_MARK}decode), but the plan is "
            "colocated. Fix: add plan: {disaggregated: true} to split it (or name each pool's in "
            "plan.prefill.hardware / plan.decode.hardware), or name one chip or system."
        )
    setup, replicas, source, idle, why = _pool(catalog, model, sc, job, sc.hardware, plan, sc.chips, targets)
    return ServingSetup((Pool(setup, replicas),), router), source, idle, why


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


def whole_count(chips: float) -> float | int:
    """A chip count as JSON shows it: 12, not 12.0; a fraction stays one (a replica on part of a chip)."""
    return int(chips) if float(chips).is_integer() else chips


def plan_dict(setup: ReplicaSetup, replicas: int, role: str) -> dict[str, Any]:
    p, pol = setup.plan, setup.policy()
    return {
        "hardware": setup.system.chip.id,
        "system": setup.system.id,
        "engine": setup.engine.engine,
        "role": role,
        "tp": p.tp,
        "pp": p.pp,
        "ep": p.ep,
        "attention_dp": p.attention_dp,
        # attention-DP context balancing (TensorRT-LLM's enable_balance): while every rank generates, prompts wait
        # until each rank has one, or a counter of iterations reaches this many (0: none; a disaggregated pool has
        # none to hold: a prefill pool's ranks generate nothing, a decode pool's encode no prompt)
        "adp_balance": p.adp_balance if p.attention_dp else None,
        "adp_balance_iters": pol.hold_timeout if pol.adp_ranks > 1 and role == "both" else 0,
        "replicas": replicas,
        "max_batch": p.max_batch,
        "max_tokens": p.max_tokens,
        "chunked_prefill": p.chunked_prefill,
        "mixed_batching": pol.mixed_batching,
        "front_end": p.front_end,
        "recv_interval": p.recv_interval,
        "batch_wait_iters": p.batch_wait_iters,
        "batch_wait_ratio": p.batch_wait_ratio,
        "piecewise_graphs": p.piecewise_graphs,
        "weight_precision": p.weight_precision,
        "kv_precision": p.kv_precision,
        "speculative": p.speculation.label() if p.speculation else None,
        "chips_per_replica": setup.chips,
        "chips": whole_count(Pool(setup, replicas, role).chips),  # whole chips, where replicas are smaller than one
        "kv_cache_tokens_per_replica": setup.kv_tokens,
        "kv_cache_block_tokens": setup.memory.block_tokens,
        "admission": setup.engine.admission,  # reserve: a request's whole context held; on_demand: as it grows
        "memory_per_rank_gib": {
            "weights": float(setup.memory.weights) / BYTES_PER_GIB,
            "activations": float(setup.memory.activations) / BYTES_PER_GIB,
            "reserved": float(setup.memory.reserved) / BYTES_PER_GIB,
            "kv_cache": float(setup.memory.kv_memory) / BYTES_PER_GIB,
            "capacity": float(setup.memory.capacity) / BYTES_PER_GIB,
        },
    }


def _prompt_args(setup: ReplicaSetup, prompt: float, hit: float) -> tuple[int, int, bool, int, int]:
    """(tokens, chunk, static, largest bucket, cached) of one mean prompt encoded alone, as StepModel.prompt_alone
    and serve.sim.steps.prompt_chunks take them; a prefix-cache `hit` rate leaves that share of it cached (floored,
    as the simulator does)."""
    tokens = max(1, round(prompt))
    cached = min(math.floor(tokens * hit), tokens - 1)
    chunk = setup.prompt_chunk if setup.plan.chunked_prefill else tokens
    return tokens, chunk, setup.engine.static_batch, setup.policy().largest_bucket, cached


def prefill_alone(setup: ReplicaSetup, prompt: float, hit: float = 0.0) -> dict[str, float]:
    """One mean prompt encoded alone on an idle replica, in the engine's chunks: its seconds, the device work, and
    the host time of its kernel launches (per prompt iteration) where the engine runs them eagerly. A prefix-cache
    `hit` rate leaves that share of the prompt cached: attended to, not encoded. The device work is the prompt's
    time with no host launches to wait for, as prefill_breakdown prices it: the sum of its device rows (the last
    chunk's LM head and sampling, each iteration's fixed cost, a drafter's pass and the waits included; the layers
    alone had read 0.33 ms short of the rows shown beside it)."""
    steps = setup.steps
    args = _prompt_args(setup, prompt, hit)
    return {
        "seconds": steps.prompt_alone(*args),
        "device_s": replace(steps, eager_floor=0.0).prompt_alone(*args),
        "host_launches_s": steps.eager_floor * len(prompt_chunks(*args)),
    }


#: A split's prefill pool is sized to be busy this share of its time at most under an open-loop load: the headroom
#: for the bursts of its Poisson arrivals, whose prompts queue for the replicas' iterations while their TTFT runs
#: (plan serve's simulated check then adds replicas where the tail still misses its target).
PREFILL_SIZING_LOAD = 0.7


def prefill_replicas(setup: ReplicaSetup, job: ServingJob) -> int:
    """The replicas of `setup` a split's prefill pool needs for an open-loop load's prompt tokens/s at
    PREFILL_SIZING_LOAD of what each encodes, in predict and plan serve alike: one mean prompt alone, at the job's
    prefix-cache hit rate (its hits are cached, not encoded: 0.9 hits of 8,000-token prompts take 0.089 s, not
    0.36 s, and had sized 11 Llama 3.1 70B prefill replicas each busy 15% where 3 keep up), with queued prompts
    keeping every attention-DP rank encoding one (no rank waits for another)."""
    even = replace(setup, steps=replace(setup.steps, ranks=1))
    alone = prefill_alone(even, job.mean_input, job.prefix_hit_rate)["seconds"]
    prompt_tps = max(1, round(job.mean_input)) / max(alone, 1e-9)
    return max(1, math.ceil(job.load.rate * job.mean_input / (PREFILL_SIZING_LOAD * prompt_tps)))


def prefill_breakdown(setup: ReplicaSetup, model: ModelSpec, prompt: float, hit: float = 0.0) -> dict[str, float]:
    """Where prefill_alone's seconds go, by component (serve.iteration.COMPONENT_LABELS), priced as the step
    tables price each of the prompt's iterations (a static engine's padded bucket included: _iteration_parts): the
    token-proportional work of every layer, its prefill attention pairs, the last chunk's LM head and sampling, and
    the engine's fixed costs of each iteration under `overhead`. What the prompt waits beyond its own work is
    `waits` (a pipeline's stages in turn, the other attention-DP ranks) and `host_launches` (an engine that runs
    prompts eagerly, its kernels launched from the host for longer than the device works)."""
    steps = setup.steps
    args = _prompt_args(setup, prompt, hit)
    runs = prompt_chunks(*args)
    encoded, run, last, pairs = (np.array(column, dtype=np.float64) for column in zip(*runs, strict=True))
    work = IterationInputs(run, last, np.zeros_like(run), pairs)
    out = {k: float(v.sum()) for k, v in _iteration_parts(setup, model, work).items()}
    out["overhead"] += len(runs) * steps.prefill_fixed
    if steps.drafter is not None:  # the drafter encodes the prompt too
        out["drafting"] = sum(steps.draft_prefill(int(c)) for c in encoded)
    device, total = replace(steps, eager_floor=0.0).prompt_alone(*args), steps.prompt_alone(*args)
    for key, extra in (("waits", device - sum(out.values())), ("host_launches", total - device)):
        if extra > 0.005 * total:
            out[key] = extra
    return out


def where_time_goes(
    setup: ServingSetup, model: ModelSpec, job: ServingJob, summary: Mapping[str, Any]
) -> dict[str, Any]:
    """A simulated deployment's time by component, as `chipwise predict` and `validate --explain` report it: the
    steady iteration of the run `summary` describes (steady_breakdown) and its largest part, the batch it is priced
    at and the mean of the decode pool's simulated iterations beside it (TPOT weighs each iteration by the sequences
    it carried, so the fuller ones weigh more: I002's steady iteration reads 105 ms at its mean batch where its
    mean TPOT read 120, and nothing had said why), and one mean prompt encoded alone (prefill_alone,
    prefill_breakdown)."""
    first = setup.pools[0].setup
    breakdown = steady_breakdown(setup, model, job, summary)
    return {
        "breakdown": breakdown,
        "steady_batch": _steady_batch(setup, summary),
        "iteration_mean_s": (summary.get("iteration_mean_s") or {}).get(setup.pools[-1].role, math.nan),
        "tpot_mean_s": float(summary["tpot_s"]["mean"]),
        "dominated_by": max(breakdown, key=lambda k: breakdown[k]),
        "prefill_one_prompt": prefill_alone(first, job.mean_input, job.prefix_hit_rate),
        "prefill_breakdown": prefill_breakdown(first, model, job.mean_input, job.prefix_hit_rate),
    }


def steady_breakdown(
    setup: ServingSetup, model: ModelSpec, job: ServingJob, summary: Mapping[str, Any]
) -> dict[str, float]:
    """Where a simulated run's steady decode iteration goes: the decode pool's iteration (_breakdown) at the batch
    the run kept generating (Little's law over its tokens: output tokens/s x mean TPOT per replica); a split's
    decode pool carries no prompts."""
    decode = setup.pools[-1]
    b = _steady_batch(setup, summary)
    # the simulated share of iterations that carried prompts, and the prompt tokens each ran
    ran = (summary.get("iterations") or {}).get(decode.role)
    mix = None
    if ran and ran["prompt"] + ran["decode"] > 0:
        mix = (ran["prompt"] / (ran["prompt"] + ran["decode"]), ran["prompt_tokens"] / max(ran["prompt"], 1e-9))
    return _breakdown(decode.setup, model, b, job.mean_input, job.mean_output, len(setup.pools) == 1, mix)


def _steady_batch(setup: ServingSetup, summary: Mapping[str, Any]) -> float:
    """The sequences a decode replica kept generating over the run (Little's law over its tokens: output tokens/s x
    mean TPOT per replica); 1 where the run read none."""
    batch = summary["output_tokens_per_s"] * summary["tpot_s"]["mean"] / max(1, setup.pools[-1].replicas)
    return float(batch) if math.isfinite(batch) else 1.0


def _breakdown(
    setup: ReplicaSetup,
    model: ModelSpec,
    batch: float,
    inp: float,
    out: float,
    prompts: bool = True,
    mix: tuple[float, float] | None = None,
) -> dict[str, float]:
    """Seconds of one mean steady iteration at `batch` sequences, by component: the decode iterations alone and
    those a prompt joins (its chunk of the token budget), weighed as they come: as simulated (`mix`: the share of
    iterations that carried prompts and the prompt tokens each ran), or else as the estimate has it
    (serve.search.prompt_share; prompt tokens spread evenly over every iteration made each of DeepSeek-R1's
    iterations load every expert, and its breakdown summed to 39 ms where it decodes at 12 ms); with speculative
    decoding the verification step (k + 1 positions per sequence) and its drafting passes; past the engine's
    CUDA-graph batch the host's kernel launches beyond the device work (`host_launches`). Without `prompts` (a
    split's decode pool) no prompt joins, and the sequences still read their prompts' KV cache. An engine that does
    not mix prompts into decode iterations runs them alone while the decodes wait, so each decode step carries its
    share of those iterations (prompt iterations per decode iteration)."""
    p = setup.plan
    b = max(1.0, batch)
    steps = setup.steps
    # a static engine's token-generation graph runs every compiled slot over the bucket of the batch's mean context
    static = setup.engine.static_batch
    slots = float(p.max_batch) if static else b
    mean_context = inp + out / 2.0
    per_slot = bucket(int(mean_context) + 1, largest=setup.policy().largest_bucket) if static else mean_context
    fed = slots * (steps.draft_tokens + 1)  # verified positions
    started = b * steps.tau * inp / out if prompts else 0.0  # prompt tokens per iteration
    # an engine that does not mix prompts into decode iterations (SGLang's default) runs them alone, with the whole
    # budget, while the decodes wait: each decode step then carries its share of the prompt iterations between steps
    decoding = bool(setup.engine.mixes(p.attention_dp))
    fed_with = fed if decoding else 0.0  # the decode positions an iteration carrying prompts also runs
    room = max(float(setup.token_budget) - fed_with, 1.0)
    if mix is not None:  # as simulated
        joined, chunk = mix if prompts else (0.0, 0.0)
    else:
        joined = float(prompt_share(started, inp, room)) if started > 0 else 0.0  # the share of iterations prompts join
        chunk = started / joined if joined > 0 else 0.0  # prompt tokens such an iteration carries
    # the weights of a decode-only iteration and of one carrying prompts in a mean decode step
    w_plain, w_mixed = (1.0 - joined, joined) if decoding else (1.0, joined / max(1.0 - joined, 1e-9))

    live = np.asarray(b * (steps.draft_tokens + 1)) if static else None  # the compiled slots' live sequences

    def parts(prompt: float, decodes: float) -> dict[str, float]:
        context, pairs = np.asarray(slots * per_slot if decodes else 0.0), np.asarray(prompt * inp / 2.0)
        work = IterationInputs(
            np.asarray(decodes + prompt), np.asarray(decodes), context, pairs, steps.draft_tokens + 1.0, live
        )
        return {k: float(v) for k, v in _iteration_parts(setup, model, work).items()}

    plain = parts(0.0, fed)
    mixed = parts(chunk, fed_with) if joined > 0 else plain
    out_parts = {k: w_plain * plain[k] + w_mixed * mixed[k] for k in COMPONENTS}
    # an iteration that carries a prompt, or a decode batch past the largest the engine replays in a CUDA graph,
    # launches its kernels from the host one by one and takes at least their host time; a prompt's chunk passes a
    # pipeline's stages in turn (StepModel.prompt_time, eager_decode_floor)
    n = round(b)
    decode_launches = steps.eager_decode_floor(n, b * mean_context) - steps.decode_base(n) if not static else 0.0
    base = steps.fixed + steps.seq_time(round(fed_with)) - sum(mixed.values())
    prompt_launches = base + steps.eager_floor
    stages = base + steps.pass_time(round(chunk), chunk * inp / 2.0) if steps.pp > 1 and joined > 0 else 0.0
    launches = w_plain * max(0.0, decode_launches) + w_mixed * max(0.0, prompt_launches - max(0.0, stages))
    for key, extra in (("host_launches", launches), ("waits", w_mixed * max(0.0, stages))):
        if extra > 0:
            out_parts[key] = extra
    if steps.drafter is not None:
        # the drafter's pass over a prompt's chunk rides the iterations that carry one, weighted as theirs (the
        # simulator's Replica._step); unweighted, every step had carried a whole draft prefill
        out_parts["drafting"] = steps.draft_time(round(b), b * mean_context) + w_mixed * steps.draft_prefill(
            round(chunk)
        )
    return out_parts


def _iteration_parts(setup: ReplicaSetup, model: ModelSpec, work: IterationInputs) -> dict[str, Array]:
    """serve.iteration.iteration_breakdown of the replica's iterations carrying `work`, as its step tables price
    them (a static engine's compiled slots given: serve.sim.steps._token_table)."""
    p = setup.plan
    shapes = Shapes.of(p.tp, p.pp, p.ep, int(p.attention_dp))
    found = iteration_breakdown(
        model, setup.dev, setup.topo, setup.engine, p.weight_precision, p.kv_precision, shapes, work,
        setup.typical_context, setup.typical_prompt, float(p.max_batch),
    )  # fmt: skip
    return {k: found[k] for k in COMPONENTS}


def engine_fitted_on(catalog: Catalog, engine: str, system: System) -> bool:
    """Whether the engine has serving figures of the chip's family (fitted or carried), not its defaults alone."""
    return engine_fitted(catalog, engine, system.chip.family)


def engine_carried(catalog: Catalog, pools: Sequence[tuple[str, System]]) -> dict[str, str]:
    """{chip: 'ENGINE on FAMILY'} for the pools whose engine figures are carried from another fit (no serving run
    of that engine on the chip's family was fitted: engine_carried_from)."""
    out = {}
    for engine, system in pools:
        if (source := engine_carried_from(catalog, engine, system.chip.family)) is not None:
            out[system.chip.id] = source
    return out


def pool_names(setup: ServingSetup, name: Callable[[ReplicaSetup], str]) -> str:
    """One name of each pool of a deployment, joined as plan serve joins a split's ('h100-sxm>b200': prefill, then
    decode); a deployment of one pool, its own name."""
    return SPLIT_MARK.join(name(p.setup) for p in setup.pools)


def pool_figures(pools: Sequence[Pool], model: ModelSpec) -> dict[str, dict[str, Any]]:
    """The figures every pool of a deployment used (figures_used), merged: a chip's and a chip family's figures are
    named by them already; an engine figure that differs between the pools (an engine fitted per chip family) is
    named with the family of each ('engines.trtllm.step_overhead (hopper)')."""
    found = [(p.setup.system.chip.family, figures_used(p.setup, model.is_moe)) for p in pools]
    out: dict[str, dict[str, Any]] = {}
    for family, figures in found:
        for name, figure in figures.items():
            differs = any(name in other and other[name] != figure for _, other in found)
            out[f"{name} ({family})" if differs else name] = figure
    return out


def figures_used(setup: ReplicaSetup, experts: bool = False) -> dict[str, dict[str, Any]]:
    """Every catalog figure a replica's iterations read (`chipwise sensitivity` moves each of them): the chip's
    peaks (the LM head and attention in bf16 beside the weights' precision), its memory, the fabrics a replica of
    more than one chip talks over, the chip family's efficiency figures, and the engine's."""
    system = setup.system
    chip = system.chip
    prec = matmul_precision(setup.plan.weight_precision, chip)
    # the GEMMs at the weights' precision and in bf16, their waves and tiles, memory, launches and reserved memory
    efficiency: tuple[str, ...] = (f"matmul.{prec}", "matmul.bf16", "compute_units", "tile_m", "tile_n")
    efficiency += ("memory", "kernel_overhead", "reserved_memory")
    wanted: dict[str, FigureRef | None] = {
        f"{chip.id}.flops.{prec}": chip.provenance.get(f"flops.{prec}"),
        f"{chip.id}.flops.bf16": chip.provenance.get("flops.bf16"),
        f"{chip.id}.hbm_bandwidth": chip.provenance.get("hbm_bandwidth"),
        f"{chip.id}.hbm_capacity": chip.provenance.get("hbm_capacity"),
        **efficiency_figures(system, (*efficiency, "reference_tdp")),
        **(efficiency_figures(system, ("moe_gemm",)) if experts else {}),
    }
    if setup.plan.ranks > setup.dev.cores_per_chip:  # a replica of several chips talks over the fabric
        wanted.update(fabric_figures(system, network=setup.plan.ranks > setup.topo.domain_ranks))
    keys = [
        "step_overhead",
        "sequence_overhead",
        "layer_overhead",
        "kernel_overhead",
        "prefill_overhead",
        "request_overhead",
        "host_logits_per_logit",
        "host_sampling_per_logit",
        "compute_scale",
        "memory_scale",
        "memory_fraction",
        "admission",
    ]
    if experts:
        keys.append("moe_scale")
    if max(setup.plan.tp, setup.plan.ep) > 1:
        keys.append("collective_latency")
    if setup.engine.eager_launch_s > 0:
        keys.append("eager_launch")
        if setup.engine.host_factor != 1.0:
            keys.append("eager_host_share")
    if max(setup.plan.tp, setup.plan.ep) > setup.topo.domain_ranks:
        keys.append("network_collective_latency")
    for key in keys:
        wanted[f"engines.{setup.engine.engine}.{key}"] = setup.engine.provenance.get(key)
    return {name: ref.record() for name, ref in wanted.items() if ref is not None}


#: A simulated check keeps up with its open-loop load when it delivers at least this share of the offered output
#: tokens/s: the steady window of a short check reads a healthy deployment up to ~5% under the load it serves
#: (Llama-3.1-8B on 14 TPU v6e at 50 req/s, SLO met: 95.4%), while one a fifth short of its replicas reads ~80%.
KEEPS_UP = 0.9


def keeps_up(job: ServingJob, summary: Mapping[str, Any], nominal: bool = False) -> bool:
    """Whether a simulated run delivered the output tokens/s its open-loop load offered (a saturated deployment's
    queue, and TTFT, grow for as long as the run lasts); closed loops and offline runs always keep up. The load is
    the one the run's arrivals brought, where it fell short of the rate asked for: 400 Poisson arrivals at 5 req/s
    come 5% apart in rate, and such a run read 'overloaded' on a fleet at a fifth of its capacity and grew it to
    four chips. `nominal`: against the rate asked for, whatever arrived (the test a smaller fleet must pass, so
    that light arrivals do not shrink it). A run whose load is past what its deployment sustains (the summary's
    `capacity_utilisation`, simulate.load_against_capacity's, at 1 or more) never keeps up, however its window
    reads: the KEEPS_UP tolerance is for a short window of a deployment within its capacity, and Llama-3.1-70B at
    22 req/s on four H200 pairs (106% of the 20.8 they sustain) delivered 90.4% of it."""
    if offered_request_rate(job) is None:
        return True
    if float(summary.get("capacity_utilisation", 0.0)) >= 1.0:
        return False
    return delivered_share(job, summary, nominal) >= KEEPS_UP


def delivered_share(job: ServingJob, summary: Mapping[str, Any], nominal: bool = False) -> float:
    """The output tokens/s an open-loop run delivered over those its load offered (keeps_up: the load its arrivals
    brought, or with `nominal` the rate asked for); 1 for closed loops and offline runs."""
    offered = offered_request_rate(job)
    if offered is None:
        return 1.0
    share = float((summary.get("simulated") or {}).get("fleet_share", 1.0))
    arrived = float((summary.get("little_law") or {}).get("arrivals_per_s", math.nan)) / share
    light = not nominal and math.isfinite(arrived) and arrived > 0
    rate = min(offered, arrived) if light else offered
    return float(summary["output_tokens_per_s"]) / (rate * job.mean_output)


def served_tokens(job: ServingJob, summary: Mapping[str, Any]) -> tuple[float, float]:
    """(output tokens/s, all tokens/s) a deployment is priced per: a run that keeps up with its open-loop load
    serves that load, so it is priced per token of it, not of its run's window (a short window reads a few % either
    way, which reordered options of equal $/h, and `predict` of a checked option priced it apart from its check);
    otherwise what the run delivered."""
    offered = offered_request_rate(job)
    if offered is not None and keeps_up(job, summary):
        return offered * job.mean_output, offered * (job.mean_output + job.mean_input)
    return float(summary["output_tokens_per_s"]), float(summary["throughput_tokens_per_s"])


def serving_track_record(pools: Sequence[Pool]) -> dict[str, Any]:
    """How far the model has been from published runs like this deployment (catalog.track_record), per metric:
    TTFT by the engine and chip family of the pool that encodes the prompts, TPOT and throughput by the decoding
    pool's."""
    roles = {p.role: p.setup for p in pools}
    prefill, decode = roles.get("prefill", pools[0].setup), roles.get("decode", pools[0].setup)
    return track_record(
        "serve",
        (decode.system.chip.family, decode.system.chip.vendor),
        decode.engine.engine,
        metrics={"ttft_s": ((prefill.system.chip.family, prefill.system.chip.vendor), prefill.engine.engine)},
    )


def predict_serving(catalog: Catalog, sc: ServeScenario) -> dict[str, Any]:
    """DESIGN.md's `chipwise predict` for a serve scenario: a missing plan is searched, then simulated."""
    check_mode(sc.pricing)
    check_rental_options(sc.pricing, {"provider": sc.provider})
    model = load_model(catalog, sc.model)
    job = serving_job(model, sc)
    targets = sc.slo.targets() if sc.slo else {}
    setup, source, idle, batch_note = _deployment(catalog, model, sc, job, targets)
    if (too_many := fleet_problem(setup.chips, f"serving {job.load.label()} on {sc.hardware}")) is not None:
        raise ChipwiseError(f"{too_many}.")
    against = load_against_capacity(job, setup, seed=sc.seed) or {}
    # over capacity an open loop has no steady state to wait for: the queue grows while arrivals come, so its
    # throughput is the deployment's saturated rate over the whole run (a steady window read the batch filling,
    # 7,228 output tok/s on one H100 that sustains 5,568, and advised runs that could never settle)
    over = against.get("utilisation", 0.0) >= 1.0
    summary, sim = run_job(
        job, setup, seed=sc.seed, targets=targets, steady_latencies=True, basis="run" if over else "steady"
    )
    summary["capacity_utilisation"] = against.get("utilisation", 0.0)  # over capacity: priced on what it delivers
    first = setup.pools[0].setup
    econ = economics(
        catalog,
        setup.pools,
        *served_tokens(job, summary),
        sc.pricing,
        sc.region,
        sc.provider,
        busy=busy_shares(sim),
    )
    slo_met = all(stat_ok(summary, k, v) for k, v in targets.items()) if targets else None
    plan_out: dict[str, Any] = (
        {"disaggregated": True, **{p.role: plan_dict(p.setup, p.replicas, p.role) for p in setup.pools}}
        if setup.disaggregated
        else {"disaggregated": False, **plan_dict(first, setup.pools[0].replicas, "both")}
    )
    result: dict[str, Any] = {
        "kind": "serve",
        "model": model.display,
        # a split named as plan serve names one: its prefill then its decode pool's ('h100-sxm>b200')
        "hardware": pool_names(setup, lambda s: s.system.chip.id),
        "system": pool_names(setup, lambda s: s.system.id),
        "engine": pool_names(setup, lambda s: s.engine.engine),
        "chips": whole_count(setup.chips),
        "precision": first.plan.weight_precision,
        "kv_precision": first.plan.kv_precision,
        "projected": any(p.setup.system.projected for p in setup.pools),
        "projected_chips": sorted({p.setup.system.chip.id for p in setup.pools if p.setup.system.projected}),
        "load": {
            "kind": job.load.kind,
            "label": job.load.label(),
            "arrival_rate_per_s": job.load.rate or None,
            "concurrency": job.load.concurrency or None,
            "input_tokens_mean": job.mean_input,
            "output_tokens_mean": job.mean_output,
            "prefix_hit_rate": job.prefix_hit_rate,
            "prompt_pool": job.prompt_pool or None,
            **against,
        },
        "plan": plan_out,
        "plan_source": source,
        "router": setup.router,
        "slo": targets,
        "slo_met": slo_met,
        **{
            k: summary[k]
            for k in (
                "throughput_tokens_per_s",
                "output_tokens_per_s",
                "input_tokens_per_s",
                "output_tokens_per_s_per_chip",
                "throughput_tokens_per_s_per_chip",
                "requests_per_s",
                "ttft_s",
                "ttft_wait_s",
                "tpot_s",
                "e2e_s",
                "goodput",
                "kv_cache_utilisation",
                "requests",
                "latency_requests",
                "little_law",
            )
        },
        **where_time_goes(setup, model, job, summary),
        **econ,
        "billed_chips": whole_count(econ["billed_chips"]),
        "figures": pool_figures(setup.pools, model),
        "engine_defaults": sorted(
            {
                p.setup.system.chip.id
                for p in setup.pools
                if not engine_fitted_on(catalog, p.setup.engine.engine, p.setup.system)
            }
        ),
        "engine_carried": engine_carried(catalog, [(p.setup.engine.engine, p.setup.system) for p in setup.pools]),
        "track_record": serving_track_record(setup.pools),
        "simulation": {
            "wall_s": summary["simulation_wall_s"],
            "makespan_s": summary["makespan_s"],
            "window_s": summary["window_s"],
        },
    }
    issued = summary["requests"]["issued"]
    offered = offered_request_rate(job)
    if not summary["steady_state"] and offered is not None and not over:
        # an open loop (a rate, or a trace's own times) whose arrivals end before the first requests do: its figures
        # are of the fill (a 30-request trace read 11% above the load it offered, a two-row one 0 req/s, unflagged);
        # more requests of a trace replay it again, a span later (serve.sim.arrivals.arrival_times)
        fill = summary["e2e_s"]["p50"]
        result["short_run"] = {
            "arrival_span_s": summary["arrival_span_s"],
            "request_latency_s": fill,
            "requests_for_steady_state": max(issued + 1, math.ceil(STEADY_FILLS * fill * offered)),
        }
    elif job.load.kind == "offline" and issued < 2 * (slots := deployment_batch_slots(setup)):
        # an offline run of one batch: no request waits for a slot or joins a running batch
        result["short_run"] = {"batch_slots": slots, "requests_for_steady_state": STEADY_WAVES * slots}
        result["steady_state"] = False
    elif job.load.kind == "closed" and (
        issued < CLOSED_WAVES * (users := job.load.concurrency) or not summary["steady_state"]
    ):
        # fewer requests than the waves a steady state needs, as its advice says (flagged under two per user only,
        # 130 requests of 64 users, whose window then included the users' ramp-up, read 22% low unflagged), or a
        # window that includes the ramp
        wanted = CLOSED_WAVES * users
        result["short_run"] = {"users": users, "requests_for_steady_state": wanted if issued < wanted else 2 * issued}
        result["steady_state"] = False
    fallbacks = (float8_fallback(p.setup.engine.engine, p.setup.system.chip, p.setup.plan.weight_precision,
                                 p.setup.plan.kv_precision) for p in setup.pools)  # fmt: skip
    if notes := list(dict.fromkeys(n for n in fallbacks if n)):  # one note per pool that falls back
        result["precision_note"] = "; ".join(notes)
    if (lost := dropped(summary, sim, setup)) is not None:
        result["dropped"] = lost
    if idle and sc.chips:
        result["stated_chips"] = {"stated": sc.chips, "used": result["chips"], "reason": idle}
    if batch_note:  # a searched batch limit the KV cache set: which requests it holds, and the users it seats
        result["batch_note"] = batch_note
    if (cohorts := lockstep_note(job, setup)) is not None:
        result["lockstep_note"] = cohorts
    caveat = _slo_caveat(result)
    if caveat:
        result["slo_caveat"] = caveat
    if setup.transfer is not None:
        result["kv_transfer"] = transfer_dict(setup.transfer, job)
    return result


def dropped(summary: Mapping[str, Any], sim: SimOutput, setup: ServingSetup) -> dict[str, Any] | None:
    """The requests a run dropped and why (None where it dropped none). The simulated engine drops a request that
    alone outgrows a replica's KV cache (serve.sim.replica), as an engine refuses one its cache cannot hold; the
    lengths the replicas are sized for (LengthDist.maximum, a trace's longest) fit it, so what remains is a request
    the steps' growth carries past it (a decode step's speculative positions). A run that finished none has no
    figures to give: one line."""
    count = int(summary["requests"]["dropped"])
    if count == 0:
        return None
    r = sim.requests
    lost = np.flatnonzero(r["dropped"] > 0)
    longest = int(lost[np.argmax(r["input"][lost] + r["output"][lost])])
    kv = min(p.setup.kv_tokens for p in setup.pools)
    inp, out = int(r["input"][longest]), int(r["output"][longest])
    reason = (
        f"{count:,} of {int(summary['requests']['issued']):,} requests outgrew a replica's KV cache of {kv:,} tokens "
        f"alone (the longest: {inp:,} input + {out:,} output tokens, with the positions each decode step adds) and "
        "were dropped unserved"
    )
    if int(summary["requests"]["finished"]) == 0:
        raise InfeasibleError(
            f"no request finished: {reason}. Fix: raise plan.memory_fraction or tp, quantise the KV cache, or "
            "shorten the requests."
        )
    return {"requests": count, "kv_cache_tokens": kv, "longest": {"input": inp, "output": out}, "reason": reason}


def lockstep_note(job: ServingJob, setup: ServingSetup) -> str | None:
    """Where a closed loop of fixed lengths has more users than batch slots, what that does to its figures (None
    where it has not): users that wait for a slot are admitted together as a cohort finishes and, of one length,
    finish together, so they run in lock-step cohorts whose prompts share iterations (and the launch floor of an
    eagerly run prompt). DeepSeek-R1 on 8 H200 under SGLang, 1,024 in and out, read TPOT 74.8 ms at 320 users
    and 50.3 ms at 384 (+39% throughput); lengths spread over [0.8 L, L] read 82 and 86.8 ms."""
    users = job.load.concurrency if job.load.kind == "closed" else 0
    fixed = job.trace is None and job.input.kind == "fixed" and job.output.kind == "fixed"
    slots = deployment_batch_slots(setup)
    if not fixed or users <= slots:
        return None
    length = job.input.maximum
    return (
        f"{users:,} users of fixed lengths outnumber the {slots:,} batch slots: those waiting for a slot are admitted "
        "together as a cohort finishes and, of one length, finish together, so they run in lock-step cohorts that "
        "share prompt iterations (TPOT and throughput can read better than a real load's); a small spread of "
        f"lengths, e.g. input_tokens: {{dist: uniform, min: {math.floor(0.8 * length)}, max: {length}}} (and "
        "output_tokens alike), gives the steadier figures a real load shows"
    )


def deployment_batch_slots(setup: ServingSetup) -> int:
    """Batch slots of a deployment's (last) pool: requests it decodes at once, replicas x batch limit (not
    serve.search.batch_slots, a candidate shape's slots within its KV cache)."""
    pool = setup.pools[-1]
    return pool.replicas * pool.setup.plan.max_batch


def _slo_caveat(result: Mapping[str, Any]) -> str | None:
    """Why a simulated run's SLO verdict does not describe the deployment: a run too short to leave the batch
    filling, or an open loop over capacity, whose queue and TTFT grow for as long as it runs."""
    if not result["slo"]:
        return None
    if "short_run" in result:
        return "the run is too short to judge (its figures are of the batch filling)"
    if "dropped" in result and result["slo_met"]:
        return f"{result['dropped']['requests']:,} requests were dropped unserved (see dropped)"
    util = result["load"].get("utilisation")
    if util is not None and util >= 1.0 and result["slo_met"]:
        return f"at {100 * util:.0f}% of capacity the queue grows for as long as the load lasts: a longer run misses it"
    return None


def transfer_dict(t: KVTransfer, job: ServingJob) -> dict[str, Any]:
    return {
        "fabric": t.fabric,
        "projected": t.projected,
        "bytes_per_token": t.bytes_per_token,
        "bandwidth_bytes_per_s": t.bandwidth,
        "latency_s": t.latency_s,
        "seconds_for_mean_prompt": t.latency_s + t.seconds(job.mean_input),
    }


def stat_ok(summary: Mapping[str, Any], key: str, limit: float) -> bool:
    """Whether a simulated run's statistic meets its target; a TPOT target of a run whose answers are all one
    token long (no request has a second token to time) holds."""
    metric, stat = key.split("_")
    value = summary.get(f"{metric}_s", {}).get(stat)
    if metric == "tpot" and value is not None and math.isnan(value):
        return bool(summary.get("requests", {}).get("finished", 0) > 0)
    return value is not None and math.isfinite(value) and value <= limit


def kv_path(
    catalog: Catalog, model: ModelSpec, pre: ReplicaSetup, n_pre: int, dec: ReplicaSetup, n_dec: int
) -> KVTransfer:
    """The KV path between the pools: one system's scale-up domain, a hybrid domain holding both chip types
    (e.g. an NVLink Fusion rack), or the scale-out network (refused where no provider rents both systems and they
    cannot both be bought: providers.network_gap). Pools of a system its provider rents in units (a TPU
    slice, an EC2 instance size) share a scale-up fabric only where one unit holds both (rental.split_rent); in
    units of their own, the network."""
    units = pre.system.rental_chips
    same = pre.system.id == dec.system.id and (
        split_rent(units, pre.chips, n_pre, dec.chips, n_dec)[1]
        if units
        else (pre.chips * n_pre + dec.chips * n_dec) <= pre.system.scaleup.size
    )
    hw = hardware(catalog)
    hybrids = (hw.system(k) for k, e in catalog.systems.items() if len(e.members or {}) > 1)
    hybrid = hybrid_domain(hybrids, pre, pre.chips * n_pre, dec, dec.chips * n_dec)
    gap = None if same or hybrid else network_gap(catalog, pre.system, dec.system)
    if gap:  # a TPU prefill pool beside an EC2 decode pool: the cache would cross clouds
        raise ChipwiseError(gap)
    return kv_transfer(model, pre, dec, same, hybrid)
