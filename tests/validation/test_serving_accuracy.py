"""The serving validation against the published runs in ../shared/data: the issue's accuracy bounds."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.serve.engine import engine_profile
from chipwise.validation.models import model_for
from chipwise.validation.serving import validate_serving
from chipwise.validation.serving_case import prepare
from chipwise.validation.serving_case_engine import engine_family, host_sampling, row_speculation
from chipwise.validation.serving_case_lengths import MLPERF_DATASETS, _length_dist, row_lengths
from chipwise.validation.serving_case_load import occupancy
from chipwise.validation.serving_row_engine import is_speculative
from chipwise.validation.serving_row_load import normalize_scenario
from chipwise.validation.serving_simulation import predict_case
from chipwise.workload.load import Load
from inference_rows import inference_row as _row


@pytest.fixture(scope="module")
def report(catalog: Catalog, shared_data: Path) -> dict[str, Any]:
    return validate_serving(catalog, shared_data / "groundtruth_inference.csv")


#: The issue's throughput bound is not met yet (measured: throughput 20.8%; TPOT 15.0% and TTFT 29.0% are within
#: theirs): most of the error is in Neuron rows whose repeated measurements of one configuration differ by 2x or more
#: (Qwen3-30B-A3B on inf2: single-user TTFT 14 s at 4 and 64 compiled slots, 1.5-2.4 s at 32; Llama 2 70B decoding
#: 3-6x slower in the SDK 2.16-2.17 tables than in 2.18's), and in MLPerf Mixtral rows, whose 427-token mean prompts
#: the model's MoE prefill encodes too slowly (docs/serving.md, section 7). The test turns XPASS when it is met.
NOT_YET = pytest.mark.xfail(reason="issue 4 accuracy bound not met yet (docs/serving.md, section 7)", strict=False)


@NOT_YET
def test_throughput_within_15_percent(report: dict[str, Any]) -> None:
    assert report["summary"]["by_metric"]["output_tokens_per_s_per_chip"]["mape_pct"] <= 15.0


def test_tpot_within_20_percent(report: dict[str, Any]) -> None:
    assert report["summary"]["by_metric"]["tpot_s"]["mape_pct"] <= 20.0


def test_ttft_within_30_percent(report: dict[str, Any]) -> None:
    assert report["summary"]["by_metric"]["ttft_s"]["mape_pct"] <= 30.0


def test_no_regression_from_the_calibrated_state(report: dict[str, Any]) -> None:
    """Guards the accuracy reached so far (a few points of slack over the measured MAPE)."""
    by = report["summary"]["by_metric"]
    assert by["output_tokens_per_s_per_chip"]["mape_pct"] <= 22.0  # measured 20.8 (21.4 before AMD's tuned GEMMs)
    assert by["tpot_s"]["mape_pct"] <= 16.0  # measured 15.0 (16.2 before)
    assert by["ttft_s"]["mape_pct"] <= 29.5  # measured 29.0 (28.2 before: AMD's multi-step scheduling is not modelled)
    assert by["output_tokens_per_s_per_chip"]["median_ape_pct"] <= 10.0  # measured 7.8


def test_at_least_85_percent_of_rows_predicted(report: dict[str, Any]) -> None:
    assert report["summary"]["predicted_fraction"] >= 0.85


def test_rows_are_skipped_only_for_stated_reasons(report: dict[str, Any]) -> None:
    for s in report["skipped"]:
        assert s["reason"].strip()


def test_json_shape(report: dict[str, Any]) -> None:
    rows = report["rows"]
    assert {r["metric"] for r in rows} <= {"output_tokens_per_s_per_chip", "ttft_s", "tpot_s"}
    row = rows[0]
    assert {"id", "chip", "metric", "measured", "predicted", "error_pct", "plan_source"} <= set(row)
    assert {"n", "mape_pct", "median_ape_pct", "by_chip", "by_source_family", "by_metric"} <= set(report["summary"])
    assert row["error_pct"] == pytest.approx(100 * (row["predicted"] - row["measured"]) / row["measured"])
    # a row that measured TTFT and TPOT gives one entry per metric
    by_id: dict[str, set[str]] = {}
    for r in rows:
        by_id.setdefault(r["id"], set()).add(r["metric"])
    assert any(len(m) == 3 for m in by_id.values())


def test_occupancy_is_littles_law() -> None:
    row = _row(
        scenario="guidellm asynchronous@2 req/sec (constant request rate)",
        batch_or_concurrency="rate=2 req/sec",
        requests_per_s="2",
        ttft_ms="500",
        tpot_ms="20",
        output_len="251",
    )
    assert occupancy(row) == pytest.approx(2.0 * (0.5 + 250 * 0.02))


def test_guidellm_emulated_lengths_are_uniform() -> None:
    dist = _length_dist("~1500 (emulated, var 150)", 1500.0)
    assert (dist.kind, dist.low, dist.high) == ("uniform", 1350, 1650)
    assert _length_dist("512", 512.0).kind == "fixed"


def test_mlperf_prompt_lengths_come_from_the_dataset_table() -> None:
    cnn = _row(source_family="MLPerf Inference v5.1", model="Llama3.1-8B", input_len="", output_len="129")
    assert row_lengths(cnn, [])[0] == MLPERF_DATASETS["llama3.18b"].mean_input
    # the mean of the token counts MLPerf's preprocessed datasets store per sample (estimates, with derivations)
    orca = _row(source_family="MLPerf Inference v4.1", model="Llama2-70B", input_len="", output_len="290")
    assert row_lengths(orca, []) == (222.3, 290.0)
    long = _row(source_family="MLPerf Inference v5.1", model="Llama3.1-405B", input_len="", output_len="650")
    assert row_lengths(long, []) == (9428.6, 650.0)
    assert all(d.status == "estimate" and "derivation" in d.source for d in MLPERF_DATASETS.values() if d.mean_input)
    # a dataset with long prompts and no known mean is skipped rather than taken as input = output
    data = replace(MLPERF_DATASETS["llama3.1405b"], mean_input=None)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(MLPERF_DATASETS, "llama3.1405b", data)
        with pytest.raises(ChipwiseError, match="prompts are long"):
            row_lengths(long, [])
    r1 = _row(source_family="MLPerf Inference v5.1", model="DeepSeek-R1", input_len="", output_len="3714")
    assert row_lengths(r1, []) == (803.8, 3714.0)  # short questions, long answers: never input = output


def test_neuron_tables_that_count_prompt_tokens_give_output_throughput_and_no_tpot() -> None:
    """The Neuron SDK 2.14-2.17 decoder tables count prompt and output tokens alike (SDK 2.14's page says so;
    throughput x latency per token = 1000 on the batch-1 rows): Llama-2-13b on trn1, 1024 in / 1024 out, 230.3
    tokens/s on 16 chips is 7.2 output tokens/s per chip, and its 4.3 ms 'latency per token' is the run's latency
    over 2,048 tokens, not a TPOT."""
    notes = (
        'published column "Latency per Token P50/P99 (ms)"=4.3/4.3; mapped to tpot_ms (per-token/step latency); '
        'published "Throughput (tokens/second)"=230.3; compiled/total sequence length=2048'
    )
    row = _row(
        num_chips="16", input_len="1024", output_len="1024", output_tokens_per_s_total="230.3",
        output_tokens_per_s_per_chip="14.39", tpot_ms="4.3", notes=notes,
    )  # fmt: skip
    assert [m.metric for m in row.measured] == ["output_tokens_per_s_per_chip"]
    assert [m.value for m in row.measured] == pytest.approx([7.195])
    plain = _row(output_tokens_per_s_per_chip="14.39", tpot_ms="4.3")
    assert {m.metric for m in plain.measured} == {"output_tokens_per_s_per_chip", "tpot_s"}


def test_a_precision_the_publication_states_elsewhere_is_used(catalog: Catalog) -> None:
    """NVIDIA's July 2024 Llama 3.1 405B table gives no precision; its August follow-up names the same numbers the
    official Llama FP8 recipe (FP8 weights, 16-bit KV cache), and a row of that table is read so."""
    source = "https://developer.nvidia.com/blog/supercharging-llama-3-1-across-nvidia-platforms/ Table 1"
    row = _row(source=source, precision="", model="Llama3.1-405B", input_len="32768", output_len="2048")
    assert (row.weight_precision, row.kv_precision) == ("fp8", "bf16")
    assert "precision from the publication" in row.notes
    assert _row(source="elsewhere", precision="").weight_precision == "bf16"  # other silent rows: bf16, as noted
    # Juniper's MLPerf Llama 2 70B configs label the harness fp16 and set use_fp8: the label is not the weights
    juniper = "github mlcommons/inference_results_v4.1 closed/JuniperNetworks/results/DGX-H100_H100-SXM-80GBx32_TRT/"
    row = _row(source=juniper + "llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt", precision="fp16")
    assert (row.weight_precision, row.kv_precision) == ("fp8", "fp8")
    assert _row(source="elsewhere", precision="fp16").weight_precision == "fp16"
    # AMD's MLPerf Llama 2 70B runs quantise the KV cache too (their blogs); the results only record the weights
    amd = "github mlcommons/inference_results_v5.1 closed/AMD/results/8xMI325X_2xEPYC_9575F_1/llama2-70b-99/Offline/"
    row = _row(source=amd + "performance/run_1/mlperf_log_summary.txt", precision="FP8 weights (weight_data_types=fp8)")
    assert (row.weight_precision, row.kv_precision) == ("fp8", "fp8")


def test_a_row_silent_on_precision_runs_the_released_checkpoint(catalog: Catalog) -> None:
    """Nothing states the weights: DeepSeek-R1 runs as its fp8 checkpoint ships (1.34 TB in bf16 would not fit the
    16 GPUs), Llama in bf16."""
    silent = {"precision": "", "num_chips": "16", "parallelism": "TP16"}
    ds = prepare(catalog, _row(**silent, model="DeepSeek-R1", chip="h100-sxm", serving_engine="SGLang"))
    assert ds.setup.pools[0].setup.plan.weight_precision == "fp8"
    assert any("checkpoint ships them: fp8" in n for n in ds.notes)
    llama = prepare(catalog, _row(**silent, model="Llama-3.1-70B-Instruct"))
    assert llama.setup.pools[0].setup.plan.weight_precision == "bf16"


def test_cpu_sampling_rows_sample_on_the_host(catalog: Catalog) -> None:
    """optimum-neuron's 'CPU sampling' configurations send every slot's logits to the host; its default
    (on-device sampling) and the hybrid mode (only the prefill graph's first token on the CPU) do not."""
    neuron = {"chip": "h100-sxm", "serving_engine": "vLLM + optimum-neuron (optimum-cli neuron serve)"}
    assert host_sampling(_row(**neuron, notes="config B: standard context encoding + CPU sampling"))
    assert not host_sampling(_row(**neuron, notes="config A: standard context encoding + on-device sampling"))
    assert not host_sampling(_row(**neuron, notes="config D: chunked prefill + hybrid ODS (CPU sampling of prefill)"))
    on_host = prepare(
        catalog,
        _row(
            serving_engine="TensorRT-LLM",
            notes="CPU sampling",
            scenario="single",
            batch_or_concurrency="concurrency=1",
        ),
    )
    assert on_host.setup.pools[0].setup.engine.host_sampling
    assert any("sampled on the host" in n for n in on_host.notes)


def test_neuron_engines_carry_the_context_encoding_and_runner_behaviour(catalog: Catalog) -> None:
    """Neuron pays a fixed cost per context encoding (a separate compiled graph) and vLLM on Neuron runs the decode
    graph before the prompts of a step; GPU engines do neither."""
    trt = engine_profile(catalog, "trtllm", "hopper")
    assert trt.prefill_overhead_s == 0.0 and not trt.decode_first and trt.host_sampling_s_per_logit == 0.0
    tnx = engine_profile(catalog, "neuron", "trainium1")
    assert tnx.prefill_overhead_s > 0.0 and not tnx.decode_first
    # one user of 32 slots: 32 rows copied and one sampled = 23.7 ms; 21.9 users: 67.8 ms (optimum-neuron, inf2)
    one = 128256 * (32 * tnx.host_logits_s_per_logit + tnx.host_sampling_s_per_logit)
    assert one == pytest.approx(23.7e-3, rel=0.01)
    loaded = 128256 * (32 * tnx.host_logits_s_per_logit + 21.9 * tnx.host_sampling_s_per_logit)
    assert loaded == pytest.approx(67.8e-3, rel=0.01)
    vllm_neuron = engine_profile(catalog, "vllm-neuron", "trainium1")
    assert vllm_neuron.decode_first and vllm_neuron.static_batch and not vllm_neuron.host_sampling


@pytest.mark.parametrize(
    ("serving_engine", "source_family", "engine"),
    [
        (
            "vLLM + optimum-neuron (optimum-cli neuron serve)",
            "optimum-neuron vLLM benchmark (Hugging Face)",
            "optimum-neuron",
        ),
        (
            "optimum-neuron Neuron container (vLLM backend), 3 replicas",
            "optimum-neuron vLLM benchmark",
            "optimum-neuron",
        ),
        ("vLLM Neuron (native vllm-neuron, SDK 2.32)", "vLLM Neuron tutorial (trn2)", "vllm-neuron"),
        ("transformers-neuronx (TNx)", "aws-neuron-sdk LLM inference benchmark table", "neuron"),
    ],
)
def test_a_neuron_rows_engine_is_the_stack_that_served_it(serving_engine: str, source_family: str, engine: str) -> None:
    """optimum-neuron's runs are its own engine (its own NxD model code and vLLM platform), the vllm-neuron plugin's
    and NxD Inference tutorials' are vllm-neuron, the native runtimes' neuron."""
    row = _row(chip="h100-sxm", serving_engine=serving_engine, source_family=source_family)
    assert engine_family(row, "nvidia") == engine  # the vendor serves a row naming no engine it knows


@pytest.mark.parametrize("engine", ["trtllm", "trtllm-engine", "sglang"])
def test_blackwell_ultra_takes_the_blackwell_fixed_costs(catalog: Catalog, engine: str) -> None:
    """B300/GB300 run Blackwell's kernels, engine loop and host software; their fixed per-iteration, per-layer,
    per-sequence and per-kernel costs are the Blackwell figures (measured alike: one user's TPOT 7.0 ms on B300,
    7.2 ms on B200), their efficiencies their own chip family's."""
    ultra, blackwell = engine_profile(catalog, engine, "blackwell-ultra"), engine_profile(catalog, engine, "blackwell")
    for name in ("step_overhead_s", "layer_overhead_s", "sequence_overhead_s", "kernel_overhead_s"):
        assert getattr(ultra, name) == pytest.approx(getattr(blackwell, name), rel=1e-6), name
    assert ultra.layer_overhead_s != engine_profile(catalog, "default", "blackwell-ultra").layer_overhead_s
    assert (ultra.compute_scale, ultra.memory_scale, ultra.moe_scale) == (1.0, 1.0, 1.0)


def test_a_blackwell_refit_carries_to_its_followers_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """scripts/calibrate_serving.py writes a TensorRT-LLM Blackwell fit's fixed costs to Blackwell Ultra, RTX PRO,
    Hopper and Ampere, leaves their scale factors where they were, and leaves SGLang's and the engine builds' own
    figures alone."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "scripts"))
    import calibrate_serving as cs

    engines = tmp_path / "engines.yaml"
    engines.write_text(cs.ENGINES_YAML.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(cs, "ENGINES_YAML", engines)
    before = yaml.safe_load(engines.read_text(encoding="utf-8"))["engines"]
    info: dict[str, object] = {"values": {"step_overhead": 0.002, "layer_overhead": 4e-5, "kernel_overhead": 2e-6,
                               "compute_scale": 0.9}, "rows": 10, "metrics": 12, "families": 3, "mape_before": 20.0,
                               "mape_after": 19.0, "mape_heldout": 21.0, "heldout_metrics": 12}  # fmt: skip
    cs.write({("trtllm", "blackwell"): info}, [str(cs.DEFAULT_DATA)])
    doc = yaml.safe_load(engines.read_text(encoding="utf-8"))["engines"]
    for family in ("blackwell-ultra", "blackwell-rtx", "hopper", "ampere"):
        node = doc["trtllm"]["chips"][family]
        values = (node["step_overhead"]["value"], node["layer_overhead"]["value"], node["kernel_overhead"]["value"])
        assert values == (2.0, 40.0, 2.0), family
        assert node.get("compute_scale") == before["trtllm"]["chips"][family].get("compute_scale"), family
    assert doc["trtllm"]["chips"]["blackwell"]["compute_scale"]["value"] == 0.9
    # a Hopper refit moves its efficiencies only: its fixed costs are Blackwell's to fit
    names = ["compute_scale", "memory_scale", "step_overhead", "layer_overhead", "kernel_overhead"]
    assert cs.free_params(("trtllm", "hopper"), names) == ["compute_scale", "memory_scale"]
    assert cs.free_params(("trtllm", "blackwell"), names, ["step_overhead"]) == ["step_overhead"]
    assert cs.free_params(("trtllm", "hopper"), names, ["step_overhead"]) == []  # fit() leaves such a group out
    for engine in ("sglang", "trtllm-engine"):
        for family, node in before[engine]["chips"].items():
            assert doc[engine]["chips"][family] == node, (engine, family)


@pytest.mark.parametrize("family", ["hopper", "ampere"])
def test_hopper_takes_the_blackwell_fixed_costs_and_keeps_its_efficiencies(catalog: Catalog, family: str) -> None:
    """Hopper's own refit of TensorRT-LLM's fixed costs put 2.80 ms on every step and nothing on a layer, which its
    runs (mostly 70-405B models) could not tell apart, and which is more than a whole step of Llama-3.1-8B measured at
    TP8 on H100 (2.73 ms at 8 users of 1,024 / 512 tokens, AIConfigurator's gap-analysis sweep): the fixed costs of
    the same engine loop and kernels are Blackwell's fit, the efficiencies Hopper's own."""
    torch, blackwell = engine_profile(catalog, "trtllm", family), engine_profile(catalog, "trtllm", "blackwell")
    for name in ("step_overhead_s", "layer_overhead_s", "sequence_overhead_s", "kernel_overhead_s"):
        assert getattr(torch, name) == pytest.approx(getattr(blackwell, name), rel=1e-9), name
    hopper = engine_profile(catalog, "trtllm", "hopper")
    assert (hopper.compute_scale, hopper.memory_scale) == pytest.approx((0.8696, 1.1323))
    # one Llama-3.1-8B step's fixed costs (32 layers of four GEMMs, 8 sequences) stay well inside the measured step
    fixed = hopper.step_overhead_s + 32 * (hopper.layer_overhead_s + 4 * hopper.kernel_overhead_s)
    assert fixed + 8 * hopper.sequence_overhead_s < 0.5 * 2.73e-3


@pytest.mark.parametrize("family", ["hopper", "blackwell", "blackwell-ultra", "ampere", "blackwell-rtx", "rubin"])
def test_sglang_keeps_one_set_of_fixed_costs_on_nvidia(catalog: Catalog, family: str) -> None:
    """SGLang has no fitted group of its own on NVIDIA: its per-iteration and per-layer costs are TensorRT-LLM's
    Blackwell fit of 2026-11-30 on every NVIDIA family (on Hopper too: SGLang's TPOTs there are measured at those
    costs; engines.yaml says where). TensorRT-LLM's PyTorch back end was refitted alone since, so they are SGLang's
    own now, and its efficiencies stay on the engine defaults."""
    sgl, ref = engine_profile(catalog, "sglang", family), engine_profile(catalog, "sglang", "blackwell")
    assert (sgl.step_overhead_s, sgl.layer_overhead_s) == (ref.step_overhead_s, ref.layer_overhead_s)
    assert (sgl.step_overhead_s, sgl.layer_overhead_s) == pytest.approx((1.1145e-3, 56.1348e-6))
    assert (sgl.compute_scale, sgl.moe_scale, sgl.memory_scale) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("family", ["hopper", "blackwell"])
def test_engine_builds_keep_their_fixed_costs_apart_from_the_pytorch_back_end(catalog: Catalog, family: str) -> None:
    """TensorRT engine builds (MLPerf, NIM, Triton) keep the fit that took both back ends' rows: a cost per layer
    and the engine default per GEMM. The PyTorch back end's refit on low-load sweeps prices a Llama layer's few
    kernels cheaper, which the C++ runtime's engines (NIM's sweeps: TPOT 18.1% with these) did not show."""
    built, torch = engine_profile(catalog, "trtllm-engine", family), engine_profile(catalog, "trtllm", family)
    assert built.layer_overhead_s > 50e-6 and built.kernel_overhead_s == pytest.approx(1e-6)
    assert built.layer_overhead_s > torch.layer_overhead_s
    assert (built.compute_scale, built.memory_scale) == (torch.compute_scale, torch.memory_scale)
    assert built.moe_scale == 1.0 and built.eager_launch_s == 0.0


@pytest.mark.parametrize(
    ("engine", "family"),
    [("vllm", "cdna4"), ("vllm", "cdna5"), ("sglang", "cdna3"), ("sglang", "cdna4"), ("sglang", "cdna5")],
)
def test_rocm_engines_take_the_vllm_cdna3_fit(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, engine: str, family: str
) -> None:
    """MI355X and MI455X run MI300X's ROCm stack, and SGLang's ROCm build the same libraries and graphs as vLLM's: every
    fitted factor of vLLM on CDNA3 holds for them (on the defaults an MI355X was priced at NVIDIA-grade efficiency
    against its predecessors' fit), and a refit of the leader carries over; SGLang keeps its own eager launches."""
    lead, follower = engine_profile(catalog, "vllm", "cdna3"), engine_profile(catalog, engine, family)
    for field in ("compute_scale", "memory_scale", "moe_scale", "step_overhead_s", "layer_overhead_s",
                  "sequence_overhead_s"):  # fmt: skip
        assert getattr(follower, field) == pytest.approx(getattr(lead, field), rel=1e-6), field
    assert lead.compute_scale < 1.0
    assert follower.eager_launch_s == engine_profile(catalog, engine, "hopper").eager_launch_s
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "scripts"))
    import calibrate_serving as cs

    engines = tmp_path / "engines.yaml"
    engines.write_text(cs.ENGINES_YAML.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(cs, "ENGINES_YAML", engines)
    info: dict[str, object] = {"values": {"compute_scale": 0.7, "step_overhead": 0.003}, "rows": 10, "metrics": 12,
                               "families": 3, "mape_before": 20.0, "mape_after": 19.0, "mape_heldout": 21.0,
                               "heldout_metrics": 12}  # fmt: skip
    cs.write({("vllm", "cdna3"): info}, [str(cs.DEFAULT_DATA)])
    node = yaml.safe_load(engines.read_text(encoding="utf-8"))["engines"][engine]["chips"][family]
    assert (node["compute_scale"]["value"], node["step_overhead"]["value"]) == (0.7, 3.0)


_PROFILE_FIELD = {
    "compute_scale": "compute_scale",
    "memory_scale": "memory_scale",
    "moe_scale": "moe_scale",
    "step_overhead": "step_overhead_s",
    "layer_overhead": "layer_overhead_s",
    "sequence_overhead": "sequence_overhead_s",
    "prefill_overhead": "prefill_overhead_s",
    "kernel_overhead": "kernel_overhead_s",
}


def _shared_figures() -> dict[tuple[str, str], tuple[str, str, tuple[str, ...]]]:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    import calibrate_serving as cs

    return cs.SHARED_FIGURES


@pytest.mark.parametrize(("follower", "leader"), sorted(_shared_figures().items()), ids=lambda v: "/".join(v[:2]))
def test_every_carried_figure_equals_its_leaders(
    catalog: Catalog, follower: tuple[str, str], leader: tuple[str, str, tuple[str, ...]]
) -> None:
    """Each figure engines.yaml carries from a sibling's fit (calibrate_serving.SHARED_FIGURES, each with its reason
    in the catalog) holds the leader's value, so a refit that moved one and not the other would fail here."""
    engine, family, names = leader
    lead, follow = engine_profile(catalog, engine, family), engine_profile(catalog, *follower)
    for name in names:
        field = _PROFILE_FIELD[name]
        assert getattr(follow, field) == pytest.approx(getattr(lead, field), rel=1e-6), name
        assert name in catalog.engines[follower[0]]["chips"][follower[1]], name  # written out, with its derivation


def test_no_chip_with_a_fitted_neighbour_is_priced_on_the_engine_defaults(catalog: Catalog) -> None:
    """An unmeasured family of a vendor whose engine was fitted on a neighbouring family (A100 beside Hopper, RTX PRO
    beside Blackwell, Trn3 and Trn4 beside Trn2) takes that fit's fixed costs: on the defaults, with ideal efficiency
    and 5 us a layer, Trn3 was priced at 8 chips where Trn2 took 36 for the same load. Only vendors with no fitted
    family at all (Google, Intel) stay on the defaults, and plan serve marks them."""
    from chipwise.serve.engine import default_engine, engine_fitted

    unfitted = {
        chip.family
        for chip in catalog.chips.values()
        if not engine_fitted(catalog, default_engine(chip.vendor), chip.family)
    }
    assert {c.vendor for c in catalog.chips.values() if c.family in unfitted} == {"google", "intel"}
    trn2, trn3 = engine_profile(catalog, "neuron", "trainium2"), engine_profile(catalog, "neuron", "trainium3")
    assert (trn3.compute_scale, trn3.layer_overhead_s) == (trn2.compute_scale, trn2.layer_overhead_s)
    a100 = engine_profile(catalog, "trtllm", "ampere")
    assert a100.step_overhead_s == engine_profile(catalog, "trtllm", "hopper").step_overhead_s
    assert (a100.compute_scale, a100.memory_scale) == (1.0, 1.0)  # kernels differ: Ampere's own efficiencies


def test_nxd_inference_on_trainium2_takes_the_vllm_neuron_device_factors(catalog: Catalog) -> None:
    """On Trn2 the neuron engine is NxD Inference, whose compiled graphs vLLM drives there too: the device-side
    factors are vllm-neuron's fitted ones (a refit carries them over); on Trn1/Inf2 (transformers-neuronx) the two
    engines keep their own fits."""
    nxd = engine_profile(catalog, "neuron", "trainium2")
    vllm = engine_profile(catalog, "vllm-neuron", "trainium2")
    for field in ("compute_scale", "memory_scale", "moe_scale", "layer_overhead_s", "prefill_overhead_s"):
        assert getattr(nxd, field) == pytest.approx(getattr(vllm, field), rel=1e-6), field
    assert (
        engine_profile(catalog, "neuron", "trainium1").compute_scale
        != engine_profile(catalog, "vllm-neuron", "trainium1").compute_scale
    )


@pytest.mark.parametrize(
    ("name", "preset"),
    [
        ("Llama-3.1-70B-Instruct-FP8", "llama-3.1-70b"),
        ("RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8", "llama-3.1-70b"),
        ("amd/Llama-3.1-405B-Instruct-FP8-KV", "llama-3.1-405b"),
        ("nvidia/Llama-3.3-70B-Instruct-FP4", "llama-3.3-70b"),
        ("Qwen3-235B-A22B-Instruct-2507-FP8", "qwen3-235b-a22b"),
        ("Qwen3-30B-A3B-FP8", "qwen3-30b-a3b"),
        ("nvidia/DeepSeek-R1-0528-FP4-V2", "deepseek-v3"),
        ("DeepSeek-R1 FP4", "deepseek-v3"),
        ("DeepSeek-V3.1-Terminus", "deepseek-v3"),
        ("gpt-oss-120b (MXFP4)", "gpt-oss-120b"),
        ("Qwen/Qwen3-14B-FP8", "qwen3-14b"),
        ("Qwen3-4B", "qwen3-4b"),
        ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "qwen3-coder-480b-a35b"),
        ("meta-llama/Llama-3.2-3B-Instruct", "llama-3.2-3b"),
        ("Qwen/Qwen3-235B-A22B-Thinking-2507-FP8", "qwen3-235b-a22b"),
        ("Qwen3-30B-A3B-Base", "qwen3-30b-a3b"),
        ("nvidia/Llama-3.1-Nemotron-70B-Instruct-HF", "llama-3.1-70b"),
        ("deepseek-ai/DeepSeek-R1-Distill-Llama-70B", "llama-3.3-70b"),
    ],
)
def test_quantised_checkpoints_resolve_to_their_model(catalog: Catalog, name: str, preset: str) -> None:
    """A quantised or re-released checkpoint has its base model's shape."""
    model, _ = model_for(catalog, name)
    assert model.name == preset


