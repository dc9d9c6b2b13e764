"""Step-time tables: the closed-form iteration model (serve.iteration) of one replica, precomputed so the
simulator prices an iteration with two table look-ups and two multiply-adds:

    t(T, n, C, P) = fixed + tokens[T] + seqs[n] + a C + b P

tokens[T] = pp G(T/pp) (+ hand-offs) for every token count up to the iteration's budget; seqs[n] = the LM head
of n rows (pp H(n/pp) once the pipeline fills) and the host's work on them (a verification step's k + 1 rows of
each sequence); a and b are the decode-attention and prefill-attention coefficients. Counts beyond the tables (a
whole long prompt in one iteration) are priced on a coarse grid and interpolated linearly.

With attention data parallelism a prompt is encoded by the one rank that holds its request, and every layer
waits for the heaviest rank (serve.iteration.rank_imbalance): an iteration whose heaviest rank carries as much as
E tokens (and Q prefill pairs) spread evenly would adds attn[E] - attn[T] + b (Q - P), attn[] being the attention
projections' share of tokens[].

With pipeline parallelism tokens[T] is a round of pp micro-batches filling the pipeline; a batch of fewer
sequences than stages runs one micro-batch a sequence, each reading every stage's cache (a pp / n per cached
token, serve.iteration.micro_batches). A prompt's chunk is
one micro-batch: it passes the pp stages in turn, at pass[c] = pp G(c) (+ hand-offs) = tokens[pp c] and pp b Q
for its Q pairs, whatever else fills the pipeline, so an iteration that carries it takes at least that (a lone
prompt gains no speed from the stages; vLLM, TensorRT-LLM and SGLang schedule a request's next chunk only after
its last one has left the last stage).

With speculative decoding (serve.speculation) a decode step of n sequences verifies n (k + 1) tokens (and
samples as many positions) and runs the drafter k times over n tokens, each drafting pass attending over the
drafter's own cache; the drafter also encodes every prompt. The step yields tau tokens per sequence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from chipwise.perf.device import Device, Topology
from chipwise.serve.engine import EngineProfile, decode_graph_batch
from chipwise.serve.iteration import (
    Shapes,
    attention_projections,
    context_coefficient,
    eager_launches,
    host_sampling_time,
    host_sequence_time,
    lm_heads,
    pair_coefficient,
    prefill_pairs,
    token_costs,
)
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.sim.policies import bucket, bucket_context
from chipwise.types import Array
from chipwise.workload.model import ModelSpec

#: Token counts priced exactly; above this, a grid of COARSE_STEP tokens.
EXACT_TOKENS = 16384
COARSE_STEP = 256


@dataclass(frozen=True)
class StepModel:
    """Iteration times of one replica as tables (seconds)."""

    fixed: float
    tokens: list[float]
    seqs: list[float]
    a: float
    b: float
    coarse: Array  # tokens[] on the coarse grid beyond the exact table
    prefill_fixed: float = 0.0  # added to an iteration that encodes prompts (engines.*.prefill_overhead)
    eager_floor: float = 0.0  # host time of an eagerly run iteration's launches (engines.*.eager_launch)
    decode_floor: float = 0.0  # the same of a decode step past graph_batch (engines.*.uncaptured_launch)
    draft_tokens: int = 0  # k: tokens drafted per sequence and step (0 = no speculative decoding)
    tau: float = 1.0  # tokens a decode step yields per sequence, on average
    drafter: StepModel | None = None  # the drafting pass's tables (no fixed cost of its own)
    ranks: int = 1  # attention-DP ranks, each encoding the prompts of its own requests (1: heads are split)
    attn: list[float] = field(default_factory=list)  # attention projections of tokens[] (attention DP only)
    attn_coarse: Array = field(default_factory=lambda: np.zeros(2))
    pp: int = 1  # pipeline stages: a chunk passes them in turn (pass_time)
    graph_batch: int = 0  # largest decode batch replayed in a CUDA graph (0: every); larger ones launch eagerly
    host_sample: float = 0.0  # the CPU sampler's time for one row; seqs[] charges it for every row a graph returns

    def token_time(self, t: int) -> float:
        return _look_up(self.tokens, self.coarse, t)

    def imbalance(self, tokens: int, even: int, pairs: float, even_pairs: float) -> float:
        """What an iteration of `tokens` tokens and `pairs` prefill pairs loses when its heaviest attention-DP rank
        carries the share of `even` tokens and `even_pairs` pairs spread evenly (0 without attention DP)."""
        if self.ranks <= 1 or (even <= tokens and even_pairs <= pairs):
            return 0.0
        gemms = _look_up(self.attn, self.attn_coarse, max(even, tokens)) - _look_up(self.attn, self.attn_coarse, tokens)
        return gemms + self.b * max(even_pairs - pairs, 0.0)

    def seq_time(self, n: int) -> float:
        """The LM head and host work of n sampled rows."""
        return self.seqs[n] if n < len(self.seqs) else self.seqs[-1] * n / max(1, len(self.seqs) - 1)

    def context_rate(self, n: int) -> float:
        """Seconds per cached token of an iteration of n sequences: a, or a pp / n where they cannot fill the
        pipeline's stages."""
        return self.a * self.pp / min(self.pp, max(n, 1)) if self.pp > 1 else self.a

    def time(self, tokens: int, seqs: int, context: float, pairs: float) -> float:
        """Seconds of one iteration of `tokens` tokens sampling `seqs` sequences over `context` cached tokens."""
        a = self.a if self.pp == 1 else self.context_rate(seqs)  # the simulator's hot path: no call where pp = 1
        return self.fixed + self.token_time(tokens) + self.seq_time(seqs) + a * context + self.b * pairs

    def pass_time(self, chunk: int, pairs: float) -> float:
        """One prompt chunk of `chunk` tokens and `pairs` prefill pairs through every pipeline stage in turn."""
        return self.token_time(self.pp * chunk) + self.pp * self.b * pairs

    def prompt_time(
        self,
        tokens: int,
        seqs: int,
        context: float,
        pairs: float,
        even: int = 0,
        even_pairs: float = 0.0,
        largest: int = 0,
        largest_pairs: float = 0.0,
    ) -> float:
        """An iteration that carries prompt tokens: on an engine that runs it eagerly, the device work and the
        host's kernel launches overlap, so it takes the longer of the two. `even`, `even_pairs`: what the heaviest
        attention-DP rank carries, as a whole replica's evenly spread tokens and pairs (imbalance). `largest`,
        `largest_pairs`: its largest chunk, which with pipeline parallelism passes every stage in turn (pass_time)."""
        t = self.time(tokens, seqs, context, pairs) + self.imbalance(tokens, even, pairs, even_pairs)
        if self.pp > 1 and largest > 0:
            t = max(t, self.fixed + self.seq_time(seqs) + self.pass_time(largest, largest_pairs))
        return max(t, self.fixed + self.seq_time(seqs) + self.eager_floor) if self.eager_floor > 0 else t

    def prompt_alone(self, tokens: int, chunk: int, static: bool = False, largest: int = 0, cached: int = 0) -> float:
        """One prompt of `tokens` tokens encoded on an idle replica in iterations of at most `chunk` tokens, each
        attending to the chunks before it and paying the prompt iterations' fixed cost; only the last samples. A
        `static` (compiled-shape) engine runs each chunk padded to its bucket (at most `largest`, the compiled
        sequence length), as the simulator does. The first `cached` tokens are a prefix-cache hit: attended to,
        not encoded. With attention DP one rank encodes it while the others wait. With speculative decoding the
        drafter encodes each chunk too."""
        return self.prompts_together(1, tokens, chunk, static, largest, cached)

    def prompts_together(
        self, count: int, tokens: int, chunk: int, static: bool = False, largest: int = 0, cached: int = 0
    ) -> float:
        """`count` such prompts (prompt_alone's) encoded side by side, each on its own attention-DP rank (at most
        the replica's ranks), in iterations that carry a chunk of each: the seconds until all are encoded."""
        n = max(1, min(count, self.ranks))
        total = 0.0
        for c, run, last, pairs in prompt_chunks(tokens, chunk, static, largest, cached):
            step = self.prompt_time(n * run, n * last, 0.0, n * pairs, self.ranks * run, self.ranks * pairs, run, pairs)
            total += step + self.prefill_fixed + self.draft_prefill(n * c)
        return total

    def decode_tokens(self, n: int) -> int:
        """Tokens a decode step of n sequences feeds the target (n, or n (k + 1) positions to verify)."""
        return n * (self.draft_tokens + 1)

    def draft_time(self, n: int, context: float) -> float:
        """The k drafting passes over n sequences with `context` cached tokens."""
        d = self.drafter
        if d is None or n <= 0:
            return 0.0
        return self.draft_tokens * (d.token_time(n) + d.seq_time(n) + d.context_rate(n) * context)

    def draft_prefill(self, tokens: int) -> float:
        """The drafter's pass over `tokens` prompt tokens."""
        return self.drafter.token_time(tokens) if self.drafter is not None and tokens > 0 else 0.0

    def a_decode(self, n: int) -> float:
        """Seconds per cached token of a decode step of n sequences: the target's verification and the k drafting
        passes."""
        if self.drafter is None:
            return self.a if self.pp == 1 else self.context_rate(n)
        return self.context_rate(n) + self.draft_tokens * self.drafter.context_rate(n)

    def decode_base(self, n: int) -> float:
        """The context-independent part of a decode step of n sequences."""
        m = self.decode_tokens(n)
        return self.fixed + self.token_time(m) + self.seq_time(m) + self.draft_time(n, 0.0)

    def eager_decode_floor(self, n: int, context: float) -> float:
        """The least a decode step of n sequences over `context` cached tokens takes without its context term: past
        the largest batch the engine replays in a CUDA graph, its kernels' host launches (0 within it). They are the
        decode step's own (decode_floor), not a prompt iteration's: vLLM, which captures its prompt iterations too,
        has no eager floor, and plan.graph_batch: 1 had left its TPOT as it was (24 ms for Llama 3.1 8B on an H100 at
        64 users; it now pays vLLM's uncaptured launches)."""
        # the capture size is a rank's (SGLang's --cuda-graph-max-bs under DP attention is checked against the
        # busiest rank's batch): a replica of R attention-DP ranks replays R x its sequences in graphs (GB200 DEP64,
        # 2,048 sequences, 32 a rank, had launched eagerly past a capture of 512: 244 ms a token where 19.7 read)
        if self.decode_floor <= 0 or not 0 < self.graph_batch < math.ceil(n / self.ranks):
            return 0.0
        return self.fixed + self.seq_time(self.decode_tokens(n)) + self.decode_floor - self.a_decode(n) * context


