"""A serving row made predictable: the Case (the job, the deployment, what to compare, the assumptions made) and
prepare, which reads the row's model, lengths, precisions and plan, builds its replicas as the run deployed them
(a stated prefill pool beside its decode pool) and the job its load generator ran."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.objects import Chip, System
from chipwise.serve.build import ReplicaSetup, setup_replica
from chipwise.serve.disaggregated import kv_transfer
from chipwise.serve.engine import EngineProfile, token_budget
from chipwise.serve.estimate import held_tokens
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.quant import QUANTISED, WEIGHT_PRECISIONS, default_kv_precision
from chipwise.serve.search import best_throughput_shape
from chipwise.serve.simulate import Pool, ServingSetup
from chipwise.validation.harness import DecodeRun, Harness, SglangRun, harness_of, mean_length
from chipwise.validation.models import model_for
from chipwise.validation.rows import SKIP_DISAGGREGATED, InferenceRow
from chipwise.validation.serving_case_engine import (
    decode_worker_batch,
    deployed_engine,
    engine_family,
    launched_sglang,
    row_speculation,
    scheduler_settings,
    tuned_compute_scale,
)
from chipwise.validation.serving_case_lengths import request_lengths, row_lengths, served_prompt
from chipwise.validation.serving_case_load import request_schedule, simulated_load
from chipwise.validation.serving_row_precision import UNSTATED_WEIGHTS, kv_precision_stated
from chipwise.workload.lengths import context_overflow
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.serving_job import ServingJob

#: The KV cache's share of memory taken for a published run whose engine default leaves less than one request (the
#: run fitted, so its operator raised it): 0.95 (status: estimate), the share InferenceX's launch script gives
#: SGLang for DeepSeek-R1 FP8 on four B200 (benchmarks/single_node/dsr1_fp8_b200.sh @16ffb658, TP4 branch:
#: --mem-fraction-static 0.95), the highest in the recipes read.
MEASURED_RUN_MEMORY_FRACTION = 0.95
#: Models whose only published 4-bit checkpoint is MXFP4 experts with 16-bit attention (serve.quant, mxfp4): a
#: row that says FP4 or MXFP4 for them ran that checkpoint (huggingface openai/gpt-oss-120b and -20b).
MXFP4_CHECKPOINTS: frozenset[str] = frozenset({"gpt-oss-120b", "gpt-oss-20b"})


@dataclass(frozen=True)
class Case:
    """A row made predictable: the job, the deployment, what to compare, and the assumptions made."""

    row: InferenceRow
    job: ServingJob
    setup: ServingSetup
    plan_source: str
    notes: tuple[str, ...]
    basis: str = "steady"
    latency_load: Load | None = None
    ramp_s: float = 0.0
    #: latencies only of requests issued after every user's first request finished (harness.Harness.after_warmup)
    after_warmup: bool = False
    #: a load generator that measures in time windows (harness.Harness.window_s): its users start together and
    #: only the requests that end within its measurement count
    windows: Harness | None = None
    #: the sequences a replica's KV cache holds at full length where the row's stated batch cap is more and the
    #: engine admits on demand (it then preempts; the note gives the simulated count), else 0
    kv_holds: int = 0

    @property
    def group(self) -> tuple[str, str]:
        """(engine, chip family): the level at which serving factors are calibrated."""
        s = self.setup.pools[0].setup
        return s.engine.engine, s.system.chip.family

    def with_profile(self, catalog: Catalog, profile: EngineProfile) -> Case:
        """The same case priced with another engine profile (calibration); a harness's tuned GEMM rate stays its own."""

        def rebuilt(pool: Pool) -> Pool:
            s = pool.setup
            setup = setup_replica(
                catalog,
                self.job.model,
                s.system,
                s.engine.engine,
                s.plan,
                s.typical_prompt,
                s.typical_context - s.typical_prompt,
                longest_request=1,
                profile=replace(
                    profile,
                    host_sampling=s.engine.host_sampling,
                    compute_scale=tuned_compute_scale(self.row, s.engine.engine, s.system.chip.vendor)
                    or profile.compute_scale,
                ),
            )
            return Pool(replace(setup, max_sequence=s.max_sequence), pool.replicas, pool.role)

        return replace(self, setup=replace(self.setup, pools=tuple(rebuilt(p) for p in self.setup.pools)))