def test_a_shape_changing_release_is_not_aliased(catalog: Catalog) -> None:
    """DeepSeek-V3.2 adds sparse attention: it is not DeepSeek-V3 under another name."""
    with pytest.raises(ChipwiseError, match="no preset"):
        model_for(catalog, "DeepSeek-V3.2-Exp")


def test_precision_from_the_checkpoint_name_when_the_column_is_silent() -> None:
    named = _row(model="Llama-3.1-8B-Instruct-FP8", precision="")
    assert named.weight_precision == "fp8"
    assert "weight precision taken from the checkpoint name (fp8)" in named.notes
    stated = _row(model="Llama-3.1-8B-Instruct-FP8", precision="BF16")
    assert stated.weight_precision == "bf16"


def test_chip_count_from_the_hardware_text_or_the_plan_when_the_column_is_empty() -> None:
    assert _row(num_chips="", hardware="NVIDIA H100 80GB (2x)", parallelism="TP2").num_chips == 2
    assert _row(num_chips="", hardware="8x H100 SXM", parallelism="").num_chips == 8
    from_plan = _row(num_chips="", hardware="NVIDIA H100", parallelism="TP2 x 4")
    assert from_plan.num_chips == 8 and "8 from the plan" in from_plan.notes
    # an instance size or a rack name is not a chip count, and nothing else says one
    assert _row(num_chips="", hardware="NVIDIA GB200 NVL72", parallelism="").skip_reason == "no chip count"
    assert _row(num_chips="3", hardware="8x H100", parallelism="").num_chips == 3  # the column wins


