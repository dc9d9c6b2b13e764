"""Assemble what the simulator needs for one replica on one system: the engine profile, the serving view of a
rank, the memory and KV capacity, the step-time tables, and the replica's chips."""

from __future__ import annotations

import math
from dataclasses import dataclass

from chipwise.catalog.loader import Catalog
from chipwise.catalog.units import BYTES_PER_GIB
from chipwise.errors import InfeasibleError
from chipwise.hardware.objects import System
from chipwise.perf.device import Device, Topology, device_of, topology_of
from chipwise.serve.engine import (
    EngineProfile,
    budgets,
    check_engine_model,
    engine_profile,
    prompt_chunk,
    serving_device,
)
from chipwise.serve.iteration import Shapes
from chipwise.serve.kvcache import ReplicaMemory, replica_memory
from chipwise.serve.plan import ReplicaPlan, check_replica
from chipwise.serve.sim.policies import SchedulerPolicy
from chipwise.serve.sim.replica import cache_fits
from chipwise.serve.sim.run import PoolSim
from chipwise.serve.sim.steps import StepModel, step_model
from chipwise.serve.speculation import check_drafter_context, drafter
from chipwise.workload.model import ModelSpec


@dataclass(frozen=True)
class ReplicaSetup:
    """One replica of `plan` on `system`, priced."""

    system: System
    engine: EngineProfile
    dev: Device
    topo: Topology
    plan: ReplicaPlan
    memory: ReplicaMemory
    steps: StepModel
    typical_context: float
    typical_prompt: float
    #: the longest request (prompt + output) the replica is set up for: a static engine's compiled sequence length
    max_sequence: int = 0
    #: the speculative drafter's model (a draft model, or the EAGLE / MTP head), whose cache a prompt's carries
    drafter: ModelSpec | None = None
    #: the typical prompt's tokens served from the prefix cache (cached_prefix), whose pairs its prefill attention
    #: leaves out (serve.sim.steps.step_model)
    typical_cached: float = 0.0

    @property
    def chips(self) -> float:
        """Chips one replica occupies (a fraction when several replicas share a multi-core chip)."""
        return self.plan.ranks / self.dev.cores_per_chip

    @property
    def kv_tokens(self) -> int:
        return int(self.memory.kv_tokens)

    @property
    def token_budget(self) -> int:
        return replica_token_budget(self.engine, self.plan)

    @property
    def prompt_chunk(self) -> int:
        """Tokens of one prompt an iteration may encode (engine.prompt_chunk)."""
        return int(prompt_chunk(self.engine, self.plan.max_tokens, self.plan.tp, self.plan.attention_dp))

    def policy(self) -> SchedulerPolicy:
        p = self.plan
        budget = self.token_budget
        chunk = self.prompt_chunk
        mixed = bool(self.engine.mixes(p.attention_dp))
        return SchedulerPolicy(
            admission=self.engine.admission,
            block=self.engine.block_tokens,
            max_batch=min(p.max_batch, budget) if mixed else p.max_batch,
            max_tokens=budget,
            chunked_prefill=p.chunked_prefill,
            mixed_batching=mixed,
            prefill_batch=self.engine.prefill_batch,
            static_batch=self.engine.static_batch,
            largest_bucket=self.max_sequence if self.engine.static_batch else 0,
            decode_first=self.engine.decode_first,
            context_batch=self.engine.context_batch,
            adp_ranks=p.tp if p.attention_dp and p.adp_balance and self.engine.adp_balance_timeout_iters > 0 else 1,
            adp_timeout_iters=self.engine.adp_balance_timeout_iters,
            recv_interval=p.recv_interval,
            batch_wait_iters=0 if p.attention_dp else p.batch_wait_iters,  # TensorRT-LLM: tensor parallelism only
            batch_wait_tokens=math.ceil(p.batch_wait_ratio * p.max_tokens),
            # one budget of several: each rank's or micro-batch's own, or one rank's share of a shared one
            rank_tokens=p.max_tokens if budget > p.max_tokens else (chunk if chunk < p.max_tokens else 0),
        )

    def pool(self, replicas: int, role: str = "both") -> PoolSim:
        return PoolSim(self.steps, self.policy(), self.kv_tokens, replicas, role)


def replica_token_budget(eng: EngineProfile, plan: ReplicaPlan) -> int:
    """Tokens one iteration of a replica may carry: max_tokens for each of its budgets (engine.budgets: the
    attention-DP ranks of an engine that gives each rank its own limits, in each pipeline micro-batch)."""
    return plan.max_tokens * int(budgets(eng, plan.tp, plan.attention_dp, plan.pp))


