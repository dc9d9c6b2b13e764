"""A published run whose sequence length passes its model's context is priced as it trained, and validate says so:
MLPerf's Llama 2 70B LoRA rows (T353 ...) train at 8,192 tokens on the preset's 4,096 context, which `chipwise
predict` refuses; the explanation's 'read as' had never said it."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.validation.explain import explain_training
from chipwise.validation.run import validate_training
from chipwise.validation.training import context_note
from chipwise.workload.presets import load_model

PAST = (
    "seq_len 8,192 as published, past llama-2-70b's context of 4,096 tokens: priced as the run trained (predict "
    "refuses it: give it a config.json with max_position_embeddings of at least 8,192)"
)


def test_a_sequence_past_the_context_is_noted(catalog: Catalog) -> None:
    model = load_model(catalog, "llama-2-70b")
    assert model.max_seq_len == 4096
    assert context_note(model, 8192) == PAST
    assert context_note(model, 4096) is None  # the context itself is no excess


def test_the_lora_rows_say_it_and_keep_their_predictions(catalog: Catalog, shared_data: Path) -> None:
    """T353 (8 H100s): 'read as' and validate's row notes carry it, after the preset; the prediction stays 1,895
    tokens/s a chip at 8,192 tokens."""
    data = shared_data / "groundtruth_training.csv"
    (e,) = explain_training(catalog, data, ["T353"])
    assert e["reading"][:2] == ["preset llama-2-70b", PAST]
    assert e["seq_len"] == 8192
    (metric,) = e["metrics"]
    assert metric["predicted"] == pytest.approx(1894.6, abs=0.1)
    rows = {r["id"]: r for r in validate_training(catalog, data)["rows"]}
    for lora in ("T353", "T356", "T370", "T383", "T385", "T386", "T388", "T389", "T401", "T402"):
        assert PAST in rows[lora]["notes"], lora
    assert "context of" not in rows["T001"]["notes"]  # MPT-70B at its own 2,048
