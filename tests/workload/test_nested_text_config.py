"""A config.json with no model_type of its own that nests a text_config is read as its text_config's model_type says:
every such config had been read as Llama 4, a nested Mixtral told it lacks 'intermediate_size_mlp' and, given one,
priced at 52.34 B parameters (a shared expert, no window) where the flat config reads 46.70 B."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.workload.hf_config import from_hf_config

MIXTRAL: dict[str, Any] = {
    "model_type": "mixtral",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "num_hidden_layers": 32,
    "vocab_size": 32000,
    "max_position_embeddings": 8192,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "sliding_window": 4096,
}


def test_a_nested_mixtral_reads_as_the_flat_one() -> None:
    """Mixtral 8x7B by hand: a layer's attention 2 x 4096^2 + 2 x 4096 x 1024 = 41,943,040, its 8 experts
    8 x 3 x 4096 x 14,336 = 1,409,286,144, router 32,768 and norms 8,192: 1,451,270,144 x 32 layers, plus
    embeddings and LM head 2 x 32,000 x 4,096 and the final norm, 46,702,792,704; two experts a token: 12,879,925,248.
    Every layer keeps its 4,096-token window."""
    spec = from_hf_config({"text_config": MIXTRAL}, "mixtral", "f.json")
    assert (spec.params_total, spec.params_active) == (46_702_792_704, 12_879_925_248)
    assert [(g.count, g.window, g.moe is not None and g.moe.shared) for g in spec.groups] == [(32, 4096, 0)]
    assert spec.groups == from_hf_config(MIXTRAL, "mixtral").groups
    assert spec.notes == (
        "the config.json names no model_type and nests a text_config of model_type 'mixtral': read as that",
    )


def test_a_nested_llama_reads_as_a_llama(catalog: Catalog) -> None:
    """Llama 3.1 8B's config under text_config: 8,030,261,248 parameters, as the preset (it had been asked for
    'num_local_experts')."""
    spec = from_hf_config({"text_config": catalog.model_config("llama-3.1-8b")}, "l8", "f.json")
    assert spec.params_total == 8_030_261_248 and not spec.is_moe


def test_a_nested_gemma3_text_is_refused_as_a_top_level_gemma3_is(catalog: Catalog) -> None:
    nested = {"text_config": {**catalog.model_config("llama-3.1-8b"), "model_type": "gemma3_text"}}
    with pytest.raises(ChipwiseError) as err:
        from_hf_config(nested, "g3", "f.json")
    assert str(err.value).startswith("f.json: model_type 'gemma3_text' is not supported (chipwise reads ")


@pytest.mark.parametrize("nested", [None, "llama4_text", "llama4"])
def test_llama4_where_the_nested_type_is_llama4_or_absent(catalog: Catalog, nested: str | None) -> None:
    """Llama 4 Scout's text_config without its model_type, or with it: 107,769,861,120 parameters, as the preset."""
    text = {k: v for k, v in catalog.model_config("llama-4-scout")["text_config"].items() if k != "model_type"}
    spec = from_hf_config({"text_config": {**text, "model_type": nested} if nested else text}, "scout", "f.json")
    assert spec.params_total == 107_769_861_120
