"""`chipwise validate` reads a row as `predict` reads the same deployment: a partial plan predict refuses is skipped
with predict's reason, the plan's label is predict's, a blank engine is the chip vendor's, a precision it does not
know is a skip and not bf16, and a request past the model's context is priced with a note saying so."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import chipwise.api as cw
from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.validation.run import validate_path
from chipwise.validation.serving_case import prepare
from cli_run import run_error
from inference_rows import inference_row, write_rows

#: Llama 3.1 70B on 1,024 H100 at 8,192 tokens, 4M-token batches, measured at 400 tokens/s per chip
TRAINING_ROW = {
    "id": "U1", "model": "llama-3.1-70b", "chip": "h100-sxm", "num_chips": "1024", "seq_len": "8192",
    "global_batch_tokens": "4194304", "precision": "BF16", "tokens_per_s_per_chip": "400", "step_time_s": "",
    "TP": "", "PP": "", "DP": "",
}  # fmt: skip

#: the same job as a scenario, for predict
TRAINING_SCENARIO = {
    "kind": "train", "model": "llama-3.1-70b", "hardware": "h100-sxm", "chips": 1024, "precision": "bf16",
    "seq_len": 8192, "global_batch_tokens": 4194304, "tokens": 1e12,
}  # fmt: skip


def _training_csv(path: Path, *rows: dict[str, str]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(TRAINING_ROW))
        writer.writeheader()
        writer.writerows({**TRAINING_ROW, **r} for r in rows)
    return path


def test_a_partial_plan_predict_refuses_is_skipped_with_its_reason(catalog: Catalog, tmp_path: Path) -> None:
    """TP7 alone had been priced on 896 of the 1,024 chips, 64 heads split 7 ways (785 tokens/s per chip)."""
    report = validate_path(catalog, _training_csv(tmp_path / "t.csv", {"id": "U11", "TP": "7"}, {"id": "U2"}))
    reason = "invalid plan: tp=7 does not divide the 64 attention heads. Fix: use a tp that divides 64."
    assert report["skipped"] == [{"id": "U11", "reason": reason}]
    with pytest.raises(ChipwiseError) as refused:
        cw.predict({**TRAINING_SCENARIO, "plan": {"tp": 7}})
    assert str(refused.value) == reason  # predict's own words
    assert [r["id"] for r in report["rows"]] == ["U2"]


def test_a_tp_pp_dp_plan_is_partial_as_predict_says(catalog: Catalog, tmp_path: Path) -> None:
    """TP8 PP4 DP32 leaves the micro-batch, ZeRO stage and recomputation to the search: 'partial' in predict, and
    'given' in validate's column, with the same prediction."""
    report = validate_path(catalog, _training_csv(tmp_path / "t.csv", {"TP": "8", "PP": "4", "DP": "32"}))
    (row,) = report["rows"]
    predicted = cw.predict({**TRAINING_SCENARIO, "plan": {"tp": 8, "pp": 4, "dp": 32}})
    assert row["plan_source"] == predicted["plan_source"] == "partial"
    assert row["predicted"] == pytest.approx(predicted["tokens_per_s_per_chip"], rel=1e-9)


def test_an_unrecognised_precision_is_a_skip_not_bf16(catalog: Catalog, tmp_path: Path) -> None:
    """'FP3' had been noted 'precision not stated; assumed bf16' and priced; a blank cell still is."""
    report = validate_path(catalog, _training_csv(tmp_path / "t.csv", {"id": "U12", "precision": "FP3"}, {"id": "U2"}))
    (skipped,) = report["skipped"]
    assert skipped["id"] == "U12"
    assert skipped["reason"].startswith("precision 'FP3' not recognised. Fix: name one of fp4, int4, int8, fp8, bf16")
    assert inference_row(precision="FP3").skip_reason == skipped["reason"]  # a serving row the same
    for unread in ("", "not stated"):
        assert inference_row(precision=unread).skip_reason is None
    assert (
        "assumed bf16"
        in validate_path(catalog, _training_csv(tmp_path / "b.csv", {"precision": ""}))["rows"][0]["notes"]
    )