@pytest.mark.parametrize(
    ("parallelism", "notes", "expect"),
    [
        # vLLM's EAGLE-3 tutorial states the drafted tokens and the mean acceptance length
        (
            "TP=8 + EAGLE3 draft, num_speculative_tokens=3 (acceptance 74.1%, mean acceptance length 3.22)",
            "",
            ("eagle", 3, 3.22),
        ),
        # an acceptance rate alone (accepted / drafted) gives the length 1 + rate x k
        ("TP8 EP8, MTP=3, acceptance rate 60%", "", ("mtp", 3, 2.8)),
        # SGLang runs MTP through its EAGLE path: the drafter is the MTP module
        ("TP8", "SGLang with MTP (EAGLE, 3 speculative tokens)", ("mtp", 3, 2.89)),
        # MTP without an acceptance figure takes the measured profile of a reused DeepSeek-V3 MTP module
        ("TP8 EP8", "MTP 3 layers", ("mtp", 3, 2.89)),
    ],
)
def test_rows_with_speculative_decoding_are_predicted(
    catalog: Catalog, parallelism: str, notes: str, expect: tuple[str, int, float]
) -> None:
    row = _row(model="DeepSeek-R1", chip="h100-sxm", num_chips="8", parallelism=parallelism, notes=notes)
    spec = row_speculation(catalog, row)
    assert (spec.method, spec.draft_tokens) == expect[:2]
    assert spec.tokens_per_step == pytest.approx(expect[2], rel=1e-6)


