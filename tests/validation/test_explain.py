"""`chipwise validate --explain`: one serving row's reading, deployment, time breakdown and metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.validation.explain import explain_serving
from chipwise.validation.serving import validate_serving
from cli_run import run_error, run_json
from inference_rows import write_rows

#: Llama-3.1-8B on one H100 at 8 users, with measured latencies
CLOSED = {
    "id": "X2", "scenario": "online", "batch_or_concurrency": "concurrency=8", "ttft_ms": "60", "tpot_ms": "9",
}  # fmt: skip


@pytest.fixture()
def table(tmp_path: Path) -> Path:
    return write_rows(tmp_path / "rows.csv", {}, CLOSED, {"id": "X3", "model": "NoSuchModel-7B"})


def test_explain_predicts_what_validate_predicts(catalog: Catalog, table: Path) -> None:
    explained = explain_serving(catalog, table, ["X2", "X1"])
    assert [e["id"] for e in explained] == ["X2", "X1"]  # in the order asked
    x2 = explained[0]
    validated = {(r["id"], r["metric"]): r["predicted"] for r in validate_serving(catalog, table)["rows"]}
    assert {m["metric"] for m in x2["metrics"]} == {"output_tokens_per_s_per_chip", "ttft_s", "tpot_s"}
    for m in x2["metrics"]:
        assert m["predicted"] == pytest.approx(validated[("X2", m["metric"])], rel=1e-12)
        assert m["error_pct"] == pytest.approx(100 * (m["predicted"] - m["measured"]) / m["measured"])
    assert x2["plan"][0]["tp"] == 1 and x2["plan"][0]["max_batch"] == 8
    assert x2["load"]["label"] == "8 concurrent users"
    assert "preset llama-3.1-8b" in x2["reading"]


def test_explain_breaks_the_steady_iteration_down(catalog: Catalog, table: Path) -> None:
    (x2,) = explain_serving(catalog, table, ["X2"])
    parts = x2["breakdown"]
    assert all(v >= 0 for v in parts.values()) and sum(parts.values()) > 0
    assert parts[x2["dominated_by"]] == max(parts.values())
    # an 8B model at 8 users decodes from its weights: a few ms an iteration, under the measured TPOT's 9 ms x 2
    assert 1e-3 < sum(parts.values()) < 18e-3
    # by hand: its FP8 weights, 8.0 GB, read once an iteration at about H100's 3.35 TB/s take 2.4 ms; one GPU
    # exchanges nothing
    assert 1.8e-3 < parts["gemm"] < 3.2e-3
    assert parts["tp_comm"] == parts["ep_comm"] == 0.0
    alone = x2["prefill_one_prompt"]
    assert 0 < alone["device_s"] <= alone["seconds"]
    # the prompt's own breakdown adds up to its seconds: its GEMMs the largest part of the device's work on one GPU,
    # and TensorRT-LLM's PyTorch back end, which launches a prompt's kernels eagerly, waits on the host beyond it
    prefill = x2["prefill_breakdown"]
    assert sum(prefill.values()) == pytest.approx(alone["seconds"], rel=1e-3)
    device = {k: v for k, v in prefill.items() if k != "host_launches"}
    assert max(device, key=lambda k: device[k]) == "gemm" and prefill["tp_comm"] == 0.0
    assert prefill["host_launches"] == pytest.approx(alone["seconds"] - sum(device.values()))
    assert alone["host_launches_s"] > alone["device_s"]
    # of the predicted TTFT, the wait before the prompt's first iteration
    ttft = next(m["predicted"] for m in x2["metrics"] if m["metric"] == "ttft_s")
    assert 0 <= x2["ttft_wait_s"]["mean"] < ttft
    assert any(name.startswith("h100-sxm.hbm_bandwidth") for name in x2["figures"])
    # the batch the steady iteration is priced at: 8 users less their time between answers, by Little's law over the
    # tokens (output tokens/s x mean TPOT); the simulated iterations' mean beside it, under the mean TPOT's weighing
    tpot = next(m["predicted"] for m in x2["metrics"] if m["metric"] == "tpot_s")
    assert x2["tpot_mean_s"] == pytest.approx(tpot)
    assert 6.0 < x2["steady_batch"] <= 8.0
    assert 0 < x2["iteration_mean_s"] <= tpot * 1.05


def test_explain_says_why_a_row_is_not_predicted(catalog: Catalog, table: Path) -> None:
    (x3,) = explain_serving(catalog, table, ["X3"])
    assert x3["predicted"] is False and "NoSuchModel-7B" in x3["reason"] and "\n" not in x3["reason"]


def test_explain_refuses_an_unknown_id(catalog: Catalog, table: Path) -> None:
    with pytest.raises(ChipwiseError, match=r"no row 'X9', 'X8' in rows.csv\. Fix: give ids from its 'id' column"):
        explain_serving(catalog, table, ["X1", "X9", "X8"])
    # a near miss is named (it had been told only to read the 'id' column)
    with pytest.raises(ChipwiseError, match=r"no row 'x1' in rows.csv\. Did you mean 'X1'\? Fix: give ids"):
        explain_serving(catalog, table, ["x1"])


def test_cli_explain_json_and_errors(capsys: pytest.CaptureFixture[str], table: Path, shared_data: Path) -> None:
    out = run_json(capsys, ["validate", "--data", str(table), "--explain", "X1", "--json"])
    assert out["kind"] == "serve" and [e["id"] for e in out["explain"]] == ["X1"]
    assert out["explain"][0]["metrics"][0]["metric"] == "output_tokens_per_s_per_chip"
    assert "no row 'NOPE'" in run_error(capsys, ["validate", "--data", str(table), "--explain", "NOPE"])
    # a training file's rows are explained too (tests/validation/test_explain_training.py); they had been refused
    training = str(shared_data / "groundtruth_training.csv")
    assert run_json(capsys, ["validate", "--data", training, "--explain", "T001", "--json"])["kind"] == "train"


def test_cli_explain_prints_the_row(capsys: pytest.CaptureFixture[str], table: Path) -> None:
    from chipwise.interfaces.cli.app import run

    assert run(["validate", "--data", str(table), "--explain", "X2"]) == 0
    text = capsys.readouterr().out
    for part in ("X2: llama-3.1-8b on 1 h100-sxm (trtllm)", "read as", "steady iteration", "prefill, alone", "TTFT"):
        assert part in text
    words = " ".join(text.replace("│", " ").split())
    assert "the run's iterations the steady iteration is priced at the run's mean batch" in words
    assert "weighs each iteration by the sequences it carried" in words


def test_a_load_that_issues_for_a_window_counts_the_requests_it_issued(catalog: Catalog, tmp_path: Path) -> None:
    """guidellm's throughput mode issues for 42.4 s: the explanation gives the requests issued in that window (31 at
    once, then one as each finishes: about a hundred for Llama 3.1 8B on one inf2 replica), not the cap."""
    row = {
        "id": "G1", "source_family": "optimum-neuron vLLM benchmark (Hugging Face)", "model": "Llama-3.1-8B-Instruct",
        "chip": "inf2", "num_chips": "4", "precision": "BF16", "parallelism": "TP=8 DP=1",
        "serving_engine": "vLLM + optimum-neuron (optimum-cli neuron serve)",
        "scenario": "guidellm throughput (saturating, max concurrency)",
        "batch_or_concurrency": "max concurrent users=32",
        "input_len": "1500", "output_len": "215", "ttft_ms": "2138", "tpot_ms": "59.09",
        "notes": "server max batch size=32, sequence_length=4096",
    }  # fmt: skip
    (g1,) = explain_serving(catalog, write_rows(tmp_path / "g.csv", row), ["G1"])
    load = g1["load"]
    assert load["issued_for_s"] == pytest.approx(42.4) and load["throughput_basis"] == "run"
    assert 31 < load["requests"] < 200


def test_each_metric_names_the_statistic_compared(
    capsys: pytest.CaptureFixture[str], catalog: Catalog, tmp_path: Path
) -> None:
    """A cell 'p99 461.3; mean 275.9' (MLPerf's I002) is compared at its mean, a 'p50' one at the median: the JSON
    rows and the explanation say which, so that a mean is not read as a median or a p99."""
    row = {**CLOSED, "ttft_ms": "p99 461.3; mean 275.9", "tpot_ms": "p50 9"}
    table = write_rows(tmp_path / "stats.csv", row)
    stats = {r["metric"]: r["stat"] for r in validate_serving(catalog, table)["rows"]}
    assert stats == {"output_tokens_per_s_per_chip": "value", "ttft_s": "mean", "tpot_s": "p50"}
    (x2,) = explain_serving(catalog, table, ["X2"])
    assert {m["metric"]: m["stat"] for m in x2["metrics"]} == stats
    from chipwise.interfaces.cli.app import run

    assert run(["validate", "--data", str(table), "--explain", "X2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any("TTFT" in line and " mean " in line and "276 ms" in line for line in lines)
    assert any("TPOT" in line and " p50 " in line for line in lines)
