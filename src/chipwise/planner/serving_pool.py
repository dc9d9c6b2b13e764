"""One pool of a serving deployment: its chip's system and engine, the replica shape the scenario gives or the
search picks (the batch limit and replica count it leaves open included; a prefill pool's batch limit), checked
against the stated chips, and the replica set up."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from typing import Any, NamedTuple

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.planner.serving_choice import Shape, choose, plan_shape
from chipwise.planner.serving_economics import priced_system
from chipwise.planner.serving_inputs import (
    check_drafter_tp,
    check_engine_drafts,
    check_engine_features,
    drafting_for,
    engine_for,
    precisions,
)
from chipwise.planner.serving_outcome import stat_ok, stat_value
from chipwise.serve.build import ReplicaSetup, cached_prefix, setup_replica
from chipwise.serve.engine import EngineProfile, check_engine_vendor, engine_profile, token_budget
from chipwise.serve.plan import ReplicaPlan, chip_count
from chipwise.serve.simulate import Pool, ServingSetup, run_job
from chipwise.workload.model import ModelSpec
from chipwise.workload.serve_scenario import ServePlan, ServeScenario
from chipwise.workload.serving_job import ServingJob

#: The batch limit of a disaggregated prefill pool's replicas: a prefill replica encodes the prompts queued for it
#: together (each in one iteration, up to its token budget); its answers leave with their first token, so the limit
#: is not a latency knob. One prompt at a time would leave an attention-DP replica's other ranks idle.
PREFILL_POOL_BATCH = 64

#: A stated deployment's searched shape under an SLO is simulated (as predict runs it) before it is taken; where that
#: run misses a target, the shape the search ranks next (the missed parallel shapes left out) is simulated too, up to
#: this many shapes in all, and the first that meets every target is taken (plan serve's check grows a fleet instead;
#: stated chips cannot grow). The estimate's TTFT p99 of one Neuron replica near 80% load reads about 2.6x low
#: (502 ms against 1.30 s simulated): Llama-3.1-8B at 5 req/s on one trn2 with 25% more HBM bandwidth, under a 0.7 s
#: TTFT p99 target, had taken TP4 b64 x1 (1.30 s, missed) where the slower chip's TP2 b64 x2 met it; it now takes
#: TP2 b64 x2 (0.439 s), as plan serve does. One run more where the first shape meets the targets.
SLO_CHECKS = 3


class Pick(NamedTuple):
    """A pool's replica shape as searched and set up: its setup, its replicas, and build_pool's idle and batch notes."""

    setup: ReplicaSetup
    replicas: int
    idle: str
    why: str


def build_pool(
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
    disaggregated deployment's decode pool, which encodes no prompt: serve.estimate; `longest`: the longest
    request the replica is set up for, where not the job's: a prefill pool's are the deployment's, answers
    included."""
    system, engine, eng = _pool_engine(catalog, model, sc, hardware_name)
    weight, kv = precisions(sc.precision, sc.kv_precision, eng, model, system)
    stated = _fixed(spec)
    _check_balancing(stated, engine, eng)
    _check_engine_knobs(sc.plan, engine, eng)
    check_engine_features(catalog, engine, system, sc)  # a prefix cache or a KV hand-over the engine lacks
    fixed = dict(stated)
    if job.max_output <= 1 and "max_batch" not in fixed:
        fixed["max_batch"] = PREFILL_POOL_BATCH  # a prefill pool's, as plan serve sizes it
    max_tokens = int(
        getattr(spec, "max_tokens", None) or token_budget(eng, job.max_input, memory_bytes=system.chip.hbm_capacity)
    )
    chunked = sc.plan.chunked_prefill if sc.plan and sc.plan.chunked_prefill is not None else eng.chunked_prefill
    # a given budget must hold the prompts it runs whole (a decode pool encodes none)
    stated_tokens = getattr(spec, "max_tokens", None) is not None and not decode_only
    replicas_given = getattr(spec, "replicas", None)
    idle = why = ""
    # a prefill pool of a speculating deployment holds the drafter too, which encodes every prompt and hands its
    # cache over with the target's (it had held none: a draft model's prefill and KV left out of TTFT)
    drafting = drafting_for(catalog, model, sc.speculative)
    check_engine_drafts(engine, drafting)

    def ready(plan: ReplicaPlan, replicas: int) -> ReplicaSetup:
        """`plan`'s `replicas` checked against the stated chips and drafter, set up with the stated knobs."""
        _check_chips(chips, replicas_given, plan, system)
        check_drafter_tp(drafting, plan)
        plan = _with_stated_knobs(plan, sc.plan)
        return _setup(catalog, model, system, engine, plan, job, "max_batch" in stated, longest, stated_tokens)

    def searched(passed_over: Collection[Shape] = ()) -> Pick:
        """The replica shape the search ranks first (the `passed_over` parallel shapes left out), set up."""
        try:
            choice, _, _ = choose(
                model, system, eng, job, weight, kv, targets, fixed, chips, max_tokens, chunked, drafting, decode_only,
                passed_over,
            )  # fmt: skip
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
        idle = "" if replicas_given else choice.idle_reason
        why = "" if "max_batch" in stated else choice.batch_reason
        return Pick(ready(plan, replicas), replicas, idle, why)

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
        _check_given_shape(model, plan, system, chips, replicas_given)
        ranks = plan.ranks
        cores = system.chip.cores_per_chip
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
                _setup(catalog, model, system, engine, plan, job, False, longest, stated_tokens)  # says why
                raise
            plan, replicas = replace(plan, max_batch=choice.plan.max_batch), replicas or choice.replicas
            why = "" if "max_batch" in held else choice.batch_reason
        source = "given" if "max_batch" in stated else "partial"
        setup = ready(plan, replicas)
    else:
        pick = searched()
        if targets and chips:  # a stated deployment's searched shape, simulated as predict runs it: slo_checked
            pick = slo_checked(pick, searched, job, targets, sc.seed)
        setup, replicas, idle, why = pick
        source = "searched" if not stated else "partial"
    return setup, replicas, source, idle, why