def _look_up(exact: list[float], coarse: Array, t: int) -> float:
    """A table's value at `t` tokens: exact below its length, interpolated on the coarse grid above."""
    if t < len(exact):
        return exact[t]
    x = t / COARSE_STEP
    i = min(int(x), coarse.size - 2)
    f = x - i
    return float(coarse[i] * (1.0 - f) + coarse[i + 1] * f)


def prompt_chunks(
    tokens: int, chunk: int, static: bool = False, largest: int = 0, cached: int = 0
) -> list[tuple[int, int, int, float]]:
    """The iterations that encode one prompt of `tokens` tokens alone (StepModel.prompt_alone): for each, the
    prompt's tokens it encodes, the tokens it runs (a `static` engine's chunk padded to its bucket, at most the
    compiled `largest`), whether it samples (the last), and its prefill pairs (attending to the chunks before it;
    the first `cached` tokens are a prefix-cache hit)."""
    out = []
    done = min(max(0, cached), tokens - 1)
    while done < tokens:
        c = min(max(1, chunk), tokens - done)
        run = bucket(c, largest=largest) if static else c
        attended = bucket_context(done, c, run) if static else done
        out.append((c, run, int(done + c >= tokens), float(prefill_pairs(attended, run))))
        done += c
    return out


def _token_table(
    model: ModelSpec, dev: Device, topo: Topology, eng: EngineProfile, plan: ReplicaPlan, counts: Array
) -> Array:
    shapes = Shapes.of(plan.tp, plan.pp, plan.ep, int(plan.attention_dp))
    pp = float(plan.pp)
    parts = token_costs(model, dev, topo, eng, plan.weight_precision, shapes, counts / pp, float(plan.max_batch))
    per_stage = sum(v for k, v in parts.items() if k != "pp_comm")
    total = pp * per_stage + (pp - 1.0) * parts["pp_comm"]
    return np.where(counts > 0, total, 0.0).astype(np.float64)