def buffer_tokens(eng: EngineProfile, plan: ReplicaPlan, longest: int) -> int:
    """Tokens of the largest iteration a replica's activation buffers are sized for: its token budget, or without
    chunked prefill the `longest` request it is set up for, which then runs whole in one iteration, alone
    (policies.chunks). Engines size their buffers so: vLLM refuses to start without chunked prefill when
    max_num_batched_tokens is below max_model_len, and recomputes a preempted request's prompt and output in one pass;
    TensorRT-LLM rejects a prompt longer than max_num_tokens without chunked context. Llama-3.1-8B on an H100 with a
    131,000-token prompt unchunked had read 1.0 GiB of buffers (8,192 tokens) and 439,840 tokens of KV cache; it now
    reads 16.5 GiB and 325,792, as with max_tokens 131,072. A compiled-shape engine (static_batch: Neuron) sizes its
    buffers by its compiled buckets: its budget stands."""
    if plan.chunked_prefill or eng.static_batch:
        return plan.max_tokens
    return max(plan.max_tokens, longest)


#: Engines that refuse a prompt run whole past their token budget, and what a stated max_tokens must then hold:
#: vLLM its max_model_len, the longest request (SchedulerConfig: max_num_batched_tokens below max_model_len without
#: chunked prefill stops the launch), TensorRT-LLM the longest prompt (one longer than max_num_tokens without chunked
#: context is rejected). A compiled-shape engine (static_batch: Neuron) holds the prompt too: its context-encoding
#: graph is compiled up to max_tokens (NxD Inference's max_context_length; shapes are fixed at compile time, Neuron's
#: bucketing app note), unless the engine raises its budget to the model length itself (budget_covers_sequence).
WHOLE_PROMPT_LIMIT = {"vllm": "request", "trtllm": "prompt", "trtllm-engine": "prompt"}


def check_stated_budget(eng: EngineProfile, plan: ReplicaPlan, prompt: int, longest: int) -> None:
    """Refuse a stated max_tokens under which the engine cannot run the longest `prompt` (of the `longest` request)
    whole: chipwise had run it whole anyway, its buffers sized for the prompt on a GPU engine (Llama-3.1-8B on one
    H100, 120,000-token prompts unchunked under max_tokens 8,192 on vllm: a 13.0 s prefill beside 15.1 GiB of
    buffers, where vLLM does not start) and for the budget alone on Neuron (32,000-token prompts under 8,192 on a
    trn2 TP4: a 566,848-token KV cache, 520,640 with the buffers the prompt needs). A chunked plan and a budget
    chipwise chose itself (sized to what runs: buffer_tokens) are not checked."""
    if plan.chunked_prefill:
        return
    static = eng.static_batch and not eng.budget_covers_sequence
    holds = WHOLE_PROMPT_LIMIT.get(eng.engine, "prompt" if static else "")
    need = longest if holds == "request" else prompt
    if not holds or plan.max_tokens >= need:
        return
    what = f"{need:,}-token longest " + ("request (max_model_len)" if holds == "request" else "prompt")
    if static:
        raise InfeasibleError(
            f"max_tokens {plan.max_tokens:,} is below the {what}: {eng.engine} compiles its context encoding up to "
            f"max_tokens (the compiled context length) and cannot encode a longer prompt. Fix: raise max_tokens to at "
            f"least {need:,}."
        )
    raise InfeasibleError(
        f"max_tokens {plan.max_tokens:,} is below the {what} with chunked_prefill off: {eng.engine} runs a prompt "
        f"whole and refuses a token budget that cannot hold it. Fix: raise max_tokens to at least {need:,} or enable "
        "chunked_prefill."
    )


def cached_prefix(prompt: float, hit_rate: float) -> float:
    """Tokens of a `prompt` served from the prefix cache at a `hit_rate` (a job's prefix_hit_rate): its share of the
    prompt, the last token always encoded (a whole prompt served from the cache still samples its first token), as
    the simulator serves them (serve.simulate.cached_tokens, serve.sim.steps.prompt_chunks)."""
    return min(prompt * hit_rate, max(prompt - 1.0, 0.0))


