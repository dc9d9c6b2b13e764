"""The validation report's groupings: by metric, chip, source family and, for serving, by engine family."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.validation.report import TOP_ROWS, RowResult, concentration, summarise
from cli_run import run, run_json
from inference_rows import write_rows


def _result(row_id: str, metric: str, error: float, engine: str = "") -> RowResult:
    return RowResult(row_id, "h100-sxm", metric, 1.0, 1.0 + error, "stated", "test", engine=engine)


def test_serving_errors_are_grouped_by_engine_and_metric() -> None:
    rows = [
        _result("A", "ttft_s", 0.1, "vllm"),
        _result("A", "tpot_s", -0.3, "vllm"),
        _result("B", "ttft_s", 0.5, "vllm"),
        _result("C", "ttft_s", -0.2, "sglang"),
    ]
    report = summarise("serve", rows, [])
    by = report["summary"]["by_engine"]
    assert list(by) == ["sglang", "vllm"]
    assert by["vllm"]["ttft_s"]["mape_pct"] == pytest.approx(30.0)  # (10 + 50) / 2
    assert by["vllm"]["ttft_s"]["n"] == 2 and by["vllm"]["tpot_s"]["bias_pct"] == pytest.approx(-30.0)
    assert set(by["sglang"]) == {"ttft_s"}
    assert report["rows"][0]["engine"] == "vllm"


def test_concentration_says_how_few_rows_carry_half_of_each_metrics_mape() -> None:
    # errors +100%, -80%, +10%, -10%: MAPE 50 points, of which the rows add 25, 20, 2.5 and 2.5
    rows = [_result("A", "ttft_s", 0.1), _result("B", "ttft_s", 1.0), _result("C", "ttft_s", -0.8)]
    rows += [_result("D", "ttft_s", -0.1), _result("E", "tpot_s", 0.2)]
    c = concentration(rows)
    assert list(c) == ["tpot_s", "ttft_s"]
    ttft = c["ttft_s"]
    assert ttft["n"] == 4 and ttft["mape_pct"] == pytest.approx(50.0)
    assert ttft["rows_for_half"] == 1  # B's 25 points are half of the 50
    assert [r["id"] for r in ttft["largest"]] == ["B", "C", "A", "D"]
    assert [r["points"] for r in ttft["largest"]] == pytest.approx([25.0, 20.0, 2.5, 2.5])
    assert ttft["largest"][1]["error_pct"] == pytest.approx(-80.0)
    assert c["tpot_s"]["rows_for_half"] == 1 and c["tpot_s"]["mape_pct"] == pytest.approx(20.0)
    even = concentration([_result(str(i), "ttft_s", 0.1) for i in range(10)])["ttft_s"]
    assert even["rows_for_half"] == 5 and len(even["largest"]) == TOP_ROWS
    assert summarise("serve", rows, [])["summary"]["concentration"] == c


def test_training_reports_have_no_engine() -> None:
    report = summarise("train", [_result("T", "step_time_s", 0.1)], [])
    assert "by_engine" not in report["summary"] and "engine" not in report["rows"][0]


def test_chipwise_validate_prints_the_errors_by_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_user = {"scenario": "single stream", "batch_or_concurrency": "concurrency=1", "output_len": "101"}
    data = write_rows(
        tmp_path / "rows.csv",
        {"id": "V1", **one_user, "serving_engine": "vLLM 0.11", "ttft_ms": "100", "tpot_ms": "10"},
        {"id": "S1", **one_user, "serving_engine": "SGLang 0.5.6", "ttft_ms": "100", "tpot_ms": "10"},
        {"id": "U1", **one_user, "serving_engine": "an in-house server", "ttft_ms": "100", "tpot_ms": "10"},
    )
    report = run_json(capsys, ["validate", "--data", str(data), "--json"])
    assert {r["id"]: r["engine"] for r in report["rows"]} == {"V1": "vllm", "S1": "sglang", "U1": "default"}
    assert set(report["summary"]["by_engine"]) == {"vllm", "sglang", "default"}
    assert set(report["summary"]["by_engine"]["vllm"]) == {"output_tokens_per_s_per_chip", "ttft_s", "tpot_s"}
    assert run(["validate", "--data", str(data)]) == 0
    out = capsys.readouterr().out
    assert "By engine: MAPE % (n)" in out and "TTFT" in out and "sglang" in out
    assert "Where the error is" in out and "--explain ID" in out
