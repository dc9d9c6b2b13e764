"""A validated training row says which of its plan's knobs the search chose where the row names none: a pipeline or
hybrid sharding it brought in, beside the recompute and micro-batch it already named."""

from __future__ import annotations

from pathlib import Path

from chipwise.catalog import Catalog
from chipwise.validation.run import validate_training


def test_a_pipeline_the_search_brought_in_is_named(catalog: Catalog, shared_data: Path) -> None:
    """T331, MaxText on TPU v5p ("FSDP within slice, DP across 32 slices", ici_tp 16, no pipeline stated) is priced
    as a TP16 PP4 interleaved plan: its notes had said nothing of the pipeline being the search's. T001 (MPT-70B
    FSDP on 512 H100s, pp 1 searched) names no pipeline: pp 1 and no hybrid sharding, what a row that names none most
    likely ran, go unsaid."""
    rows = {r["id"]: r for r in validate_training(catalog, shared_data / "groundtruth_training.csv")["rows"]}
    t331 = rows["T331"]["notes"]
    assert "pipeline stages not stated; searched: 4" in t331 and "interleaving not stated; searched: 16" in t331
    assert "pipeline" not in rows["T001"]["notes"] and "hybrid sharding" not in rows["T001"]["notes"]
