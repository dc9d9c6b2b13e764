"""The model a published table's name means: a preset (by id or alias, with release tags, tuning and quantisation
suffixes dropped), a config variant of one, a preset of the same architecture, or a published shape. Training and
serving rows read names through this one table, so a model gets the same shape and context on both sides."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.workload.hf_config import from_hf_config
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model, preset_id

#: OPT shapes (Zhang et al. 2022, "OPT: Open Pre-trained Transformer Language Models", Table 1; vocabulary 50272,
#: 2048 learned positions, as in the Hugging Face facebook/opt-* configs).
OPT_SHAPES: Mapping[str, tuple[int, int, int, int]] = {
    "opt-13b": (40, 5120, 40, 20480),
    "opt-30b": (48, 7168, 56, 28672),
    "opt-66b": (64, 9216, 72, 36864),
}
#: Models served in the data whose architecture equals a preset's (what differs does not change the cost).
ARCH_EQUIVALENT: Mapping[str, tuple[str, str]] = {
    "codellama-13b": ("llama-2-13b", "CodeLlama-13B has Llama 2 13B's shape (vocabulary 32016 vs 32000)"),
    "llama-3.1-nemotron-70b": (
        "llama-3.1-70b",
        "Llama-3.1-Nemotron-70B-Instruct is Llama 3.1 70B fine-tuned (RLHF) without a change of shape (huggingface "
        "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF model card: network architecture Llama 3.1)",
    ),
    "deepseek-r1-distill-llama-70b": (
        "llama-3.3-70b",
        "DeepSeek-R1-Distill-Llama-70B is Llama-3.3-70B-Instruct fine-tuned on DeepSeek-R1 samples (DeepSeek-R1 "
        "README, distilled models table: base model Llama-3.3-70B-Instruct)",
    ),
    "deepseek-r1-distill-llama-8b": (
        "llama-3.1-8b",
        "DeepSeek-R1-Distill-Llama-8B is Llama-3.1-8B fine-tuned on DeepSeek-R1 samples (DeepSeek-R1 README, "
        "distilled models table: base model Llama-3.1-8B)",
    ),
    "deepseek-r1-distill-qwen-32b": (
        "qwen2.5-32b",
        "DeepSeek-R1-Distill-Qwen-32B is Qwen2.5-32B fine-tuned on DeepSeek-R1 samples (DeepSeek-R1 README, distilled "
        "models table: base model Qwen2.5-32B, the preset's config)",
    ),
    "deepseek-r1-distill-qwen-14b": (
        "qwen2.5-14b",
        "DeepSeek-R1-Distill-Qwen-14B is Qwen2.5-14B fine-tuned on DeepSeek-R1 samples (DeepSeek-R1 README, distilled "
        "models table: base model Qwen2.5-14B, the preset's config)",
    ),
    "deepseek-v3.1": (
        "deepseek-v3",
        "DeepSeek-V3.1 has DeepSeek-V3's architecture (671B total, 37B active; post-trained from the V3 base "
        "checkpoint after a context extension: huggingface deepseek-ai/DeepSeek-V3.1-Base README)",
    ),
}
#: Llama 3 70B (April 2024) is Llama 3.1 70B's network with Llama 3's 8,192-token context: its config has
#: max_position_embeddings 8192 and no rope_scaling, as the llama-3-8b preset's Meta-Llama-3-8B config of the same
#: release; Llama 3.1 extended the context to 131,072 with rope_scaling (original_max_position_embeddings 8192).
_LLAMA_3_70B: tuple[str, Mapping[str, Any], str] = (
    "llama-3.1-70b",
    {"max_position_embeddings": 8192, "rope_scaling": None},
    "Llama 3 70B is Llama 3.1 70B's network with Llama 3's 8k context (max_position_embeddings 8192, no "
    "rope_scaling, as huggingface meta-llama/Meta-Llama-3-8B and -70B config.json)",
)
#: Models whose config differs from a preset's in a few fields: (preset, config.json changes, source).
CONFIG_VARIANTS: Mapping[str, tuple[str, Mapping[str, Any], str]] = {
    "llama-3-70b": _LLAMA_3_70B,
    "llama3-70b": _LLAMA_3_70B,
    "mistral-7b-instruct-v0.2": (
        "mistral-7b",
        {"sliding_window": None, "rope_theta": 1e6},
        "Mistral 7B v0.1 preset without its 4,096-token sliding window and with rope_theta 1e6, as in the "
        "huggingface mistralai/Mistral-7B-Instruct-v0.2 config.json (full attention over a 32k context)",
    ),
}
#: Name endings that do not change a model's shape: release tags, chat/instruct tuning, and the quantised
#: checkpoints of the same weights (the row's precision column says how they are stored).
_SUFFIXES = (
    "-instruct-2507",
    "-thinking-2507",
    "-instruct",
    "-thinking",
    "-base",
    "-2507",
    "-hf",
    "-chat",
    "-0324",
    "-0528",
    "-terminus",
    "-v2",
    "-kv",
    "-fp8-dynamic",
    "-fp8-block",
    "-fp8",
    "-nvfp4",
    "-mxfp4",
    "-fp4",
    "-bf16",
    "-awq",
    "-gptq",
    "-int4",
    "-int8",
    "-w4a16",
    "-w8a8",
)


def candidates(name: str) -> list[str]:
    """The spellings a table's model name is looked up under, most literal first."""
    base = name.strip()
    bare = base.split(" (")[0].strip()
    out = [base, bare, base.split("/")[0].strip(), bare.split("/")[-1].strip()]
    out += [c.replace(" ", "-") for c in out]
    more: list[str] = []
    for c in out:
        low = c.lower()
        changed = True
        while changed:
            changed = False
            for suf in _SUFFIXES:
                if low.endswith(suf):
                    low = low[: -len(suf)]
                    more.append(low)
                    changed = True
    return list(dict.fromkeys(out + more))


def preset_of(catalog: Catalog, name: str) -> str:
    """The preset id a table's model name refers to, or ''."""
    return next((pid for cand in candidates(name) if (pid := preset_id(catalog, cand)) is not None), "")


def known_model(catalog: Catalog, name: str) -> tuple[ModelSpec, str] | None:
    """(ModelSpec, where it comes from) of a row's model name: a preset, a config variant of one, an
    architecture-equivalent preset, or a published shape; None when chipwise knows none."""
    for cand in candidates(name):
        pid = preset_id(catalog, cand)
        if pid is not None:
            return load_model(catalog, pid), f"preset {pid}"
        key = cand.lower()
        if key in CONFIG_VARIANTS:
            pid, changes, why = CONFIG_VARIANTS[key]
            cfg = {**catalog.model_config(pid), **changes}
            return from_hf_config(cfg, key, source=why), why
        if key in ARCH_EQUIVALENT:
            pid, why = ARCH_EQUIVALENT[key]
            return load_model(catalog, pid), why
        if key in OPT_SHAPES:
            layers, hidden, heads, ffn = OPT_SHAPES[key]
            cfg = {
                "model_type": "opt",
                "num_hidden_layers": layers,
                "hidden_size": hidden,
                "num_attention_heads": heads,
                "ffn_dim": ffn,
                "vocab_size": 50272,
                "max_position_embeddings": 2048,
            }
            return from_hf_config(cfg, key, source="OPT paper Table 1"), f"{key} shape from the OPT paper"
    return None


def model_for(catalog: Catalog, name: str) -> tuple[ModelSpec, str]:
    """known_model, or ChipwiseError naming the model."""
    known = known_model(catalog, name)
    if known is None:
        raise ChipwiseError(f"model '{name}' has no preset and no published shape in chipwise")
    return known
