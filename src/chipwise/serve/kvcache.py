"""Memory of a serving replica and its KV-cache capacity in paged blocks (PagedAttention, Kwon et al. 2023),
vectorised over replica shapes.

Per rank (the most loaded one):
    weights     = (attention + dense MLP + shared experts) / tp   [attention replicated under attention-DP; the
                  K/V projections / min(tp, kv_heads): past kv_heads ranks each holds a whole KV head's]
                + routed experts / tp                              [ep x expert-tp = tp ranks share them]
                + embedding and LM head / tp                       [vocabulary-parallel, 16-bit]
                  all over pp stages, at the stored bytes of the weight precision (scales included);
    activations = T_max (6 h + 3 f_local) 2 B + n_max vocab / tp 4 B   [working buffers of the largest
                  iteration and its fp32 logits];
    reserved    = the chip family's runtime reserve (efficiency.yaml `reserved_memory`).
The engine gives the KV cache a fraction of what is left ('free' basis, TensorRT-LLM's
free_gpu_memory_fraction), a fraction of all memory minus the rest ('total' basis, vLLM's
gpu_memory_utilization), or what its weights leave of a fraction of the memory free at start-up, its buffers living
outside that fraction ('static' basis, SGLang's mem_fraction_static: model_runner_kv_cache_mixin.py
profile_max_num_token, available after loading - free before x (1 - f)):
    free:  kv = f (M - weights - activations - reserved)        total:  kv = f M - weights - activations - reserved
    static: kv = f (M - reserved) - weights
One token of context costs, on a rank, kv_bytes_per_token_layer x (the stage's layers, windowed layers counted
at min(1, window / context)) divided by how the replica splits it: over min(tp, kv_heads) ranks for MHA/GQA
(a KV head is replicated beyond that), not at all for MLA's shared latent, over tp ranks under attention-DP.
The capacity is rounded down to whole blocks of `block_tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from chipwise.perf.device import Device
from chipwise.serve.engine import EngineProfile, decode_graph_batch, default_max_tokens, sglang_static_fraction
from chipwise.serve.iteration import Shapes, expert_slot_share, kv_bytes_per_token_layer, window_share
from chipwise.serve.quant import layer_precisions, stored_bytes
from chipwise.types import Array
from chipwise.workload.model import ModelSpec

EMBEDDING_BYTES = 2.0
LOGIT_BYTES = 4.0
ACT_BYTES = 2.0


@dataclass(frozen=True)
class ReplicaMemory:
    """Bytes per rank, the KV capacity of the replica in tokens and blocks, and whether the weights fit."""

    capacity: Array
    weights: Array
    activations: Array
    reserved: Array
    kv_memory: Array
    kv_bytes_per_token: Array  # bytes per rank per token of context of the replica's batch
    kv_tokens: Array
    blocks: Array
    block_tokens: int

    @property
    def fits(self) -> NDArray[np.bool_]:
        return np.asarray(self.kv_tokens >= self.block_tokens)


def weights_per_rank(model: ModelSpec, shapes: Shapes, weight_precision: str) -> Array:
    """Weight bytes on the most loaded rank of a replica."""
    tp = shapes.tp.astype(np.float64)
    pp = shapes.pp.astype(np.float64)
    adp = shapes.adp
    dense, routed = layer_precisions(weight_precision)
    wb, ewb = stored_bytes(dense), stored_bytes(routed)
    h = model.hidden
    att = model.attention
    attn = float(att.params(h) + model.norm_params_per_layer)
    # past kv_heads ranks each holds a whole KV head's projections (engines replicate them, as training does)
    split = attn / tp + att.kv_projection_params(h) * (1.0 / np.minimum(tp, att.kv_heads) - 1.0 / tp)
    body = np.zeros(np.broadcast(tp, pp, adp).shape)
    for g in model.groups:
        per_layer_attn = np.where(adp > 0, attn, split)
        ffn: Array | float = 0.0  # parameters, the routed experts (their slots) scaled to the dense precision's bytes
        if g.mlp is not None:
            ffn = float(g.mlp.params(h))
        if g.moe is not None:
            experts = g.moe.experts * g.moe.expert_params(h) * ewb / wb
            slots = expert_slot_share(g.moe, shapes.ep.astype(np.float64))
            ffn = experts * slots + float(g.moe.shared_params(h) + g.moe.router_params(h))
        body = body + g.count * (per_layer_attn + ffn / tp)
    # tied embeddings are one matrix (lm_head_params 0); under pp the last stage holds its own copy of it as the
    # LM head (the max), as vLLM does; an EAGLE / MTP head shares both with its target (speculation.DraftHead)
    ends = float(model.embedding_params + model.lm_head_params) * EMBEDDING_BYTES / wb
    end_stage = np.where(pp > 1, float(max(model.embedding_params, model.lm_head_params)) * EMBEDDING_BYTES / wb, ends)
    return np.asarray((body / pp + end_stage / tp) * wb, dtype=np.float64)


def activations_per_rank(
    model: ModelSpec, shapes: Shapes, max_tokens: float | Array, max_batch: float | Array
) -> Array:
    """Working buffers of the largest iteration and its logits, per rank."""
    tp = shapes.tp.astype(np.float64)
    h = float(model.hidden)
    f_local = np.zeros_like(tp)
    for g in model.groups:
        if g.mlp is not None:
            f_local = np.maximum(f_local, g.mlp.ffn / tp)
        if g.moe is not None:
            f_local = np.maximum(f_local, (g.moe.top_k * g.moe.expert_ffn + g.moe.shared * g.moe.shared_ffn) / tp)
    work = max_tokens * (6.0 * h + 3.0 * f_local) * ACT_BYTES
    logits = max_batch * model.vocab / tp * LOGIT_BYTES
    return np.asarray(work + logits, dtype=np.float64)


def kv_bytes_per_token_rank(model: ModelSpec, shapes: Shapes, kv_precision: str, typical_context: float) -> Array:
    """Bytes a rank stores per token of context of the replica's batch."""
    att = model.attention
    tp = shapes.tp.astype(np.float64)
    pp = shapes.pp.astype(np.float64)
    adp = shapes.adp
    per_layer = kv_bytes_per_token_layer(model, kv_precision)
    if att.kind == "mla":
        split = np.where(adp > 0, tp, 1.0)
    else:
        split = np.where(adp > 0, tp, np.minimum(tp, float(att.kv_heads)))
    layers = sum(g.count * window_share(g, typical_context) for g in model.groups)
    return np.asarray(per_layer * layers / pp / split, dtype=np.float64)


