"""chipwise's device model against kernels timed on one H200 (validation.kernels, scripts/measure_serving_gpu.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.validation.kernels import measured_path, validate_kernels
from cli_run import run_error, run_json


@pytest.fixture(scope="module")
def report(catalog: Catalog) -> dict[str, Any]:
    return validate_kernels(catalog, measured_path())


def _by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in report["rows"]}


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "kernels.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_every_measurement_is_priced(report: dict[str, Any]) -> None:
    s = report["summary"]
    assert s["rows_predicted"] == s["rows_total"] == 306 and not report["skipped"]
    counts = {m: g["n"] for m, g in s["by_metric"].items()}
    assert counts == {"gemm": 252, "decode_attention": 22, "prefill_attention": 7, "decode_step": 17, "prefill_step": 8}


def test_whole_steps_on_a_real_h200_are_predicted_within_their_bounds(report: dict[str, Any]) -> None:
    """A Llama-3.1-8B-shaped decoder's whole decode steps (1 to 256 sequences, 1K to 128K tokens of context, bf16
    and fp8 weights) took what vLLM's Hopper figures give within 6.2% on average and 17% at worst (one sequence
    over 131,072 tokens: flash-decoding reads the cache at 2.6 TB/s, not the 4.2 TB/s of a full machine); its
    prefill steps (128 to 8,192 tokens) within 12.1% (bf16 512 tokens +28% worst)."""
    by_metric = report["summary"]["by_metric"]
    assert by_metric["decode_step"]["mape_pct"] < 7.0
    assert by_metric["prefill_step"]["mape_pct"] < 15.0
    steps = [r for r in report["rows"] if r["metric"] in ("decode_step", "prefill_step")]
    assert max(abs(r["error_pct"]) for r in steps) < 30.0
    assert abs(by_metric["decode_step"]["bias_pct"]) < 5.0


def test_weight_streaming_gemms_follow_the_roofline(report: dict[str, Any]) -> None:
    """252 GEMMs (Llama-3.1-8B at TP1, 70B at TP8, the LM head; 1 to 8,192 rows; bf16 and fp8) within 17% on
    average. The 8B gate-up projection of one row (235 MB of bf16 weight) streams at 4.08 TB/s measured, 57.5 us;
    chipwise: the weight over 0.87 x 4.8 TB/s plus vLLM's 2.05 us kernel overhead, 58.3 us."""
    assert report["summary"]["by_metric"]["gemm"]["mape_pct"] < 20.0
    row = _by_id(report)["gemm llama-3.1-8b gate_up bf16 m=1"]
    assert row["measured"] == pytest.approx(57.5e-6, rel=0.01)
    weight = 28672 * 4096 * 2.0
    assert row["predicted"] == pytest.approx(weight / (0.87 * 4.8e12) + 2.047e-6, rel=0.01)


def test_decode_attention_takes_the_faster_kernel(report: dict[str, Any]) -> None:
    """One sequence over 32K tokens: one flash-attention call (8 thread blocks on 132 multiprocessors) took 379 us,
    its flash-decoding split in 32 took 57.6 us; an engine runs the split, and so the row is the split's."""
    row = _by_id(report)["decode attention llama-3.1-8b B=1 L=32768"]
    assert row["measured"] == pytest.approx(57.6e-6, rel=0.01)
    assert "32 KV splits" in row["plan_source"]
    # many sequences fill the machine without a split: the cache streams at 0.9 of 4.8 TB/s, as priced
    big = _by_id(report)["decode attention llama-3.1-8b B=128 L=4096"]
    assert abs(big["error_pct"]) < 10.0


def test_the_chip_is_read_from_the_device_name(catalog: Catalog, tmp_path: Path) -> None:
    data = json.loads(measured_path().read_text(encoding="utf-8"))
    data.pop("chip")
    data = {k: data[k] for k in ("device", "gemm")}
    got = validate_kernels(catalog, _write(tmp_path, data))
    assert {r["chip"] for r in got["rows"]} == {"h200"} and got["summary"]["n"] == 252