def slo_checked(
    first: Pick, search: Callable[[Collection[Shape]], Pick], job: ServingJob, targets: Mapping[str, float], seed: int
) -> Pick:
    """The search's `first` pick, simulated as predict runs it: where its run misses a target, the picks `search`
    ranks next with the missed parallel shapes left out, up to SLO_CHECKS shapes in all; the first that meets every
    target, else `first` (its run shows the misses). A pick other than `first` notes the shapes simulated."""
    tried: list[tuple[Pick, list[str]]] = []
    pick: Pick | None = first
    while pick is not None and len(tried) < SLO_CHECKS:
        missed = _missed(pick, job, targets, seed)
        tried.append((pick, missed))
        if not missed:
            break
        try:
            pick = search([plan_shape(p.setup.plan) for p, _ in tried])
        except ChipwiseError:  # no other shape fits, or none the stated chips and replicas take
            pick = None
    if len(tried) == 1:
        return first
    met = next((p for p, missed in tried if not missed), None)
    note = _checked_note(tried, targets)
    chosen = met or first
    return chosen._replace(why="; ".join(t for t in (chosen.why, note) if t))


def _missed(pick: Pick, job: ServingJob, targets: Mapping[str, float], seed: int) -> list[str]:
    """The SLO targets a pick's run misses, each with its simulated value ('ttft_p99 1.3 s > 0.7 s'), simulated as
    predict runs it (the same job, router and seed: the run predict then reports for the pick it takes)."""
    deployment = ServingSetup((Pool(pick.setup, pick.replicas),), job.router)
    summary, _ = run_job(job, deployment, seed=seed, targets=dict(targets), steady_latencies=True)
    return [_missed_text(summary, k, v) for k, v in targets.items() if not stat_ok(summary, k, v)]


def _missed_text(summary: Mapping[str, Any], key: str, limit: float) -> str:
    """A missed target with its simulated value, both to three figures in the unit predict's SLO row writes them
    in (format.latency: seconds from one up, else milliseconds): 'ttft_p99 1.30 s > 700 ms', 'tpot_p99 45.1 ms >
    20.0 ms' (it had read 'tpot_p99 0.0451 s > 0.02 s' under the row's 'tpot_p99 <= 20.0 ms'; the planner may not
    import the interfaces' formatter)."""

    def latency(seconds: float) -> str:
        size, unit = next(((f, u) for f, u in ((1.0, "s"), (1e-3, "ms")) if seconds >= f), (1e-6, "us"))
        x = seconds / size
        return f"{x:,.{max(0, 2 - math.floor(math.log10(x))) if x > 0 else 0}f} {unit}"

    value = stat_value(summary, key)
    if value is None or not math.isfinite(value):
        return f"{key} (no value)"
    return f"{key} {latency(value)} > {latency(limit)}"


def _checked_note(tried: list[tuple[Pick, list[str]]], targets: Mapping[str, float]) -> str:
    """Which shapes the SLO check simulated and what each missed ('TP4 b64 x1, the search's first, missed ttft_p99
    1.3 s > 0.7 s in simulation; TP2 b64 x2 meets the SLO')."""
    parts = []
    for n, (pick, missed) in enumerate(tried):
        shape = f"{pick.setup.plan.label()} x{pick.replicas}" + (", the search's first," if n == 0 else "")
        parts.append(f"{shape} " + (f"missed {', '.join(missed)} in simulation" if missed else "meets the SLO"))
    if all(missed for _, missed in tried):
        parts.append(f"none of the {len(tried)} shapes simulated meets {', '.join(targets)}: the first is kept")
    return "; ".join(parts)