def step_model(
    model: ModelSpec,
    dev: Device,
    topo: Topology,
    eng: EngineProfile,
    plan: ReplicaPlan,
    typical_context: float,
    typical_prompt: float,
    max_tokens: int,
    drafter: ModelSpec | None = None,
    typical_cached: float = 0.0,
) -> StepModel:
    """Tables for a replica whose iterations carry at most `max_tokens` tokens (longer prompts interpolated);
    `drafter` is the model of the plan's speculative drafting passes. `typical_cached`: the typical prompt's tokens
    served from the prefix cache: the simulator counts the pairs of the rest after them (prompt_chunks), so b is
    their share (pair_coefficient); a windowed layer runs fewer of them than of a whole prompt."""
    eng.check_graph_batch(plan.graph_batch)
    shapes = Shapes.of(plan.tp, plan.pp, plan.ep, int(plan.attention_dp))
    # the exact table covers at least the first coarse step: interpolating from the grid's 0 at 0 tokens halved a
    # 128-token prompt bucket's weight read (a static engine pads short prompts past a small token budget)
    exact = min(max(max_tokens, plan.max_batch, COARSE_STEP), EXACT_TOKENS)
    counts = np.arange(exact + 1, dtype=np.float64)
    grid_top = max(max_tokens, plan.max_batch, exact) * 4 + 2 * COARSE_STEP
    grid = np.arange(0, grid_top + COARSE_STEP, COARSE_STEP, dtype=np.float64)
    # both tables in one pricing: the replica's terms (stage_terms) are then built once
    tokens, coarse = np.split(_token_table(model, dev, topo, eng, plan, np.concatenate([counts, grid])), [counts.size])
    n = np.arange(plan.max_batch + 2, dtype=np.float64)
    seqs = lm_heads(model, dev, shapes, n, n) + host_sequence_time(eng, shapes, n) + host_sampling_time(model, eng, n)
    spec = plan.speculation
    queries = spec.draft_tokens + 1.0 if spec is not None and drafter is not None else 1.0  # a step verifies k + 1
    a = float(context_coefficient(model, dev, shapes, plan.kv_precision, typical_context, queries))
    b = float(pair_coefficient(model, dev, shapes, typical_prompt, plan.kv_precision, typical_cached))
    draft = None
    if spec is not None and drafter is not None:
        bare = replace(plan, speculation=None, ep=plan.ep if drafter.moe is not None else 1)
        quiet = replace(eng, step_overhead_s=0.0, prefill_overhead_s=0.0, sequence_overhead_s=0.0, host_sampling=False)
        draft = replace(
            step_model(
                drafter, dev, topo, quiet, bare, typical_context, typical_prompt, max_tokens, None, typical_cached
            ),
            fixed=0.0,
        )
    ranks = plan.tp if plan.attention_dp and plan.tp > 1 else 1
    launches = float(eager_launches(model, dev.chip, plan.weight_precision, shapes, eng.engine))
    attn = (
        (attention_projections(model, dev, plan.weight_precision, shapes, counts).tolist(),
         attention_projections(model, dev, plan.weight_precision, shapes, grid))
        if ranks > 1 else ([], np.zeros(2))
    )  # fmt: skip
    return StepModel(
        fixed=eng.host_step_s,
        tokens=tokens.tolist(),
        seqs=seqs.tolist(),
        a=a,
        b=b,
        coarse=coarse,
        prefill_fixed=eng.host_prefill_s,
        eager_floor=launches * eng.host_eager_launch_s,
        decode_floor=launches * eng.host_decode_launch_s,
        draft_tokens=spec.draft_tokens if draft is not None and spec is not None else 0,
        tau=spec.tokens_per_step if draft is not None and spec is not None else 1.0,
        drafter=draft,
        ranks=ranks,
        attn=attn[0],
        attn_coarse=attn[1],
        pp=plan.pp,
        graph_batch=plan.graph_batch or int(decode_graph_batch(eng, dev.chip.hbm_capacity, plan.tp)),
        host_sample=float(host_sampling_time(model, eng, 1.0, 0.0)),
    )
