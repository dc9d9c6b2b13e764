"""The model a table's name means, shared by the training and serving validation."""

from __future__ import annotations

from pathlib import Path

from chipwise.catalog import Catalog
from chipwise.validation.groundtruth import read_training
from chipwise.validation.models import model_for
from chipwise.validation.training import prepare


def test_llama_3_70b_is_llama_3_1_70b_with_llama_3s_context(catalog: Catalog) -> None:
    llama3, why = model_for(catalog, "Llama3-70B")
    llama31, _ = model_for(catalog, "Llama-3.1-70B")
    assert (llama3.max_seq_len, llama31.max_seq_len) == (8192, 131072)
    assert (llama3.layers, llama3.hidden, llama3.params_total) == (80, 8192, llama31.params_total)
    assert "8k context" in why


def test_a_training_row_reads_llama_3_70b_as_serving_does(catalog: Catalog, shared_data: Path) -> None:
    """torchtitan's Llama3-70B rows leave seq_len blank: built from the row's dimensions, which carry no context,
    they had been priced at 2,048 tokens (T180 +75%) while the same table's Llama3-8B rows took 8,192."""
    rows = {r.id: r for r in read_training(shared_data / "groundtruth_training.csv")}
    case = prepare(catalog, rows["T180"])
    assert case.job.seq_len == 8192 and "seq_len assumed 8192" in case.notes
    assert case.model.max_seq_len == 8192 and "Llama 3.1 70B's network" in case.notes[0]
    assert prepare(catalog, rows["T181"]).job.seq_len == 8192  # Llama3-8B, its preset's context
