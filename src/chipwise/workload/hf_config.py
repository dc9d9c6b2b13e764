"""ModelSpec from a Hugging Face config.json (each architecture family's keys read into layer groups), from plain
dimensions, and the precision a checkpoint was released in (its quantization_config)."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from chipwise.errors import ChipwiseError
from chipwise.workload.model import MLP, Attention, LayerGroup, ModelSpec, MoE

#: the most decoder layers a config.json may give: far past any published model's (under 200), well short of
#: a count whose layer-by-layer reading would not end
MAX_LAYERS = 10_000
#: the largest size or count (hidden size, vocabulary, experts, heads) a config.json may give: far past any
#: published model's (a vocabulary of 262,144 is among the largest)
MAX_SIZE = 10_000_000
#: the longest context a config.json may state, or scale to by its rope_scaling (2**31 tokens): far past any
#: published model's (Llama 4 Scout's 10,485,760 is the longest preset); 10**30 had been printed digit by digit
MAX_CONTEXT = 2**31


def _shown(value: float) -> str:
    """A number as an error line shows it: with thousands separators, or as 1e+30 where that is long (past a
    float's range, a JSON integer of 400 digits, its power of ten: float() had overflowed)."""
    if value < 10**15:
        return f"{value:,.0f}"
    return f"{float(value):g}" if value <= sys.float_info.max else f"about 10^{math.floor(math.log10(value))}"


class _Cfg:
    """Reads keys of a config.json, turning a missing or malformed key into one clear error line."""

    def __init__(self, cfg: Mapping[str, Any], where: str) -> None:
        self.cfg = cfg
        self.where = where

    def req(self, *keys: str) -> Any:
        for k in keys:
            if k in self.cfg and self.cfg[k] is not None:
                return self.cfg[k]
        raise ChipwiseError(
            f"{self.where} lacks '{keys[0]}' (needed for model_type '{self.cfg.get('model_type', '?')}'). "
            f"Fix: add '{keys[0]}' to the config.json."
        )

    def layers(self, *keys: str) -> int:
        """The number of decoder layers, at most MAX_LAYERS (a config is read layer by layer: 10**12 of them hung)."""
        value = self._whole(*keys)
        if value > MAX_LAYERS:
            raise ChipwiseError(
                f"{self.where}: '{keys[0]}' is {value:,}, past the {MAX_LAYERS:,} layers chipwise reads (the largest "
                "published models have under 200). Fix: give the model's real layer count."
            )
        return value

    def _whole(self, *keys: str) -> int:
        """A whole number >= 0 (8192.5 had been read as 8192 without a word)."""
        return self._checked(keys[0], self.req(*keys))

    def _checked(self, key: str, value: Any, low: int = 0, bound: int | None = None) -> int:
        """`value`, of `key`, as a whole number of at least `low` and at most `bound` (where one is given), else one
        line ('4k', 8.5, a list or -1 had met a bare int(): an internal error, a truncation, a model of no size)."""
        number = not isinstance(value, bool) and isinstance(value, int | float)
        if not number or not low <= value < math.inf or value != int(value):
            kind = "non-negative" if low <= 0 else "positive"
            raise ChipwiseError(f"{self.where}: '{key}' must be a {kind} integer, got {value!r}. Fix: correct it.")
        if bound is not None and value > bound:
            raise ChipwiseError(
                f"{self.where}: '{key}' is {_shown(value)}, past the {bound:,} chipwise reads (no published model has "
                "a size or count past 300,000). Fix: give the model's real value."
            )
        return int(value)

    def pos(self, *keys: str) -> int:
        """A size or count of at least 1 (an intermediate_size of 0 had left a model with no MLP)."""
        return self._checked(keys[0], self.req(*keys), 1, MAX_SIZE)

    def opt(self, key: str, default: Any) -> Any:
        value = self.cfg.get(key)
        return default if value is None else value

    def opt_int(self, key: str, default: int, low: int = 0, bound: int | None = MAX_SIZE) -> int:
        """An optional whole number (`default` where missing or null), checked as a required one is."""
        value = self.cfg.get(key)
        return default if value is None else self._checked(key, value, low, bound)

    def unset_int(self, key: str, default: int) -> int:
        """A whole number where the key is missing takes `default` (Hugging Face's), where it is null 0: None is the
        part left out there (DeepSeek's q_lora_rank null, a full-rank query projection), not the default."""
        value = self.cfg.get(key, default)
        return 0 if value is None else self._checked(key, value, 0, MAX_SIZE)

    def opt_bool(self, key: str, default: bool) -> bool:
        """An optional JSON true or false (the string "false" had read as true)."""
        value = self.cfg.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ChipwiseError(
                f"{self.where}: '{key}' must be true or false, got {value!r}. Fix: give a JSON true or false."
            )
        return value

    def context(self, key: str) -> int:
        """The context length the config states (0 where it states none; -1 had passed as a context of -1), scaled
        by its rope_scaling as vLLM derives max_model_len (vllm/config.py `_get_and_verify_max_len`): a type other
        than su, longrope and llama3 multiplies it by `factor`, and yarn starts from original_max_position_embeddings
        (Qwen's model cards add yarn x4 over 32,768 for 131,072 tokens; DeepSeek-V3's 4,096 x 40 is its own 163,840)."""
        stated = self._tokens(f"'{key}'", self.opt_int(key, 0, low=1, bound=None))
        rope = self.cfg.get("rope_scaling")
        if rope is None or not stated:
            return stated
        if not isinstance(rope, Mapping):
            raise ChipwiseError(f"{self.where}: 'rope_scaling' must be an object, got {rope!r}. Fix: correct it.")
        kind = str(rope.get("rope_type", rope.get("type", "default"))).lower()
        if kind in ("su", "longrope", "llama3"):
            return stated
        scaled = _Cfg(rope, f"{self.where} rope_scaling")
        factor = scaled.opt("factor", 1.0)
        if isinstance(factor, bool) or not isinstance(factor, int | float) or not 0 < factor < math.inf:
            raise ChipwiseError(
                f"{self.where}: rope_scaling 'factor' must be a positive number, got {factor!r}. Fix: correct it."
            )
        base = (
            scaled.opt_int("original_max_position_embeddings", stated, low=1, bound=None) if kind == "yarn" else stated
        )
        return self._tokens(f"'{key}' scaled by rope_scaling 'factor'", base * factor)

    def _tokens(self, what: str, tokens: float) -> int:
        """A context of at most MAX_CONTEXT tokens, else one line naming `what` states it."""
        if tokens > MAX_CONTEXT:
            raise ChipwiseError(
                f"{self.where}: {what} gives a context of {_shown(tokens)} tokens, past the {MAX_CONTEXT:,} chipwise "
                "reads (the longest published contexts are about 10 million). Fix: give the model's real context."
            )
        return int(tokens)

    def window(self, key: str, default: int | None = None) -> int:
        """A sliding-window or chunk size: 0 (none) where null, or missing with no `default`; else positive."""
        value = self.cfg.get(key, default)
        return 0 if value is None else self._checked(key, value, low=1)

    def top_k(self, experts: int, experts_key: str, *keys: str) -> int:
        """The experts each token is routed to: 1 to `experts` (16 of 8 had made active exceed total parameters)."""
        k = self.pos(*keys)
        if k > experts:
            raise ChipwiseError(
                f"{self.where}: '{keys[0]}' is {k}, more than the {experts} experts of '{experts_key}'. Fix: give at "
                f"most {experts}."
            )
        return k

    def indices(self, key: str, layers: int) -> set[int] | None:
        """An optional list of layer indices, each below `layers` (None where the config gives none): Llama 4's
        moe_layers [100, 200] on 48 layers had read as a dense 17 B model."""
        value = self.cfg.get(key)
        if value is None:
            return None
        whole = isinstance(value, list) and all(
            not isinstance(i, bool) and isinstance(i, int | float) and 0 <= i < layers and i == int(i) for i in value
        )
        if not whole:
            raise ChipwiseError(
                f"{self.where}: '{key}' must be a list of layer indices (whole numbers from 0 to {layers - 1}), got "
                f"{value!r}. "
                "Fix: correct it."
            )
        return {int(i) for i in value}

    def flags(self, key: str) -> list[bool] | None:
        """An optional list of per-layer 0/1 (or true/false) flags (None where the config gives none)."""
        value = self.cfg.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(v in (0, 1) for v in value):
            raise ChipwiseError(
                f"{self.where}: '{key}' must be a list of 0 and 1, one per layer, got {value!r}. Fix: correct it."
            )
        return [bool(v) for v in value]

    def layer_types(self, layers: int, kinds: tuple[str, ...]) -> list[str] | None:
        """config.json's layer_types, one of `kinds` per layer (None where the config gives none)."""
        value = self.cfg.get("layer_types")
        if value is None:
            return None
        if not isinstance(value, list):
            problem = f"must be a list, got {value!r}"
        elif len(value) != layers:
            problem = f"lists {len(value)} layers where the model has {layers}"
        else:
            odd = next((v for v in value if v not in kinds), None)
            if odd is None:
                return value
            problem = f"holds {odd!r}, which chipwise does not read"
        raise ChipwiseError(
            f"{self.where}: 'layer_types' {problem}. Fix: give one of {', '.join(kinds)} for each of the {layers} "
            "layers, or leave layer_types out."
        )

    # last: the annotations above read the builtin int
    def int(self, *keys: str) -> int:
        """A size or count, at most MAX_SIZE (a hidden size of 1e30 had printed nonillions of parameters)."""
        return self._checked(keys[0], self.req(*keys), 0, MAX_SIZE)


#: config.json layer_types' names for a layer's attention
SLIDING, FULL, CHUNKED = "sliding_attention", "full_attention", "chunked_attention"


def _group_layers(n_layers: int, describe: Callable[[int], LayerGroup]) -> tuple[LayerGroup, ...]:
    """The layers `describe` gives one by one (each a LayerGroup of count 1), identical ones counted together."""
    counts: dict[LayerGroup, int] = {}
    for i in range(n_layers):
        key = describe(i)
        counts[key] = counts.get(key, 0) + 1
    return tuple(replace(k, count=c) for k, c in counts.items())


def _heads(c: _Cfg, hidden: int, *keys: str, head_dim: int | None = None, reads_head_dim: bool = True) -> int:
    """The attention heads under `keys`, at least one (GPT-2, MPT and OPT configs of 0 heads had divided by zero).
    Without a head width (`head_dim`, the model's default, or the config's head_dim where the model reads one:
    `reads_head_dim`) each head is hidden / heads wide, so the heads must split the hidden size: GPT-2 small over 5
    heads had been priced with heads of 153 (124.33 M parameters), a model Hugging Face refuses to build."""
    heads = c.pos(*keys)
    given = head_dim is not None or (reads_head_dim and c.cfg.get("head_dim") is not None)
    if not given and hidden % heads:
        raise ChipwiseError(
            f"{c.where}: hidden size {hidden} is not a whole number of {heads} heads"
            + (" and no head_dim is given" if reads_head_dim else "")
            + f". Fix: correct the hidden size or '{keys[0]}'"
            + (", or give head_dim." if reads_head_dim else ".")
        )
    return heads


def _standard_attention(
    c: _Cfg, hidden: int, bias: bool = False, out_bias: bool = False, head_dim: int | None = None
) -> Attention:
    """Multi-head, grouped-query or multi-query attention; `head_dim` is the default where the config gives none
    (else hidden / heads)."""
    heads = _heads(c, hidden, "num_attention_heads", "n_head", "n_heads", head_dim=head_dim)
    kv = c.opt_int("num_key_value_heads", heads)
    if kv < 1 or heads % kv:
        # grouped-query attention shares each KV head among heads / kv query heads: 32 heads over 3 KV heads is
        # no model (it was accepted, and its KV cache priced at 3 heads)
        raise ChipwiseError(
            f"{c.where}: {heads} attention heads over {kv} key-value heads: the KV heads must divide the heads. "
            "Fix: correct num_attention_heads or num_key_value_heads."
        )
    dim = c.opt_int("head_dim", hidden // heads if head_dim is None else head_dim, low=1)
    kind = "mha" if kv == heads else ("mqa" if kv == 1 else "gqa")
    return Attention(kind=kind, heads=heads, kv_heads=kv, head_dim=dim, v_head_dim=dim, bias=bias, out_bias=out_bias)


def _mha(c: _Cfg, hidden: int, *keys: str, bias: bool = True) -> Attention:
    """Multi-head attention of heads hidden / heads wide (GPT-2, MPT and OPT read no head_dim nor KV heads)."""
    heads = _heads(c, hidden, *keys, reads_head_dim=False)
    dim = hidden // heads
    return Attention(kind="mha", heads=heads, kv_heads=heads, head_dim=dim, v_head_dim=dim, bias=bias, out_bias=bias)


#: llama-like model types whose sliding_window, where set, windows every layer (Hugging Face's Mistral, Mixtral
#: and Phi-3 attention)
_WINDOW_EVERY_LAYER = ("mistral", "mixtral", "phi3")
#: Qwen model types: windowed only with use_sliding_window, and then in the layers past max_window_layers
_QWEN = ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe")


def _llama_windows(c: _Cfg, model_type: str, layers: int) -> list[int]:
    """Each layer's sliding window (0: full attention) as Hugging Face reads the config. Mistral, Mixtral and
    Phi-3 window every layer where sliding_window is set (null: none). Qwen2/Qwen3, dense and MoE, window only
    with use_sliding_window true: the layers layer_types calls sliding_attention, or else layers max_window_layers
    onwards (the first max_window_layers keep full attention). Llama has no window."""
    if model_type in _WINDOW_EVERY_LAYER:
        # MistralConfig's default where the key is missing is 4,096 (transformers models/mistral/
        # configuration_mistral.py); MixtralConfig's and Phi3Config's is None
        return [c.window("sliding_window", 4096 if model_type == "mistral" else None)] * layers
    if model_type not in _QWEN or not c.opt_bool("use_sliding_window", False):
        return [0] * layers
    window = c.window("sliding_window", 4096)  # Qwen2Config's default where the key is missing
    types = c.layer_types(layers, (SLIDING, FULL))
    if types is None:
        first = c.opt_int("max_window_layers", 28, bound=None)  # Qwen2Config's default
        types = [SLIDING if i >= first else FULL for i in range(layers)]
    return [window if t == SLIDING else 0 for t in types]


def _llama_like(c: _Cfg, name: str) -> ModelSpec:
    """Llama and the decoders built like it (Mistral, Mixtral, Qwen2/Qwen3 dense and MoE, Phi-3). Their MLPs and
    experts are gated (gate, up and down projections) whatever hidden_act says: it only picks the gate's activation
    (a Llama of hidden_act gelu had been read as a plain 2-matrix MLP, 21% of its parameters short)."""
    hidden = c.int("hidden_size")
    layers = c.layers("num_hidden_layers")
    mt = str(c.opt("model_type", "llama"))
    bias = c.opt_bool("attention_bias", False)
    # Qwen2 and Qwen2-MoE bias their query, key and value projections, never the output; Llama and Qwen3 bias all
    # four or none
    qkv_bias = mt in ("qwen2", "qwen2_moe")
    att = _standard_attention(c, hidden, bias=bias or qkv_bias, out_bias=bias and not qkv_bias)
    act = "gelu" if str(c.opt("hidden_act", "silu")).lower().startswith("gelu") else "silu"
    moe: MoE | None = None
    mlp_bias = c.opt_bool("mlp_bias", False)
    # null as missing: a qwen3_moe config of intermediate_size null, no layer of it dense, had been refused
    dense = MLP(c.pos("intermediate_size"), True, mlp_bias, act) if c.cfg.get("intermediate_size") is not None else None
    sparse_step = 1
    mlp_only: set[int] = set()
    if mt == "mixtral" or "num_local_experts" in c.cfg:
        experts = c.pos("num_local_experts")
        moe = MoE(experts, c.top_k(experts, "num_local_experts", "num_experts_per_tok"), c.pos("intermediate_size"))
    elif mt in ("qwen2_moe", "qwen3_moe") or "num_experts" in c.cfg:
        experts = c.pos("num_experts")
        shared_ffn = c.opt_int("shared_expert_intermediate_size", 0)
        moe = MoE(
            experts,
            c.top_k(experts, "num_experts", "num_experts_per_tok"),
            c.pos("moe_intermediate_size"),
            shared=1 if shared_ffn else 0,
            shared_ffn=shared_ffn,
            shared_gate=mt == "qwen2_moe" and shared_ffn > 0,  # Qwen2-MoE's shared_expert_gate, hidden x 1
        )
        sparse_step = c.opt_int("decoder_sparse_step", 1, low=1)  # 0 had read as 1 (HF divides by it)
        mlp_only = c.indices("mlp_only_layers", layers) or set()
    windows = _llama_windows(c, mt, layers)

    def describe(i: int) -> LayerGroup:
        if moe is not None and i not in mlp_only and (i + 1) % sparse_step == 0:
            return LayerGroup(1, moe=moe, window=windows[i])
        if dense is None:
            raise ChipwiseError(
                f"{c.where}: dense layer {i} needs 'intermediate_size'. Fix: add it to the config.json."
            )
        return LayerGroup(1, mlp=dense, window=windows[i])

    return ModelSpec(
        name=name,
        hidden=hidden,
        vocab=c.int("vocab_size"),
        attention=att,
        groups=_group_layers(layers, describe),
        tied_embeddings=c.opt_bool("tie_word_embeddings", False),
        norm_params_per_layer=2 * hidden + (2 * att.head_dim if mt.startswith("qwen3") else 0),
        max_seq_len=c.context("max_position_embeddings"),
    )


def _gemma2(c: _Cfg, name: str) -> ModelSpec:
    """Gemma 2: GeGLU MLPs (gated, gelu_pytorch_tanh), tied embeddings, head_dim 256, four RMSNorms a layer (before
    and after attention and the MLP), and a sliding window (4,096) in every other layer from the first
    (layer_types where the config gives them). Gemma-2-9B counts 9,241,705,984 parameters. Its attention and
    final-logit soft-capping cost next to nothing and are not priced."""
    hidden = c.int("hidden_size")
    layers = c.layers("num_hidden_layers")
    bias = c.opt_bool("attention_bias", False)
    att = _standard_attention(c, hidden, bias=bias, out_bias=bias, head_dim=256)
    mlp = MLP(c.pos("intermediate_size"), gated=True, act="gelu")
    window = c.window("sliding_window", 4096)  # Gemma2Config's default where the key is missing
    types = c.layer_types(layers, (SLIDING, FULL))
    sliding = [t == SLIDING for t in types] if types is not None else [i % 2 == 0 for i in range(layers)]
    return ModelSpec(
        name=name,
        hidden=hidden,
        vocab=c.int("vocab_size"),
        attention=att,
        groups=_group_layers(layers, lambda i: LayerGroup(1, mlp=mlp, window=window if sliding[i] else 0)),
        tied_embeddings=c.opt_bool("tie_word_embeddings", True),
        norm_params_per_layer=4 * hidden,
        max_seq_len=c.context("max_position_embeddings"),
    )


def _deepseek(c: _Cfg, name: str) -> ModelSpec:
    """DeepSeek-V2/V3 (and Kimi K2): MLA attention, routed and shared experts, the first layers dense. The latent
    (kv_lora_rank), the keys' part decompressed from it (qk_nope_head_dim) and the value heads (v_head_dim) are at
    least 1, as a Llama's head_dim is: a kv_lora_rank of 0 had priced DeepSeek-V3's KV cache at 7.62 KiB a token
    (61 layers x 64 rope x 2 B; it reads 70,272 B, 61 x (512 + 64) x 2). The decoupled RoPE key (qk_rope_head_dim)
    may be 0, an MLA without position embeddings (NoPE), whose cache is the latent alone; q_lora_rank null or 0 is a
    full-rank query projection (DeepSeek-V2-Lite)."""
    hidden = c.int("hidden_size")
    layers = c.layers("num_hidden_layers")
    heads = c.int("num_attention_heads")
    nope, rope = c.pos("qk_nope_head_dim"), c.int("qk_rope_head_dim")
    # DeepseekV3Config's defaults where the keys are missing (transformers models/deepseek_v3/
    # configuration_deepseek_v3.py: q_lora_rank 1536, n_shared_experts 1, first_k_dense_replace 3; Kimi K2 ships
    # that class): DeepSeek-V3 without them had read 708.9 B / 42.6 B, it reads 671.0 B / 37.6 B. DeepSeek-V2 keeps
    # 0 for each: DeepSeek's own configuration_deepseek.py (n_shared_experts None) and transformers'
    # DeepseekV2Config (2) disagree, and its published configs state all three
    v3 = str(c.opt("model_type", "")).lower() in ("deepseek_v3", "kimi_k2")
    att = Attention(
        kind="mla",
        heads=heads,
        kv_heads=heads,
        head_dim=nope + rope,
        v_head_dim=c.pos("v_head_dim"),
        q_lora_rank=c.unset_int("q_lora_rank", 1536 if v3 else 0),
        kv_lora_rank=c.pos("kv_lora_rank"),
        rope_dim=rope,
    )
    experts = c.pos("n_routed_experts")
    moe = MoE(
        experts,
        c.top_k(experts, "n_routed_experts", "num_experts_per_tok"),
        c.pos("moe_intermediate_size"),
        shared=c.unset_int("n_shared_experts", 1 if v3 else 0),
        shared_ffn=c.pos("moe_intermediate_size"),
    )
    dense = MLP(c.pos("intermediate_size"))
    first_dense = c.opt_int("first_k_dense_replace", 3 if v3 else 0, bound=None)
    freq = c.opt_int("moe_layer_freq", 1, low=1)  # 0 had read as 1 (HF divides by it)
    spec = ModelSpec(
        name=name,
        hidden=hidden,
        vocab=c.int("vocab_size"),
        attention=att,
        groups=_group_layers(
            layers,
            lambda i: LayerGroup(1, moe=moe) if i >= first_dense and i % freq == 0 else LayerGroup(1, mlp=dense),
        ),
        tied_embeddings=c.opt_bool("tie_word_embeddings", False),
        norm_params_per_layer=2 * hidden,
        max_seq_len=c.context("max_position_embeddings"),
        mtp_layers=c.opt_int("num_nextn_predict_layers", 0),
    )
    mtp = spec.mtp_layers
    if mtp:
        note = f"{mtp} multi-token-prediction layer(s) in the checkpoint are not counted (nor in the published total)"
        spec = _with_notes(spec, note)
    return spec


def _gpt_oss(c: _Cfg, name: str) -> ModelSpec:
    hidden = c.int("hidden_size")
    layers = c.layers("num_hidden_layers")
    # the heads and KV heads under the Llama path's check: 0 KV heads had priced a KV cache of 0 B (and a NaN), 7
    # over 64 heads 7 heads' cache; num_key_value_heads is required, Hugging Face's default being 8, not the heads
    c.req("num_key_value_heads")
    att = _standard_attention(c, hidden, bias=True, out_bias=True, head_dim=64)
    experts = c.pos("num_local_experts")
    moe = MoE(
        experts,
        c.top_k(experts, "num_local_experts", "num_experts_per_tok", "experts_per_token"),
        c.pos("intermediate_size"),
        gated=True,
        bias=True,
    )
    # GptOssConfig's defaults where the keys are missing (transformers models/gpt_oss/configuration_gpt_oss.py): a
    # 128-token window on the even layers (layer_types sliding where (i + 1) % 2); a config without them had been
    # read as full attention in every layer, its KV cache at 131,072 tokens doubled
    window = c.window("sliding_window", 128)
    types = c.layer_types(layers, (SLIDING, FULL))

    def describe(i: int) -> LayerGroup:
        sliding = types[i] == SLIDING if types is not None else i % 2 == 0
        return LayerGroup(1, moe=moe, window=window if sliding else 0)

    return ModelSpec(
        name=name,
        hidden=hidden,
        vocab=c.int("vocab_size"),
        attention=att,
        groups=_group_layers(layers, describe),
        tied_embeddings=c.opt_bool("tie_word_embeddings", False),
        norm_params_per_layer=2 * hidden + att.heads,  # two RMSNorms and the attention sinks
        max_seq_len=c.context("max_position_embeddings"),
    )


def _llama4(c: _Cfg, name: str) -> ModelSpec:
    """Llama 4: its RoPE layers attend within chunks of attention_chunk_size (a query sees its own chunk only, not
    a sliding window), the NoPE layers (every fourth by default) over the whole context."""
    text = c.cfg.get("text_config", c.cfg)
    if not isinstance(text, Mapping):
        raise ChipwiseError(
            f"{c.where}: 'text_config' must be an object (the language model's config), got {text!r}. Fix: correct it."
        )
    # its messages name the type read: a text_config without its own had been "needed for model_type '?'"
    t = _Cfg({"model_type": c.cfg.get("model_type", "llama4"), **text}, c.where)
    hidden = t.int("hidden_size")
    layers = t.layers("num_hidden_layers")
    att = _standard_attention(t, hidden)
    experts = t.pos("num_local_experts")
    moe = MoE(
        experts,
        t.top_k(experts, "num_local_experts", "num_experts_per_tok"),
        t.pos("intermediate_size"),
        shared=1,
        shared_ffn=t.pos("intermediate_size"),
    )
    # Llama4TextConfig's defaults where the keys are missing (transformers models/llama4/configuration_llama4.py:
    # intermediate_size_mlp 16384, attention_chunk_size 8192): Scout without attention_chunk_size had read as full
    # attention in every layer, and without intermediate_size_mlp had been refused, though all its layers are MoE
    dense = MLP(t.opt_int("intermediate_size_mlp", 16384, low=1))
    step = t.opt_int("interleave_moe_layer_step", 1, low=1)  # 0 had read as 1
    moe_layers = t.indices("moe_layers", layers)
    chunk = t.window("attention_chunk_size", 8192)
    types = t.layer_types(layers, (CHUNKED, FULL))
    no_rope = t.flags("no_rope_layers")
    interval = t.opt_int("no_rope_layer_interval", 4, low=1)

    def describe(i: int) -> LayerGroup:
        is_moe = i in moe_layers if moe_layers is not None else (i + 1) % step == 0
        # no_rope_layers: 1 = RoPE layer with chunked attention, 0 = global NoPE layer (every 4th by default)
        if types is not None:
            chunked = types[i] == CHUNKED
        else:
            chunked = no_rope[i] if no_rope and i < len(no_rope) else (i + 1) % interval != 0
        w = chunk if chunked else 0
        return (
            LayerGroup(1, moe=moe, window=w, chunked=w > 0) if is_moe else LayerGroup(1, dense, window=w, chunked=w > 0)
        )

    return ModelSpec(
        name=name,
        hidden=hidden,
        vocab=t.int("vocab_size"),
        attention=att,
        groups=_group_layers(layers, describe),
        tied_embeddings=t.opt_bool("tie_word_embeddings", False),
        norm_params_per_layer=2 * hidden,
        max_seq_len=t.context("max_position_embeddings"),
    )


def _gpt2(c: _Cfg, name: str) -> ModelSpec:
    hidden = c.int("n_embd", "hidden_size")
    att = _mha(c, hidden, "n_head", "num_attention_heads")
    ffn = c.opt_int("n_inner", 4 * hidden, low=1)
    return ModelSpec(
        name=name,
        hidden=hidden,
        vocab=c.int("vocab_size"),
        attention=att,
        groups=(LayerGroup(count=c.layers("n_layer", "num_hidden_layers"), mlp=MLP(ffn, gated=False, bias=True)),),
        tied_embeddings=c.opt_bool("tie_word_embeddings", True),
        position_embeddings=c.context("n_positions"),
        norm_params_per_layer=4 * hidden,
        final_norm_vectors=2,  # ln_f, a LayerNorm with bias: GPT-2 small counts 124,439,808
        max_seq_len=c.context("n_positions"),
    )


def _mpt(c: _Cfg, name: str) -> ModelSpec:
    hidden = c.int("d_model")
    att = _mha(c, hidden, "n_heads", bias=False)
    ratio = c.opt("expansion_ratio", 4)
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not 0 < ratio * hidden < math.inf:
        raise ChipwiseError(f"{c.where}: 'expansion_ratio' must be a positive number, got {ratio!r}. Fix: correct it.")
    return ModelSpec(
        name=name,
        hidden=hidden,
        vocab=c.int("vocab_size"),
        attention=att,
        groups=(LayerGroup(count=c.layers("n_layers"), mlp=MLP(max(1, int(float(ratio) * hidden)), gated=False)),),
        tied_embeddings=True,
        norm_params_per_layer=2 * hidden,
        max_seq_len=c.context("max_seq_len"),
    )


def _opt(c: _Cfg, name: str) -> ModelSpec:
    hidden = c.int("hidden_size")
    att = _mha(c, hidden, "num_attention_heads")
    context = c.context("max_position_embeddings")
    remove_final = c.opt_bool("_remove_final_layer_norm", False)
    return ModelSpec(
        name=name,
        hidden=hidden,
        vocab=c.int("vocab_size"),
        attention=att,
        groups=(LayerGroup(count=c.layers("num_hidden_layers"), mlp=MLP(c.pos("ffn_dim"), gated=False, bias=True)),),
        tied_embeddings=c.opt_bool("tie_word_embeddings", True),
        position_embeddings=(context or 2048) + 2,
        norm_params_per_layer=4 * hidden,
        # final_layer_norm (weight and bias) exists only with do_layer_norm_before (OPTDecoder): OPT-350m, a
        # post-norm model, has none
        final_norm_vectors=2 if c.opt_bool("do_layer_norm_before", True) and not remove_final else 0,
        max_seq_len=context,
        embed_dim=c.opt_int("word_embed_proj_dim", hidden, low=1),
    )


_BUILDERS: dict[str, Callable[[_Cfg, str], ModelSpec]] = {
    "llama": _llama_like,
    "mistral": _llama_like,
    "mixtral": _llama_like,
    "qwen2": _llama_like,
    "qwen3": _llama_like,
    "qwen2_moe": _llama_like,
    "qwen3_moe": _llama_like,
    "phi3": _llama_like,  # Phi-3 and Phi-4: Llama's shapes, with fused qkv and gate-up projections
    "gemma2": _gemma2,
    "deepseek_v3": _deepseek,
    "kimi_k2": _deepseek,  # Kimi K2's config.json names DeepseekV3ForCausalLM under its own model_type
    "deepseek_v2": _deepseek,
    "gpt_oss": _gpt_oss,
    "llama4": _llama4,
    "llama4_text": _llama4,
    "gpt2": _gpt2,
    "mpt": _mpt,
    "opt": _opt,
}


def _with_notes(spec: ModelSpec, *notes: str) -> ModelSpec:
    return replace(spec, notes=(*spec.notes, *notes))


#: what a config.json without a model_type needs to be read as a Llama-type decoder
_LLAMA_KEYS = {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"}
#: a nested text_config's model_types read as Llama 4 (with none: Llama 4 is the type chipwise reads that nests one)
_LLAMA4_TEXT = ("", "llama4", "llama4_text")


def _nested_text(cfg: Mapping[str, Any], where: str) -> tuple[_Cfg, str, tuple[str, ...]]:
    """The config to read, its model_type and the note saying so, for a config.json with no model_type of its own
    that nests a text_config: the text_config's own model_type decides. Every such config had been read as Llama 4:
    a nested Mixtral was told it "lacks 'intermediate_size_mlp' (needed for model_type 'mixtral')", and given one,
    read as 52.34 B parameters / 18.52 B active (a shared expert, no window) where the flat config reads 46.70 B /
    12.88 B, as it now does; a nested Llama was asked for 'num_local_experts', a nested gemma3_text too (now refused
    as unsupported, as a top-level gemma3 is). Llama 4 where the nested type is llama4 or llama4_text, or absent."""
    text = cfg["text_config"]
    nested = str(text.get("model_type") or "").lower() if isinstance(text, Mapping) else ""
    if nested in _LLAMA4_TEXT:
        # said as a Llama read for a config with none is: a nested text_config with no type had been read as
        # Llama 4 in silence, and a dense one told to add Llama 4's experts "for model_type '?'"
        note = "the config.json names no model_type and nests a text_config: read as Llama 4 (llama4)"
        return _Cfg({**cfg, "model_type": "llama4"}, where), "llama4", (note,)
    note = f"the config.json names no model_type and nests a text_config of model_type '{nested}': read as that"
    return _Cfg(text, where), nested, (note,)


def from_hf_config(cfg: Mapping[str, Any], name: str, where: str = "config.json", source: str = "") -> ModelSpec:
    """Build a ModelSpec from a Hugging Face config.json mapping. A model_type chipwise does not read is one line
    (Gemma had been read as a Llama: 7.08 B parameters for 9.24 B); a config with none is read as a Llama, noted."""
    c = _Cfg(cfg, where)
    model_type = str(c.opt("model_type", "")).lower()
    notes: tuple[str, ...] = ()
    if not model_type and "text_config" in cfg:
        c, model_type, notes = _nested_text(cfg, where)
    builder = _BUILDERS.get(model_type)
    if builder is None:
        supported = ", ".join(sorted(_BUILDERS))
        if model_type:
            raise ChipwiseError(
                f"{where}: model_type '{model_type}' is not supported (chipwise reads {supported}). Fix: give the "
                "config.json of a model of one of those types."
            )
        if not set(cfg) >= _LLAMA_KEYS:
            raise ChipwiseError(
                f"{where}: model_type '(missing)' is not supported. Fix: use a config of type {supported}, or one "
                "with hidden_size, num_hidden_layers, num_attention_heads and intermediate_size."
            )
        builder = _llama_like
        notes = ("the config.json names no model_type: read as a Llama (gated MLP, full attention)",)
    spec = builder(c, name)
    sizes = {"hidden_size": spec.hidden, "vocab_size": spec.vocab, "num_attention_heads": spec.attention.heads}
    sizes["num_hidden_layers"] = sum(g.count for g in spec.groups)
    for key, value in sizes.items():  # a zero size left a model of no parameters to divide by
        if value <= 0:
            raise ChipwiseError(f"{where}: '{key}' must be positive, got {value}. Fix: correct it.")
    mtp = spec.mtp_layers or c.opt_int("num_nextn_predict_layers", 0)  # MTP modules of any architecture
    spec = _with_notes(spec, *notes) if notes else spec
    return replace(
        spec,
        source=source or where,
        released_format=released_precision(cfg, where),
        quant_method=quant_method(cfg),
        mtp_layers=mtp,
    )


#: config.json quantization_config quant_method -> the weight precision chipwise prices it as, for the formats
#: whose method alone names it
RELEASED_FORMATS = {"fp8": "fp8", "fbgemm_fp8": "fp8", "mxfp4": "mxfp4"}
#: (type, bits) of a compressed-tensors weight -> chipwise's precision: int4 is weight-only (W4A16), int8 W8A8 (its
#: activations int8 too; w8a16 where no group quantises them), float 8 FP8 (E4M3) and float 4 NVFP4 (E2M1, group 16)
_WEIGHT_FORMATS = {("int", 4): "int4", ("int", 8): "int8", ("float", 8): "fp8", ("float", 4): "fp4"}
#: NVIDIA ModelOpt quant_algo -> chipwise's precision
_MODELOPT_ALGOS = {"fp8": "fp8", "fp8_pb_wo": "fp8", "nvfp4": "fp4"}


def released_precision(cfg: Mapping[str, Any], where: str = "config.json") -> str:
    """The weights a config.json's checkpoint ships: its quantization_config's format (DeepSeek-V3/R1 fp8 blocks,
    gpt-oss mxfp4 experts, AWQ/GPTQ int4, compressed-tensors, ModelOpt, bitsandbytes), 16-bit where it has none,
    '' where chipwise cannot map it (read as bf16, a 4-bit AWQ 70B had been sized at 141 GB)."""
    quant = cfg.get("quantization_config")
    if quant is None:
        return "bf16"
    method = quant_method(cfg)
    found = RELEASED_FORMATS.get(method) or (_quantised(method, quant, where) if isinstance(quant, Mapping) else None)
    return found or ""


def _scalar(quant: Mapping[str, Any], key: str, where: str, expected: str) -> Any:
    """quantization_config's `key`: a number or a name (one a table maps, or not: then --precision is asked for),
    or missing; a list, object or true/false is one line (bits [4] had been an internal error, unhashable)."""
    value = quant.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float | str | None):
        raise ChipwiseError(f"{where}: quantization_config '{key}' must be {expected}, got {value!r}. Fix: correct it.")
    return value


def quant_method(cfg: Mapping[str, Any]) -> str:
    """config.json's quantization_config quant_method, lower case ('' where it has none)."""
    quant = cfg.get("quantization_config")
    return str(quant.get("quant_method", "")).lower() if isinstance(quant, Mapping) else ""


def _quantised(method: str, quant: Mapping[str, Any], where: str) -> str | None:
    """chipwise's precision of a quantization_config whose method needs its other keys read (None: unknown)."""
    if method in ("awq", "gptq"):  # weight-only (W4A16, W8A16): the activations stay 16-bit
        return {4: "int4", 8: "w8a16"}.get(_scalar(quant, "bits", where, "a number of bits, 4 or 8"))
    if method == "compressed-tensors":
        raw = quant.get("config_groups")
        groups = [g for g in raw.values() if isinstance(g, Mapping)] if isinstance(raw, Mapping) else []
        weights = [w for g in groups if isinstance(w := g.get("weights"), Mapping)]
        bits = "a number of bits, 4 or 8"
        kinds = {(_scalar(w, "type", where, "int or float"), _scalar(w, "num_bits", where, bits)) for w in weights}
        found = _WEIGHT_FORMATS.get(kinds.pop()) if len(kinds) == 1 else None
        return "w8a16" if found == "int8" and not any(g.get("input_activations") for g in groups) else found
    if method == "modelopt":
        nested = quant.get("quantization")
        algo = quant.get("quant_algo") or (nested.get("quant_algo") if isinstance(nested, Mapping) else None)
        return _MODELOPT_ALGOS.get(str(algo).lower())
    if method == "bitsandbytes":  # NF4/FP4 blocks of 64 or int8 rows, dequantised in the kernel: weight-only
        return "int4" if quant.get("load_in_4bit") is True else ("w8a16" if quant.get("load_in_8bit") is True else None)
    return None


def from_dims(
    name: str,
    layers: int,
    hidden: int,
    heads: int,
    ffn: int | None = None,
    kv_heads: int | None = None,
    vocab: int = 32000,
    gated: bool = True,
    tied: bool = False,
    experts: int = 0,
    top_k: int = 0,
    causal: bool = True,
    head_dim: int | None = None,
) -> ModelSpec:
    """A model from its main dimensions (a benchmark table's columns), for runs without a config.json. `head_dim`
    is for a model whose query width heads x head_dim is not its hidden size (MaxText's head_dim 128 whatever the
    heads); hidden // heads without it."""
    for label, value in (("layers", layers), ("hidden", hidden), ("heads", heads)):
        if value <= 0:
            raise ChipwiseError(f"model '{name}': {label} must be positive, got {value}. Fix: correct it.")
    kv = kv_heads or heads
    width = ffn or (int(8 * hidden / 3) if gated else 4 * hidden)
    per_head = head_dim or hidden // heads
    att = Attention(
        kind="mha" if kv == heads else ("mqa" if kv == 1 else "gqa"),
        heads=heads,
        kv_heads=kv,
        head_dim=per_head,
        v_head_dim=per_head,
    )
    group = (
        LayerGroup(count=layers, moe=MoE(experts, top_k, width, gated=gated))
        if experts
        else LayerGroup(count=layers, mlp=MLP(width, gated))
    )
    return ModelSpec(
        name=name,
        hidden=hidden,
        vocab=vocab,
        attention=att,
        groups=(group,),
        tied_embeddings=tied,
        norm_params_per_layer=2 * hidden,
        source="dimensions given by the user or a benchmark table",
        causal=causal,
    )