def test_steps_of_another_decoder_are_skipped_with_the_reason(catalog: Catalog, tmp_path: Path) -> None:
    """A --smoke run's tiny decoder is not Llama-3.1-8B: its steps are skipped, saying which shapes differ."""
    data = {
        "chip": "h200",
        "step_model": {"layers": 2, "hidden": 256, "heads": 8, "kv_heads": 2, "head_dim": 32, "ffn": 512, "vocab": 99},
        "gemm": [{"shape": "s", "m": 1, "n": 4096, "k": 4096, "precision": "bf16", "seconds": 1e-5}],
        "decode_step": [{"batch": 1, "context": 512, "precision": "bf16", "seconds": 1e-3}],
    }
    got = validate_kernels(catalog, _write(tmp_path, data))
    assert got["summary"]["n"] == 1
    assert got["skipped"][0]["id"] == "decode step bf16 B=1 L=512"
    assert "layers, hidden, heads, kv_heads, head_dim, ffn, vocab differ" in got["skipped"][0]["reason"]


def test_validate_reads_a_kernel_measurement(capsys: pytest.CaptureFixture[str]) -> None:
    got = run_json(capsys, ["validate", "--data", str(measured_path()), "--json"])
    assert got["kind"] == "kernels" and got["measurement"]["device"] == "NVIDIA H200"
    assert got["summary"]["rows_predicted"] == 306


@pytest.mark.parametrize(
    ("data", "names"),
    [
        ("{", "cannot be read"),
        ('{"device": "NVIDIA H200"}', "has no measurements in any of the sections"),
        ('{"chip": "h200", "gemm": []}', "has no measurements in any of the sections"),
        ('{"chip": "h200", "gemm": [1]}', "'gemm' is not a list of objects"),
        ('{"chip": "h200", "gemm": [{"m": 1, "n": 8, "k": 8, "seconds": 1e-6, "precision": "int3"}]}', "'int3'"),
        ('{"chip": "h200", "gemm": [{"m": 1, "n": 8, "k": 8, "seconds": 1e-6}], "step_model": [1]}', "'step_model'"),
        (
            '{"chip": "h200", "decode_attention": [{"layout": "x", "batch": 1, "context": 8, "seconds": "1"}]}',
            "decode_attention row 1: 'seconds' is '1'",
        ),
        ('{"device": "Acme X1", "gemm": [{"m": 1, "n": 8, "k": 8, "seconds": 1e-6}]}', "'Acme X1' matches no catalog"),
        ('{"chip": "h200", "gemm": [{"m": -1, "n": 8, "k": 8, "seconds": 1e-6}]}', "'m' is -1, not a positive"),
        ('{"chip": "h999", "gemm": [{"m": 1, "n": 8, "k": 8, "seconds": 1e-6}]}', "h999"),
    ],
)
def test_a_bad_kernel_measurement_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, data: str, names: str
) -> None:
    path = tmp_path / "k.json"
    path.write_text(data, encoding="utf-8")
    assert names in run_error(capsys, ["validate", "--data", str(path)])


def test_explain_names_a_kernel_file_as_such(capsys: pytest.CaptureFixture[str]) -> None:
    line = run_error(capsys, ["validate", "--data", str(measured_path()), "--explain", "x"])
    assert "holds kernel measurements" in line


def test_each_kind_of_measurement_is_priced_by_hand(catalog: Catalog, report: dict[str, Any]) -> None:
    """The per-token figures behind three rows, by hand: a 70B TP8 rank's decode attention reads K and V of one KV
    head (2 x 128 x 2 B = 512 B) and does q.k and p.v for its 8 query heads (2 x 8 x 2 x 128 = 4,096 FLOPs) per
    cached token; a causal prefill of L tokens does 4 x 32 heads x 128 x L (L + 1) / 2 FLOPs; an fp8 weight is one
    byte an element."""
    from chipwise.hardware import hardware
    from chipwise.perf.compute import roofline
    from chipwise.perf.device import device_of
    from chipwise.perf.serving import attention_rate
    from chipwise.serve.engine import engine_profile, serving_device

    system = hardware(catalog).system("h200")
    dev = serving_device(device_of(system), engine_profile(catalog, "vllm", system.chip.family))
    bw, rate = dev.hbm_bandwidth * dev.eff.memory, attention_rate(dev, "bf16")
    rows = _by_id(report)
    attention = rows["decode attention llama-3.1-70b tp8 B=256 L=2048"]
    assert attention["predicted"] == pytest.approx(256 * 2048 * float(roofline(4096 / rate, 512 / bw)), rel=1e-9)
    prefill = rows["prefill attention L=8192"]
    assert prefill["predicted"] == pytest.approx(4 * 32 * 128 * 8192 * 8193 / 2 / rate, rel=1e-9)
    gemm = rows["gemm llama-3.1-8b o fp8 m=1"]
    assert gemm["predicted"] == pytest.approx(4096 * 4096 * 1.0 / bw + dev.eff.kernel_overhead_s, rel=0.01)