def setup_replica(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    engine: str,
    plan: ReplicaPlan,
    typical_prompt: float,
    typical_output: float,
    longest_request: int | None = None,
    profile: EngineProfile | None = None,
    stated_prompt: int = 0,
    typical_cached: float = 0.0,
) -> ReplicaSetup:
    """Price one replica; raise InfeasibleError when the weights, or one longest request, do not fit.
    `profile` replaces the catalog's engine profile (calibration); `stated_prompt`: the longest prompt, where the
    plan's max_tokens was given (check_stated_budget; 0: chipwise chose it); `typical_cached`: the typical prompt's
    tokens served from the prefix cache (cached_prefix)."""
    check_replica(plan, model)
    check_engine_model(engine, model)
    eng = (profile or engine_profile(catalog, engine, system.chip.family)).on_host(system.host_overhead)
    eng = eng.prompt_graphs(plan.piecewise_graphs)
    eng = eng.as_deployed(plan.memory_fraction, plan.mixed_batching, plan.front_end)
    if eng.engine == "vllm" and eng.mixes(plan.attention_dp) and plan.max_tokens < plan.max_batch:
        # vLLM refuses the launch (SchedulerConfig._verify_args: "max_num_batched_tokens must be greater than or
        # equal to max_num_seqs"): every running sequence takes a token of the budget each step, so a smaller
        # budget runs fewer sequences than the batch shown
        raise InfeasibleError(
            f"max_tokens {plan.max_tokens:,} is below max_batch {plan.max_batch:,}: vllm schedules one token a "
            "running sequence a step, and refuses a token budget smaller than its batch. Fix: raise max_tokens to "
            f"at least {plan.max_batch:,} or lower max_batch to {plan.max_tokens:,}."
        )
    dev = serving_device(device_of(system), eng)
    topo = topology_of(system)
    if plan.tp > topo.domain_ranks and plan.tp % topo.domain_ranks:
        # tensor parallelism may span scale-up domains (multi-node TP over the network), in whole domains
        raise InfeasibleError(
            f"tp {plan.tp} spans {system.id} scale-up domains of {topo.domain_ranks} ranks without filling them. "
            f"Fix: use tp <= {topo.domain_ranks} or a multiple of it (and pp for more ranks)."
        )
    typical_context = typical_prompt + typical_output
    shapes = Shapes.of(plan.tp, plan.pp, plan.ep, int(plan.attention_dp))
    draft = drafter(catalog, model, plan.speculation) if plan.speculation is not None else None
    need = longest_request or math.ceil(typical_context)
    if draft is not None:
        check_drafter_context(draft, need)
    if stated_prompt:
        check_stated_budget(eng, plan, stated_prompt, need)
    buffered = buffer_tokens(eng, plan, need)
    # where the buffers hold a whole prompt, chunked prefill shrinks them, not a lower max_tokens
    fewer = (
        f"lower max_tokens ({plan.max_tokens:,})"
        if buffered == plan.max_tokens
        else f"turn chunked_prefill on (a {buffered:,}-token request runs whole)"
    )
    mem = replica_memory(
        model,
        dev,
        eng,
        shapes,
        plan.weight_precision,
        plan.kv_precision,
        buffered,
        plan.max_batch,
        typical_context,
        draft,
    )
    weights, buffers, reserved, capacity = (
        float(x) / BYTES_PER_GIB for x in (mem.weights, mem.activations, mem.reserved, mem.capacity)
    )
    if weights + buffers + reserved > capacity:
        # the three terms, so that they add up past the memory (without the runtime's reserve DeepSeek-R1 fp8 on
        # eight H100s read 78.3 + 1.0 GiB "of 80 GiB"); the batch is named only where its buffers tip the balance
        alone = weights + reserved > capacity
        raise InfeasibleError(
            f"{model.display} ({plan.weight_precision})"
            + (f" with its drafter ({draft.name})" if draft is not None else "")
            + f" does not fit {plan.label().replace(f' b{plan.max_batch}', '', 1) if alone else plan.label()} on "
            f"{system.chip.id}: {weights:.1f} GiB of weights, {buffers:.1f} GiB of activation buffers and "
            f"{reserved:.1f} GiB the runtime holds back per rank, {weights + buffers + reserved:.1f} GiB of its "
            f"{capacity:.1f} GiB before any KV cache. Fix: raise tp or pp, or quantise the weights"
            + ("." if alone else f", or {fewer} or lower max_batch ({plan.max_batch:,}).")
        )
    if not cache_fits(need, int(mem.kv_tokens), eng.block_tokens):  # as the replica drops what never fits
        raise InfeasibleError(
            f"the KV cache of {plan.label()} on {system.chip.id} holds {int(mem.kv_tokens):,} tokens, less than one "
            f"{need:,}-token request. Fix: raise tp or pp, {fewer}, quantise the KV cache, or raise the "
            "engine's memory share (plan.memory_fraction)."
        )
    ranks = plan.tp if plan.attention_dp else 1
    if ranks > 1 and not cache_fits(need, int(mem.kv_tokens) // ranks, eng.block_tokens):
        # with attention DP each rank caches its own requests whole (TensorRT-LLM's and SGLang's DP attention): the
        # search had taken a 1M-token prompt onto 8 ranks of 865K tokens each, at a seventh of TP8's capacity
        raise InfeasibleError(
            f"the KV cache of {plan.label()} on {system.chip.id} holds {int(mem.kv_tokens) // ranks:,} tokens a rank, "
            f"and with attention DP each rank caches its own requests whole: less than one {need:,}-token request. "
            f"Fix: drop attention_dp (the ranks then hold a share of every request's cache), {fewer}, or "
            "quantise the KV cache."
        )
    steps = step_model(
        model,
        dev,
        topo,
        eng,
        plan,
        typical_context,
        typical_prompt,
        replica_token_budget(eng, plan),
        draft,
        typical_cached,
    )
    return ReplicaSetup(
        system=system,
        engine=eng,
        dev=dev,
        topo=topo,
        plan=plan,
        memory=mem,
        steps=steps,
        typical_context=typical_context,
        typical_prompt=typical_prompt,
        max_sequence=need,
        drafter=draft,
        typical_cached=typical_cached,
    )
