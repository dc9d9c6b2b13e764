"""LoRA adapters: what a LoRA fine-tune trains, and so what its checkpoints hold.

A LoRA run freezes the base weights and trains, beside each adapted weight matrix W (d_in x d_out), a pair of
low-rank factors A (d_in x r) and B (r x d_out): r (d_in + d_out) parameters (Hu et al. 2021). chipwise adapts the
attention projections of every layer at rank 16, as the MLPerf Training Llama-2-70B LoRA reference does
(`--lora_r 16 --lora_target_modules "qkv_proj,o_proj"`, mlcommons/training llama2_70b_lora): the fused QKV
projection and the output projection; for MLA (DeepSeek) each of its projections (the query's and the
key-value's down- and up-projections, and the output). Llama-3.1-70B: 80 x (16 x (8,192 + 10,240) +
16 x (8,192 + 8,192)) = 44.6M parameters, 0.06% of the model.

The adapters are the run's only trained parameters: each rank holds its stage's share of them, split over tp like
the projections they adapt, with their gradients and Adam state (memory.py), and all-reduces or reduce-scatters
their gradients over the data-parallel group (data_parallel.py). Both had been left out (a LoRA prediction read 0.0
GiB of gradients and optimizer state, and no data-parallel traffic). A checkpoint saves them and their optimizer
state only, the frozen base being on storage already.
"""

from __future__ import annotations

import numpy as np

from chipwise.train.plans import PlanArrays, stage_layers
from chipwise.types import Array
from chipwise.workload.model import ModelSpec

#: rank of the adapters (MLPerf Training's Llama-2-70B LoRA reference)
LORA_RANK = 16


def _attention_matrices(model: ModelSpec) -> list[tuple[int, int]]:
    """(d_in, d_out) of each attention projection LoRA adapts in one layer."""
    att, h, n = model.attention, model.hidden, model.attention.heads
    if att.kind == "mla":
        nope = att.head_dim - att.rope_dim
        q = (
            [(h, n * att.head_dim)]
            if att.q_lora_rank == 0
            else [(h, att.q_lora_rank), (att.q_lora_rank, n * att.head_dim)]
        )
        kv = [(h, att.kv_lora_rank + att.rope_dim), (att.kv_lora_rank, n * (nope + att.v_head_dim))]
        return [*q, *kv, (n * att.v_head_dim, h)]
    qkv = (h, (n + 2 * att.kv_heads) * att.head_dim)
    return [qkv, (n * att.head_dim, h)]


def lora_adapter_params(model: ModelSpec, rank: int = LORA_RANK) -> int:
    """Parameters of the LoRA adapters of every layer: rank x (d_in + d_out) per adapted matrix."""
    per_layer = sum(rank * (d_in + d_out) for d_in, d_out in _attention_matrices(model))
    return model.layers * per_layer


def local_adapter_params(model: ModelSpec, plans: PlanArrays) -> Array:
    """Adapter parameters the most loaded rank trains: those of its stage's layers (stage_layers), over tp, as the
    projections they adapt are split (Megatron's ParallelLinearAdapter splits the fused QKV's pair with it).
    Llama-3.1-70B at TP8 PP4: 44.6M / 80 x 20 / 8 = 1.39M."""
    on_stage = stage_layers(model.layers, plans.pp, plans.vpp)
    return np.asarray(lora_adapter_params(model) / model.layers * on_stage / plans.tp, dtype=np.float64)
