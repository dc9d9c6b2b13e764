"""Prefill attention in sliding-window and chunked layers: the exact (query, key) pairs, by hand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf.device import device_of
from chipwise.serve.iteration import Shapes, pair_coefficient, prefill_pairs
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model


def _windows(model: ModelSpec, window: int) -> ModelSpec:
    """`model` with every windowed layer's window set to `window` (0: full attention)."""
    return replace(model, groups=tuple(replace(g, window=window) if g.window else g for g in model.groups))


def _b(model: ModelSpec, hw: Hardware, prompt: float, tp: int = 1, cached: float = 0.0) -> float:
    dev = device_of(hw.system("h100-sxm"))
    if cached:
        return float(pair_coefficient(model, dev, Shapes.of(tp), prompt, "bf16", cached=cached))
    return float(pair_coefficient(model, dev, Shapes.of(tp), prompt, "bf16"))


def test_window_pairs_by_hand() -> None:
    """Sum over a chunk's positions i of the keys each sees: i (full), min(i, w) (sliding), its own chunk's
    ((i - 1) mod w) + 1 (chunked)."""
    from chipwise.serve.iteration import window_pairs

    # 8,192-token chunks over 16,000 tokens: one full chunk, 8,192 x 8,193 / 2, and 7,808 x 7,809 / 2
    assert float(window_pairs(0.0, 16000.0, 8192, chunked=True)) == 33_558_528 + 30_486_336 == 64_044_864
    assert float(window_pairs(0.0, 16000.0, 0)) == float(prefill_pairs(0.0, 16000.0)) == 128_008_000
    # a 4,000-token window over 8,000 tokens: 4,000 x 4,001 / 2 + 4,000 x 4,000
    assert float(window_pairs(0.0, 8000.0, 4000)) == 8_002_000 + 16_000_000
    # 3,200 new tokens after 28,800 cached ones, each attending to 4,096 keys
    assert float(window_pairs(28800.0, 3200.0, 4096)) == 3200 * 4096 == 13_107_200
    # a window no shorter than the context is full attention; a chunk of 3 after 5 cached in chunks of 4: 2 + 3 + 4
    assert float(window_pairs(0.0, 8000.0, 8192)) == float(prefill_pairs(0.0, 8000.0))
    assert float(window_pairs(5.0, 3.0, 4, chunked=True)) == 9.0
    # broadcasts over starts and chunks, and sums over consecutive chunks to the whole prompt's pairs
    starts = np.arange(0.0, 16000.0, 2000.0)
    each = window_pairs(starts, 2000.0, 8192, chunked=True)
    assert each.shape == (8,) and float(each.sum()) == 64_044_864


def test_chunked_layers_between_one_and_two_chunks(catalog: Catalog, hw: Hardware) -> None:
    """Llama 4 Scout, 36 of 48 layers in 8,192-token chunks, a 16,000-token prompt: the chunked layers run 64.04 M of
    the 128.0 M causal pairs. They had been priced as full attention (the chunk was not under P / 2 = 8,000): 48
    layers' worth; they now read 12 + 36 x 0.5003 = 30.01."""
    scout = load_model(catalog, "llama-4-scout")
    assert sum(g.count for g in scout.groups if g.chunked and g.window == 8192) == 36 and scout.layers == 48
    share = 12.0 + 36.0 * 64_044_864 / 128_008_000
    full = _b(_windows(scout, 0), hw, 16000.0, tp=8)
    assert _b(scout, hw, 16000.0, tp=8) == pytest.approx(full * share / 48.0, rel=1e-12)
    # a chunk of 7,999 tokens (two full chunks and 2 tokens) runs about as many pairs as one of 8,192
    seven = 12.0 + 36.0 * (2 * 7999 * 8000 / 2 + 3) / 128_008_000
    assert _b(_windows(scout, 7999), hw, 16000.0, tp=8) == pytest.approx(full * seven / 48.0, rel=1e-12)


def test_sliding_window_share_is_exact(catalog: Catalog, hw: Hardware) -> None:
    """Mistral 7B's 32 layers, 8,000-token prompts: the share of the causal pairs is 2 w / P - (w / P)^2 plus the
    diagonal's w / 2 terms, exactly sum min(i, w) / (P (P + 1) / 2). A 4,000-token window had been priced as full
    attention (4,000 is not under P / 2) and a 2,000-token one at 0.5 (0.4375 exact)."""
    mistral = load_model(catalog, "mistral-7b")
    full = _b(_windows(mistral, 0), hw, 8000.0)
    causal = 32_004_000
    assert _b(_windows(mistral, 4000), hw, 8000.0) == pytest.approx(full * 24_002_000 / causal, rel=1e-12)
    assert _b(_windows(mistral, 2000), hw, 8000.0) == pytest.approx(full * 14_001_000 / causal, rel=1e-12)
    assert _b(_windows(mistral, 8192), hw, 8000.0) == pytest.approx(full, rel=1e-12)
    # its own 4,096-token window over 32,000 tokens: 4,096 x 4,097 / 2 + 27,904 x 4,096 of 512,016,000 (0.256)
    assert _b(mistral, hw, 32000.0) == pytest.approx(full * 122_685_440 / 512_016_000, rel=1e-12)


def test_prefix_hit_prices_the_new_tokens_window(catalog: Catalog, hw: Hardware) -> None:
    """A 90% prefix-cache hit on a 32,000-token Mistral 7B prompt: 3,200 new tokens, each attending to 4,096 keys,
    1.31e7 pairs of the 9.73e7 causal ones prefill_pairs counts after 28,800 cached tokens."""
    mistral = load_model(catalog, "mistral-7b")
    full = _b(_windows(mistral, 0), hw, 32000.0)
    causal = float(prefill_pairs(28800.0, 3200.0))
    assert causal == 3200 * 28800 + 3200 * 3201 / 2
    assert _b(mistral, hw, 32000.0, cached=28800.0) * causal == pytest.approx(full * 13_107_200, rel=1e-12)
