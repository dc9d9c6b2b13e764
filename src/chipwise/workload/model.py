"""ModelSpec: a transformer's shape (dense or MoE; MHA, GQA, MQA or MLA attention) and what follows from it:
parameters, forward FLOPs per token, weight bytes and KV-cache bytes per token.

Counting conventions (stated in every output that uses them):
- A matmul of an (m x k) by (k x n) matrix costs 2mnk FLOPs; per token and per weight that is 2 FLOPs.
- Forward matmul FLOPs per token = 2 x (parameters that multiply each token), i.e. all linear weights the token
  passes through, the LM head included; the input embedding is a lookup and costs nothing.
- Attention FLOPs per token (QK^T and AV): 2 x heads x (d_qk + d_v) x context. In causal training a token attends
  on average to (seq_len + 1) / 2 positions (fewer in sliding-window or chunked layers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from chipwise.errors import ChipwiseError
from chipwise.types import Array


@dataclass(frozen=True)
class Attention:
    """Attention shape. kind: mha | gqa | mqa | mla. For MLA the KV cache holds kv_lora_rank + rope_dim per token."""

    kind: str
    heads: int
    kv_heads: int
    head_dim: int  # query/key dimension per head (MLA: nope + rope)
    v_head_dim: int
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    rope_dim: int = 0
    bias: bool = False
    out_bias: bool = False

    def params(self, hidden: int) -> int:
        """Weights of one attention block (projections, plus MLA's low-rank norms)."""
        h, n = hidden, self.heads
        if self.kind == "mla":
            q = (
                h * n * self.head_dim
                if self.q_lora_rank == 0
                else h * self.q_lora_rank + self.q_lora_rank * (n * self.head_dim) + self.q_lora_rank
            )
            nope = self.head_dim - self.rope_dim
            kv = (
                h * (self.kv_lora_rank + self.rope_dim)
                + self.kv_lora_rank
                + self.kv_lora_rank * n * (nope + self.v_head_dim)
            )
            return q + kv + n * self.v_head_dim * h
        qkv = h * (n + 2 * self.kv_heads) * self.head_dim
        bias = (n + 2 * self.kv_heads) * self.head_dim if self.bias else 0
        out = n * self.head_dim * h + (h if self.out_bias else 0)
        return qkv + bias + out

    def kv_projection_params(self, hidden: int) -> int:
        """Weights and biases of one layer's K and V projections: what tensor-parallel ranks past kv_heads replicate
        (each holds one whole KV head) rather than split further; 0 for MLA, whose up-projections split by heads."""
        if self.kind == "mla":
            return 0
        return (hidden + (1 if self.bias else 0)) * 2 * self.kv_heads * self.head_dim

    @property
    def kv_elements_per_token(self) -> int:
        """Elements cached per token per layer (K and V; MLA's compressed latent and rope key)."""
        if self.kind == "mla":
            return self.kv_lora_rank + self.rope_dim
        return self.kv_heads * (self.head_dim + self.v_head_dim)

    @property
    def score_flops_per_position(self) -> int:
        """FLOPs per (query, key) pair: QK^T and AV, 2 x heads x (d_qk + d_v)."""
        return 2 * self.heads * (self.head_dim + self.v_head_dim)

    def tp_problem(self, tp: int) -> str:
        """Why tensor parallelism of degree `tp` cannot split these heads ('' when it can): tp must divide the
        attention heads, and the KV heads and tp must divide one another (a KV head is replicated on tp / kv_heads
        ranks when tp exceeds them; MLA has no KV heads to split). Training and serving plans both check it."""
        if self.heads % tp:
            return f"tp={tp} does not divide the {self.heads} attention heads. Fix: use a tp that divides {self.heads}"
        if self.kind != "mla" and self.kv_heads % tp and tp % self.kv_heads:
            return (
                f"tp={tp} and the {self.kv_heads} KV heads do not divide one another. "
                f"Fix: pick tp dividing {self.kv_heads}"
            )
        return ""


@dataclass(frozen=True)
class MLP:
    """A dense feed-forward block: gated (SwiGLU or GeGLU, 3 matrices) or plain (GeLU, 2 matrices); `act` is the
    gate's activation ('silu' or 'gelu'), which names the block and costs nothing."""

    ffn: int
    gated: bool = True
    bias: bool = False
    act: str = "silu"

    def params(self, hidden: int) -> int:
        mats = 3 if self.gated else 2
        bias = (self.ffn * (2 if self.gated else 1) + hidden) if self.bias else 0
        return mats * hidden * self.ffn + bias


@dataclass(frozen=True)
class MoE:
    """A mixture-of-experts block: `experts` routed experts of width `expert_ffn`, `top_k` used per token, plus
    `shared` always-on experts of width `shared_ffn`."""

    experts: int
    top_k: int
    expert_ffn: int
    shared: int = 0
    shared_ffn: int = 0
    gated: bool = True
    bias: bool = False
    #: a gate of hidden x 1 scaling the shared experts' output (Qwen2-MoE's shared_expert_gate)
    shared_gate: bool = False

    def expert_params(self, hidden: int) -> int:
        return MLP(self.expert_ffn, self.gated, self.bias).params(hidden)

    def shared_params(self, hidden: int) -> int:
        return self.shared * MLP(self.shared_ffn, self.gated, self.bias).params(hidden) if self.shared else 0

    def router_params(self, hidden: int) -> int:
        """The router, with the shared experts' gate where the model has one."""
        return hidden * self.experts + (self.experts if self.bias else 0) + (hidden if self.shared_gate else 0)


@dataclass(frozen=True)
class LayerGroup:
    """`count` identical decoder layers: a dense MLP or an MoE block; full, sliding-window or chunked attention.

    `window` bounds the keys a layer keeps (its KV cache holds at most `window` tokens of a sequence): a sliding
    window of the last `window` positions, or, `chunked`, the query's own chunk of `window` positions (Llama 4's
    attention_chunk_size), which a query sees on average (window + 1) / 2 of."""

    count: int
    mlp: MLP | None = None
    moe: MoE | None = None
    window: int = 0  # sliding-window / chunk size; 0 = full attention
    chunked: bool = False  # the window is a chunk (attention within the query's own chunk), not a sliding window


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer. Dense and MoE, MHA/GQA/MQA/MLA, SwiGLU or GeLU, tied or untied embeddings."""

    name: str
    hidden: int
    vocab: int
    attention: Attention
    groups: tuple[LayerGroup, ...]
    tied_embeddings: bool = False
    position_embeddings: int = 0
    norm_params_per_layer: int = 0
    #: the final norm's weights in vectors of `hidden`: 1 (an RMSNorm, or MPT's LayerNorm without bias), 2 (a
    #: LayerNorm's weight and bias: GPT-2's ln_f, OPT's final_layer_norm), 0 (none: OPT-350m, whose
    #: do_layer_norm_before false leaves out final_layer_norm)
    final_norm_vectors: int = 1
    max_seq_len: int = 0  # context length (config.json max_position_embeddings); 0 = not stated
    source: str = ""
    causal: bool = True  # decoder (causal) attention; False for encoders such as BERT
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: the weights as the checkpoint ships them (config.json quantization_config): what serving defaults to; ''
    #: where chipwise cannot map the config's quant_method (then released_precision is one line, asked for only)
    released_format: str = "bf16"
    #: the config.json's quantization_config quant_method ('' where it has none)
    quant_method: str = ""
    #: multi-token-prediction modules the checkpoint ships (config.json num_nextn_predict_layers, DeepSeek-V3):
    #: what MTP speculative decoding drafts with
    mtp_layers: int = 0
    #: the alias a preset was asked for by, where it is not the preset's id (deepseek-r1 for deepseek-v3)
    alias: str = ""
    #: the word embeddings' (and tied LM head's) width where it is not `hidden` (OPT's word_embed_proj_dim, 512 in
    #: OPT-350m), with a projection in and one out between it and hidden; 0 = hidden
    embed_dim: int = 0

    @property
    def released_precision(self) -> str:
        """The checkpoint's own weight precision (serving's `auto`). An unmapped quantisation is one line here, not
        at loading, so a plan given its precision (--precision, a scenario's precision:) still runs."""
        if not self.released_format:
            raise ChipwiseError(
                f"{self.source}: quantization_config quant_method '{self.quant_method or '(missing)'}' is not one "
                "chipwise maps to a weight precision. Fix: pass --precision (a scenario's precision:), e.g. int4, "
                "fp8 or bf16."
            )
        return self.released_format

    @property
    def display(self) -> str:
        """The name outputs show: the preset id, with the alias the user gave ('deepseek-r1 = deepseek-v3')."""
        return f"{self.alias} = {self.name}" if self.alias else self.name

    # ---- structure -------------------------------------------------------------------------------------
    @property
    def layers(self) -> int:
        return sum(g.count for g in self.groups)

    @property
    def is_moe(self) -> bool:
        return any(g.moe is not None for g in self.groups)

    @property
    def moe(self) -> MoE | None:
        return next((g.moe for g in self.groups if g.moe is not None), None)

    @property
    def moe_layers(self) -> int:
        return sum(g.count for g in self.groups if g.moe is not None)

    @property
    def mlp_kind(self) -> str:
        """'swiglu' or 'geglu' (gated, 3 matrices) or 'gelu' (plain, 2 matrices), as the first layer has it."""
        g = self.groups[0]
        gated = g.mlp.gated if g.mlp is not None else (g.moe.gated if g.moe is not None else True)
        act = g.mlp.act if g.mlp is not None else "silu"
        return ("geglu" if act == "gelu" else "swiglu") if gated else "gelu"

    # ---- parameters ------------------------------------------------------------------------------------
    @property
    def embed_width(self) -> int:
        """The word embeddings' and LM head's width: `hidden` unless the config projects them (embed_dim)."""
        return self.embed_dim or self.hidden

    @property
    def embedding_params(self) -> int:
        return self.vocab * self.embed_width + self.position_embeddings * self.hidden

    @property
    def lm_head_params(self) -> int:
        return 0 if self.tied_embeddings else self.vocab * self.embed_width

    @property
    def projection_params(self) -> int:
        """OPT's project_in and project_out (no bias) between the embedding width and hidden, where they differ."""
        return 2 * self.embed_width * self.hidden if self.embed_width != self.hidden else 0

    def _layer_params(self, g: LayerGroup, active: bool) -> int:
        p = self.attention.params(self.hidden) + self.norm_params_per_layer
        if g.mlp is not None:
            p += g.mlp.params(self.hidden)
        if g.moe is not None:
            used = g.moe.top_k if active else g.moe.experts
            p += used * g.moe.expert_params(self.hidden) + g.moe.shared_params(self.hidden)
            p += g.moe.router_params(self.hidden)
        return p

    @property
    def final_norm_params(self) -> int:
        return self.final_norm_vectors * self.hidden

    @property
    def params_total(self) -> int:
        layers = sum(g.count * self._layer_params(g, active=False) for g in self.groups)
        return self.embedding_params + self.lm_head_params + self.projection_params + layers + self.final_norm_params

    @property
    def params_active(self) -> int:
        """Parameters a token touches: all but the routed experts it is not sent to."""
        layers = sum(g.count * self._layer_params(g, active=True) for g in self.groups)
        return self.embedding_params + self.lm_head_params + self.projection_params + layers + self.final_norm_params

    @property
    def expert_params(self) -> int:
        """Parameters of routed experts (sharded by expert parallelism)."""
        return sum(g.count * g.moe.experts * g.moe.expert_params(self.hidden) for g in self.groups if g.moe)

    @property
    def dense_params(self) -> int:
        """Parameters outside routed experts (sharded by tensor and pipeline parallelism)."""
        return self.params_total - self.expert_params

    # ---- FLOPs -----------------------------------------------------------------------------------------
    @property
    def matmul_params_active(self) -> int:
        """Weights each token is multiplied by (forward): decoder linears incl. router, and the LM head."""
        norms = self.layers * self.norm_params_per_layer + self.final_norm_params
        # the LM head multiplies every token whether or not its weights are tied to the embedding
        head = self.vocab * self.embed_width
        return self.params_active - self.embedding_params - self.lm_head_params - norms + head

    def matmul_flops_per_token_fwd(self) -> float:
        return 2.0 * self.matmul_params_active

    def mean_context(self, seq_len: float, window: int, chunked: bool | None = None) -> float:
        """Mean number of key positions a query attends to in causal attention over seq_len tokens: all earlier
        ones, the last `window` (a sliding window) or, `chunked`, those of its own chunk of `window` positions.
        `chunked` None: as this model's layers of that window have it (a caller that passes a group's window alone
        prices Llama 4's chunks as chunks)."""
        s = float(seq_len)
        if chunked is None:
            chunked = any(g.chunked and g.window == window for g in self.groups)
        if chunked and 0 < window < s and not self.causal:
            # chunks of w without a mask: each position sees its whole chunk, the last chunk the remaining r
            w = float(window)
            full = math.floor(s / w)
            r = s - full * w
            return (full * w * w + r * r) / s
        if not self.causal:
            return min(s, float(window)) if window > 0 else s
        if window <= 0 or window >= s:
            return (s + 1.0) / 2.0
        return float(causal_pairs(s, window, chunked)) / s

    def attention_flops_per_token_fwd(self, seq_len: float) -> float:
        """Causal attention (QK^T and AV) FLOPs per token, averaged over a sequence of seq_len tokens."""
        per_pos = self.attention.score_flops_per_position
        return float(sum(g.count * per_pos * self.mean_context(seq_len, g.window, g.chunked) for g in self.groups))

    def flops_per_token_fwd(self, seq_len: float) -> float:
        return self.matmul_flops_per_token_fwd() + self.attention_flops_per_token_fwd(seq_len)

    def training_flops_per_token(self, seq_len: float, lora: bool = False) -> float:
        """Model FLOPs per trained token: 3 x forward (backward is twice the forward), no recompute. LoRA computes no
        weight gradients: its matmuls' backward halves, attention's (dQ, dK, dV, which have no weights) stays whole."""
        if lora:
            return 2.0 * self.matmul_flops_per_token_fwd() + 3.0 * self.attention_flops_per_token_fwd(seq_len)
        return 3.0 * self.flops_per_token_fwd(seq_len)

    # ---- bytes -----------------------------------------------------------------------------------------
    def weight_bytes(self, bytes_per_param: float) -> float:
        return self.params_total * bytes_per_param

    def kv_bytes_per_token(self, bytes_per_element: float = 2.0) -> float:
        """KV-cache bytes per token of context (all layers), for contexts shorter than any attention window."""
        return self.layers * self.attention.kv_elements_per_token * bytes_per_element

    def kv_bytes(self, context: float, bytes_per_element: float = 2.0) -> float:
        """KV-cache bytes of one sequence of `context` tokens: windowed layers keep only their window (chunked ones
        at most a chunk, their bound)."""
        per = self.attention.kv_elements_per_token * bytes_per_element
        return float(sum(g.count * per * (min(context, g.window) if g.window else context) for g in self.groups))

    def check_seq_len(self, seq_len: int, what: str = "seq_len") -> None:
        """One line where `seq_len` outruns the model's context (where its config.json states one), as a training
        plan refuses it; `what` names the setting ('--seq-len')."""
        if self.max_seq_len and seq_len > self.max_seq_len:
            raise ChipwiseError(
                f"{what} {seq_len:,} is longer than {self.name}'s context of {self.max_seq_len:,} tokens. Fix: give "
                f"at most {self.max_seq_len:,}, or a model with a longer context."
            )

    @property
    def windows(self) -> list[dict[str, Any]]:
        """The windowed layers, one record per (window, kind): {'layers', 'window', 'kind': 'sliding'|'chunked'}. A
        window no shorter than the model's context is full attention (every figure already takes min(context,
        window), the context): a Phi-3 config of sliding_window 262,144 in a 131,072-token context had been shown
        'sliding 262,144' and 'KV cache per token up to 262,144'; it reads as full attention now."""
        counts: dict[tuple[int, bool], int] = {}
        for g in self.groups:
            if g.window and not 0 < self.max_seq_len <= g.window:
                counts[(g.window, g.chunked)] = counts.get((g.window, g.chunked), 0) + g.count
        return [
            {"layers": n, "window": w, "kind": "chunked" if chunked else "sliding"}
            for (w, chunked), n in sorted(counts.items())
        ]

    def summary(self, seq_len: int) -> dict[str, Any]:
        """The figures `chipwise model show` prints. KV bytes per token hold while a context is within every window;
        windowed layers keep at most their window, so a windowed model's KV at its full context is given apart (per
        token times the context had overstated gpt-oss-120b's 2x, Mistral-7B's 8x)."""
        windows = self.windows
        convention = "2 FLOPs per multiply-add; causal attention, mean context (seq_len+1)/2"
        if windows:
            convention += " in full-attention layers; sliding-window layers attend to at most their window, chunked "
            convention += "ones within the query's own chunk"
        return {
            "name": self.name,
            "alias": self.alias or None,
            "source": self.source,
            "architecture": "moe" if self.is_moe else "dense",
            "attention": self.attention.kind,
            "mlp": self.mlp_kind,
            "layers": self.layers,
            "hidden": self.hidden,
            "heads": self.attention.heads,
            "kv_heads": self.attention.kv_heads,
            "head_dim": self.attention.head_dim,
            # MLA caches a latent a layer, not kv_heads x head_dim: the ranks its KV bytes follow from
            **(
                {
                    "mla": {
                        "q_lora_rank": self.attention.q_lora_rank,
                        "kv_lora_rank": self.attention.kv_lora_rank,
                        "rope_dim": self.attention.rope_dim,
                        "v_head_dim": self.attention.v_head_dim,
                    }
                }
                if self.attention.kind == "mla"
                else {}
            ),
            "vocab": self.vocab,
            "tied_embeddings": self.tied_embeddings,
            "experts": self.moe.experts if self.moe else 0,
            "experts_per_token": self.moe.top_k if self.moe else 0,
            "shared_experts": self.moe.shared if self.moe else 0,
            "moe_layers": self.moe_layers,
            "params_total": self.params_total,
            "params_active": self.params_active,
            "params_active_convention": "incl. the input embedding (model cards often count it without)",
            "params_active_without_embedding": self.params_active - self.embedding_params,
            "seq_len": seq_len,
            "flops_per_token_fwd": self.flops_per_token_fwd(seq_len),
            "flops_per_token_fwd_matmul": self.matmul_flops_per_token_fwd(),
            "flops_per_token_fwd_attention": self.attention_flops_per_token_fwd(seq_len),
            "flops_convention": convention,
            "weight_bytes_bf16": self.weight_bytes(2.0),
            "released_precision": self.released_format or None,
            "quant_method": self.quant_method or None,
            "kv_bytes_per_token": self.kv_bytes_per_token(2.0),
            "kv_bytes_per_token_precision": "bf16",
            "kv_bytes_per_token_convention": "every layer's K and V, for a context within every attention window",
            "attention_windows": windows,
            "kv_bytes_at_context": self.kv_bytes(self.max_seq_len, 2.0) if self.max_seq_len else None,
            "context_tokens": self.max_seq_len or None,
            "mtp_layers": self.mtp_layers,
            "notes": list(self.notes),
        }


def causal_pairs(n: ArrayLike, window: int, chunked: bool = False) -> Array:
    """The (query, key) pairs of causal attention over positions 1..n of one layer (broadcasts): the query at
    position i sees i keys under full attention (`window` 0), min(i, w) under a sliding window of w (n (n + 1) / 2
    up to the window, w (w + 1) / 2 + (n - w) w past it) and, `chunked`, the ((i - 1) mod w) + 1 keys of its own chunk
    of w (Llama 4's attention_chunk_size: q w (w + 1) / 2 + r (r + 1) / 2 for n = q w + r). Full chunks average
    (w + 1) / 2 keys, not w. ModelSpec.mean_context is these over n; serve.iteration.window_pairs a prefill chunk's
    difference of two."""
    n = np.asarray(n, dtype=np.float64)
    causal = n * (n + 1.0) / 2.0
    if window <= 0:
        return np.asarray(causal, dtype=np.float64)
    w = float(window)
    if chunked:
        full = np.floor(n / w)
        r = n - full * w
        return np.asarray(full * w * (w + 1.0) / 2.0 + r * (r + 1.0) / 2.0, dtype=np.float64)
    return np.asarray(np.where(n <= w, causal, w * (w + 1.0) / 2.0 + (n - w) * w), dtype=np.float64)
