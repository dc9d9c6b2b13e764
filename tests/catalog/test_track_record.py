"""The track record predictions quote (catalog.track_record, written by scripts/write_accuracy.py): its scopes,
its lookup, and that it still describes the model (its guard rows re-predicted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.catalog.track_record import (
    ANY,
    METRICS,
    Record,
    chips_label,
    lookup,
    record_file,
    track_record,
    vendor_scope,
)
from chipwise.validation.run import validate_file
from chipwise.validation.serving import catalog_rows, predict_row

STALE = "the track record no longer matches the model: regenerate it with `make accuracy` (scripts/write_accuracy.py)"


def test_every_scope_holds_enough_runs_and_ordered_statistics() -> None:
    rec = record_file()
    for kind, metrics in METRICS.items():
        assert set(rec[kind]) == set(metrics)
        for metric in metrics:
            groups = rec[kind][metric]
            assert (ANY, ANY) in {(g["engine"], g["family"]) for g in groups}  # every metric has a fallback
            for g in groups:
                assert g["n"] >= rec["min_runs"]
                assert 0 <= g["held_out"] <= g["n"]
                assert 0 <= g["median_ape_pct"] <= g["p80_ape_pct"]
                assert abs(g["median_error_pct"]) <= g["p80_ape_pct"] + 1e-9


def test_the_widest_scope_holds_every_narrower_one() -> None:
    for kind, metrics in METRICS.items():
        for metric in metrics:
            groups = {(g["engine"], g["family"]): g["n"] for g in record_file()[kind][metric]}
            everything = groups[(ANY, ANY)]
            assert all(n <= everything for n in groups.values())
            # the families partition the runs of each engine scope: their counts add to no more than its own
            for engine in {e for e, _ in groups}:
                families = [
                    n for (e, f), n in groups.items() if e == engine and f != ANY and not f.startswith("vendor:")
                ]
                assert sum(families) <= groups.get((engine, ANY), everything)


def test_lookup_takes_the_narrowest_scope_with_a_record() -> None:
    rec = lookup("serve", "tpot_s", "hopper", "nvidia", "trtllm")
    assert rec is not None and (rec.engine, rec.family) == ("trtllm", "hopper") and rec.scope == "trtllm on hopper"
    # an engine no published run used on any chip: any engine on the family
    rec = lookup("serve", "tpot_s", "hopper", "nvidia", "no-such-engine")
    assert rec is not None and rec.scope == "any engine on hopper"
    # a family without runs: the vendor's chips, then every run
    rec = lookup("train", "tokens_per_s_per_chip", "trainium4", "aws")
    assert rec is not None and rec.family == vendor_scope("aws") and rec.scope == "aws chips"
    rec = lookup("train", "tokens_per_s_per_chip", "unknown-family", "unknown-vendor")
    assert rec is not None and rec.scope == "all training runs"
    assert lookup("serve", "no_such_metric", "hopper", "nvidia") is None


def test_scope_names() -> None:
    def rec(kind: str, engine: str, family: str) -> Record:
        return Record(kind, "tpot_s", engine, family, 10, 0, 1.0, 2.0, 0.0)

    assert rec("serve", "vllm", ANY).scope == "vllm, any chip"
    assert rec("serve", ANY, "vendor:amd").scope == "any engine on amd chips"
    assert rec("serve", "default", "gaudi3").scope == "the default profile on gaudi3"
    assert rec("serve", ANY, ANY).scope == "all serving runs"
    assert rec("train", ANY, "hopper").scope == "hopper"


def test_a_split_quotes_each_metric_by_its_own_pool() -> None:
    out = track_record("serve", ("hopper", "nvidia"), "vllm", metrics={"ttft_s": (("blackwell", "nvidia"), "sglang")})
    assert set(out) == set(METRICS["serve"])
    assert out["ttft_s"]["scope"] == out["ttft_s"]["asked"] == "sglang on blackwell"
    assert out["tpot_s"]["scope"] == out["tpot_s"]["asked"] == "vllm on hopper"


def test_a_family_without_published_runs_says_which_scope_stands_in() -> None:
    """Trainium3 (announced) has no published serving run: the AWS chips' record stands in, and says it does."""
    out = track_record("serve", ("trainium3", "aws"), "vllm-neuron")
    assert {(r["scope"], r["asked"]) for r in out.values()} == {("any engine on aws chips", "vllm-neuron on trainium3")}


def test_the_record_was_written_by_the_current_model(catalog: Catalog, shared_data: Path) -> None:
    """Each guard row, predicted when the record was written, predicts the same now: a model change that moves a
    prediction without regenerating the record (and docs/accuracy.md with it) fails here."""
    guards = record_file()["guard"]
    assert {g["kind"] for g in guards} == {"serve", "train"}
    serve_ids = {g["id"] for g in guards if g["kind"] == "serve"}
    rows = catalog_rows(catalog, shared_data / "groundtruth_inference.csv")
    now = {(r.id, r.metric): r.predicted for row in rows if row.id in serve_ids for r in predict_row(catalog, row)}
    train = validate_file(catalog, shared_data / "groundtruth_training.csv", "train")
    now.update({(r["id"], r["metric"]): r["predicted"] for r in train["rows"]})
    for g in guards:
        assert now[(g["id"], g["metric"])] == pytest.approx(g["predicted"], rel=1e-6), f"{g['id']}: {STALE}"


def test_a_family_named_as_one_of_its_chips_lists_them() -> None:
    """trn1 and inf2 share the trainium1 family (NeuronCore-v2), whose name is trn1's alias: its scopes, mostly inf2
    runs, had read as trn1's alone ('neuron on trainium1'). A family that names none of its chips keeps its name."""
    assert chips_label("trainium1") == "trainium1 (trn1, inf2)"
    assert (chips_label("hopper"), chips_label("trainium2"), chips_label(vendor_scope("aws"))) == (
        "hopper",
        "trainium2",
        "aws chips",
    )
    out = track_record("serve", ("trainium1", "aws"), "neuron")
    assert out["output_tokens_per_s_per_chip"]["scope"] == "neuron on trainium1 (trn1, inf2)"
