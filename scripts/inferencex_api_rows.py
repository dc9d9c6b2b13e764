"""Write docs/research/heldout_inferencex_api.csv, heldout_inferencex_api_mtp.csv and heldout_inferencex_disagg.csv
from the transcribed InferenceX app fixture.

docs/research/inferencex_app_benchmarks.csv holds every record of the InferenceX app's API test fixture
(github SemiAnalysisAI/InferenceX-app @3a600f1d packages/app/cypress/fixtures/api/benchmarks.json, 1,729 DeepSeek-R1
records), transcribed field for field with the numbers as the JSON writes them. This script keeps the records on the
engines chipwise profiles (SGLang, TensorRT-LLM), the newest of each configuration, and writes as held-out serving
rows (heldout_serving.md, "An eleventh held-out file", "A twelfth" and "A sixteenth"):
- the single-node records without speculative decoding, and those with MTP;
- the disaggregated records without speculative decoding (Dynamo with SGLang or TensorRT-LLM, MoRI with SGLang)
  whose GPU counts are their pools' (prefill TP x workers, decode TP x workers).
"""

from __future__ import annotations

import csv
from pathlib import Path

RESEARCH = Path(__file__).resolve().parents[1] / "docs" / "research"
SOURCE = RESEARCH / "inferencex_app_benchmarks.csv"
OUT = {"none": RESEARCH / "heldout_inferencex_api.csv", "mtp": RESEARCH / "heldout_inferencex_api_mtp.csv"}
DISAGG_OUT = RESEARCH / "heldout_inferencex_disagg.csv"
FIXTURE = (
    "github SemiAnalysisAI/InferenceX-app @3a600f1d9ce155536d52e2f58f744f27a301aac9 "
    "packages/app/cypress/fixtures/api/benchmarks.json"
)
HARDWARE = {
    "b200": ("NVIDIA B200", "b200"),
    "b300": ("NVIDIA B300", "b300"),
    "h200": ("NVIDIA H200", "h200"),
    "h100": ("NVIDIA H100 SXM", "h100-sxm"),
    "gb200": ("NVIDIA GB200 NVL72", "gb200"),
    "gb300": ("NVIDIA GB300 NVL72", "gb300"),
    "mi355x": ("AMD Instinct MI355X", "mi355x"),
    "mi325x": ("AMD Instinct MI325X", "mi325x"),
    "mi300x": ("AMD Instinct MI300X", "mi300x"),
}
ENGINES = {"sglang": "SGLang", "trt": "TensorRT-LLM"}
#: disaggregated frameworks: (engine, the disaggregation framework running it)
DISAGG_ENGINES = {
    "dynamo-sglang": ("sglang", "Dynamo"),
    "dynamo-trt": ("trt", "Dynamo"),
    "mori-sglang": ("sglang", "MoRI"),
}
TEMPLATE = RESEARCH / "heldout_inferencex.csv"  # the held-out files' columns


def _config(r: dict[str, str]) -> tuple[str, ...]:
    return tuple(r[k] for k in ("hardware", "framework", "precision", "decode_tp", "decode_ep", "decode_dp_attention",
                                "isl", "osl", "conc"))  # fmt: skip


def _order(r: dict[str, str]) -> tuple[object, ...]:
    c = _config(r)
    return (*c[:3], int(c[3]), c[5], *(int(x) for x in c[6:]))


_POOL_FIELDS = ("tp", "ep", "dp_attention", "num_workers")


def _disagg_config(r: dict[str, str]) -> tuple[str, ...]:
    """A disaggregated record's configuration: _config's fields and both pools' shapes and worker counts."""
    return (*_config(r), *(r[f"{pool}_{k}"] for pool in ("prefill", "decode") for k in _POOL_FIELDS))


def _disagg_order(r: dict[str, str]) -> tuple[object, ...]:
    pools = tuple(int(r[f"{pool}_{k}"]) for pool in ("decode", "prefill") for k in ("tp", "num_workers"))
    return (*_order(r), *pools, r["prefill_dp_attention"])


def pools_match(r: dict[str, str]) -> bool:
    """Whether a disaggregated record's GPU counts are its pools' sizes (tensor-parallel size x workers); 184 are
    not (GB200 Dynamo's and MoRI's), and their per-GPU figures cannot be placed."""
    return all(
        int(r[f"{pool}_num_workers"]) > 0
        and int(r[f"{pool}_tp"]) * int(r[f"{pool}_num_workers"]) == int(r[f"num_{pool}_gpu"])
        for pool in ("prefill", "decode")
    )