@pytest.mark.parametrize(
    ("parallelism", "reason"),
    [
        ("TP=64, fused speculative decoding with Llama-3.2-1B-Instruct draft, speculation length 7", "no prior"),
        ("TP=64, Fused speculative decoding (Llama 3.2 1B draft)", "tokens drafted per step not stated"),
        ("TP8, Medusa heads, 4 speculative tokens", "medusa"),
    ],
)
def test_rows_whose_speculation_cannot_be_priced_say_why(catalog: Catalog, parallelism: str, reason: str) -> None:
    with pytest.raises(ChipwiseError, match=reason):
        prepare(catalog, _row(parallelism=parallelism))


@pytest.mark.parametrize(
    ("parallelism", "chips", "prefill", "decode"),
    [
        ("prefill: TP2 x 2; decode: TP4 x 1", "8", (2, 2), (4, 1)),
        ("ctx: 1 x TP4, gen: 1 x TP4", "8", (4, 1), (4, 1)),
        ("1P2D, TP2 each", "", (2, 1), (2, 2)),
        # pools of different shapes, in the spellings of Dynamo, SGLang and benchmark write-ups
        ("ctx: 2 x TP1, gen: 1 x TP4", "6", (1, 2), (4, 1)),
        ("prefill: TP1 x2, decode: TP4", "6", (1, 2), (4, 1)),
        ("2P1D (prefill TP1, decode TP2)", "", (1, 2), (2, 1)),
        ("prefill: 2 workers TP1; decode: 1 worker TP2", "4", (1, 2), (2, 1)),
        ("4 prefill (TP1) + 1 decode (TP4)", "8", (1, 4), (4, 1)),
        ("ctx TP2 x2 / gen TP4", "8", (2, 2), (4, 1)),
        ("8k/1k c16 PTP1x2/DTP4x1", "", (1, 2), (4, 1)),  # InferenceX's Dynamo points
        ("P: TP1 x2 / D: TP4", "6", (1, 2), (4, 1)),
    ],
)
def test_disaggregated_rows_that_state_their_pools_are_simulated_with_them(
    catalog: Catalog, parallelism: str, chips: str, prefill: tuple[int, int], decode: tuple[int, int]
) -> None:
    row = _row(
        model="Llama-3.1-8B-Instruct",
        num_chips=chips,
        parallelism=parallelism,
        serving_engine="Dynamo + TensorRT-LLM (disaggregated prefill/decode)",
        scenario="closed-loop sweep",
        batch_or_concurrency="concurrency=16",
        ttft_ms="100",
        tpot_ms="10",
    )
    assert row.skip_reason is None
    case = prepare(catalog, row)
    pre, dec = case.setup.pools
    assert (pre.role, pre.setup.plan.tp, pre.replicas) == ("prefill", *prefill)
    assert (dec.role, dec.setup.plan.tp, dec.replicas) == ("decode", *decode)
    assert case.setup.transfer is not None and case.setup.transfer.s_per_token > 0
    assert row.num_chips == prefill[0] * prefill[1] + decode[0] * decode[1]
    results = predict_case(case)
    assert {r.metric for r in results} == {"output_tokens_per_s_per_chip", "ttft_s", "tpot_s"}
    assert all(r.predicted > 0 for r in results)


