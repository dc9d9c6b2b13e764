"""Serving weights per rank: the embedding and LM head as the checkpoint holds them; KV bytes a rank stores per
token, sliding-window layers keeping only their window."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.serve.iteration import Shapes
from chipwise.serve.kvcache import kv_bytes_per_token_rank, weights_per_rank
from chipwise.workload.presets import load_model


def test_tied_embeddings_are_one_matrix(catalog: Catalog) -> None:
    """Llama 3.2 1B ties its LM head to its embedding: 1,235,814,400 parameters in bf16 are 2.47 GB on one rank
    (model show's figure), less its final norm (2,048); the matrix was charged twice (128,256 x 2,048 x 2 B more).
    Under pp the last stage holds its own copy as the LM head, as the first holds the embedding."""
    model = load_model(catalog, "llama-3.2-1b")
    assert model.tied_embeddings
    one = float(weights_per_rank(model, Shapes.of(1, 1, 1, 0), "bf16"))
    assert one == pytest.approx(2.0 * (1_235_814_400 - 2048))
    assert one / 1e9 == pytest.approx(2.47, abs=0.005)
    two = float(weights_per_rank(model, Shapes.of(1, 2, 1, 0), "bf16"))
    assert two == pytest.approx(2.0 * ((1_235_814_400 - 2048 - 128_256 * 2048) / 2 + 128_256 * 2048))


def test_sliding_window_layers_keep_only_their_window(catalog: Catalog) -> None:
    """gpt-oss-120b alternates 18 full-attention layers with 18 of a 128-token window; a layer stores 8 KV heads x
    64 x 2 (K, V) x 2 B (bf16) = 2,048 B a token. At a typical context of 8,192 a window layer keeps 128/8,192 of
    it: 2,048 x (18 + 18 x 128/8,192) = 37,440 B a token (73,728 had every layer kept the whole context, 36,864
    had the window layers kept nothing). At a context of 128 the window covers it all: 2,048 x 36 = 73,728."""
    model = load_model(catalog, "gpt-oss-120b")
    one = Shapes.of(1)
    assert float(kv_bytes_per_token_rank(model, one, "bf16", 8192.0)) == pytest.approx(37_440, rel=1e-12)
    assert float(kv_bytes_per_token_rank(model, one, "bf16", 128.0)) == pytest.approx(73_728, rel=1e-12)


def test_kv_projections_are_replicated_past_the_kv_heads(catalog: Catalog) -> None:
    """Llama-3.1-70B has 8 KV heads: at TP16 each rank holds one whole KV head's K and V projections (8,192 x 2 x
    128 per layer), not half of one, as vLLM, TensorRT-LLM and NxD replicate them and training's memory holds them:
    80 layers x 8,192 x 2 x 128 x 2 B = 335,544,320 B a rank, 167,772,160 B more than an even 1/16 split. At TP8 and
    below nothing is replicated (8 ranks hold 1/8 each)."""
    model = load_model(catalog, "llama-3.1-70b")
    t8, t16 = (float(weights_per_rank(model, Shapes.of(tp), "bf16")) for tp in (8, 16))
    assert t16 - t8 / 2 == pytest.approx(80 * 8192 * 2 * 128 * 2 / 2)
