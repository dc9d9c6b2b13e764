"""Serving weights per rank: the embedding and LM head as the checkpoint holds them."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.serve.iteration import Shapes
from chipwise.serve.kvcache import weights_per_rank
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