def replica_memory(
    model: ModelSpec,
    dev: Device,
    eng: EngineProfile,
    shapes: Shapes,
    weight_precision: str,
    kv_precision: str,
    max_tokens: float | Array,
    max_batch: float | Array,
    typical_context: float,
    drafter: ModelSpec | None = None,
) -> ReplicaMemory:
    """Memory per rank and KV-cache capacity of the replica (in tokens of context, whole blocks); a speculative
    `drafter` (a draft model, or the EAGLE / MTP head's decoder layer) keeps its weights and its own KV cache on
    the same ranks (a 1B draft model of Llama 3.1 8B adds 32 KiB to the target's 128 KiB a token)."""
    cap = float(dev.hbm_capacity)
    weights = weights_per_rank(model, shapes, weight_precision)
    if drafter is not None:
        weights = weights + weights_per_rank(drafter, shapes, weight_precision)
    acts = activations_per_rank(model, shapes, max_tokens, max_batch)
    reserved = np.full(np.shape(weights), dev.eff.reserved_memory_bytes / dev.cores_per_chip)
    if eng.memory_basis == "free":
        kv_mem = eng.memory_fraction * (cap - weights - acts - reserved)
    elif eng.memory_basis == "static":
        ranks = np.where(shapes.adp > 0, shapes.tp, 1)
        # CUDA graphs captured up to the batch a rank runs, as a launch that caps its batch caps them
        graphs = np.minimum(decode_graph_batch(eng, cap, shapes.tp), np.ceil(np.asarray(max_batch) / ranks))
        fraction = eng.memory_fraction or sglang_static_fraction(
            cap, default_max_tokens(eng, cap), graphs, shapes.tp * shapes.pp, ranks, drafter is not None
        )
        kv_mem = fraction * (cap - reserved) - weights
    else:
        kv_mem = eng.memory_fraction * cap - weights - acts - reserved
    kv_mem = np.maximum(kv_mem, 0.0)
    per_token = kv_bytes_per_token_rank(model, shapes, kv_precision, typical_context)
    if drafter is not None:  # the drafter caches every token it drafts over, in the same blocks
        per_token = per_token + kv_bytes_per_token_rank(drafter, shapes, kv_precision, typical_context)
    blocks = np.floor(kv_mem / (per_token * eng.block_tokens))
    return ReplicaMemory(
        capacity=np.full(np.shape(weights), cap),
        weights=weights,
        activations=acts,
        reserved=reserved,
        kv_memory=np.asarray(kv_mem, dtype=np.float64),
        kv_bytes_per_token=per_token,
        kv_tokens=np.asarray(blocks * eng.block_tokens, dtype=np.float64),
        blocks=np.asarray(blocks, dtype=np.float64),
        block_tokens=eng.block_tokens,
    )