#: Tokens InferenceX's single-node DeepSeek-R1 MTP scripts draft a step (github SemiAnalysisAI/InferenceX
#: benchmarks/single_node/): TensorRT-LLM's num_nextn_predict_layers, 3, or 1 with attention DP
#: (dsr1_fp8_b200_trt_mtp.sh @2f3a788f, dsr1_fp4_b200_trt_mtp.sh @34bc7c40, dsr1_fp8_h200_trt_mtp.sh @34bc7c40);
#: SGLang runs the MTP module through its EAGLE path with two steps of top-1 (--speculative-num-steps 2,
#: --speculative-eagle-topk 1, --speculative-num-draft-tokens 3: dsr1_fp8_b200_mtp.sh @285b6628, which
#: dsr1_fp8_b300_mtp.sh @e471c3c3 reuses).
def mtp_drafting(r: dict[str, str]) -> str:
    """How the record's run drafts, in words validate reads (tokens drafted a step)."""
    if r["framework"] == "trt":
        return f"MTP, num_nextn_predict_layers {1 if r['decode_dp_attention'] == 'true' else 3}"
    return "MTP through the EAGLE path, num_speculative_tokens 2 (two top-1 steps)"


def newest_runs(records: list[dict[str, str]], spec: str = "none", disagg: bool = False) -> list[dict[str, str]]:
    """The newest record of each configuration on a profiled engine, drafting as `spec` says: single-node ones, or
    with `disagg` the disaggregated ones whose GPU counts are their pools'."""
    newest: dict[tuple[str, ...], dict[str, str]] = {}
    engines = DISAGG_ENGINES if disagg else ENGINES
    for r in records:
        if r["disagg"] != str(disagg).lower() or r["spec_method"] != spec or r["framework"] not in engines:
            continue
        if disagg and not pools_match(r):
            continue
        key = _disagg_config(r) if disagg else _config(r)
        if key not in newest or r["date"] > newest[key]["date"]:
            newest[key] = r
    return sorted(newest.values(), key=_disagg_order if disagg else _order)


def _ms(seconds: str) -> str:
    return f"{float(seconds) * 1e3:.2f}"


def _shape(r: dict[str, str], pool: str) -> str:
    return f"TP{r[pool + '_tp']} EP{r[pool + '_ep']}" + (" attention DP" if r[pool + "_dp_attention"] == "true" else "")


def _disagg_fields(r: dict[str, str]) -> dict[str, str]:
    """The fields of a disaggregated record's row that differ from a single-node one's."""
    prefill, decode = int(r["num_prefill_gpu"]), int(r["num_decode_gpu"])
    output = float(r["output_tput_per_gpu"]) * decode / (prefill + decode)
    return {
        "hardware": f"{HARDWARE[r['hardware']][0]} ({prefill + decode}x: {prefill} prefill, {decode} decode; "
        "InferenceX disaggregated runners)",
        "num_chips": str(prefill + decode),
        "parallelism": f"prefill: {_shape(r, 'prefill')} x {r['prefill_num_workers']}; "
        f"decode: {_shape(r, 'decode')} x {r['decode_num_workers']}",
        "scenario": f"InferenceX disaggregated fixed-seq-len closed-loop sweep, {r['conc']} concurrent requests",
        "output_tokens_per_s_per_chip": f"{output:.2f}",
        "derived_fields": (
            "output_tokens_per_s_per_chip = output_tput_per_gpu x decode GPUs / all GPUs: on disaggregated records "
            "output_tput_per_gpu is per decode GPU and input_tput_per_gpu per prefill GPU (their GPU-weighted mean is "
            "tput_per_gpu, and users x output tokens / end-to-end latency agrees with the decode GPUs' figure)"
        ),
    }