def test_disaggregated_rows_without_pools_stay_skipped() -> None:
    row = _row(parallelism="TP8", serving_engine="SGLang (PD disaggregation)", num_chips="16")
    assert row.skip_reason is not None and "disaggregat" in row.skip_reason


@pytest.mark.parametrize("precision", ["MXFP4", "FP4 weights"])
def test_gpt_oss_four_bit_rows_run_its_mxfp4_checkpoint(catalog: Catalog, precision: str) -> None:
    """gpt-oss is published only as MXFP4 experts with bf16 attention: a row saying FP4 or MXFP4 ran that."""
    case = prepare(catalog, _row(model="gpt-oss-120b", precision=precision, parallelism="TP2", num_chips="2"))
    assert case.setup.pools[0].setup.plan.weight_precision == "mxfp4"
    assert any("MXFP4 checkpoint" in n for n in case.notes)


def test_rows_that_contradict_themselves_are_flagged_and_kept(report: dict[str, Any]) -> None:
    """CodeLlama 13B on trn1 (SDK 2.18 table), 8K in / 8K out at batch 1: TTFT 2.37 s and TPOT 13.4 ms make a
    112 s request, 4.6 output tokens/s per chip; the table's throughput says 1.96."""
    summary = report["summary"]
    assert "TI119" in summary["self_inconsistent_rows"]
    flagged = [r for r in report["rows"] if r["id"] == "TI119"]
    assert flagged and all(r["self_consistent"] is False and "contradicts itself" in r["notes"] for r in flagged)
    assert (
        summary["by_metric_self_consistent"]["output_tokens_per_s_per_chip"]["n"]
        < (summary["by_metric"]["output_tokens_per_s_per_chip"]["n"])
    )