def test_a_row_naming_no_engine_is_served_with_the_chip_vendors_as_predict_does(
    catalog: Catalog, tmp_path: Path
) -> None:
    """With no engine stated, Llama 3.1 8B at one user had been priced with the unfitted 'default' profile (TTFT
    14.6 ms and 17.6 ms where TensorRT-LLM on H100 gives 31.3 ms and vLLM on MI300X 61.0 ms), without a note. An
    engine named but not recognised keeps that profile, with a note: the vendor's would move published rows."""
    one_user = {"scenario": "single", "batch_or_concurrency": "concurrency 1", "input_len": "1024",
                "output_len": "256", "output_tokens_per_s_per_chip": "", "ttft_ms": "50", "tpot_ms": "8"}  # fmt: skip
    rows = [
        {**one_user, "id": "E1", "serving_engine": ""},
        {**one_user, "id": "E2", "serving_engine": "TensorRT-LLM"},
        {**one_user, "id": "E3", "serving_engine": "", "chip": "mi300x"},
        {**one_user, "id": "E4", "serving_engine": "vLLM", "chip": "mi300x"},
        {**one_user, "id": "E5", "serving_engine": "n/a"},  # a cell that states nothing is a blank one
        {**one_user, "id": "E6", "serving_engine": "an in-house server"},
    ]
    report = validate_path(catalog, write_rows(tmp_path / "e.csv", *rows))
    got = {(r["id"], r["metric"]): r for r in report["rows"]}
    for blank, named in (("E1", "E2"), ("E3", "E4"), ("E5", "E2")):
        for metric in ("ttft_s", "tpot_s"):
            assert got[blank, metric]["predicted"] == got[named, metric]["predicted"]
    assert (
        "engine not stated; priced as trtllm, the engine predict takes for nvidia chips" in got["E1", "ttft_s"]["notes"]
    )
    assert "engine not stated; priced as vllm, the engine predict takes for amd chips" in got["E3", "ttft_s"]["notes"]
    assert "engine" not in got["E2", "ttft_s"]["notes"]
    unknown = "serving engine 'an in-house server' not recognised: priced with the default engine profile"
    assert unknown in got["E6", "ttft_s"]["notes"] and got["E6", "ttft_s"]["engine"] == "default"


def test_a_request_past_the_context_is_priced_with_a_note(catalog: Catalog) -> None:
    """Llama 2 70B's context is 4,096 tokens: 8,000 in + 256 out had been priced with nothing said (published Neuron
    runs compiled past it are priced as they ran); a fitting request has no such note."""
    row = inference_row(model="llama-2-70b", num_chips="8", parallelism="TP8", input_len="8000", output_len="256")
    past = "input 8,000 + output 256 tokens exceed llama-2-70b's context of 4,096 tokens"
    assert f"{past}; priced anyway, as the run was published" in prepare(catalog, row).notes
    assert not any("context" in n for n in prepare(catalog, inference_row()).notes)


def test_a_request_past_the_context_that_does_not_fit_says_the_context(catalog: Catalog) -> None:
    """A 1,000,000-token prompt and 1,000-token answer to Llama 3.1 8B (131,072 context) on one H100 under vLLM had
    been told to raise tp, which priced it 7.6x past the context."""
    with pytest.raises(InfeasibleError) as info:
        prepare(
            catalog,
            inference_row(
                serving_engine="vLLM", scenario="single", batch_or_concurrency="concurrency 1", input_len="1000000"
            ),
        )
    assert str(info.value) == (
        "input 1,000,000 + output 1,000 tokens exceed llama-3.1-8b's context of 131,072 tokens, and the KV cache of "
        "TP1 b1 on h100-sxm holds 476,720 tokens, less than one 1,001,000-token request. Fix: shorten the prompt or "
        "the answer, or pick a longer-context model."
    )


def test_one_chip_is_one_chip(catalog: Catalog) -> None:
    with pytest.raises(ChipwiseError, match=r"^TP3 needs 3 chips; the row has 1 chip$"):
        prepare(catalog, inference_row(parallelism="TP3"))


def test_explain_without_a_source_family_and_rows_with_explain(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """No trailing ', ' where a row names no source family; --rows beside --explain is refused, not dropped."""
    from chipwise.interfaces.cli.app import run

    table = write_rows(
        tmp_path / "rows.csv", {"source_family": ""}, {"id": "X2", "source_family": "", "parallelism": "TP3"}
    )
    assert run(["validate", "--data", str(table), "--explain", "X1", "--explain", "X2"]) == 0
    text = capsys.readouterr().out
    assert "X1: llama-3.1-8b on 1 h100-sxm (trtllm)" in text and "(trtllm)," not in text
    assert "X2 (h100-sxm): not predicted: TP3 needs 3 chips; the row has 1 chip" in text
    error = run_error(capsys, ["validate", "--data", str(table), "--explain", "X1", "--rows"])
    assert error == "error: --rows lists a validation's rows; --explain prints only the named ones. Fix: drop one."
