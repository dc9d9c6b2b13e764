"""Closed-form time of one serving iteration (a prefill, a decode step, or a mixed chunked-prefill step) of a
replica of tp x pp ranks, vectorised over replica shapes and batch contents.

An iteration carries T tokens: one for each decoding sequence plus the prefill chunks scheduled with them
(Orca's iteration-level batching; Sarathi-Serve's chunked prefill). Its time is

    t = t_step + pp [ G(T / pp) + H(n / pp) ] + a C + b P

- t_step: the engine's fixed per-iteration cost (scheduling, sampling, launch; catalog `engines`).
- G(T): one pipeline stage's token-proportional work for a micro-batch of T tokens, summed over its L/pp layers:
  weight-streamed GEMMs of the attention projections, the MLP or the MoE experts (perf.serving.streamed_gemm_time:
  the weights are read once per micro-batch, so decode at small T is bound by weight bytes / HBM bandwidth),
  norms and residuals (memory-bound), the tensor-parallel all-reduces (latency-bound one-shot kernels), the
  expert-parallel dispatch and combine (beside attention DP; with tensor-parallel attention the experts' output is
  all-reduced instead), and a fixed cost per layer. For a MoE layer the T k routed token copies
  hit E (1 - (1 - k/E)^T) distinct experts on average, and only those experts' weights are read; with expert
  parallelism the step waits for the rank that holds the most of them (busiest_rank_experts).
- H(n): the LM head for the n sequences that sample a token this iteration.
- a C: decode attention over the C tokens cached for the batch (KV-cache reads, PagedAttention); a is the
  larger of the KV bytes over the HBM rate and the score FLOPs over the attention rate, per cached token, over
  the L/pp layers a stage holds (each stage reads the cache of its own layers, stages run concurrently).
- b P: prefill (flash) attention over P (query, key) pairs: a chunk of c tokens after s cached ones has
  c s + c (c + 1) / 2 pairs; b = score FLOPs per pair / (rate), over L/pp layers.
With pipeline parallelism the batch is split into pp micro-batches that fill the pipeline, so each stage
processes pp micro-batches of T/pp tokens per iteration (the weights of a stage are read once per micro-batch).
A batch of n < pp sequences runs n micro-batches, each passing every stage in turn: its decode attention costs
a C pp / n and its LM head n H(1) (micro_batches), so a lone sequence gains no speed from the stages.
A prompt's chunk is one micro-batch, which passes the stages in turn: an iteration carrying a chunk of c tokens
takes at least pp G(c) and its hand-offs (serve.sim.steps.StepModel.pass_time).

Attention variants: MHA/GQA cache 2 kv_heads head_dim elements per token and layer; a rank holds
max(kv_heads / tp, 1) heads (a KV head is replicated when tp > kv_heads). MLA (DeepSeek-V2/V3) caches the
kv_lora_rank + rope latent, replicated on every tensor-parallel rank, and attends in the latent space with the
absorbed up-projections: 2 heads (2 kv_lora_rank + rope) FLOPs per (query, key) pair. Attention data
parallelism (attention_dp) splits the batch's sequences over the tp ranks instead of the heads: a request lives
on one rank, so a prompt is encoded by one rank's attention while the others wait for it at each layer's expert
exchange (rank_imbalance).
Sliding-window and chunked-attention layers read at most their window: their share of the context a decoding query
reads is min(1, window / typical context); their share of a prompt's (query, key) pairs is the exact count over the
typical prompt (window_pairs) over the causal one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar, cast

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtri

from chipwise.hardware.objects import Chip
from chipwise.perf.compute import memory_time
from chipwise.perf.device import Device, Topology
from chipwise.perf.serving import (
    ExpertExchange,
    SmallAllReduce,
    StreamedGemm,
    attention_rate,
    context_attention_time,
    expert_exchange_over,
    hand_off,
    small_all_reduce_over,
    streamed_gemm,
    streamed_gemms,
)
from chipwise.serve.engine import EngineProfile
from chipwise.serve.quant import layer_precisions, matmul_precision, stored_bytes
from chipwise.types import Array, IntArray
from chipwise.workload.model import LayerGroup, ModelSpec, MoE, causal_pairs

T = TypeVar("T")

ACT_BYTES = 2.0
#: LM heads are kept in 16-bit by the quantisation recipes of TensorRT-LLM (ModelOpt) and vLLM.
LM_HEAD_BYTES = 2.0

COMPONENTS: tuple[str, ...] = (
    "gemm",
    "moe",
    "attention",
    "memory_bound",
    "tp_comm",
    "ep_comm",
    "pp_comm",
    "lm_head",
    "host_sampling",
    "overhead",
)
#: How each component of an iteration (plus the drafting passes of speculative decoding) is shown to users.
COMPONENT_LABELS: dict[str, str] = {
    "gemm": "weight GEMMs (attention and MLP)",
    "moe": "MoE experts",
    "attention": "attention (KV-cache reads, prefill)",
    "memory_bound": "memory-bound (norms, activations)",
    "tp_comm": "tensor-parallel all-reduce",
    "ep_comm": "expert-parallel all-to-all",
    "pp_comm": "pipeline hand-offs",
    "lm_head": "LM head",
    "host_sampling": "sampling on the host (every returned slot's logits copied, the live ones sampled)",
    "overhead": "engine overhead (per step, per layer)",
    "drafting": "speculative drafting passes",
    "waits": "waits (the other attention-DP ranks)",
    "host_launches": "host kernel launches (beyond the device work)",
}


@dataclass(frozen=True)
class Shapes:
    """Replica shapes, as broadcastable integer arrays (attention_dp as 0/1)."""

    tp: IntArray
    pp: IntArray
    ep: IntArray
    adp: IntArray
    #: what is priced from these shapes alone (token_costs' terms, the LM head), kept for the next iteration priced
    #: on them: by the ids of what it was priced with, with those objects (_memoised)
    memo: dict[tuple[object, ...], tuple[tuple[object, ...], object]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def of(cls, tp: object, pp: object = 1, ep: object = 1, adp: object = 0) -> Shapes:
        return cls(
            np.asarray(tp, dtype=np.int64),
            np.asarray(pp, dtype=np.int64),
            np.asarray(ep, dtype=np.int64),
            np.asarray(adp, dtype=np.int64),
        )


def _memoised(shapes: Shapes, objects: tuple[object, ...], build: Callable[[], T]) -> T:
    """What `build` prices from `shapes` and `objects` (strings by value, the rest by identity), priced once per
    shapes and objects: a search prices the iterations of one Shapes many times over. The memo holds the objects,
    so an id in its keys is not reused by another object while the entry lives."""
    key = (build.__qualname__, *(o if isinstance(o, str) else id(o) for o in objects))
    held = shapes.memo.get(key)
    if held is not None:
        return cast(T, held[1])
    value = build()
    shapes.memo[key] = (objects, value)
    return value


def window_share(g: LayerGroup, typical_context: float) -> float:
    """Share of the context a layer group keeps (its KV cache): 1 for full attention, window / context when shorter
    (a chunked layer keeps at most one chunk, as a window of the chunk's size)."""
    if g.window <= 0 or typical_context <= 0:
        return 1.0
    return float(min(1.0, g.window / typical_context))


def attended_share(g: LayerGroup, typical_context: float) -> float:
    """Share of the context a layer group's queries attend to: window_share, except that past its first chunk a
    chunked layer's query sees only its own chunk's earlier keys, (chunk + 1) / 2 on average (Llama 4's
    attention_chunk_size), not a window of the chunk's size (its decode reads had been priced up to twice over)."""
    if g.chunked and 0 < g.window < typical_context:
        return float((g.window + 1.0) / 2.0 / typical_context)
    return window_share(g, typical_context)


@dataclass(frozen=True)
class _AttentionGemms:
    """The projections of one attention block on one rank, placed for the replica shapes (_attention_terms): the
    query GEMMs, then the key-value ones, then the output one, stacked."""

    split: NDArray[np.bool_]  # attention-DP: the tokens are split over the tp ranks
    tp: Array
    gemms: StreamedGemm
    queries: int
    keys_values: int

    def time(self, tokens: Array) -> Array:
        """Seconds of the projections for `tokens` tokens of the replica, on one rank."""
        m = np.where(self.split, tokens / self.tp, tokens)  # attention DP splits the tokens over the ranks
        each = self.gemms.time(m)
        q = each[0]
        for i in range(1, self.queries):
            q = q + each[i]
        proj = q
        if self.keys_values:
            kv = each[self.queries]
            for i in range(self.queries + 1, self.queries + self.keys_values):
                kv = kv + each[i]
            proj = q + kv
        return np.asarray(proj + each[-1], dtype=np.float64)


def _attention_terms(model: ModelSpec, dev: Device, prec: str, wb: float, tp: Array, adp: Array) -> _AttentionGemms:
    """The attention block's projections on one rank, h = hidden, H = ceil(heads / tp) (tp = 1 under attention DP):
    GQA/MHA one QKV GEMM of (H + 2 ceil(kv_heads / tp)) head_dim x h; MLA (DeepSeek-V2/V3) the q down and up
    projections (or one q GEMM) and the kv latent's, (kv_lora_rank + rope) x h and H (nope + v_head_dim) x
    kv_lora_rank; then the output GEMM h x H v_head_dim. Each is priced by perf.serving.streamed_gemm_time."""
    att = model.attention
    h = float(model.hidden)
    tp_a = np.where(adp > 0, 1.0, tp)  # attention-DP replicates the attention weights
    heads = np.ceil(att.heads / tp_a)  # heads are padded when tp does not divide them (Neuron)
    kv: list[tuple[Array | float, Array | float]] = []
    if att.kind == "mla":
        nope = att.head_dim - att.rope_dim
        q: list[tuple[Array | float, Array | float]] = (
            [(att.q_lora_rank, h), (heads * att.head_dim, att.q_lora_rank)]
            if att.q_lora_rank
            else [(heads * att.head_dim, h)]
        )
        kv = [(att.kv_lora_rank + att.rope_dim, h), (heads * (nope + att.v_head_dim), att.kv_lora_rank)]
    else:
        kv_heads = np.ceil(att.kv_heads / tp_a)
        q = [((heads + 2.0 * kv_heads) * att.head_dim, h)]
    gemms = streamed_gemms([*q, *kv, (h, heads * att.v_head_dim)], dev, prec, wb)
    return _AttentionGemms(adp > 0, tp, gemms, len(q), len(kv))


#: NxD Inference's MoE dispatch (neuronx_distributed ExpertMLPsV2.forward, model_utils defaults): a step whose
#: T tokens route T k copies to fewer than SELECTIVE_LOADING_THRESHOLD x E experts loads only those experts; a
#: token-generation step above it runs every token through every expert (forward_all_experts); a context encoding
#: of at least BLOCK routed copies runs blockwise, each expert's tokens padded to whole blocks of BLOCK.
NXD_SELECTIVE_LOADING_THRESHOLD = 1.0
NXD_BLOCK = 512.0


def expert_slot_share(moe: MoE, ep: Array | float) -> Array:
    """Expert slots over experts when `ep` ranks hold the routed experts (broadcasts): 1 where ep divides them.
    Where it does not, the serving engines fill every rank with ceil(E / ep) slots, copies of the most used experts
    among them (SGLang --ep-num-redundant-experts, TensorRT-LLM's MoE load balancer num_slots, vLLM
    --num-redundant-experts): DeepSeek-R1's 256 experts on 48 ranks take 288 slots, 6 a rank."""
    e = np.asarray(ep, dtype=np.float64)
    return np.asarray(np.ceil(moe.experts / e) * e / moe.experts, dtype=np.float64)


def busiest_rank_experts(hit: Array, experts: float, slots: Array, ep: Array | float) -> Array:
    """Distinct experts the busiest of `ep` ranks reads when the routed copies hit `hit` of the `experts`
    (broadcasts): each rank holds experts x slots / ep expert slots, each hit with probability hit / experts, and
    a step waits for its slowest rank at the expert exchange. A rank's count is binomial; the expected largest of
    ep such counts is taken as mean + z sd, with z Blom's expected largest of ep standard normals,
    Phi^-1((ep - 0.375) / (ep + 0.25)), at most the slots it holds, and at least one whole expert once any is hit:
    a rank reads whole experts, and with few hits spread over many ranks the normal tail of a count that is 0 or 1
    falls below 1 (Mixtral's 2 experts a token over EP8, one slot a rank: 0.87 where the busiest reads exactly 1).
    One rank reads the average (z = 0); at DeepSeek-R1's 8 copies a token over EP8, 2.4 experts where the average
    is 1."""
    e = np.asarray(ep, dtype=np.float64)
    h = np.asarray(hit, dtype=np.float64)
    n = experts * np.asarray(slots, dtype=np.float64) / e
    p = np.clip(h / experts, 0.0, 1.0)
    z = ndtri((e - 0.375) / (e + 0.25))
    busiest = np.maximum(n * p + z * np.sqrt(n * p * (1.0 - p)), np.minimum(h, 1.0))  # hit < 1: a fractional step
    return np.asarray(np.minimum(n, busiest), dtype=np.float64)


def experts_read_and_rows(
    tokens: Array, experts: float, top_k: float, compiled: bool, decode_slots: float
) -> tuple[Array, Array]:
    """(experts whose weights a MoE layer reads, token rows each of them multiplies) for `tokens` tokens.

    Grouped GEMMs (GPU engines) read the distinct experts the T k routed copies reach, E (1 - (1 - k/E)^T), each
    multiplying its share of the copies. Compiled NxD graphs (Neuron, `compiled`) follow NxD's dispatch: selective
    loading (T k expert loads of one row each) while T k < E; otherwise a token-generation step (T at most the
    `decode_slots` compiled slots) runs all E experts on all T tokens, and a context encoding runs blockwise over
    the worst-case block count its static graph is compiled for, N = min(ceil((T k - (E - 1)) / BLOCK) + E - 1, T k)
    blocks of BLOCK rows, each loading its expert's weights (ExpertMLPsV2.forward_blockwise: E - 1 experts with one
    token each plus the rest packed into full blocks; every block runs whether tokens fill it or not)."""
    t = np.asarray(tokens, dtype=np.float64)
    hit = experts * (1.0 - (1.0 - top_k / experts) ** t)  # distinct experts the routed copies reach
    rows = np.where(hit > 0, t * top_k / np.maximum(hit, 1e-9), 0.0)
    if not compiled:
        return np.asarray(hit, dtype=np.float64), np.asarray(rows, dtype=np.float64)
    copies = t * top_k
    selective = copies < NXD_SELECTIVE_LOADING_THRESHOLD * experts
    blockwise = nxd_blockwise(t, experts, top_k, decode_slots)
    blocks = np.minimum(np.ceil(np.maximum(copies - (experts - 1.0), 0.0) / NXD_BLOCK) + experts - 1.0, copies)
    loads = np.where(t > 0, np.where(selective, copies, np.where(blockwise, blocks, experts)), 0.0)
    rows = np.where(selective, 1.0, np.where(blockwise, NXD_BLOCK, t))
    return np.asarray(loads, dtype=np.float64), np.asarray(np.where(t > 0, rows, 0.0), dtype=np.float64)


def nxd_blockwise(tokens: Array, experts: float, top_k: float, decode_slots: float) -> Array:
    """Where NxD's compiled dispatch runs a MoE layer of `tokens` tokens blockwise (experts_read_and_rows: a context
    encoding, more tokens than the compiled decode slots, of at least BLOCK routed copies that reach past selective
    loading)."""
    t = np.asarray(tokens, dtype=np.float64)
    copies = t * top_k
    blockwise = (copies >= NXD_SELECTIVE_LOADING_THRESHOLD * experts) & (t > decode_slots) & (copies >= NXD_BLOCK)
    return np.asarray(blockwise, dtype=bool)


@dataclass(frozen=True)
class _MlpGemms:
    """The dense MLP or the MoE block of one layer on one rank, placed for the replica shapes (_mlp_terms): the
    dense MLP's, or the routed experts', up and down projections stacked, then the router and the shared experts'.
    The experts read and the rows they multiply follow experts_read_and_rows (grouped GEMMs, or NxD's compiled
    dispatch when `compiled`). The grouped expert GEMMs run at the family's moe_gemm fraction of the matrix rate and
    at `stream` of the weight-streaming rate (the engine's moe_scale, at most 1: many small ragged groups stream
    their weights less efficiently); a compiled context encoding's blockwise pass at the engine's moe_block_scale
    times both (`blockwise`). Dense layers, shared experts and routed experts each run at their own precision
    (quant.layer_precisions)."""

    gemms: StreamedGemm
    moe: MoE | None = None
    ep: Array | float = 1.0
    compiled: bool = False
    router: StreamedGemm | None = None
    shared: StreamedGemm | None = None
    #: the routed experts' GEMMs as a compiled context encoding's blockwise kernel runs them (None: as `gemms`)
    blockwise: StreamedGemm | None = None

    def time(self, tokens: Array, decode_slots: float = 0.0) -> Array:
        """Seconds of the block for `tokens` tokens, on one rank."""
        if self.moe is None:
            up, down = self.gemms.time(tokens)
            return np.asarray(up + down, dtype=np.float64)
        assert self.router is not None
        hit, per_expert = experts_read_and_rows(
            tokens, float(self.moe.experts), float(self.moe.top_k), self.compiled, decode_slots
        )
        slots = expert_slot_share(self.moe, self.ep)  # copies of the experts hit share their rows
        e = self.moe.experts
        busiest = hit * slots / self.ep if self.compiled else busiest_rank_experts(hit, e, slots, self.ep)
        up, down = self.gemms.time(per_expert / slots, count=busiest)
        experts = up + down
        if self.blockwise is not None:
            b_up, b_down = self.blockwise.time(per_expert / slots, count=hit * slots / self.ep)
            block = nxd_blockwise(tokens, float(self.moe.experts), float(self.moe.top_k), decode_slots)
            experts = np.where(block, b_up + b_down, experts)
        out = self.router.time(tokens) + experts
        if self.shared is not None:
            up, down = self.shared.time(tokens)
            out = out + up
            out = out + down
        return np.asarray(out, dtype=np.float64)


def _mlp_terms(
    model: ModelSpec,
    g: LayerGroup,
    dev: Device,
    weight_precision: str,
    tp: Array,
    ep: Array,
    compiled: bool = False,
    stream: float = 1.0,
    block_scale: float = 1.0,
) -> _MlpGemms:
    """One layer's MLP on one rank: dense, the up (x2 when gated) and down GEMMs of ffn / tp x h; MoE, the routed
    experts' of expert_ffn / (tp / ep) at the family's moe_gemm rate and the engine's moe_scale of the streaming
    rate, the router (experts x h, bf16) and the shared experts' (shared x shared_ffn / tp). moe_gemm and
    moe_scale are fitted figures (catalog efficiency.yaml and engines.yaml)."""
    h = float(model.hidden)
    dense, routed = layer_precisions(weight_precision)
    prec, wb = matmul_precision(dense, dev.chip), stored_bytes(dense)
    eprec, ewb = matmul_precision(routed, dev.chip), stored_bytes(routed)
    if g.moe is None:
        assert g.mlp is not None
        mult = 2.0 if g.mlp.gated else 1.0
        ffn = g.mlp.ffn / tp
        return _MlpGemms(streamed_gemms([(mult * ffn, h), (h, ffn)], dev, prec, wb))
    moe = g.moe
    mult = 2.0 if moe.gated else 1.0
    moe_tp = tp / ep
    f = moe.expert_ffn / moe_tp
    grouped = dev.eff.moe_gemm
    shared = None
    if moe.shared:
        fs = moe.shared * moe.shared_ffn / tp
        shared = streamed_gemms([(mult * fs, h), (h, fs)], dev, prec, wb)
    experts: list[tuple[Array | float, Array | float]] = [(mult * f, h), (h, f)]
    blockwise = None
    if compiled and block_scale != 1.0:
        blockwise = streamed_gemms(
            experts, dev, eprec, ewb, min(1.0, grouped * block_scale), min(1.0, stream * block_scale)
        )
    return _MlpGemms(
        gemms=streamed_gemms(experts, dev, eprec, ewb, compute_factor=grouped, memory_factor=stream),
        moe=moe,
        ep=ep,
        compiled=compiled,
        router=streamed_gemm(float(moe.experts), h, dev, "bf16", 2.0),
        shared=shared,
        blockwise=blockwise,
    )


def _elementwise_bytes(model: ModelSpec, g: LayerGroup, tp: Array, ep: Array, adp: Array) -> Array:
    """Bytes per token of one layer's memory-bound work: two fused add-and-norm passes (read x and the residual,
    write both: 8 h), RoPE on q and k, the gated activation (3 ffn / tp) and, for MoE, the token permutes: each
    rank gathers the routed copies its experts take, whole hidden rows, and scatters their outputs back (4 k h per
    token over the expert-parallel ranks: a tensor-parallel slice of every expert still permutes every copy)."""
    att = model.attention
    h = float(model.hidden)
    attn_side = 8.0 * h + 2.0 * (att.heads + att.kv_heads) * att.head_dim
    e = np.where(adp > 0, attn_side / tp, 8.0 * h + 2.0 * (att.heads + att.kv_heads) * att.head_dim / tp)
    if g.moe is not None:
        m = g.moe
        e = e + 3.0 * (m.top_k * m.expert_ffn + m.shared * m.shared_ffn) / tp + 4.0 * m.top_k * h / ep
    elif g.mlp is not None:
        e = e + 3.0 * g.mlp.ffn / tp
    return np.asarray(e * ACT_BYTES, dtype=np.float64)


def attention_projections(
    model: ModelSpec, dev: Device, weight_precision: str, shapes: Shapes, tokens: Array | float
) -> Array:
    """Seconds of the attention projections of an iteration of `tokens` tokens on one rank, over all L layers in
    pp micro-batches (the attention share of pp G(T / pp))."""
    return _projections(model, dev, weight_precision, shapes)(tokens)


def _projections(
    model: ModelSpec, dev: Device, weight_precision: str, shapes: Shapes
) -> Callable[[Array | float], Array]:
    """attention_projections placed for the shapes once, as a function of the tokens."""
    tp = shapes.tp.astype(np.float64)
    pp = shapes.pp.astype(np.float64)
    dense = layer_precisions(weight_precision)[0]
    prec, wb = matmul_precision(dense, dev.chip), stored_bytes(dense)
    terms = _attention_terms(model, dev, prec, wb, tp, shapes.adp.astype(np.float64))

    def seconds(tokens: Array | float) -> Array:
        t = np.asarray(tokens, dtype=np.float64)
        return np.asarray(model.layers * terms.time(t / pp), dtype=np.float64)

    return seconds


def rank_imbalance(
    model: ModelSpec, dev: Device, weight_precision: str, shapes: Shapes, tokens: Array, even: Array
) -> Array:
    """Seconds an iteration of `tokens` tokens loses when its heaviest attention-DP rank carries the attention
    projections of `even` tokens' even share (even / tp tokens: tp x one whole prompt when a prompt runs alone):
    each layer's expert exchange waits for that rank. G(T) prices an even split; this adds the difference.
    Zero without attention DP, whose ranks split every token's heads (priced only where it is not zero)."""
    t = np.asarray(tokens, dtype=np.float64)
    e = np.asarray(even, dtype=np.float64)
    sel = (shapes.adp > 0) & (e > t)
    if not sel.any():
        return np.zeros(np.broadcast(shapes.tp, t, e).shape)

    def build() -> Callable[[Array | float], Array]:
        return _projections(model, dev, weight_precision, shapes)

    projections = _memoised(shapes, (model, dev, weight_precision), build)
    return np.asarray(np.where(sel, projections(e) - projections(t), 0.0), dtype=np.float64)


@dataclass(frozen=True)
class _GroupTerms:
    """What token_costs prices from the replica shapes alone for one layer group."""

    layers: Array  # layers of this group on one stage
    mlp: _MlpGemms
    all_reduces: Array  # layers x tensor-parallel all-reduces per layer
    elementwise: Array  # bytes per token of the memory-bound work (_elementwise_bytes)
    uses_ep: NDArray[np.bool_]
    exchange: ExpertExchange | None


@dataclass(frozen=True)
class _StageTerms:
    """What token_costs prices from the replica shapes alone (stage_terms), for every iteration priced on them."""

    tp: Array
    pp: Array
    ep: Array
    adp: Array
    all_reduce: SmallAllReduce
    attention: _AttentionGemms
    groups: tuple[_GroupTerms, ...]
    overhead: Array  # the fixed cost of the layers of one stage


def stage_terms(
    model: ModelSpec, dev: Device, topo: Topology, eng: EngineProfile, weight_precision: str, shapes: Shapes
) -> _StageTerms:
    """token_costs' terms that depend on the replica shapes alone, priced once per shapes, model, device, topology,
    engine and precision (Shapes.memo)."""

    def build() -> _StageTerms:
        return _stage_terms(model, dev, topo, eng, weight_precision, shapes)

    return _memoised(shapes, (model, dev, topo, eng, weight_precision), build)


def _stage_terms(
    model: ModelSpec, dev: Device, topo: Topology, eng: EngineProfile, weight_precision: str, shapes: Shapes
) -> _StageTerms:
    """stage_terms' build: per layer group, count / pp layers a stage, its MLP terms (_mlp_terms), 2 tensor-parallel
    all-reduces a layer (1 under attention DP; a MoE layer beside attention DP with ep = tp exchanges its tokens
    instead, perf.serving.expert_exchange_over), its element-wise bytes; the attention projections
    (_attention_terms) and the fixed cost, layers / pp x the engine's layer_overhead (a fitted figure, engines.yaml)."""
    tp = shapes.tp.astype(np.float64)
    ep = shapes.ep.astype(np.float64)
    adp = shapes.adp.astype(np.float64)
    pp = shapes.pp.astype(np.float64)
    dense = layer_precisions(weight_precision)[0]
    prec, wb = matmul_precision(dense, dev.chip), stored_bytes(dense)
    groups = []
    for g in model.groups:
        k = g.count / pp  # layers of this group on one stage
        mlp = _mlp_terms(
            model, g, dev, weight_precision, tp, ep, eng.moe_compiled, min(1.0, eng.moe_scale), eng.moe_block_scale
        )
        # experts exchange tokens only beside attention DP: with tensor-parallel attention every rank holds every
        # token, runs the routed copies its experts take, and the block's output is all-reduced as with tensor-parallel
        # experts (TensorRT-LLM's DeepseekV3MoE: no all-to-all without attention DP, one all-reduce after the block;
        # SGLang's and vLLM's expert parallelism without DP attention alike)
        # ... and only where the experts span the attention's ranks (ep = tp): with ep < tp every rank gathers every
        # token before the block (n_ar below), so no dispatch is left to make (TP8 EP4 ADP on 8 H200 had paid the
        # gather's 2.72 ms a step and a dispatch's 2.45 ms beside it)
        uses_ep = (ep > 1) & (adp > 0) & (ep >= tp)
        exchange = None
        if g.moe is not None:
            # attention DP whose experts are sharded over more ranks than hold different experts (ep < tp: TensorRT-
            # LLM's and SGLang's attention DP beside tensor-parallel experts) gathers every rank's tokens before
            # the block and reduce-scatters after it, an all-reduce's volume; with ep = tp the exchange carries them
            n_ar = np.where(adp > 0, np.where(ep < tp, 1.0, 0.0), 2.0)
            exchange = expert_exchange_over(
                g.moe.top_k, shapes.ep, topo, eng.collective_latency_s, eng.network_collective_latency_s
            )
        else:
            n_ar = np.where(adp > 0, 1.0, 2.0)
        groups.append(_GroupTerms(k, mlp, k * n_ar, _elementwise_bytes(model, g, tp, ep, adp), uses_ep, exchange))
    return _StageTerms(
        tp=tp,
        pp=pp,
        ep=ep,
        adp=adp,
        all_reduce=small_all_reduce_over(shapes.tp, topo, eng.collective_latency_s, eng.network_collective_latency_s),
        attention=_attention_terms(model, dev, prec, wb, tp, adp),
        groups=tuple(groups),
        overhead=model.layers / pp * eng.layer_overhead_s,
    )


def token_costs(
    model: ModelSpec,
    dev: Device,
    topo: Topology,
    eng: EngineProfile,
    weight_precision: str,
    shapes: Shapes,
    tokens: Array | float,
    decode_slots: float = 0.0,
) -> dict[str, Array]:
    """G(T): token-proportional work of one pipeline stage for a micro-batch of `tokens` tokens, by component.
    `decode_slots`: the compiled batch of a static-shape engine (a step of at most that many tokens is a
    token-generation step, which matters to compiled MoE dispatch)."""
    s = stage_terms(model, dev, topo, eng, weight_precision, shapes)
    tp, pp = s.tp, s.pp
    t = np.asarray(tokens, dtype=np.float64)
    h = float(model.hidden)
    out = {
        k: np.zeros(np.broadcast(tp, s.ep, pp, s.adp, t).shape)
        for k in ("gemm", "moe", "memory_bound", "tp_comm", "ep_comm")
    }
    act = t * h * ACT_BYTES
    ar = s.all_reduce.time(act)
    # each rank dispatches its share of the tokens (fp8) and combines them back (bf16)
    share = t / tp * h
    attn = s.attention.time(t)
    for g, terms in zip(model.groups, s.groups, strict=True):
        k = terms.layers
        mlp = terms.mlp.time(t, decode_slots)
        out["gemm"] = out["gemm"] + k * (attn + (0.0 if g.moe is not None else mlp))
        if terms.exchange is not None:
            out["moe"] = out["moe"] + k * mlp
            exchange = terms.exchange.time(share, share * ACT_BYTES)
            exposed = np.maximum(0.0, exchange - dev.eff.ep_overlap * mlp)  # hidden behind expert GEMMs
            out["ep_comm"] = out["ep_comm"] + k * np.where(terms.uses_ep, exposed, 0.0)
        out["tp_comm"] = out["tp_comm"] + terms.all_reduces * ar
        out["memory_bound"] = out["memory_bound"] + k * memory_time(t * terms.elementwise, dev)
    out["overhead"] = np.broadcast_to(s.overhead, out["gemm"].shape).astype(np.float64)
    out["pp_comm"] = np.where(pp > 1, hand_off(act, shapes.tp, topo, shapes.pp), 0.0) * np.ones_like(out["gemm"])
    return out


#: Kernels one decoder layer launches, by block, when run eagerly (an estimate: the operations of the layer as the
#: PyTorch engines write it, fused where they fuse, e.g. add-and-norm, RoPE): GQA attention = norm, QKV, RoPE, KV write,
#: attention, O; MLA = norm, q_a, q_a norm, q_b, kv_a, kv_a norm, kv_b, RoPE, two q/k assemblies, KV write,
#: attention, O; dense MLP = norm, gate-up, activation, down; MoE = norm, router, top-k, align/permute, gate-up,
#: activation, down, unpermute-reduce; a shared expert adds gate-up, activation, down and the add. Each GEMM with
#: fp8 or fp4 activations adds its activation-quantisation kernel; a tensor-parallel all-reduce, or an expert
#: dispatch and combine, one kernel each.
EAGER_LAUNCHES = {"gqa": 6, "mla": 13, "mlp": 4, "moe": 8, "shared": 4}
ATTENTION_GEMMS = {"gqa": 2, "mla": 5}


#: Engines that fuse activation quantisation into the kernel before a GEMM of fp8 (per-tensor, ModelOpt's FP8) or fp4
#: (NVFP4) weights, so it launches no kernel of its own: TensorRT-LLM's PyTorch back end (the TensorRT engine builds
#: launch nothing eagerly). Its Attention module hands the o_proj's input scale to the attention kernel, which writes
#: fp8 or NVFP4 (tensorrt_llm/_torch/modules/attention.py: out_scale for has_fp8_qdq/has_nvfp4, out_scale_sf where the
#: backend supports NVFP4 output); its GatedMLP quantises down_proj's input in the SwiGLU kernel for fp8 alone
#: (modules/gated_mlp.py _apply_activation: swiglu(quant_scale=down_proj.input_scale) where has_fp8_qdq); and a dense
#: decoder layer under tensor parallelism without attention DP folds the gate-up and next layer's QKV input quantise
#: into its all-reduce + residual + RMSNorm kernels (RESIDUAL_RMS_NORM_QUANT_FP8 / _NVFP4), for hidden sizes over
#: 4096 ("Disable fusion for small models due to accuracy issues": models/modeling_llama.py LlamaDecoderLayer; other
#: dense families are taken to be written the same way, an estimate). vLLM's and SGLang's fusion passes are not
#: counted: vLLM captures its prompt iterations in graphs by default, and SGLang's quantise kernels are unsourced.
QUANT_FUSING_ENGINES: tuple[str, ...] = ("trtllm", "trtllm-engine")
#: hidden sizes at or below this run TensorRT-LLM's Llama layers without the all-reduce fusions (modeling_llama.py)
ALL_REDUCE_FUSION_HIDDEN_OVER = 4096


def quantise_launches(
    model: ModelSpec, chip: Chip, weight_precision: str, shapes: Shapes, engine: str
) -> tuple[Array, Array]:
    """Activation-quantise kernels a GQA attention block and a dense MLP block launch (before QKV and O; before
    gate-up and down), less those `engine` fuses (QUANT_FUSING_ENGINES). llama-3.1-70b in fp8 on TensorRT-LLM at TP8
    had been counted 2 + 2 a layer, 80 x 16 kernels at 69 us (88.3 ms of host launches) against bf16's 80 x 12
    (66.2 ms), a prompt priced slower in fp8 than bf16; it now reads 0 + 0, as bf16's."""
    dense = layer_precisions(weight_precision)[0]
    native = matmul_precision(dense, chip)
    quantised = float(native in ("fp8", "fp4", "int8"))
    attn = mlp = np.full(np.broadcast(shapes.tp, shapes.adp).shape, 2.0 * quantised)
    if engine not in QUANT_FUSING_ENGINES or native not in ("fp8", "fp4"):
        return attn, mlp
    # the all-reduce fusions of a dense decoder layer (LlamaDecoderLayer): a MoE model's QKV input follows a MoE
    # block's reduce, which no source read folds (Mixtral 8x22B fp8 at TP8 had been counted one kernel a layer short)
    all_dense = all(g.moe is None for g in model.groups)
    folded = (shapes.tp > 1) & (shapes.adp == 0) & (model.hidden > ALL_REDUCE_FUSION_HIDDEN_OVER) & all_dense
    attn = attn - 1.0 - folded  # O's input written by the attention kernel; QKV's by the previous all-reduce
    mlp = mlp - (native == "fp8") - folded  # down's input by SwiGLU (fp8 only); gate-up's by the all-reduce
    return np.asarray(attn, dtype=np.float64), np.asarray(mlp, dtype=np.float64)


def eager_launches(model: ModelSpec, chip: Chip, weight_precision: str, shapes: Shapes, engine: str = "") -> Array:
    """Kernels one iteration launches over all the model's layers when it runs eagerly (EAGER_LAUNCHES), the
    activation-quantise kernels as `engine` launches them (quantise_launches; '' counts them all)."""
    dense, routed = layer_precisions(weight_precision)
    quantised = {p: matmul_precision(p, chip) in ("fp8", "fp4", "int8") for p in (dense, routed)}
    tp, ep, adp = shapes.tp, shapes.ep, shapes.adp
    kind = "mla" if model.attention.kind == "mla" else "gqa"
    # MLA models (DeepSeek's block-scaled fp8) and MoE blocks are counted unfused: no source read folds theirs
    fusing = engine if kind == "gqa" else ""
    gqa_quant, dense_mlp_quant = quantise_launches(model, chip, weight_precision, shapes, fusing)
    attn_quant = gqa_quant if kind == "gqa" else quantised[dense] * ATTENTION_GEMMS[kind]
    attn = EAGER_LAUNCHES[kind] + attn_quant + np.where((tp > 1) & (adp == 0), 1, 0)
    total = np.zeros(np.broadcast(tp, ep, adp).shape)
    for g in model.groups:
        if g.moe is None:
            mlp = EAGER_LAUNCHES["mlp"] + dense_mlp_quant + np.where(tp > 1, 1, 0)
        else:
            shared = (EAGER_LAUNCHES["shared"] + 2 * quantised[dense]) if g.moe.shared else 0
            comm = np.where((ep > 1) & (adp > 0), 2, np.where(tp > 1, 1, 0))
            mlp = EAGER_LAUNCHES["moe"] + 2 * quantised[routed] + shared + comm
        total = total + g.count * (attn + mlp)
    return np.asarray(total, dtype=np.float64)


def lm_head_cost(model: ModelSpec, dev: Device, shapes: Shapes, seqs: Array | float) -> Array:
    """H(n): the LM head GEMM (16-bit weights, vocabulary split over tp) for n sampled sequences:
    H(n) = streamed_gemm_time(n rows, vocab / tp x embed_width, bf16), 0 for n = 0 (perf.serving's weight-streamed
    roofline)."""

    def build() -> StreamedGemm:
        return streamed_gemm(model.vocab / shapes.tp.astype(np.float64), model.embed_width, dev, "bf16", LM_HEAD_BYTES)

    n = np.asarray(seqs, dtype=np.float64)
    return np.asarray(np.where(n > 0, _memoised(shapes, (model, dev), build).time(n), 0.0), dtype=np.float64)


def micro_batches(pp: Array | float, seqs: Array | float) -> Array:
    """Micro-batches a pipelined iteration of `seqs` sequences runs (broadcasts): one a stage where it has as many
    sequences (the pipeline fills), else one a sequence, at least one. A batch too small to fill the pipeline
    passes its stages in turn: each micro-batch reads every stage's cache and samples once (a lone sequence gains
    no speed from the stages)."""
    return np.asarray(np.minimum(pp, np.maximum(seqs, 1.0)), dtype=np.float64)


def stage_share(pp: Array | float, seqs: Array | float) -> Array:
    """What the decode attention of `seqs` sequences costs over the filled pipeline's (context_coefficient prices
    pp micro-batches, each stage reading its own layers' cache at once): pp / micro_batches."""
    return np.asarray(np.asarray(pp, dtype=np.float64) / micro_batches(pp, seqs), dtype=np.float64)


def lm_heads(model: ModelSpec, dev: Device, shapes: Shapes, rows: Array | float, seqs: Array | float) -> Array:
    """The LM head of an iteration that samples `rows` rows of `seqs` sequences: once a micro-batch, on the last
    stage (pp H(n / pp) where the pipeline fills; a lone sequence's once, where it was charged pp times)."""
    m = micro_batches(shapes.pp.astype(np.float64), seqs)
    return np.asarray(m * lm_head_cost(model, dev, shapes, np.asarray(rows, dtype=np.float64) / m), dtype=np.float64)


def kv_bytes_per_token_layer(model: ModelSpec, kv_precision: str) -> float:
    """Bytes one token occupies in one layer's KV cache (MLA: the latent and the rope key)."""
    return model.attention.kv_elements_per_token * stored_bytes(kv_precision)


def _rank_heads(heads: int, tp: Array, adp: IntArray) -> Array:
    """Heads one rank attends with: under attention DP its share of all of them (it holds every head, for its own
    requests); otherwise whole heads, padded where tp does not divide them (Neuron)."""
    return np.asarray(np.where(adp > 0, heads / tp, np.ceil(heads / tp)), dtype=np.float64)


def context_coefficient(
    model: ModelSpec, dev: Device, shapes: Shapes, kv_precision: str, typical_context: float, queries: float = 1.0
) -> Array:
    """a: seconds per iteration per cached token of the batch (decode attention over the L/pp layers of a stage).
    `queries`: positions each sequence attends with in one pass, k + 1 when a speculative step verifies k drafted
    tokens: one read of the cache serves them all, while the score FLOPs grow with them (MLA's latent attention on
    a rank that holds all its heads, under attention DP, does about 480 FLOPs a byte and is compute-bound at one
    query already; GQA's stays bound by the cache read)."""
    att = model.attention
    tp = shapes.tp.astype(np.float64)
    pp = shapes.pp.astype(np.float64)
    adp = shapes.adp
    kvb = stored_bytes(kv_precision)
    if att.kind == "mla":
        per_rank_bytes = np.where(adp > 0, 1.0 / tp, 1.0) * (att.kv_lora_rank + att.rope_dim) * kvb
        flops = 2.0 * att.heads * (2.0 * att.kv_lora_rank + att.rope_dim) / tp
    else:
        per_rank_bytes = _rank_heads(att.kv_heads, tp, adp) * (att.head_dim + att.v_head_dim) * kvb
        flops = 2.0 * _rank_heads(att.heads, tp, adp) * (att.head_dim + att.v_head_dim)
    per_layer = context_attention_time(1.0, queries * flops, per_rank_bytes, dev, kv_precision)
    share = sum(g.count * attended_share(g, typical_context) for g in model.groups)
    return np.asarray(per_layer * share / pp, dtype=np.float64)


def pair_coefficient(
    model: ModelSpec,
    dev: Device,
    shapes: Shapes,
    typical_prompt: float,
    kv_precision: str = "bf16",
    cached: float = 0.0,
) -> Array:
    """b: seconds per causal (query, key) pair of prefill attention (flash attention, compute-bound), per iteration,
    over the layers' exact pairs of a `typical_prompt` whose first `cached` tokens are a prefix-cache hit
    (pair_share: a sliding-window or chunked layer runs fewer than the causal ones). MLA
    prompts run as ordinary attention over keys and values decompressed from the latent (head_dim for q.k,
    v_head_dim for p.v: 192 and 128 on DeepSeek-V3), as vLLM, SGLang and TensorRT-LLM encode them; decoding reads
    the latent itself (context_coefficient). A rank computes its own heads, padded where tp does not divide them
    (Neuron), as in the projections and in decoding."""
    att = model.attention
    tp = shapes.tp.astype(np.float64)
    pp = shapes.pp.astype(np.float64)
    rate = attention_rate(dev, kv_precision)
    flops = 2.0 * _rank_heads(att.heads, tp, shapes.adp) * (att.head_dim + att.v_head_dim)
    share = pair_share(model, typical_prompt, cached)
    return np.asarray(flops / rate * share / pp, dtype=np.float64)


def pair_share(model: ModelSpec, typical_prompt: Array | float, cached: Array | float = 0.0) -> Array:
    """Layers' worth of the causal (query, key) pairs (prefill_pairs) that a prompt of `typical_prompt` tokens, the
    first `cached` of them a prefix-cache hit, runs: the sum over the layer groups of count x window_pairs /
    prefill_pairs (the layer count under full attention), so that b P prices the prompt's pairs exactly where its
    chunks are counted as causal pairs. The share had been taken at half the prompt, min(1, window / (P / 2)) on every
    pair, the chunked branch only where the chunk is under P / 2: a 4,000-token sliding window over 8,000-token
    prompts had read 1.0 a layer (0.75 exact, 2 w / P - (w / P)^2), Llama 4 Scout's 8,192-token chunks over 16,000
    tokens 1.0 (64.04 M of the 128.0 M pairs: 0.50) and Mistral 7B's 4,096-token window over 32,000 tokens 0.256
    (0.240)."""
    p = np.asarray(typical_prompt, dtype=np.float64)
    s = np.minimum(np.asarray(cached, dtype=np.float64), p)
    full = prefill_pairs(s, p - s)
    share = sum(g.count * _group_pair_share(g, s, p - s, full) for g in model.groups)
    return np.asarray(share, dtype=np.float64)


def _group_pair_share(g: LayerGroup, start: Array, chunk: Array, full: Array) -> Array | float:
    """One layer of `g`'s share of the `full` causal pairs of `chunk` tokens after `start` (pair_share): exactly 1
    under full attention, as it had read (the ratio of equal counts can miss by an ulp)."""
    if g.window <= 0:
        return 1.0
    pairs = window_pairs(start, chunk, g.window, g.chunked)
    return np.asarray(np.where(full > 0, pairs / np.maximum(full, 1e-30), 1.0), dtype=np.float64)


@dataclass(frozen=True)
class IterationInputs:
    """What one iteration carries: T tokens, n sampled sequences, C cached tokens read, P prefill pairs, the
    positions each decoding sequence attends with (k + 1 in a speculative verification step), and the live
    sequences among the n where a compiled graph runs every slot (`live`; None: all n)."""

    tokens: Array
    seqs: Array
    context: Array
    pairs: Array
    queries: float = 1.0
    live: Array | None = None


def host_sequence_time(eng: EngineProfile, shapes: Shapes, seqs: Array | float) -> Array:
    """Host time of an iteration's per-sequence work (engine.host_sequence_s) for `seqs` sampled sequences: under
    attention DP, on an engine whose every rank's loop handles its own requests (eng.adp_host_loops: SGLang's
    scheduler per attention-DP rank), tp loops side by side, the iteration waiting for the busiest (at least one
    sequence's work where any runs); otherwise one loop handles the whole batch.
    t = host_sequence_s x max(n / loops, min(n, 1)), loops = tp under such attention DP, else 1; host_sequence_s is
    the engine's sequence_overhead x the host's factor (engines.yaml: an estimate, fitted per engine and chip
    family by scripts/calibrate_serving.py)."""
    n = np.asarray(seqs, dtype=np.float64)
    loops = np.where((shapes.adp > 0) & eng.adp_host_loops, shapes.tp, 1).astype(np.float64)
    return np.asarray(eng.host_sequence_s * np.maximum(n / loops, np.minimum(n, 1.0)), dtype=np.float64)


def iteration_breakdown(
    model: ModelSpec,
    dev: Device,
    topo: Topology,
    eng: EngineProfile,
    weight_precision: str,
    kv_precision: str,
    shapes: Shapes,
    work: IterationInputs,
    typical_context: float,
    typical_prompt: float,
    decode_slots: float = 0.0,
    typical_cached: float = 0.0,
) -> dict[str, Array]:
    """Every component of t (seconds), broadcast over shapes and iteration contents. `decode_slots`: the compiled
    batch of a static-shape engine (token_costs). `typical_cached`: the typical prompt's tokens served from the
    prefix cache, where `work.pairs` counts the pairs of the rest after them (pair_coefficient)."""
    pp = shapes.pp.astype(np.float64)
    g = token_costs(model, dev, topo, eng, weight_precision, shapes, np.asarray(work.tokens) / pp, decode_slots)
    out = {k: pp * v for k, v in g.items()}
    out["pp_comm"] = g["pp_comm"] * (pp - 1.0)
    sequences = np.asarray(work.seqs) / work.queries  # a verification step samples k + 1 rows a sequence
    out["lm_head"] = lm_heads(model, dev, shapes, work.seqs, sequences)
    a = context_coefficient(model, dev, shapes, kv_precision, typical_context, work.queries)
    b = pair_coefficient(model, dev, shapes, typical_prompt, kv_precision, typical_cached)
    out["attention"] = a * stage_share(pp, sequences) * np.asarray(work.context) + b * np.asarray(work.pairs)
    sampled = work.seqs if work.live is None else work.live
    out["host_sampling"] = host_sampling_time(model, eng, sampled, work.seqs) * np.ones_like(out["lm_head"])
    out["overhead"] = out["overhead"] + eng.host_step_s + host_sequence_time(eng, shapes, work.seqs)
    return out


def host_sampling_time(
    model: ModelSpec, eng: EngineProfile, seqs: Array | float, returned: Array | float | None = None
) -> Array:
    """Host time of sampling `seqs` sequences on an engine that samples on the host (engine.host_sampling): the
    logits of the `returned` rows the graph gives back (`seqs` unless a compiled graph returns every slot's) copied
    to the host, and the CPU sampler's pass over the sampled rows, each a whole vocabulary; 0 otherwise.
    t = (rows x host_logits_per_logit + n x host_sampling_per_logit) x vocab x host_factor, the per-logit times from
    the catalog (engines.yaml, given where a source measures them: Neuron)."""
    n = np.asarray(seqs, dtype=np.float64)
    if not eng.host_sampling:
        return np.zeros_like(n)
    rows = n if returned is None else np.asarray(returned, dtype=np.float64)
    per_logit = rows * eng.host_logits_s_per_logit + n * eng.host_sampling_s_per_logit
    return np.asarray(per_logit * float(model.vocab) * eng.host_factor, dtype=np.float64)


def prefill_pairs(start: Array | float, chunk: Array | float) -> Array:
    """(query, key) pairs of a prefill chunk of `chunk` tokens after `start` cached ones: c s + c (c + 1) / 2."""
    s = np.asarray(start, dtype=np.float64)
    c = np.asarray(chunk, dtype=np.float64)
    return np.asarray(c * s + c * (c + 1.0) / 2.0, dtype=np.float64)


def window_pairs(start: Array | float, chunk: Array | float, window: int, chunked: bool = False) -> Array:
    """(query, key) pairs of a prefill chunk of `chunk` tokens after `start` cached ones in one layer (broadcasts):
    F(s + c) - F(s), F the pairs of positions 1..n under the layer's attention (workload.model.causal_pairs: i keys a
    query under full attention, min(i, w) under a sliding window, its own chunk's under chunked attention), as
    ModelSpec.mean_context counts them."""
    s = np.asarray(start, dtype=np.float64)
    end = s + np.asarray(chunk, dtype=np.float64)
    return np.asarray(causal_pairs(end, window, chunked) - causal_pairs(s, window, chunked), dtype=np.float64)