def test_a_closed_loop_keeps_the_users_its_cache_cannot_hold_in_the_queue(catalog: Catalog) -> None:
    """GenAI-Perf's users time a request from when they send it, so the ones waiting for KV room are in flight:
    1.7 req/s x (10 s + 1,999 x 60 ms) = 221 requests, about twice what one H100 holds at 4,000 bf16 tokens
    each. The closed loop keeps all 221 (the surplus queues, as in the run); an open loop at the same occupancy
    is capped at what the cache holds (its lengths are what is in doubt there)."""
    figures = {
        "batch_or_concurrency": "concurrency=250", "input_len": "2000", "output_len": "2000", "precision": "BF16",
        "requests_per_s": "1.7", "ttft_ms": "mean 10000", "tpot_ms": "mean 60",
    }  # fmt: skip
    closed = prepare(catalog, _row(scenario="GenAI-Perf closed-loop sweep, 250 concurrent requests", **figures))
    assert closed.job.load.kind == "closed" and closed.job.load.concurrency == 221
    assert not any("the KV caches hold" in n for n in closed.notes)
    opened = prepare(catalog, _row(scenario="Server", **figures))
    assert opened.latency_load is not None and opened.latency_load.concurrency < 150
    assert any("the KV caches hold" in n for n in opened.notes)


@pytest.mark.parametrize(
    ("text", "drafts"),
    [
        ("No speculative decoding (non-MTP config family).", False),
        ("--tp 8 (no MTP/speculative flags, no DP-attention)", False),
        ("MTP off", False),
        ("speculative decoding: disabled", False),
        ("without EAGLE", False),
        ("EAGLE-3, 3 drafted tokens", True),
        ("Dynamo + TensorRT-LLM (MTP, disaggregated prefill/decode)", True),
        ("no DP-attention; MTP enabled", True),
        ("non-MTP baseline vs MTP=3 run", True),
    ],
)
def test_speculative_decoding_read_with_its_negations(text: str, drafts: bool) -> None:
    """A row that says it does not draft ('non-MTP', 'no MTP/speculative flags', 'MTP off') is not skipped as
    speculative; one that names a drafter anywhere else is."""
    assert is_speculative(text) is drafts


@pytest.mark.parametrize(
    ("text", "scenario"),
    [
        ("sglang.bench_serving ShareGPT, closed loop, max 100 concurrent requests ('Throughput-Sensitive Benchmark')",
         "closed_loop"),
        ("InferenceX benchmark_serving closed-loop sweep, 8 concurrent requests", "closed_loop"),
        # '1 concurrent request' names one user, not the last digit of 4,301 (nine disaggregated InferenceX points)
        ("InferenceX disaggregated fixed-seq-len closed-loop sweep, 4301 concurrent requests", "closed_loop"),
        ("one user: 1 concurrent request", "single"),
        ("offline max-throughput (all requests queued at once)", "offline"),
        ("trtllm-bench throughput", "offline"),
    ],
)  # fmt: skip
def test_a_stated_closed_loop_wins_over_the_word_throughput(text: str, scenario: str) -> None:
    """A sweep point that says it ran a closed loop of concurrent requests is one, even when its benchmark is
    titled for throughput; a throughput run without a concurrency stays offline."""
    assert normalize_scenario(text, None) == scenario