def row(i: int, r: dict[str, str]) -> dict[str, str]:
    name, chip = HARDWARE[r["hardware"]]
    chips = r["decode_tp"]  # the record's GPU counts read tp x ep on single-node runs (notes)
    disagg = r["disagg"] == "true"
    amd = r["hardware"].startswith("mi")
    precision = {
        "fp8": "FP8 weights (DeepSeek-R1-0528 FP8 checkpoint)",
        "fp4": f"{'MXFP4' if amd else 'NVFP4'} weights ({'AMD' if amd else 'NVIDIA'} DeepSeek-R1-0528 FP4 checkpoint)",
    }[r["precision"]]
    plan = _shape(r, "decode")
    image = r["image"] or "image not stated in the record"
    derived = ""
    output = r["output_tput_per_gpu"]
    if not output:
        isl, osl = int(r["isl"]), int(r["osl"])
        output = str(float(r["tput_per_gpu"]) * osl / (isl + osl))
        derived = (
            "output_tokens_per_s_per_chip = tput_per_gpu x OSL / (ISL + OSL) (the record gives only prompt and "
            "output tokens/s per GPU together; both lengths are drawn at 0.8-1.0 of nominal)"
        )
    key, framework = DISAGG_ENGINES.get(r["framework"], (r["framework"], ""))
    under = f" under {framework}" if disagg else ""
    engine = f"{ENGINES[key]}{under} ({image})" + (", disaggregated prefill and decode" if disagg else "")
    spec = r["spec_method"]
    if spec == "mtp":
        engine = f"{engine}; {mtp_drafting(r)}"
    counts = (
        f"The record's num_prefill_gpu and num_decode_gpu read {r['num_prefill_gpu']} and {r['num_decode_gpu']}, "
        "each pool's tensor-parallel size times its workers, and num_chips is their sum."
        if disagg
        else f"The record's num_prefill_gpu and num_decode_gpu read {r['num_decode_gpu']}: on single-node runs the "
        "fixture gives the product of the tensor- and expert-parallel sizes, while the runner holds one "
        "tensor-parallel group (its per-GPU throughput agrees with the users, output length and end-to-end latency "
        "over that group), so num_chips is the tensor-parallel size."
    )
    notes = (
        f"InferenceX API benchmark record (model dsr1, spec_method {spec}, disagg {r['disagg']}, framework "
        f"{r['framework']}, image as in serving_engine). Metrics as the record gives them, in seconds: mean_ttft "
        f"{r['mean_ttft']}, median_ttft {r['median_ttft']}, p99_ttft {r['p99_ttft']}, mean_tpot {r['mean_tpot']}, "
        f"median_tpot {r['median_tpot']}, p99_tpot {r['p99_tpot']}, mean_e2el {r['mean_e2el']}; tput_per_gpu "
        f"{r['tput_per_gpu']} (prompt and output tokens), output_tput_per_gpu {r['output_tput_per_gpu'] or 'absent'}. "
        f"{counts} Newest record of this configuration in the fixture; older ones (earlier images) are left out."
        + (
            " The drafting in serving_engine is the InferenceX MTP script's (scripts/inferencex_api_rows.py); its "
            "client sends the random prompts through the chat template, whose acceptance InferenceX PR #649 finds "
            "close to MT-Bench's. The record states no acceptance."
            if spec == "mtp"
            else ""
        )
    )
    fields = {
        "id": f"{'D' if disagg else 'S' if spec == 'mtp' else 'F'}{i:03d}",
        "source_family": "SemiAnalysis InferenceX (InferenceX-app API fixture)",
        "model": "DeepSeek-R1-0528",
        "arch": "MoE (256 routed experts + 1 shared, top-8; MLA)",
        "params_total_B": "671",
        "params_active_B": "37",
        "hardware": f"{name} ({chips}x, InferenceX single-node runner)",
        "chip": chip,
        "num_chips": chips,
        "precision": f"{precision}; InferenceX config dsr1-{r['precision']}-{r['hardware']}-{r['framework']}",
        "serving_engine": engine,
        "parallelism": plan,
        "scenario": f"InferenceX single-node fixed-seq-len closed-loop sweep, {r['conc']} concurrent requests",
        "latency_constraint": "none",
        "batch_or_concurrency": f"concurrency={r['conc']}",
        "input_len": r["isl"],
        "output_len": r["osl"],
        "output_tokens_per_s_total": "",
        "output_tokens_per_s_per_chip": f"{float(output):.2f}",
        "total_tokens_per_s": "",
        "requests_per_s": "",
        "ttft_ms": f"mean {_ms(r['mean_ttft'])}; p50 {_ms(r['median_ttft'])}; p99 {_ms(r['p99_ttft'])}",
        "tpot_ms": f"mean {_ms(r['mean_tpot'])}; p50 {_ms(r['median_tpot'])}; p99 {_ms(r['p99_tpot'])}",
        "e2e_latency_s": f"mean {float(r['mean_e2el']):.3f}",
        "date_or_version": f"run {r['date']} ({image})",
        "derived_fields": derived,
        "reliability": (
            "medium (a test fixture of the InferenceX app: a snapshot of rows of the InferenceX public benchmark "
            "API; third-party CI runs, one run per point)"
        ),
        "source": f"{FIXTURE}; CI run {r['run_url']}",
        "notes": notes,
    }
    return fields | _disagg_fields(r) if disagg else fields


def main() -> None:
    with SOURCE.open(newline="") as f:
        records = list(csv.DictReader(f))
    with TEMPLATE.open(newline="") as t:
        columns = next(csv.reader(t))
    outputs = [(newest_runs(records, spec), path) for spec, path in OUT.items()]
    outputs.append((newest_runs(records, disagg=True), DISAGG_OUT))
    for runs, path in outputs:
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            writer.writerows(row(i, r) for i, r in enumerate(runs, start=1))
        print(f"{len(runs)} rows of {len(records)} records -> {path.relative_to(RESEARCH.parents[1])}")


if __name__ == "__main__":
    main()
