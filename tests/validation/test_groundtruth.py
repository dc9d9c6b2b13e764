"""Tests for the ground-truth CSV parser (chipwise.validation.groundtruth)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.validation.cells import canonical_chip, parse_int, parse_number, parse_stat_values
from chipwise.validation.groundtruth import detect_kind, read_inference, read_training
from chipwise.validation.rows import KNOWN_CHIPS, InferenceRow, Measured, TrainingRow
from chipwise.validation.serving_row_engine import normalize_engine
from chipwise.validation.serving_row_load import parse_load
from chipwise.validation.serving_row_metrics import parse_latency_ms
from chipwise.validation.serving_row_plan import parse_serving_plan
from chipwise.validation.serving_row_precision import parse_weight_precision
from inference_rows import inference_row

DATA = Path(__file__).parents[2] / ".." / "shared" / "data"
TRAIN_CSV = DATA / "groundtruth_training.csv"
SERVE_CSV = DATA / "groundtruth_inference.csv"


# --------------------------------------------------------------------------------------------------
# Number helpers (no data files needed)
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2787.5 (derived)", 2787.5),
        ("~1500 (emulated, var 150)", 1500.0),
        ("1.3M", 1.3e6),
        ("30.84M", 30.84e6),
        ("15T+", 15e12),
        ("780B", 780e9),
        ("14800 (decode node)", 14800.0),
        ("1,024", 1024.0),
        ("1.5e-3", 1.5e-3),
        ("", None),
        ("SUT-chosen (not in log)", None),
        ("p99", None),
        ("TP8", None),
    ],
)
def test_parse_number_examples(text: str, expected: float | None) -> None:
    value = parse_number(text)
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected)


@pytest.mark.parametrize(
    ("batch", "scenario", "users", "max_batch"),
    [
        ("concurrency=64", "", 64, None),
        ("max concurrent users=8", "", 8, None),
        ("--max-concurrency 64", "", 64, None),
        ("conc 16", "", 16, None),
        ("users=32", "", 32, None),
        ("32 users", "", 32, None),
        ("64 concurrent requests", "", 64, None),
        ("", "AIPerf closed-loop concurrency sweep, 5 concurrent requests", 5, None),
        ("batch=8", "", 8, None),
        ("concurrency=16; max_num_seqs=256", "", 16, 256),
        ("max (cuda-graph batch sizes up to 8192); 3000 requests", "", None, 8192),
        ("1000 prompts", "vllm bench serve, ShareGPT, infinite request rate", None, None),
        ("batch size 64", "", 64, None),
        ("32", "", 32, None),
        ("c=64", "", 64, None),
        ("1k/1k c64", "", 64, None),
        ("bs=16", "", 16, None),
    ],
)
def test_parse_load_reads_the_ways_sweeps_name_their_users(
    batch: str, scenario: str, users: int | None, max_batch: int | None
) -> None:
    load = parse_load(batch, scenario, "")
    assert (load.concurrency, load.max_batch) == (users, max_batch)


@pytest.mark.parametrize(
    ("batch", "scenario", "rate"),
    [
        ("request rate 4 req/s", "", 4.0),
        ("QPS 4", "", 4.0),
        ("qps=2.5", "", 2.5),
        ("rps 4", "", 4.0),
        ("4 QPS", "", 4.0),
        ("", "Poisson arrivals at 2 req/s", 2.0),
        ("", "guidellm asynchronous@1.14 req/s", 1.14),
        ("max-concurrency 32, request-rate inf", "", None),
        ("concurrency=16", "", None),
    ],
)
def test_parse_load_reads_arrival_rates(batch: str, scenario: str, rate: float | None) -> None:
    assert parse_load(batch, scenario, "").request_rate == rate


def test_a_rate_without_users_is_an_open_loop() -> None:
    row = inference_row(batch_or_concurrency="QPS 4", scenario="online serving benchmark")
    assert (row.scenario, row.request_rate, row.concurrency) == ("rate", 4.0, None)
    assert "open loop" in row.notes


def test_a_latency_written_in_seconds_in_a_ms_column_is_converted() -> None:
    notes: list[str] = []
    assert parse_latency_ms("0.12 s", "ttft", "", notes) == {"value": 120.0} and notes[0] == "ttft given in s (0.12 s)"
    assert parse_latency_ms("mean 20.5", "tpot", "", []) == {"mean": 20.5}
    assert parse_latency_ms("120 ms", "ttft", "", []) == {"value": 120.0}


@pytest.mark.parametrize(
    ("text", "arch", "plan"),
    [
        ("TP2 x 4", "dense", (2, 1, 1, 4, False)),
        ("4xTP2", "dense", (2, 1, 1, 4, False)),
        ("tensor parallel 8", "dense", (8, 1, 1, 1, False)),
        ("tensor_parallel_size=4", "dense", (4, 1, 1, 1, False)),
        ("--tp-size 8 --ep-size 8", "moe", (8, 1, 8, 1, False)),
        ("DEP8", "moe", (8, 1, 8, 1, True)),
        ("TEP8", "moe", (8, 1, 8, 1, False)),
        ("TP4/EP4, enable_attention_dp", "moe", (4, 1, 4, 1, True)),
        ("DP8 EP8", "moe", (8, 1, 8, 1, True)),
        ("DP-attention 8, EP 8", "moe", (8, 1, 8, 1, True)),
        ("DP8", "dense", (1, 1, 1, 8, False)),
        ("tp8ep8dp8", "moe", (8, 1, 8, 1, True)),
        ("TP4PP2", "dense", (4, 2, 1, 1, False)),
        ("--tp 8 --dp 8 --enable-dp-attention", "moe", (8, 1, 1, 1, True)),
        ("TP8 EP8 (dp-attn)", "moe", (8, 1, 8, 1, True)),
        ("TP4 DP2", "moe", (4, 1, 1, 2, False)),
        ("ADP8 EP8", "moe", (8, 1, 8, 1, True)),
        ("8-way tensor parallelism", "dense", (8, 1, 1, 1, False)),
        ("4-way tensor parallel, 4-way expert parallel", "moe", (4, 1, 4, 1, False)),
    ],
)
def test_parse_serving_plan_reads_other_spellings(text: str, arch: str, plan: tuple[int, int, int, int, bool]) -> None:
    """Engines and benchmark tables spell plans differently; each becomes tp/pp/ep per replica and replicas."""
    p = parse_serving_plan(text, "b200", 8, arch, [])
    assert (p.tp, p.pp, p.ep, p.dp, p.attention_dp) == plan


def test_parse_int_rejects_fractions() -> None:
    assert parse_int("512") == 512
    assert parse_int("16 (nodes)") == 16
    assert parse_int("2.5") is None
    assert parse_int("") is None


def test_parse_stat_values() -> None:
    assert parse_stat_values("p99 461.3; mean 275.9") == {"p99": 461.3, "mean": 275.9}
    assert parse_stat_values("p50 1661.12; p99 1672.71") == {"p50": 1661.12, "p99": 1672.71}
    assert parse_stat_values("prefill 63.17") == {"value": 63.17}
    assert parse_stat_values("") == {}
    assert parse_stat_values("45.3 (p50)") == {"p50": 45.3}
    assert parse_stat_values("120 ms (mean); 300 ms (p99)") == {"mean": 120.0, "p99": 300.0}
    assert parse_stat_values("Mean TTFT 120 ms, P99 TTFT 300 ms") == {"mean": 120.0, "p99": 300.0}


_finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@given(
    x=_finite,
    prefix=st.sampled_from(["", "~", " ", "(", "approx "]),
    suffix=st.sampled_from(["", " (derived)", " ms", "; p99 3", " per node"]),
)
def test_parse_number_round_trips_formatted_floats(x: float, prefix: str, suffix: str) -> None:
    assert parse_number(f"{prefix}{x!r}{suffix}") == x
    assert parse_number(f"{prefix}{x:,}{suffix}") == x


@given(n=st.integers(min_value=0, max_value=10**6), unit=st.sampled_from(["k", "K", "M", "B", "T"]))
def test_parse_number_multiplier_suffix(n: int, unit: str) -> None:
    factor = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}[unit]
    assert parse_number(f"{n}{unit} (approx)") == pytest.approx(n * factor)
    assert parse_number(f"p{n}") is None


# --------------------------------------------------------------------------------------------------
# Data files
# --------------------------------------------------------------------------------------------------


def _require(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"shared ground-truth data not present: {path}")
    return path


@pytest.fixture(scope="module")
def train() -> dict[str, TrainingRow]:
    return {row.id: row for row in read_training(_require(TRAIN_CSV))}


@pytest.fixture(scope="module")
def serve() -> dict[str, InferenceRow]:
    return {row.id: row for row in read_inference(_require(SERVE_CSV))}


def _metric(row: InferenceRow, metric: str) -> Measured:
    found = [m for m in row.measured if m.metric == metric]
    assert len(found) == 1, f"{row.id}: {metric} -> {row.measured}"
    return found[0]


def _check(found: Measured | None, metric: str, value: float, stat: str) -> None:
    assert found is not None
    assert (found.metric, found.stat) == (metric, stat)
    assert found.value == pytest.approx(value)


def test_detect_kind() -> None:
    assert detect_kind(_require(TRAIN_CSV)) == "train"
    assert detect_kind(_require(SERVE_CSV)) == "serve"


def test_detect_kind_rejects_other_tables(tmp_path: Path) -> None:
    other = tmp_path / "x.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(ChipwiseError, match="neither"):
        detect_kind(other)


def test_every_training_row_parses(train: dict[str, TrainingRow]) -> None:
    assert len(train) == 347
    for row in train.values():
        assert not (row.skip_reason or "").startswith("unparseable"), (row.id, row.skip_reason)
        assert row.precision in {"fp32", "bf16", "fp16", "fp8", "fp4", "int8"}
        assert row.model.arch in {"dense", "moe"}
        if row.measured is None:
            assert row.skip_reason is not None, row.id
        if row.skip_reason is None:
            assert row.measured is not None and row.measured.value > 0
            assert row.num_chips is not None and row.chip in KNOWN_CHIPS
    kept = sum(row.skip_reason is None for row in train.values()) / len(train)
    assert kept >= 0.85


def test_every_inference_row_parses(serve: dict[str, InferenceRow]) -> None:
    assert len(serve) == 338
    vocabulary = {"bf16", "fp16", "fp8", "fp4", "int8", "int4"}
    for row in serve.values():
        assert not (row.skip_reason or "").startswith("unparseable"), (row.id, row.skip_reason)
        assert row.weight_precision in vocabulary and row.kv_precision in vocabulary
        assert row.engine in {"trtllm", "trtllm-engine", "vllm", "sglang", "neuron", "fastertransformer", "other"}
        assert row.scenario in {"offline", "server", "interactive", "closed_loop", "rate", "single"}
        assert min(row.tp, row.pp, row.ep, row.dp) >= 1
        assert len({m.metric for m in row.measured}) == len(row.measured)
        if row.skip_reason is None:
            assert row.measured and all(m.value > 0 and math.isfinite(m.value) for m in row.measured)
    kept = sum(row.skip_reason is None for row in serve.values()) / len(serve)
    assert kept >= 0.85


# ------------------------------- training rows ----------------------------------------------------


def test_llm_foundry_fsdp_row(train: dict[str, TrainingRow]) -> None:
    row = train["T001"]
    assert row.source_family == "MosaicML llm-foundry benchmark"
    assert row.model.name == "MPT-70B"
    assert row.model.params_total == pytest.approx(64.862e9)
    dims = row.model
    assert (dims.layers, dims.hidden, dims.ffn_hidden, dims.heads, dims.vocab) == (80, 8192, 32768, 64, 50368)
    assert (row.chip, row.num_chips, row.precision) == ("h100-sxm", 512, "bf16")
    assert (row.seq_len, row.global_batch_tokens, row.micro_batch) == (2048, 8388608, 8)
    assert row.plan == {"dp": 512, "zero": 3, "recompute": "full"}
    _check(row.measured, "tokens_per_s_per_chip", 1007.0, "value")
    assert row.skip_reason is None and not row.lora and not row.plan_counts_cores


def test_shard_grad_op_and_no_recompute(train: dict[str, TrainingRow]) -> None:
    assert train["T013"].plan == {"dp": 512, "zero": 2, "recompute": "none"}


def test_fp8_amp_precision(train: dict[str, TrainingRow]) -> None:
    assert train["T065"].precision == "fp8"
    assert train["T162"].precision == "fp8"  # 'FP8 (tensorwise)'


def test_batch_tokens_from_sequences(train: dict[str, TrainingRow]) -> None:
    row = train["T150"]  # torchtitan, 64 seqs of 8192, 'selective layer' AC, FSDP2 (1D)
    assert row.global_batch_tokens == 64 * 8192
    assert row.plan == {"dp": 64, "zero": 3, "recompute": "selective"}


def test_missing_seq_len_is_noted(train: dict[str, TrainingRow]) -> None:
    row = train["T160"]
    assert row.seq_len is None and row.global_batch_tokens is None
    assert "seq_len not stated" in row.notes and row.skip_reason is None


def test_torchtitan_3d_and_context_parallel(train: dict[str, TrainingRow]) -> None:
    # 'PP schedule Interleaved 1F1B': torchtitan's looped schedule, two model chunks a rank; a plain '1F1B', one
    assert train["T170"].plan == {"tp": 8, "pp": 8, "dp": 8, "vpp": 2, "zero": 3, "recompute": "full"}
    assert train["T172"].plan["vpp"] == 1 and "schedule 1F1B: vpp=1" in train["T172"].notes
    assert train["T165"].plan == {"dp": 2, "cp": 4, "zero": 3, "recompute": "full"}
    assert train["T181"].plan["recompute"] == "selective"  # 'per-op SAC'


def test_ambiguous_torchtitan_units_are_skipped(train: dict[str, TrainingRow]) -> None:
    assert train["T189"].skip_reason == "throughput unit ambiguous (per chip or total)"
    row = train["T194"]
    assert row.skip_reason == "throughput unit ambiguous (per chip or total)"
    assert (row.precision, row.model.arch, row.model.experts, row.model.top_k) == ("fp8", "moe", 16, 1)
    assert row.model.ffn_hidden == 8192


def test_nemo_virtual_pipeline(train: dict[str, TrainingRow]) -> None:
    row = train["T198"]
    assert row.plan == {"tp": 4, "pp": 8, "dp": 16, "cp": 1, "vpp": 6}
    _check(row.measured, "tokens_per_s_per_chip", 782.0, "value")


def test_long_context_tflops_only_is_skipped(train: dict[str, TrainingRow]) -> None:
    row = train["T207"]
    assert row.measured is None
    assert row.skip_reason == (  # the reason the conversion gave, not only that there was none
        "no throughput or step time (model TFLOP/s only: attention is 21% of FLOPs/token, so the FLOP convention "
        "matters too much to convert)"
    )
    assert train["T340"].skip_reason == "no throughput or step time (model TFLOP/s only: seq_len unknown)"
    assert row.plan["dp"] == 8 and "dp set to 8" in row.notes


def test_megatron_bridge_moe(train: dict[str, TrainingRow]) -> None:
    row = train["T228"]
    assert row.model.arch == "moe"
    assert row.model.params_active == pytest.approx(37e9)
    assert (row.model.experts, row.model.top_k, row.model.ffn_hidden) == (256, 8, 2048)
    assert row.plan == {"tp": 1, "pp": 2, "dp": 128, "cp": 1, "ep": 32, "vpp": 4, "zero": 1}
    assert train["T229"].precision == "fp8"  # FP8-MX
    assert train["T258"].precision == "fp4"  # NVFP4


def test_maxtext_tflops_are_converted(train: dict[str, TrainingRow]) -> None:
    row = train["T292"]
    per_token = 6 * 32e9 + 12 * 32 * 8192 * 2048
    _check(row.measured, "tokens_per_s_per_chip", 328e12 / per_token, "value")
    assert row.plan == {"tp": 4, "zero": 3, "recompute": "selective"}
    assert row.skip_reason is None and "derived from 328 model TFLOP/s" in row.notes
    offloaded = train["T328"]  # 'remat_policy=qkv_proj_offloaded; ici_fsdp=16, ici_tp=16'
    assert offloaded.plan["tp"] == 16 and offloaded.plan["recompute"] == "selective"


def test_tflops_not_converted_without_the_flag() -> None:
    rows = {r.id: r for r in read_training(_require(TRAIN_CSV), derive_from_tflops=False)}
    assert rows["T292"].measured is None
    assert rows["T292"].skip_reason == "no throughput or step time (model TFLOP/s only)"


def test_mlperf_rows(train: dict[str, TrainingRow]) -> None:
    gpt3 = train["T346"]
    assert gpt3.plan == {"tp": 4, "pp": 6, "dp": 448, "vpp": 8, "zero": 1}
    _check(gpt3.measured, "tokens_per_s_per_chip", 556.1, "p50")
    tpu = train["T348"]  # tp and remat come from the notes' run-script settings
    assert (tpu.precision, tpu.plan["tp"], tpu.plan["recompute"]) == ("int8", 8, "full")
    lora = train["T370"]
    assert lora.lora and lora.precision == "fp8" and lora.skip_reason is None
    unresolved = train["T394"]
    assert unresolved.precision == "fp8" and "ambiguous" in unresolved.notes
    assert train["T405"].precision == "fp4" and train["T405"].lora
    # only a time to train: not read as the log's training rate the other MLPerf rows give
    assert str(train["T352"].skip_reason).startswith("no throughput or step time (time-to-train only: 66.24 min for")


def test_trainium_rows(train: dict[str, TrainingRow]) -> None:
    row = train["T407"]
    assert row.plan_counts_cores and row.plan == {"tp": 32, "pp": 8, "dp": 4}
    _check(row.measured, "step_time_s", 129.0, "value")
    from_notes = train["T413"]  # 'Performance = 60 seq/sec', seq_len missing, DP contradicts chips
    _check(from_notes.measured, "step_time_s", 1024 / 60, "value")
    assert from_notes.plan["dp"] == 32
    assert train["TT038"].plan == {"tp": 8, "pp": 4, "dp": 32}
    assert train["TT032"].plan["zero"] == 1
    bert = train["TT064"]
    assert (bert.precision, bert.plan_counts_cores, bert.model.params_total) == ("fp32", True, 0.34e9)


def test_published_reports(train: dict[str, TrainingRow]) -> None:
    megatron = train["T415"]
    assert megatron.precision == "fp16"
    _check(megatron.measured, "step_time_s", 32.0, "value")
    assert train["T416"].skip_reason == (  # '502 petaFLOP/s aggregate on 3072 GPUs, 52% of peak'
        "MFU only (a FLOP rate, '502 petaFLOP/s aggregate', is stated in the notes only, not as tflops_per_chip)"
    )
    sp = train["T422"]
    assert sp.plan["sp"] is True and sp.plan["recompute"] == "selective"
    assert sp.plan["vpp"] == 3
    assert train["T429"].skip_reason == (
        "no throughput or step time (model TFLOP/s only: only an 'up to' (peak, not sustained) figure)"
    )
    palm = train["T434"]
    assert palm.skip_reason == "MFU only (peak FLOP/s denominator not given)"
    assert palm.plan == {"pp": 1} and palm.global_batch_tokens == 2048 * 2048
    llama3 = train["T445"]
    assert llama3.global_batch_tokens == 16 * 2**20
    per_token = 6 * 405e9 + 12 * 126 * 16384 * 8192
    assert llama3.measured is not None and llama3.measured.value == pytest.approx(430e12 / per_token)


def test_aggregate_gpu_hour_rows(train: dict[str, TrainingRow]) -> None:
    assert train["T431"].skip_reason == "aggregate GPU-hours figure (paper)"
    assert train["T431"].num_chips is None
    card = train["T435"]
    assert card.skip_reason == "aggregate GPU-hours figure (model card)"
    assert card.global_batch_tokens == 4 * 2**20
    assert train["T438"].skip_reason == "aggregate GPU-hours figure (model card)"


def test_unknown_chip_is_skipped() -> None:
    rows = read_training(_require(TRAIN_CSV), known_chips=frozenset({"h100-sxm"}))
    by_id = {r.id: r for r in rows}
    assert by_id["T407"].skip_reason == "chip not in catalog: trn1"
    assert by_id["T001"].skip_reason is None


# ------------------------------- inference rows ---------------------------------------------------


def test_mlperf_server_row(serve: dict[str, InferenceRow]) -> None:
    row = serve["I002"]
    assert (row.chip, row.num_chips, row.engine) == ("h100-sxm", 8, "trtllm-engine")  # MLPerf: a TensorRT engine build
    assert (row.weight_precision, row.kv_precision) == ("fp8", "fp8")
    assert (row.tp, row.pp, row.ep, row.dp, row.plan_given) == (2, 1, 1, 4, True)
    assert row.scenario == "server" and row.request_rate == pytest.approx(74.42)
    assert (row.max_batch, row.concurrency, row.input_len) == (896, None, None)
    assert row.output_len == pytest.approx(21605.79 / 74.42)
    assert row.ttft_limit_s == pytest.approx(2.0) and row.tpot_limit_s == pytest.approx(0.2)
    _check(_metric(row, "output_tokens_per_s_per_chip"), "output_tokens_per_s_per_chip", 2700.72, "value")
    _check(_metric(row, "ttft_s"), "ttft_s", 0.2759, "mean")
    _check(_metric(row, "tpot_s"), "tpot_s", 0.155, "mean")


def test_mlperf_offline_plans(serve: dict[str, InferenceRow]) -> None:
    assert (serve["I003"].tp, serve["I003"].dp, serve["I003"].max_batch) == (1, 8, 806)
    assert serve["I003"].scenario == "offline" and serve["I003"].ttft_limit_s is None
    single = serve["I005"]
    assert single.plan_given and (single.tp, single.dp) == (1, 1)
    assert not serve["I012"].plan_given
    assert (serve["I014"].tp, serve["I014"].dp) == (1, 8)
    # labelled fp16 by NVIDIA's harness, run with use_fp8 (the submission's configs): SOURCE_PRECISIONS
    assert (serve["I018"].weight_precision, serve["I018"].kv_precision) == ("fp8", "fp8")
    nvfp4 = serve["I019"]
    assert (nvfp4.weight_precision, nvfp4.kv_precision, nvfp4.max_batch) == ("fp4", "bf16", 2048)
    assert (serve["I022"].tp, serve["I022"].pp, serve["I022"].dp) == (2, 2, 2)
    assert serve["I046"].weight_precision == "fp4"  # MXFP4 on a dense model: priced as 4-bit weights and matmuls


def test_a_chip_column_may_name_a_chip_or_system_alias(catalog: Catalog) -> None:
    aliases = hardware(catalog).chip_aliases()
    cases = (
        ("h100", "h100-sxm"),
        ("H200-SXM", "h200"),
        ("gb200-nvl72", "gb200"),
        ("p5.48xlarge", "h100-sxm"),
        ("H100 SXM", "h100-sxm"),
        ("b200", "b200"),
        ("NVIDIA H100 SXM5 80GB", "h100-sxm"),
        ("NVIDIA H200 141GB", "h200"),
        ("H100_80GB_HBM3", "h100-sxm"),  # nvidia-smi's name
        ("NVIDIA H200 141GB HBM3e", "h200"),
        ("B200 180GB", "b200"),
        ("A100 SXM4 40GB", "a100-40gb"),
        ("AMD Instinct MI300X", "mi300x"),
        ("Gaudi 3", "gaudi3"),
        ("Trainium 2", "trn2"),
        ("TPU v5e", "tpu-v5e"),
        ("H100 PCIe", "h100 pcie"),  # another product: not read as the SXM part
        ("H100 NVL", "h100 nvl"),
        ("warp-drive-9000", "warp-drive-9000"),
    )
    for text, chip in cases:
        notes: list[str] = []
        assert canonical_chip(text, aliases, notes) == chip
        assert bool(notes) == (chip != text.lower())


def test_mxfp4_experts_are_the_gpt_oss_format() -> None:
    notes: list[str] = []
    assert parse_weight_precision("MXFP4 MoE weights (openai/gpt-oss-120b native checkpoint)", notes) == "mxfp4"
    assert parse_weight_precision("MXFP4 weights (gpt-oss-120b native MXFP4 MoE)", notes) == "mxfp4"
    assert parse_weight_precision("BF16 (MXFP4 experts dequantized to BF16 on Trn2)", notes) == "bf16"
    assert parse_weight_precision("MXFP4 weights (weight_data_types=mxfp4)", notes) == "fp4"
    assert not notes


@pytest.mark.parametrize(
    ("text", "weights"),
    [("W8A8", "int8"), ("W8A8-FP8", "fp8"), ("AWQ", "int4"), ("GPTQ 4-bit", "int4"), ("GPTQ int8", "int8"),
     ("W4A16", "int4"), ("FP8 (e4m3)", "fp8"), ("NVFP4", "fp4")],
)  # fmt: skip
def test_quantisation_schemes_are_read_as_their_weights(text: str, weights: str) -> None:
    assert parse_weight_precision(text, []) == weights


@pytest.mark.parametrize(("cell", "chips"), [("8", 8), ("1,024", 1024), ("1 node (8 GPUs)", 8), ("8x", 8)])
def test_a_chip_count_cell_counts_the_chips(cell: str, chips: int) -> None:
    assert inference_row(num_chips=cell, parallelism="TP8").num_chips == chips


def test_attention_dp_and_expert_parallel(serve: dict[str, InferenceRow]) -> None:
    row = serve["I027"]
    assert (row.tp, row.ep, row.dp, row.attention_dp, row.arch) == (8, 8, 1, True, "moe")
    nvl72 = serve["I033"]  # '... per instance' on 72 GPUs
    assert (nvl72.tp, nvl72.ep, nvl72.dp) == (8, 8, 9)
    interactive = serve["I040"]
    assert interactive.scenario == "interactive"
    assert interactive.ttft_limit_s == pytest.approx(0.45)
    assert interactive.tpot_limit_s == pytest.approx(0.04)


def test_mixed_hardware(serve: dict[str, InferenceRow]) -> None:
    assert serve["I047"].skip_reason == "mixed hardware"


def test_trtllm_perf_overview(serve: dict[str, InferenceRow]) -> None:
    moe = serve["I054"]
    assert (moe.tp, moe.ep, moe.attention_dp, moe.arch) == (4, 4, True, "moe")
    assert (moe.input_len, moe.output_len, moe.max_batch, moe.scenario) == (128, 128, 8192, "offline")
    assert _metric(moe, "output_tokens_per_s_per_chip").value == 7588.5
    assert "EP size not stated" in moe.notes
    dense = serve["I090"]
    assert (dense.weight_precision, dense.tp, dense.ep, dense.attention_dp) == ("fp4", 1, 1, False)


def test_neuron_transformers_rows(serve: dict[str, InferenceRow]) -> None:
    row = serve["I262"]
    assert (row.tp, row.plan_counts_cores, row.engine, row.concurrency) == (32, True, "neuron", 4)
    assert row.scenario == "closed_loop"
    _check(_metric(row, "ttft_s"), "ttft_s", 1.66112, "p50")
    _check(_metric(row, "tpot_s"), "tpot_s", 0.03233, "p50")
    assert serve["I272"].speculative and not serve["I273"].speculative  # 'No speculative decoding'
    assert serve["I272"].tp == 64 and serve["I272"].plan_counts_cores


def test_disaggregated_and_chipless_rows(serve: dict[str, InferenceRow]) -> None:
    prod = serve["I275"]
    # 'prefill: EP32 / DP32 over 4 nodes; decode: EP144 / DP144 over 18 nodes': attention DP over each pool's ranks
    assert prod.prefill_pool == (32, 1, 32, True, 1)
    assert (prod.tp, prod.ep, prod.attention_dp) == (144, 144, True)
    assert prod.skip_reason is None  # its pools are stated (it is then skipped for its unstated lengths)
    _check(_metric(prod, "tpot_s"), "tpot_s", 1 / 21, "mean")
    sglang = serve["I276"]
    assert _metric(sglang, "output_tokens_per_s_per_chip").value == 2787.5
    assert sglang.skip_reason == "prefill/decode disaggregated serving whose pools the row does not state"
    assert serve["I278"].skip_reason == "no chip count"
    dynamo = serve["I282"]
    assert dynamo.skip_reason == "no chip count" and dynamo.speculative  # MTP
    assert dynamo.params_total == pytest.approx(671e9) and dynamo.params_active == pytest.approx(37e9)
    assert _metric(dynamo, "tpot_s").value == pytest.approx(0.008)


def test_amd_and_blog_rows(serve: dict[str, InferenceRow]) -> None:
    static = serve["I285"]
    assert (static.scenario, static.concurrency, static.engine, static.tp) == ("closed_loop", 2, "vllm", 8)
    h200 = serve["I296"]
    # the row gives no precision; NVIDIA's follow-up post names its numbers the official Llama FP8 recipe
    assert not h200.plan_given and (h200.weight_precision, h200.kv_precision) == ("fp8", "bf16")
    assert _metric(h200, "output_tokens_per_s_per_chip").value == pytest.approx(230.8 / 8)
    ft = serve["I298"]
    assert (ft.engine, ft.scenario) == ("fastertransformer", "single")
    assert _metric(ft, "ttft_s").value == pytest.approx(0.06317)
    kv = serve["I301"]
    assert (kv.weight_precision, kv.kv_precision, kv.max_batch) == ("fp8", "fp8", 1500)


def test_trn2_tutorial_rows(serve: dict[str, InferenceRow]) -> None:
    spec = serve["TI002"]
    assert (spec.weight_precision, spec.speculative, spec.output_len) == ("fp8", True, 1500)
    assert _metric(spec, "output_tokens_per_s_per_chip").stat == "p50"
    cache = serve["TI005"]
    assert (cache.max_batch, cache.concurrency, cache.input_len) == (4, None, None)
    assert len(cache.measured) == 1
    _check(cache.measured[0], "ttft_s", 0.34281, "p50")
    p99 = serve["TI014"]
    assert p99.output_len == 565 and _metric(p99, "ttft_s").stat == "p99"
    oss = serve["TI015"]
    assert (oss.weight_precision, oss.tp, oss.num_chips, oss.plan_counts_cores) == ("bf16", 16, 4, True)
    _check(_metric(oss, "tpot_s"), "tpot_s", 0.007, "p50")
    eagle = serve["TI018"]
    assert eagle.speculative and (eagle.concurrency, eagle.max_batch) == (2, 2)


def test_neuron_sdk_table_rows(serve: dict[str, InferenceRow]) -> None:
    latency = serve["TI026"]  # 'Latency P50/P99 (ms)' mapped to tpot
    _check(_metric(latency, "tpot_s"), "tpot_s", 0.05111, "p50")
    assert latency.weight_precision == "fp16" and latency.scenario == "single"
    p50 = serve["TI082"]  # P99 in the notes, so the column is the P50
    _check(_metric(p50, "ttft_s"), "ttft_s", 0.02585077286, "p50")
    int8 = serve["TI133"]
    assert (int8.weight_precision, int8.kv_precision) == ("int8", "fp16")


def test_guidellm_rows(serve: dict[str, InferenceRow]) -> None:
    rate = serve["TI159"]
    assert (rate.scenario, rate.request_rate, rate.max_batch) == ("rate", 2.46, 32)
    assert (rate.input_len, rate.output_len) == (1500, 250)
    saturating = serve["TI163"]
    assert (saturating.scenario, saturating.concurrency) == ("closed_loop", 128)
    replicas = serve["TI182"]
    assert (replicas.tp, replicas.dp, replicas.plan_counts_cores) == (8, 3, True)
    mean = serve["TI221"]
    assert mean.input_len == 15900 and mean.output_len == pytest.approx(293.09)
    assert _metric(mean, "ttft_s").stat == "mean"
    sweep = serve["TI225"]
    assert (sweep.scenario, sweep.max_batch) == ("offline", 1)
    _check(_metric(sweep, "ttft_s"), "ttft_s", 1.7, "value")


@pytest.mark.parametrize(
    ("text", "engine"),
    [
        ("TensorRT-LLM 0.21 (PyTorch backend)", "trtllm"),
        ("NVIDIA NIM for LLMs 1.8.0 (llama-3.3-70b-instruct container; backend not stated)", "trtllm-engine"),
        ("NVIDIA NIM for LLMs (meta-llama3-8b-instruct container, TensorRT-LLM backend)", "trtllm-engine"),
        ("TensorRT-LLM (TensorRT 10.2.0, CUDA 12.4)", "trtllm-engine"),
        ("Triton Inference Server, TensorRT-LLM backend", "trtllm-engine"),
        ("TensorRT-LLM 0.16.0", "trtllm-engine"),
        ("TRT-LLM v0.12", "trtllm-engine"),
        ("TensorRT-LLM 0.17.post1.dev (PyTorch backend, trtllm-serve)", "trtllm"),
        ("TensorRT-LLM 0.160", "trtllm"),
        ("TensorRT-LLM (trtllm-bench, PyTorch backend)", "trtllm"),
        ("NIM 1.5 (vLLM profile)", "vllm"),
        ("SGLang v0.5.7", "sglang"),
        ("TensorRT LLM 1.2 (trtllm-serve)", "trtllm"),
        ("NVIDIA Dynamo 0.6 (SGLang backend)", "sglang"),
        ("optimum-neuron 0.4 (vLLM on Neuron)", "neuron"),
        ("llama.cpp", "other"),
    ],
)
def test_engine_names(text: str, engine: str) -> None:
    """NIM's optimised profiles run TensorRT-LLM engine builds unless the row names another back end; TensorRT-LLM
    is its PyTorch back end unless the row names an engine build (a TensorRT version, trtllm-build, Triton) or a
    release before 0.17, which had no PyTorch back end."""
    assert normalize_engine(text) == engine