@pytest.mark.parametrize(
    ("text", "users", "scenario"),
    [
        ("bench_serving.py, random dataset, 500 prompts, request rate inf, 4 concurrent requests", 4, "closed_loop"),
        ("vllm bench serve --request-rate inf --max-concurrency 1", 1, "single"),
        ("vllm bench serve, ShareGPT, 1000 prompts at infinite request rate", None, "offline"),
        (
            "vllm bench serve, request rate inf with no max-concurrency: all 1000 requests released at t=0",
            None,
            "offline",
        ),
        ("SGLang bench_serving, random 2000/100, burst: 500 requests", None, "offline"),
        ("Poisson arrivals, request rate 4 req/s", None, "rate"),
        # a static batch of N prompts at once, however it is spelt, is not an offline queue of many
        ("offline static-batch end-to-end latency, vLLM benchmark_latency", 16, "closed_loop"),
        ("offline static batch latency", 1, "single"),
    ],
)
def test_an_unpaced_load_behind_a_concurrency_cap_is_a_closed_loop(text: str, users: int | None, scenario: str) -> None:
    """'request rate inf' with a cap on requests in flight sends without pacing up to the cap: a closed loop of the
    cap's users, not an open loop (and, without a cap, a burst: offline)."""
    assert normalize_scenario(text, users) == scenario


def test_vllm_front_end_in_its_ttft_but_not_under_mlperf(catalog: Catalog) -> None:
    """vLLM's OpenAI front end costs about 30 ms of every TTFT (engines.yaml gives the three measurements); MLPerf's
    LoadGen drives the engine in process, so its rows run without it; TensorRT-LLM and SGLang carry none."""
    assert engine_profile(catalog, "vllm", "hopper").request_overhead_s == pytest.approx(0.030)
    assert engine_profile(catalog, "trtllm", "hopper").request_overhead_s == 0.0
    mlperf = prepare(catalog, _row(id="M1", source_family="MLPerf Inference v5.1", chip="h100-sxm", num_chips="8",
                                   serving_engine="vLLM 0.9.0", scenario="Server", requests_per_s="10",
                                   input_len="1024", output_len="256", output_tokens_per_s_per_chip="300"))  # fmt: skip
    served = prepare(catalog, _row(id="V1", source_family="vLLM docs", chip="h100-sxm", num_chips="8",
                                   serving_engine="vLLM 0.9.0", scenario="closed loop, 8 concurrent requests",
                                   batch_or_concurrency="concurrency=8", input_len="1024", output_len="256",
                                   output_tokens_per_s_per_chip="300"))  # fmt: skip
    assert mlperf.setup.pools[0].setup.engine.request_overhead_s == 0.0
    assert served.setup.pools[0].setup.engine.request_overhead_s == pytest.approx(0.030)


def test_a_users_own_minimal_table_validates(catalog: Catalog, tmp_path: Path) -> None:
    """A table with only the columns a user has (no source family, scenario or hardware text), in the spellings of
    their own notes, is predicted; its rows are grouped under '(not stated)' rather than a blank family."""
    table = tmp_path / "mine.csv"
    table.write_text(
        "id,model,chip,num_chips,precision,serving_engine,parallelism,batch_or_concurrency,input_len,output_len,"
        "output_tokens_per_s_per_chip,ttft_ms,tpot_ms\n"
        "M1,Llama-3.1-8B,H100 SXM5 80GB,1,fp8,vLLM,TP1,concurrency=16,1024,512,900,60,15\n"
        "M2,Qwen/Qwen3-32B,NVIDIA H200 141GB,2,bf16,SGLang,TP2,c=32,2000,500,400,,\n",
        encoding="utf-8",
    )
    report = validate_serving(catalog, table)
    assert report["summary"]["rows_predicted"] == 2 and not report["skipped"]
    assert set(report["summary"]["by_source_family"]) == {"(not stated)"}
    assert {r["chip"] for r in report["rows"]} == {"h100-sxm", "h200"}


def test_a_burst_is_simulated_whole(catalog: Catalog) -> None:
    """A burst of more requests than several batches hold is simulated with every one of them, timed from fill to
    drain, as its note says (not a steady window of a few batches)."""
    row = _row(
        scenario="vllm bench serve, random 1000/100, request rate inf with no max-concurrency (burst)",
        batch_or_concurrency="burst: 20000 requests",
        input_len="1000",
        output_len="100",
        ttft_ms="mean 5000",
        tpot_ms="mean 50",
    )
    assert row.scenario == "offline" and row.num_requests == 20000
    case = prepare(catalog, row)
    assert case.job.load.kind == "offline" and case.job.requests == 20000 and case.basis == "run"
    assert any("a burst" in n for n in case.notes)


def test_an_offline_run_is_simulated_as_the_benchmark_ran_it() -> None:
    """trtllm-bench's 1,000 requests of 20,000 / 2,000 tokens on 8 H200 (about 20 in flight): the whole run, fill
    and drain included, as the benchmark timed it; requests of one length that start together stay in step for
    many batches, and a six-batch window read 10% less than the whole run. MLPerf's 274,560 queries on a
    deployment holding 18,600 sequences: six batches' worth (111,600), measured after the first turns over."""
    from chipwise.validation.serving_case_load import requests_to_simulate

    assert requests_to_simulate(Load("offline"), 20, 1000, 2000.0) == (1000, "run")
    assert requests_to_simulate(Load("offline"), 18_600, 274_560, 146.0) == (111_600, "steady")
    assert requests_to_simulate(Load("offline"), 40_000, None, 146.0) == (150_000, "steady")


@pytest.mark.parametrize("family", ["hopper", "blackwell", "blackwell-ultra"])
def test_tensorrt_engine_builds_take_tensorrt_llm_figures_but_not_its_moe_penalty(
    catalog: Catalog, family: str
) -> None:
    """trtllm-engine (TensorRT engine builds: MLPerf, NIM) inherits every trtllm figure except moe_scale, which was
    fitted on the PyTorch back end's MoE runs (engine builds keep the prior), the eager launches of the PyTorch
    back end's prompt iterations (a TensorRT engine launches none from Python, and cannot be told to), and the fixed
    costs, which the PyTorch back end's refit on low-load sweeps moved (engine builds keep the fit that took both
    back ends' rows)."""
    pytorch, built = engine_profile(catalog, "trtllm", family), engine_profile(catalog, "trtllm-engine", family)
    assert built.moe_scale == 1.0 and built.eager_launch_s == built.uncaptured_launch_s == 0.0
    assert pytorch.eager_launch_s == pytorch.uncaptured_launch_s == pytest.approx(69e-6)
    fixed = ("step_overhead_s", "layer_overhead_s", "sequence_overhead_s", "kernel_overhead_s")
    launches = ("eager_launch_s", "uncaptured_launch_s")
    same = {name: getattr(pytorch, name) for name in fixed + launches}
    assert replace(built, engine="trtllm", moe_scale=pytorch.moe_scale, **same, provenance={}) == replace(
        pytorch, provenance={}
    )