def prepare(catalog: Catalog, row: InferenceRow) -> Case:
    """Turn a row into a Case; raise ChipwiseError with the reason when it cannot be predicted."""
    if row.skip_reason == SKIP_DISAGGREGATED:
        raise ChipwiseError(
            "prefill/decode-disaggregated deployment whose pool sizes and per-pool parallelism the row does not "
            "state (disaggregation itself is simulated: plan.disaggregated)"
        )
    if row.skip_reason:
        raise ChipwiseError(row.skip_reason)
    speculation = row_speculation(catalog, row) if row.speculative else None
    if row.num_chips is None:
        raise ChipwiseError("no chip count")
    notes: list[str] = []
    model, model_note = model_for(catalog, row.model_name)
    notes.append(model_note)
    stated_in, stated_out = row_lengths(row, notes)
    past = context_overflow(model, stated_in, stated_out)
    if past:
        # predict refuses such a request; a published run that served it (Neuron's Llama 2 13B compiled at 16,384
        # tokens over a 4,096 context) is priced as it ran, and says so
        notes.append(f"{past}; priced anyway, as the run was published")
    gen = harness_of(row)
    system = hardware(catalog).system(row.chip)
    engine = engine_family(row, system.chip.vendor)
    served_in = served_prompt(row, gen, engine, model.name, stated_in, notes)
    inp, out = mean_length(gen, served_in), mean_length(gen, stated_out)
    engine, eng = deployed_engine(catalog, row, model, system, engine, notes)
    cores = system.chip.cores_per_chip
    prefill_pool = row.prefill_pool
    ranks = row.num_chips * cores - (prefill_pool[0] * prefill_pool[1] * prefill_pool[4] if prefill_pool else 0)
    weight = _weight_precision(row, model, notes)
    # the generator's single-node launch scripts (its disaggregated runs follow recipes of their own)
    scripts = gen if prefill_pool is None else None
    kv = _kv_precision(row, weight, eng, scripts, (engine, system.chip), model.name, notes)
    tp, pp, ep, adp, replicas, plan_source = _replica_shape(
        row, model, system, eng, (weight, kv), ranks, (inp, out), notes
    )
    max_batch = _batch_cap(row, eng, tp, adp, replicas, notes)
    seats = max_batch  # the users' share of a replica: the load, and a disaggregated row's prefill pool, keep it
    if prefill_pool is not None and gen is not None and adp and row.concurrency:
        workers = (prefill_pool[4], replicas)
        run = DecodeRun(model.name, row.chip, weight, (stated_in, stated_out), workers, tp, row.concurrency)
        max_batch = decode_worker_batch(gen, engine, run, max_batch, notes)
    max_tokens = token_budget(eng, inp + 1, max_batch, system.chip.hbm_capacity, row.compiled_length or inp + out)
    if scripts is not None and (budget := scripts.token_budget(engine, model.name, row.chip)):
        max_tokens = budget
        notes.append(f"{budget:,} tokens an iteration ({scripts.name}'s launch scripts' max_num_tokens)")
    if scripts is not None:
        lengths, users, drafts = (stated_in, stated_out), row.concurrency or 1, speculation is not None
        launch = SglangRun(engine, model.name, row.chip, weight, tp, lengths, users, drafts)
        eng, max_tokens, max_batch = launched_sglang(scripts, launch, eng, max_tokens, max_batch, notes)
    plan = ReplicaPlan(
        tp=tp,
        pp=pp,
        ep=ep,
        attention_dp=adp,
        max_batch=max_batch,
        max_tokens=max_tokens,
        chunked_prefill=eng.chunked_prefill,
        weight_precision=weight,
        kv_precision=kv,
        speculation=speculation,
    )
    plan = scheduler_settings(plan, row, gen, engine, system.chip.family, model.name, (stated_in, stated_out), notes)
    if speculation is not None:
        notes.append(f"speculative decoding: {speculation.label()}")
    setup, eng = _replica_as_run(catalog, row, model, system, engine, plan, (inp, out), eng, past, notes)
    fits, whole = _kv_capacity(setup, eng, inp, out)
    # a stated cap the cache cannot hold at full length: an on-demand engine admits up to it and preempts as the
    # sequences grow (AMD's MLPerf Llama 2 70B yaml: max_num_seqs 2700 where its KV cache holds about 2,000)
    kv_holds = whole if row.max_batch and eng.admission == "on_demand" and plan.max_batch > whole else 0
    load, latency_load, ramp = simulated_load(row, gen, replicas, seats, fits, notes)
    per_replica = max(1, min(max_batch, int(setup.kv_tokens // max(1.0, inp + out))))
    schedule = request_schedule(row, gen, load, latency_load, per_replica * replicas, out, notes)
    input_lengths, output_lengths = request_lengths(row, gen, served_in, stated_out, notes)
    job = ServingJob(
        model=model,
        input=input_lengths,
        output=output_lengths,
        load=load,
        requests=schedule.requests,
        duration_s=schedule.duration_s,
    )
    pools = _deployment(catalog, row, model, system, engine, eng, gen, setup, replicas, inp, seats, notes)
    return Case(
        row,
        job,
        pools,
        plan_source,
        tuple(notes),
        schedule.basis,
        latency_load,
        ramp,
        schedule.after_warmup,
        schedule.windows,
        kv_holds,
    )


def _precision(p: str) -> str:
    return p if p in WEIGHT_PRECISIONS else "bf16"


def _weight_precision(row: InferenceRow, model: ModelSpec, notes: list[str]) -> str:
    """The weights' precision as the run loaded them: the row's (bf16 where chipwise prices no such weights), the
    checkpoint's own where the row states none, and gpt-oss's MXFP4 checkpoint where the row says 4-bit."""
    weight = _precision(row.weight_precision)
    if UNSTATED_WEIGHTS in row.notes and model.released_precision != weight:
        weight = model.released_precision
        notes.append(f"weights as {model.name}'s checkpoint ships them: {weight}")
    if weight == "fp4" and model.name in MXFP4_CHECKPOINTS:
        weight = "mxfp4"
        notes.append(f"{model.name} 4-bit weights read as its published MXFP4 checkpoint (experts only)")
    return weight


def _kv_precision(
    row: InferenceRow,
    weight: str,
    eng: EngineProfile,
    scripts: Harness | None,
    served: tuple[str, Chip],
    model: str,
    notes: list[str],
) -> str:
    """The KV cache's precision: the row's (16-bit where chipwise prices no such cache); where the row's precision
    text does not name it, the engine's default for quantised weights on the chip (`served`: the engine family and
    the chip, as predict takes it), or fp8 where the load generator's launch `scripts` set it."""
    engine, chip = served
    kv = row.kv_precision if row.kv_precision in ("bf16", "fp16", "fp8", "fp4", "int8") else "bf16"
    if not kv_precision_stated(row.precision_text):
        kv = default_kv_precision(weight, eng.quantised_kv, eng.engine, chip) if weight in QUANTISED else kv
        if scripts is not None and kv != "fp8" and scripts.fp8_kv(engine, model, row.chip):
            kv = "fp8"
            notes.append(f"KV cache in fp8 ({scripts.name}'s launch scripts set it)")
    return kv


def _replica_shape(
    row: InferenceRow,
    model: ModelSpec,
    system: System,
    eng: EngineProfile,
    precisions: tuple[str, str],
    ranks: int,
    lengths: tuple[float, float],
    notes: list[str],
) -> tuple[int, int, int, bool, int, str]:
    """A replica's (tp, pp, ep, attention DP) and the replicas over the row's `ranks`, with the plan's source: the
    row's stated plan, which must take its ranks exactly; one instance over every rank for a static batch that
    states none (_one_static_batch); else the shape that gives the most output tokens/s per chip at the
    (weight, KV) `precisions`. EP is at most TP; attention DP is an MoE model's, over TP > 1."""
    cores = system.chip.cores_per_chip
    searched_adp = False
    if row.plan_given:
        tp, pp, ep = row.tp, row.pp, row.ep
        replicas = row.dp if row.dp > 1 else max(1, ranks // (tp * pp))
        if row.dp > 1 and cores > 1 and not row.plan_counts_cores:
            replicas = row.dp * cores  # replicas counted in chips: each chip holds `cores` ranks (as in training)
            notes.append(f"plan counted in chips: {row.dp} replicas x {cores} NeuronCores a chip = {replicas} replicas")
        if tp * pp * replicas != ranks:
            raise ChipwiseError(_plan_chips_mismatch(row, tp * pp, replicas, ranks, cores))
        plan_source = "given"
    elif _one_static_batch(row, ranks, model):
        tp, pp, ep, replicas, plan_source = ranks, 1, 1, 1, "inferred"
        notes.append(
            f"plan not stated; one static batch on {row.num_chips} chips is one model instance over all of them: TP{tp}"
        )
    else:
        weight, kv = precisions
        inp, out = lengths
        tp, ep, searched_adp = best_throughput_shape(model, system, eng, weight, kv, ranks, inp, out)
        pp, replicas = 1, max(1, ranks // tp)
        plan_source = "searched"
        shape = f"TP{tp}" + (f" EP{ep}" if ep > 1 else "") + (" with attention DP" if searched_adp else "")
        notes.append(f"plan not stated; the most output tokens/s per chip: {shape} x {replicas} replicas")
    if model.moe is not None and ep > tp:
        ep = tp
    adp = (row.attention_dp or searched_adp) and model.moe is not None and tp > 1
    return tp, pp, ep, adp, replicas, plan_source


def _one_static_batch(row: InferenceRow, ranks: int, model: ModelSpec) -> bool:
    """A row that runs one static batch of a stated size on several chips without stating a plan (Intel's Gaudi
    tables, a `run_generation --world_size N` run): the batch is one model instance's, split over every rank, where
    the heads allow it."""
    static = "static batch" in row.raw.get("scenario", "").lower() and (row.max_batch or row.concurrency)
    return bool(static) and ranks > 1 and not model.attention.tp_problem(ranks)


def _batch_cap(row: InferenceRow, eng: EngineProfile, tp: int, adp: bool, replicas: int, notes: list[str]) -> int:
    """A replica's batch cap: the row's stated cap (a per-GPU gpu_batch_size is every attention-DP rank's), else a
    closed loop's users shared over the replicas (one for a single stream), else the engine's default."""
    max_batch = row.max_batch or (row.concurrency if row.scenario in ("closed_loop", "single") else None)
    if adp and row.max_batch and "gpu_batch_size" in row.raw.get("batch_or_concurrency", ""):
        max_batch = row.max_batch * tp  # a per-GPU batch: every attention-DP rank runs its own
        notes.append(f"gpu_batch_size is per attention-DP rank: replica batch {max_batch}")
    if row.scenario == "single":
        max_batch = max_batch or 1
    max_batch = int(max_batch or eng.max_batch)
    if row.concurrency and row.scenario == "closed_loop" and row.max_batch is None:
        max_batch = max(1, min(max_batch, math.ceil(row.concurrency / replicas)))
    return max_batch


def _replica_as_run(
    catalog: Catalog,
    row: InferenceRow,
    model: ModelSpec,
    system: System,
    engine: str,
    plan: ReplicaPlan,
    lengths: tuple[float, float],
    eng: EngineProfile,
    past: str,
    notes: list[str],
) -> tuple[ReplicaSetup, EngineProfile]:
    """The replica as the run deployed it (_measured_fit), its longest sequence the one a static-batch engine was
    compiled for where the row states it. Where it does not fit and the row's request is `past` the model's
    context, the context is the error given."""
    try:
        setup, eng = _measured_fit(catalog, model, system, engine, plan, lengths, eng, notes)
    except InfeasibleError as exc:
        if not past:
            raise
        # the context is the reason to give: the KV cache's own fix (raise tp) had priced a prompt 7.6x past it
        raise InfeasibleError(
            f"{past}, and {str(exc).split('. Fix:')[0]}. Fix: shorten the prompt or the answer, or pick a "
            "longer-context model."
        ) from None
    if eng.static_batch and row.compiled_length is not None:
        setup = replace(setup, max_sequence=max(setup.max_sequence, row.compiled_length))
    return setup, eng


def _kv_capacity(setup: ReplicaSetup, eng: EngineProfile, inp: float, out: float) -> tuple[int, int]:
    """What a replica's KV cache holds: the requests of the assumed lengths it admits (the tokens each holds,
    held_tokens, in whole blocks and one block spare) and the sequences it holds at full length."""
    block = eng.block_tokens
    need = held_tokens(eng.admission, inp, out)
    fits = int(setup.kv_tokens // (math.ceil(need / block) * block + block))
    whole = int(setup.kv_tokens // (math.ceil((inp + out) / block) * block))
    return fits, whole


def _deployment(
    catalog: Catalog,
    row: InferenceRow,
    model: ModelSpec,
    system: System,
    engine: str,
    eng: EngineProfile,
    gen: Harness | None,
    setup: ReplicaSetup,
    replicas: int,
    inp: float,
    seats: int,
    notes: list[str],
) -> ServingSetup:
    """The deployment simulated: `replicas` of the replica, or, where the row states a prefill pool, that pool beside
    them as its decode pool (_disaggregated), each prefill rank encoding what its load generator's recipes give."""
    if row.prefill_pool is None:
        return ServingSetup((Pool(setup, replicas),))
    rank_tokens = gen.prefill_tokens(row.raw.get("serving_engine", "")) if gen is not None else 0
    pools = _disaggregated(
        catalog, model, system, engine, eng, row.prefill_pool, setup, replicas, inp, rank_tokens, seats
    )
    if gen is not None and rank_tokens:
        notes.append(f"prefill workers encode {rank_tokens} tokens per rank an iteration ({gen.name}'s recipes)")
    return pools


def _plan_chips_mismatch(row: InferenceRow, shard: int, replicas: int, ranks: int, cores: int) -> str:
    """Why a stated plan cannot be priced on the row's chips: it needs more or fewer than the row counts, and its
    throughput per chip would be a simulation on other chips divided by the row's count ('TP16 needs 16 chips; the
    row has 8 chips'). A disaggregated row's decode pool has the chips its prefill pool leaves."""
    unit = "chips" if cores == 1 else "NeuronCores"
    shape = f"TP{row.tp}" + (f" PP{row.pp}" if row.pp > 1 else "")
    if row.dp > 1:
        need = f"{shape} x {replicas} needs {shard * replicas} {unit}"
    elif shard > ranks:
        need = f"{shape} needs {shard} {unit}"
    else:
        need = f"{shape} needs a multiple of {shard} {unit}"
    has = f"{row.num_chips} chip{'' if row.num_chips == 1 else 's'}" + (
        "" if cores == 1 else f" ({ranks} NeuronCores, {cores} a chip)"
    )
    if row.prefill_pool is None:
        return f"{need}; the row has {has}"
    tp, pp, _, _, count = row.prefill_pool
    prefill = tp * pp * count
    return f"decode pool {need}; the row's {ranks + prefill} {unit} leave {ranks} after its prefill pool's {prefill}"


def _measured_fit(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    engine: str,
    plan: ReplicaPlan,
    lengths: tuple[float, float],
    eng: EngineProfile,
    notes: list[str],
) -> tuple[ReplicaSetup, EngineProfile]:
    """The replica as the run deployed it. A published run proves that its model and one request fitted: where the
    engine's default share of memory for the KV cache leaves room for less than one request, the run's operator
    raised it, and the replica takes MEASURED_RUN_MEMORY_FRACTION instead (weights that do not fit stay an error)."""
    inp, out = lengths

    def build(profile: EngineProfile) -> ReplicaSetup:
        return setup_replica(catalog, model, system, engine, plan, inp, out, int(inp + out), profile)

    try:
        return build(eng), eng
    except InfeasibleError as first:
        if eng.memory_fraction >= MEASURED_RUN_MEMORY_FRACTION:
            raise
        raised = replace(eng, memory_fraction=MEASURED_RUN_MEMORY_FRACTION)
        try:
            setup = build(raised)
        except InfeasibleError:
            raise first from None
    share = f" ({eng.memory_fraction:g} of memory)" if eng.memory_fraction else ""
    notes.append(
        f"{engine}'s KV-cache share{share} holds less than one request here; the run fitted, so its share "
        f"is taken at {MEASURED_RUN_MEMORY_FRACTION:g}"
    )
    return setup, raised


def _disaggregated(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    engine: str,
    eng: EngineProfile,
    prefill_pool: tuple[int, int, int, bool, int],
    decode: ReplicaSetup,
    decode_replicas: int,
    inp: float,
    rank_tokens: int = 0,
    prefill_batch: int = 0,
) -> ServingSetup:
    """A row's stated prefill pool beside its decode pool, the KV cache sent between them over the system's
    scale-up fabric when both pools fit one domain, else over its scale-out network. `rank_tokens`: the tokens each
    prefill rank encodes an iteration in the run's recipes (0: the engine's budget); an engine whose attention-DP
    ranks share one budget (SGLang) is given theirs together. `prefill_batch`: the prefill plan's batch (0: the
    decode plan's)."""
    tp, pp, ep, adp, count = prefill_pool
    ep = ep if model.moe is not None and ep <= tp else 1
    d = decode.plan
    batch = prefill_batch or d.max_batch
    # the drafter rides the prefill pool too: it encodes each prompt and hands its cache over (kv_transfer)
    plan = replace(d, tp=tp, pp=pp, ep=ep, attention_dp=adp and tp > 1, max_batch=batch)
    budget = token_budget(eng, inp + 1, plan.max_batch, system.chip.hbm_capacity)
    if rank_tokens:
        budget = rank_tokens * (tp if plan.attention_dp and not eng.adp_budget_per_rank else 1)
    plan = replace(plan, max_tokens=budget)
    pre = setup_replica(catalog, model, system, engine, plan, inp, 1.0, longest_request=int(inp + 1), profile=eng)
    same = pre.chips * count + decode.chips * decode_replicas <= system.scaleup.size
    return ServingSetup(
        (Pool(pre, count, "prefill"), Pool(decode, decode_replicas, "decode")),
        transfer=kv_transfer(model, pre, decode, same),
    )