def _pool_engine(
    catalog: Catalog, model: ModelSpec, sc: ServeScenario, hardware_name: str
) -> tuple[System, str, EngineProfile]:
    """A pool's system (of one chip type, priced as the scenario asks), the engine it runs, and that engine's
    profile as the scenario deploys it (its memory share, mixed batching and front end)."""
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
    if sc.plan is not None:  # the search sizes KV caches, schedules and launches prompts, takes requests as stated
        eng = eng.as_deployed(sc.plan.memory_fraction or 0.0, sc.plan.mixed_batching, sc.plan.front_end or "engine")
        eng = eng.prompt_graphs(sc.plan.piecewise_graphs)
    return system, engine, eng


def _check_given_shape(
    model: ModelSpec, plan: ReplicaPlan, system: System, chips: int | None, replicas_given: int | None
) -> None:
    """A stated shape (tp given) the model's heads split over, on as many chips as it needs, and (its replicas not
    given) a whole number of its replicas in the stated `chips`."""
    if not plan.attention_dp and (reason := model.attention.tp_problem(plan.tp)):
        raise ChipwiseError(f"invalid plan for {model.display}: {reason}.")
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


def _with_stated_knobs(plan: ReplicaPlan, given: ServePlan | None) -> ReplicaPlan:
    """`plan` with the engine settings the scenario's plan states (its scheduler's receive interval and batch waits,
    CUDA-graph capture, memory share, mixed batching and front end), which no search sets."""
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
    return plan


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


def _setup(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    engine: str,
    plan: ReplicaPlan,
    job: ServingJob,
    explicit_batch: bool,
    longest: int | None = None,
    stated_tokens: bool = False,
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
        stated_prompt=job.max_input if stated_tokens else 0,  # build.check_stated_budget
        typical_cached=cached_prefix(job.mean_input, job.prefix_hit_rate),
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


#: scheduler settings only one engine family has: the family, its own name for the setting, and the value every
#: engine runs with where it is not set (polling at every iteration, no batch waiting; serve.plan.ReplicaPlan)
ENGINE_KNOBS: Mapping[str, tuple[str, str, float]] = {
    "recv_interval": ("sglang", "SGLang's --scheduler-recv-interval", 1),
    "batch_wait_iters": ("trtllm", "TensorRT-LLM's batch_wait_timeout_iters, on its PyTorch back end", 0),
    "batch_wait_ratio": ("trtllm", "TensorRT-LLM's batch_wait_max_tokens_ratio, on its PyTorch back end", 0.0),
}


def _check_engine_knobs(given: ServePlan | None, engine: str, eng: EngineProfile) -> None:
    """A stated scheduler setting the pool's engine has, as _check_balancing does for adp_balance: recv_interval: 30
    on vllm had been taken as SGLang's polling interval (Llama 3.1 8B on an H100 at 10 req/s: TTFT p50 71 ms had
    read 252 ms), batch waiting on vllm as TensorRT-LLM's (501 ms); a compiled Neuron graph of fixed slots
    (static_batch) has no CUDA graphs for graph_batch to size, and runs its context encodings and token generations
    as iterations of their own (engines.neuron.mixed_batching), which mixed_batching: true had turned into mixed
    ones. A value every engine runs with (recv_interval: 1, batch waiting 0, mixed_batching: false), as a
    prediction's plan reports it and the sensitivity's fixed plan writes it back, changes nothing and passes."""
    if given is None:
        return
    for knob, (owner, name, default) in ENGINE_KNOBS.items():
        value = getattr(given, knob)
        if value is not None and value != default and engine != owner:
            raise ChipwiseError(
                f"plan.{knob}: {value:g} is {name}; {engine} has no such setting. Fix: use engine: {owner}, or "
                f"leave {knob} out."
            )
    if eng.static_batch and given.graph_batch is not None:
        raise ChipwiseError(
            f"plan.graph_batch sizes CUDA graphs; {engine} runs compiled Neuron graphs of a fixed batch, with none to "
            "size. Fix: leave graph_batch out (max_batch is the compiled batch)."
        )
    if eng.static_batch and given.mixed_batching:
        raise ChipwiseError(
            f"plan.mixed_batching: true; {engine} runs its context encodings and token generations as compiled graphs "
            "of their own, never one iteration with both. Fix: leave mixed_batching out."
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