def test_mlperf_mixtral_runs_on_an_engine_build_and_deepseek_on_the_pytorch_back_end(catalog: Catalog) -> None:
    mlperf = {"source_family": "MLPerf Inference v4.1", "serving_engine": "TensorRT-LLM (TensorRT 10.2.0, CUDA 12.4)"}
    mixtral = prepare(catalog, _row(**mlperf, model="Mixtral-8x7B", precision="FP8", input_len="427", output_len="145"))
    assert mixtral.setup.pools[0].setup.engine.engine == "trtllm-engine"
    assert mixtral.setup.pools[0].setup.engine.moe_scale == 1.0
    deepseek = prepare(
        catalog, _row(**mlperf, model="DeepSeek-R1", precision="FP8", num_chips="16", parallelism="TP16")
    )
    assert deepseek.setup.pools[0].setup.engine.engine == "trtllm"
    assert any("PyTorch back end only" in n for n in deepseek.notes)


@pytest.mark.parametrize(
    ("plan", "ep", "adp"),
    [
        ("TP8 + DP-attention (enable-dp-attention; MoE TP8)", 1, True),  # SGLang --enable-dp-attention alone
        ("TP8 EP1 attention DP", 1, True),  # TensorRT-LLM enable_attention_dp beside tensor-parallel experts
        ("TP8 EP8 attention DP", 8, True),
        ("TP8", 1, False),
    ],
)
def test_attention_dp_is_read_with_or_without_expert_parallelism(
    catalog: Catalog, plan: str, ep: int, adp: bool
) -> None:
    """Attention DP pairs with experts over every rank (EP8) or with tensor-parallel experts (EP1); it had been
    dropped unless ep = tp, pricing SGLang's DP-attention runs as plain TP8."""
    shape = {"chip": "h100-sxm", "num_chips": "8", "parallelism": plan}
    row = _row(**shape, model="Qwen3-235B-A22B", serving_engine="SGLang", precision="FP8")
    p = prepare(catalog, row).setup.pools[0].setup.plan
    assert (p.tp, p.ep, p.attention_dp) == (8, ep, adp)


def test_inferencex_scripts_capture_every_decode_batch(catalog: Catalog) -> None:
    """InferenceX's SGLang scripts set --cuda-graph-max-bs to their --max-running-requests: its rows replay every
    decode batch (graph_batch = the batch); a row without that knowledge takes SGLang's default (0 here: the
    engine's memory tiers)."""
    shape = {"chip": "h100-sxm", "num_chips": "8", "parallelism": "TP8", "batch_or_concurrency": "concurrency=600"}
    shape["scenario"] = "closed-loop sweep, 600 concurrent requests"
    common = {**shape, "model": "Qwen3-235B-A22B", "serving_engine": "SGLang", "precision": "FP8"}
    inferencex = prepare(catalog, _row(**common, source_family="SemiAnalysis InferenceX")).setup.pools[0].setup
    assert inferencex.plan.graph_batch == inferencex.plan.max_batch == 600
    assert inferencex.steps.eager_decode_floor(600, 0.0) == 0.0
    plain = prepare(catalog, _row(**common, source_family="a blog")).setup.pools[0].setup
    assert plain.plan.graph_batch == 0 and plain.steps.graph_batch == 512
    assert plain.steps.eager_decode_floor(600, 0.0) > 0.0


def test_a_calibration_takes_part_of_a_file_and_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--data PATH::FILTER` keeps the rows whose columns meet every condition (=, != and ~regex), and a fitted
    figure's derivation names the filter, so a fit can take part of a held-out file and leave the rest to check it."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "scripts"))
    import calibrate_serving as cs

    entry = "docs/research/heldout_aic_silicon.csv::source_family~InferenceX;output_len!=8192;input_len=1024"
    row = {"source_family": "InferenceX sweeps", "output_len": "1024", "input_len": "1024"}
    assert cs._kept(row, entry) and cs._kept(row, "x.csv")
    assert not cs._kept({**row, "output_len": "8192"}, entry)
    assert not cs._kept({**row, "source_family": "gap analysis"}, entry)
    with pytest.raises(SystemExit, match="is not column=value"):
        cs._kept(row, "x.csv::output_len>8192")
    assert cs._names([entry]) == (
        "docs/research/heldout_aic_silicon.csv rows source_family~InferenceX;output_len!=8192;input_len=1024"
    )


def test_neuron_moe_groups_fit_the_blockwise_pass_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Neuron group whose MoE rows measure TTFT fits the context encoding's blockwise expert pass apart from token
    generation's expert matmuls (moe_block_scale beside moe_scale); a dense Neuron group, or a GPU engine's grouped
    GEMMs (one kernel for both), does not."""
    from types import SimpleNamespace

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "scripts"))
    import calibrate_serving as cs

    def cases(engine: str, moe: bool) -> list[SimpleNamespace]:
        measured = [SimpleNamespace(metric=m) for m in ("ttft_s", "tpot_s", "output_tokens_per_s_per_chip")]
        one = SimpleNamespace(group=(engine, "trainium2"), job=SimpleNamespace(model=SimpleNamespace(is_moe=moe)),
                              row=SimpleNamespace(measured=measured))  # fmt: skip
        return [one] * 4

    # the ignores: SimpleNamespace stand-ins for validation cases, holding only the fields _params reads
    assert {"moe_scale", "prefill_overhead", "moe_block_scale"} <= set(cs._params(cases("optimum-neuron", True)))  # type: ignore[arg-type]
    assert "moe_block_scale" not in cs._params(cases("optimum-neuron", False))  # type: ignore[arg-type]
    assert "moe_block_scale" not in cs._params(cases("trtllm", True))  # type: ignore[arg-type]


def test_a_calibration_can_leave_out_one_model_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--holdout-by model` checks a group of one source family by refitting without each model in turn, and the
    derivation names the check it ran."""
    from types import SimpleNamespace

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "scripts"))
    import calibrate_serving as cs

    case = SimpleNamespace(row=SimpleNamespace(source_family="optimum-neuron benchmark", raw={"model": "Qwen3-32B"}))
    # the ignores: a SimpleNamespace stand-in for a validation case, holding only the row _holdout_key reads
    assert cs._holdout_key(case) == "optimum-neuron benchmark"  # type: ignore[arg-type]
    monkeypatch.setattr(cs, "HOLDOUT_BY", "model")
    assert cs._holdout_key(case) == "Qwen3-32B"  # type: ignore[arg-type]
    info: dict[str, object] = {"rows": 10, "metrics": 30, "families": 1, "held_out_groups": 6, "mape_before": 36.9,
                               "mape_after": 14.6, "mape_heldout": 22.0, "heldout_metrics": 30}  # fmt: skip
    text = str(cs._figure("moe_scale", 0.5, info, "optimum-neuron", "trainium2", ["x.csv"])["derivation"])
    assert text.endswith("leave-one-model-out MAPE 22.0% over 30 metrics")
    alone = str(cs._figure("moe_scale", 0.5, {**info, "mape_heldout": float("nan"), "held_out_groups": 1}, "e", "f",
                           ["x.csv"])["derivation"])  # fmt: skip
    assert alone.endswith("no leave-one-model-out check (one model)")
