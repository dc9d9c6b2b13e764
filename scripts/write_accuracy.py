"""Write docs/accuracy.md from `chipwise validate` on the published ground-truth runs (rerun: make accuracy).

The document states the error tables, how the efficiency factors were obtained (with their fitted values), the
out-of-sample check when scripts/calibrate.py --cross-validate has written docs/cross-validation.json, and every
skipped row with its reason.
"""

from __future__ import annotations

import datetime as dt
import json
import statistics
import textwrap
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from chipwise.catalog import load_catalog
from chipwise.catalog.schema import Figure
from chipwise.catalog.track_record import ANY, chips_label, vendor_scope
from chipwise.catalog.track_record import METRICS as RECORD_METRICS
from chipwise.interfaces.format import RECORD_LABELS
from chipwise.sweep.backends import cpu_count
from chipwise.validation.consistency import NOTE_LEAD, SELF_CONSISTENCY_TOLERANCE
from chipwise.validation.kernels import measured_path, validate_kernels
from chipwise.validation.report import error_stats, mape_cell
from chipwise.validation.run import validate_file

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "docs" / "accuracy.md"
README = ROOT / "README.md"
#: the README's accuracy passage (its "Right" bullet) lies between these, written from the reports this script's
#: tables are written from
README_START, README_END = "<!-- accuracy:start -->", "<!-- accuracy:end -->"
CV = ROOT / "docs" / "cross-validation.json"
TRACK = ROOT / "src" / "chipwise" / "catalog" / "data" / "track_record.json"
#: every held-out file's predictions, which tests/validation/test_heldout.py guards (re-predicting a sample of them)
HELDOUT_RECORD = ROOT / "docs" / "research" / "heldout_record.json"
#: the serving files' rows predicted side by side (the report is the same on one process)
WORKERS = cpu_count()
#: a recorded row: these fields of its `chipwise validate` entry (its error is theirs), then its notes' index in
#: the record's notes
RECORD_FIELDS = ("id", "metric", "chip", "engine", "measured", "predicted", "self_consistent")


def _table(groups: dict[str, dict[str, float]], first: str) -> list[str]:
    lines = [f"| {first} | n | MAPE % | median APE % | bias % |", "|---|---:|---:|---:|---:|"]
    for name, st in groups.items():
        lines.append(
            f"| {name} | {int(st['n'])} | {st['mape_pct']:.1f} | {st['median_ape_pct']:.1f} | {st['bias_pct']:+.1f} |"
        )
    return lines


def _engine_table(by_engine: dict[str, dict[str, dict[str, float]]], metrics: list[str]) -> list[str]:
    """MAPE % (n) of each serving metric by the engine family a row was priced with."""
    lines = ["| engine | " + " | ".join(metrics) + " |", "|---|" + "---:|" * len(metrics)]
    for engine, groups in by_engine.items():
        lines.append(f"| {engine} | " + " | ".join(mape_cell(groups, m) for m in metrics) + " |")
    return lines


def _efficiency_table() -> list[str]:
    cat = load_catalog()
    keys = [
        "matmul.bf16",
        "matmul.fp8",
        "matmul.fp4",
        "attention",
        "memory",
        "layer_overhead",
        "microbatch_overhead",
        "step_overhead",
        "dp_overlap",
        "moe_gemm",
        "ep_overlap",
    ]
    lines = ["| family | " + " | ".join(keys) + " | fitted on |", "|---|" + "---:|" * len(keys) + "---|"]
    for fam, entry in cat.efficiency.items():
        cells = []
        fitted = ""
        for k in keys:
            node: Any = entry
            for part in k.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            if isinstance(node, Figure):
                cells.append(f"{node.value:g}" + (" us" if node.unit == "us" else (" s" if node.unit == "s" else "")))
                if node.derivation.startswith("fitted by scripts/calibrate.py") and not fitted:
                    fitted = (
                        node.derivation.split(" to ", 1)[1].split(" (groundtruth")[0]
                        if " to " in node.derivation
                        else ""
                    )
            else:
                cells.append("-")
        lines.append(f"| {fam} | " + " | ".join(cells) + f" | {fitted or 'prior only'} |")
    return lines


def _contradiction(notes: str) -> str:
    """The self-consistency note among a row's notes, without its lead-in."""
    return next(n for n in notes.split("; ") if n.startswith(NOTE_LEAD)).removeprefix(NOTE_LEAD)


def _section(title: str, report: dict[str, Any]) -> list[str]:
    s = report["summary"]
    out = [
        f"## {title}",
        "",
        f"{s['rows_predicted']} of {s['rows_total']} rows predicted ({100 * s['predicted_fraction']:.0f}%), "
        f"{s['n']} measured metrics: **MAPE {s['mape_pct']:.1f}%**, median absolute error {s['median_ape_pct']:.1f}%.",
        "",
    ]
    if len(s["by_metric"]) > 1:
        out += ["### By metric", "", *_table(s["by_metric"], "metric"), ""]
    if s.get("self_inconsistent_rows"):
        notes = {r["id"]: r["notes"] for r in report["rows"] if r["self_consistent"] is False}
        out += [
            "### Rows that contradict themselves",
            "",
            f"These rows' output tokens/s is more than {SELF_CONSISTENCY_TOLERANCE:g}x off what their own load and "
            "latencies imply (Little's law, `chipwise.validation.consistency`), so no model can match all of their "
            "figures. They stay in every table above; without them:",
            "",
            *_table(s["by_metric_self_consistent"], "metric"),
            "",
            *(f"- {i}: {_contradiction(notes[i])}" for i in sorted(notes)),
            "",
        ]
    if s.get("by_engine"):
        out += ["### By engine (MAPE %, n)", "", *_engine_table(s["by_engine"], list(s["by_metric"])), ""]
    out += ["### By chip", "", *_table(s["by_chip"], "chip"), ""]
    out += ["### By source family", "", *_table(s["by_source_family"], "source family"), ""]
    worst = sorted(report["rows"], key=lambda r: -abs(r["error_pct"]))[:15]
    out += [
        "### Largest errors",
        "",
        "Each row adds |error| / n points to its metric's MAPE; the fewest rows that carry half of it "
        "(`summary.concentration` in `chipwise validate --json`):",
        "",
        "| metric | n | MAPE % | rows carrying half |",
        "|---|---:|---:|---:|",
        *(f"| {m} | {c['n']} | {c['mape_pct']:.1f} | {c['rows_for_half']} |" for m, c in s["concentration"].items()),
        "",
        "| row | chip | metric | measured | predicted | error % | notes |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for r in worst:
        out.append(
            f"| {r['id']} | {r['chip']} | {r['metric']} | {r['measured']:.4g} | {r['predicted']:.4g} | "
            f"{r['error_pct']:+.1f} | {r.get('notes', '')[:90]} |"
        )
    out += ["", "### Skipped rows", ""]
    out += [f"- {x['id']}: {x['reason']}" for x in report["skipped"]] or ["- none"]
    return [*out, ""]


def _targets(train: dict[str, Any], serve: dict[str, Any]) -> list[str]:
    """The issues' accuracy bounds against what this run measured."""
    t, v = train["summary"], serve["summary"]
    chips = {c: m for c, m in t["by_chip"].items() if m["n"] >= 5}
    worst = max(chips.items(), key=lambda kv: kv[1]["mape_pct"])
    by = v["by_metric"]
    rows = [
        ("training: MAPE over all predicted rows", "<= 12%", t["mape_pct"], 12.0),
        (f"training: MAPE of the worst chip with >= 5 rows ({worst[0]})", "<= 20%", worst[1]["mape_pct"], 20.0),
        ("training: rows predicted", ">= 85%", 100 * t["predicted_fraction"], -85.0),
        ("serving: output tokens/s per chip MAPE", "<= 15%", by["output_tokens_per_s_per_chip"]["mape_pct"], 15.0),
        ("serving: TPOT MAPE", "<= 20%", by["tpot_s"]["mape_pct"], 20.0),
        ("serving: TTFT MAPE", "<= 30%", by["ttft_s"]["mape_pct"], 30.0),
        ("serving: rows predicted", ">= 85%", 100 * v["predicted_fraction"], -85.0),
    ]
    out = ["## Against the issues' bounds", "", "| check | bound | measured | |", "|---|---:|---:|---|"]
    for name, bound, value, limit in rows:
        met = value >= -limit if limit < 0 else value <= limit
        out.append(f"| {name} | {bound} | {value:.1f}% | {'met' if met else '**not met**'} |")
    return [*out, ""]


METRICS = RECORD_METRICS["serve"]

#: The held-out serving files in docs/research (provenance and findings in heldout_serving.md), with what they hold.
HELDOUT = {
    "heldout_serving.csv": "sweeps on H100, H200, B200; TensorRT-LLM perf overview on B200, GB200, H200, H100",
    "heldout_nim_genaiperf.csv": "NVIDIA NIM GenAI-Perf sweeps on H100 (Llama 3 8B and 70B, 1-250 users)",
    "heldout_inferencex.csv": "InferenceX and SGLang cookbook sweeps (DeepSeek-R1, Qwen3-235B, gpt-oss) on H100-B300",
    "heldout_dense_sweeps.csv": "dense and small-model sweeps (Qwen3-8B, Llama-3.1-70B, gpt-oss-120b) on H100-B200",
    "heldout_amd.csv": "AMD Instinct MI300X and MI325X (DeepSeek-R1, gpt-oss-120b; SGLang and vLLM)",
    "heldout_gaudi.csv": "Intel Gaudi 2 and 3 (Intel's tables, MLPerf v4.0)",
    "heldout_gpustack_deepseek.csv": "DeepSeek-R1 bursts and one sweep point on 8 H200 (vLLM, SGLang)",
    "heldout_gpustack_h100.csv": "gpt-oss, Qwen3-32B and Qwen3-235B bursts on 1-8 H100 (vLLM, SGLang, TensorRT-LLM)",
    "heldout_vendor_tables.csv": "vendor blog tables: Llama 3.1 70B on MI300X and H100, gpt-oss on B200 and H100",
    "heldout_bench_results.csv": "committed bench results: DeepSeek-R1 on H200, MI300X; Llama 3.x 70B on H200, H100",
    "heldout_trt_engine_mixtral.csv": "TensorRT-LLM v0.17 engine builds: Mixtral 8x7B, 8x22B on H100-A100",
    "heldout_trt_engine_dense.csv": "TensorRT-LLM v0.17 engine builds: Llama 3.1 8B-405B, Mistral 7B on H100-A100",
    "heldout_trt_engine_ttft.csv": "TensorRT-LLM v0.8-v0.9 engine builds: batch-1 first-token latency, H100-A100",
    "heldout_inferencex_api.csv": "InferenceX API: DeepSeek-R1 sweeps on B200, B300, H200, MI300X-MI355X (SGLang, TRT)",
    "heldout_inferencex_api_mtp.csv": "InferenceX API: DeepSeek-R1 with MTP on B200, B300, H200 (SGLang, TensorRT-LLM)",
    "heldout_inferencex_disagg.csv": "InferenceX API: DeepSeek-R1 disaggregated on GB200, GB300, B200-H100, MI355X",
    "heldout_aic_silicon.csv": "AIConfigurator silicon sample: Llama 3.1, Qwen3, gpt-oss sweeps on H100-GB200",
}


#: what of the held-out files some fit has seen (the fits' own derivations in engines.yaml say which rows)
HELDOUT_FITTED = (
    "40 points in the TensorRT-LLM fits, 297 and 270 in the fixed costs of its PyTorch back end and of vLLM on "
    "NVIDIA, and 38 first tokens on Grace hosts in the eager launches' host share"
)


def _heldout(cat: Any) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The held-out files' errors (nothing is fitted to them but HELDOUT_FITTED), and each file's report."""
    out = [
        "## Held-out serving files (docs/research)",
        "",
        "Published serving measurements outside the table above, predicted with nothing fitted to them (but "
        f"{HELDOUT_FITTED}); `docs/research/heldout_serving.md` gives each file's sources and what it showed. MAPE "
        "per metric (rows with that metric):",
        "",
        "| file | what | rows predicted | output tok/s per chip | TPOT | TTFT |",
        "|---|---|---:|---:|---:|---:|",
    ]
    pooled: dict[str, dict[str, list[float]]] = {}
    reports: dict[str, dict[str, Any]] = {}
    for name, what in HELDOUT.items():
        report = reports[name] = validate_file(cat, ROOT / "docs" / "research" / name, "serve", workers=WORKERS)
        s = report["summary"]
        cells = [
            f"{s['by_metric'][m]['mape_pct']:.1f}% ({s['by_metric'][m]['n']})" if m in s["by_metric"] else "-"
            for m in METRICS
        ]
        out.append(f"| `{name}` | {what} | {s['rows_predicted']} of {s['rows_total']} | {' | '.join(cells)} |")
        for r in report["rows"]:
            pooled.setdefault(r["engine"], {}).setdefault(r["metric"], []).append(r["error_pct"])
    by_engine = {e: {m: error_stats(v) for m, v in groups.items()} for e, groups in sorted(pooled.items())}
    lines = [
        *out,
        "",
        f"All {len(HELDOUT)} files pooled, by the engine family each row was priced with (MAPE %, n):",
        "",
        *_engine_table(by_engine, list(METRICS)),
    ]
    return lines, reports


def _short(value: Any) -> Any:
    """A float to 10 significant digits (the record's tests compare predictions to 1 part in a million)."""
    return float(f"{value:.10g}") if isinstance(value, float) else value


def heldout_record(reports: dict[str, dict[str, Any]]) -> str:
    """HELDOUT_RECORD's text: each file's skipped rows and its entries, one a line, their notes written once."""
    notes: dict[str, int] = {}
    files = []
    for name, report in reports.items():
        rows = [
            [*(_short(r.get(f)) for f in RECORD_FIELDS), notes.setdefault(r["notes"], len(notes))]
            for r in report["rows"]
        ]
        body = ",\n".join("    " + json.dumps(row) for row in rows)
        skipped = json.dumps(report["skipped"])
        files.append(f'  {json.dumps(name)}: {{\n   "skipped": {skipped},\n   "rows": [\n{body}\n   ]\n  }}')
    head = {
        "about": "Every held-out serving file's `chipwise validate` entries (docs/research), which the held-out tests "
        "read; they re-predict a sample of the rows to check that the model still gives these predictions.",
        "generated": dt.date.today().isoformat(),
        "command": "python scripts/write_accuracy.py (make accuracy)",
        "fields": [*RECORD_FIELDS, "notes"],
        "notes": list(notes),
    }
    return json.dumps(head, indent=1)[:-2] + ',\n "files": {\n' + ",\n".join(files) + "\n }\n}\n"


def _pooled(reports: dict[str, dict[str, Any]], names: Iterable[str], metric: str) -> float:
    """MAPE % of `metric` over the files `names` together: each file's MAPE weighted by its rows with that metric
    (the mean absolute error over all of them, not a mean of the files' MAPEs)."""
    groups = [reports[n]["summary"]["by_metric"][metric] for n in names]
    return float(sum(g["mape_pct"] * g["n"] for g in groups) / sum(g["n"] for g in groups))


def readme_headline(train: dict[str, Any], serve: dict[str, Any]) -> str:
    """The README's opening figures from the reports the bounds table is written from (typed by hand, they had
    drifted from it: serving throughput, TPOT and TTFT quoted as 21.3%, 16.2% and 28.2% where the table read 20.8%,
    15.0% and 29.0%)."""
    t, v = train["summary"], serve["summary"]
    by = v["by_metric"]
    return (
        f"checked against published runs: {t['rows_predicted']} of {t['rows_total']} training runs predicted (MAPE "
        f"{t['mape_pct']:.1f}%, median {t['median_ape_pct']:.1f}%), {v['rows_predicted']} of {v['rows_total']} serving "
        f"runs (throughput MAPE {by['output_tokens_per_s_per_chip']['mape_pct']:.1f}%, TPOT "
        f"{by['tpot_s']['mape_pct']:.1f}%, TTFT {by['ttft_s']['mape_pct']:.1f}%) with `chipwise validate`; see "
        "[docs/accuracy.md](docs/accuracy.md), which also says where the model is weak and gives the errors by "
        "serving engine."
    )


def readme_heldout(reports: dict[str, dict[str, Any]]) -> str:
    """The README's held-out passage from the reports the held-out table is written from (file name -> `chipwise
    validate` report), so that its figures are the table's (they had drifted from it when typed by hand). What
    each file holds is stated here as in HELDOUT, what some fit saw in HELDOUT_FITTED; every count and MAPE comes
    from the reports."""

    def pct(*names: str, metric: str = "output_tokens_per_s_per_chip") -> str:
        return f"{_pooled(reports, names, metric):.1f}%"

    def span(names: tuple[str, ...], metric: str) -> str:
        values = [_pooled(reports, [n], metric) for n in names]
        return f"{min(values):.1f}-{max(values):.1f}%"

    def rows(*names: str) -> str:
        return f"{sum(reports[n]['summary']['rows_total'] for n in names):,}"

    def three(*names: str) -> str:
        return " / ".join(pct(*names, metric=m) for m in METRICS)

    sweeps = ("heldout_serving.csv", "heldout_nim_genaiperf.csv", "heldout_inferencex.csv", "heldout_dense_sweeps.csv")
    aic, api, mtp = "heldout_aic_silicon.csv", "heldout_inferencex_api.csv", "heldout_inferencex_api_mtp.csv"
    gpustack = "heldout_gpustack_"
    return (
        f"Another {len(reports)} files hold {rows(*reports)} published serving points that nothing is fitted to "
        f"(but {HELDOUT_FITTED}): "
        f"{rows(aic)} TTFT and TPOT sweep points of Llama 3.1, Qwen3 and gpt-oss on H100, H200, B200 and GB200 from "
        f"AIConfigurator's silicon sample (TPOT {pct(aic, metric='tpot_s')}, TTFT {pct(aic, metric='ttft_s')}); "
        f"{rows(*sweeps)} points of concurrency sweeps in {len(sweeps)} files on H100, H200, B200 and B300 "
        f"(throughput {span(sweeps, 'output_tokens_per_s_per_chip')}, TPOT {span(sweeps, 'tpot_s')}, TTFT "
        f"{span(sweeps, 'ttft_s')} per file); {rows(api, mtp)} DeepSeek-R1 sweep points of the InferenceX API on "
        f"B200, B300, H200 and MI300X-MI355X ({three(api, mtp)} on throughput / TPOT / TTFT, and {pct(mtp)} on "
        f"throughput for its {rows(mtp)} MTP points) and {rows('heldout_inferencex_disagg.csv')} of its "
        "disaggregated points on GB200, GB300, "
        f"B200, B300, H200, H100 and MI355X ({three('heldout_inferencex_disagg.csv')}); AMD Instinct "
        f"({pct('heldout_amd.csv')} on throughput, most of it early-2025 ROCm builds; current SGLang on MI325X "
        f"comes much closer), Intel Gaudi ({pct('heldout_gaudi.csv')}), GPUStack's bursts of 100-1,000 requests "
        f"(gpt-oss and Qwen3 on H100 {pct(gpustack + 'h100.csv')} on throughput, mostly gpt-oss on Hopper and "
        f"engines at their defaults; DeepSeek-R1 on H200 {pct(gpustack + 'deepseek.csv')}), vendor blog tables "
        f"(Llama 3.1 70B on MI300X and H100: {pct('heldout_vendor_tables.csv')}), committed benchmark results "
        f"({pct('heldout_bench_results.csv')}, mostly DeepSeek-R1 on early-2025 engines; Llama 3.3 70B on H200 comes "
        "much closer) and TensorRT-LLM engine builds of Mixtral "
        f"({pct('heldout_trt_engine_mixtral.csv')}) and dense models ({pct('heldout_trt_engine_dense.csv')}) on "
        f"H100-A100 and their batch-1 first-token latencies ({pct('heldout_trt_engine_ttft.csv', metric='ttft_s')}); "
        "no usable TPU serving measurement was found ([docs/research/heldout_serving.md]"
        "(docs/research/heldout_serving.md) says what each file showed and changed)."
    )


def between(text: str, start: str, end: str, body: str) -> str:
    """`text` with what lies between the markers `start` and `end` replaced by `body` (the markers kept)."""
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise SystemExit(f"README.md needs one {start} before one {end} around the passage this script writes")
    before, rest = text.split(start)
    return f"{before}{start}{body}{end}{rest.split(end)[1]}"


def readme_passage(text: str) -> str:
    """The passage as it sits in the README's bullet: wrapped at 120 columns under the bullet's indent, starting
    on the line after the start marker (a line that began with the marker would start an HTML block and split the
    bullet's paragraph), the end marker right after its last word."""
    return "\n" + textwrap.fill(text, 120, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)


#: a track-record scope is kept only with at least this many measured metrics
MIN_RUNS = 10


def _errors(cat: Any, report: dict[str, Any], held_out: bool) -> Iterator[tuple[str, str, str, str, float, bool]]:
    """(metric, engine, chip family, chip vendor, error %, held out) of each predicted metric; a training step time
    is read as its throughput (error of measured / predicted time)."""
    for r in report["rows"]:
        metric, error = r["metric"], r["error_pct"]
        if metric == "step_time_s":
            metric, error = "tokens_per_s_per_chip", 100.0 * (r["measured"] / r["predicted"] - 1.0)
        chip = cat.chips[r["chip"]]
        yield metric, r.get("engine") or ANY, chip.family, chip.vendor, error, held_out


def _record_groups(errors: Iterable[tuple[str, str, str, str, float, bool]]) -> dict[str, list[dict[str, Any]]]:
    """Per metric, the error statistics of every scope of MIN_RUNS or more: an engine on a chip family or on any
    chip, any engine on a family, on a vendor's chips or on any chip."""
    buckets: dict[tuple[str, str, str], list[tuple[float, bool]]] = defaultdict(list)
    for metric, engine, family, vendor, error, held_out in errors:
        scopes = {(engine, family), (engine, ANY), (ANY, family), (ANY, vendor_scope(vendor)), (ANY, ANY)}
        for e, f in scopes:
            buckets[(metric, e, f)].append((error, held_out))
    out: dict[str, list[dict[str, Any]]] = {}
    for (metric, engine, family), v in sorted(buckets.items()):
        if len(v) < MIN_RUNS:
            continue
        ape = [abs(e) for e, _ in v]
        out.setdefault(metric, []).append(
            {
                "engine": engine,
                "family": family,
                "n": len(v),
                "held_out": sum(h for _, h in v),
                "median_ape_pct": round(statistics.median(ape), 2),
                "p80_ape_pct": round(float(np.percentile(ape, 80)), 2),
                "median_error_pct": round(statistics.median(e for e, _ in v), 2),
            }
        )
    return out


def _guard(report: dict[str, Any], kind: str, file: str, key: Callable[[dict[str, Any]], str]) -> list[dict[str, Any]]:
    """The first predicted metric of the first row of each `key(row)` group: tests re-predict them to tell a
    record that no longer matches the model."""
    seen: dict[str, dict[str, Any]] = {}
    for r in report["rows"]:
        entry = {"kind": kind, "file": file, "id": r["id"], "metric": r["metric"], "predicted": r["predicted"]}
        seen.setdefault(key(r), entry)
    return list(seen.values())


def _track_record(
    cat: Any, train: dict[str, Any], serve: dict[str, Any], heldout: dict[str, dict[str, Any]]
) -> list[str]:
    """Write the track record predictions quote (TRACK) and return its serving table for this document."""
    serve_errors = [e for name, rep in [("", serve), *heldout.items()] for e in _errors(cat, rep, bool(name))]
    record: dict[str, Any] = {
        "about": "How far chipwise's predictions have been from published measurements, per metric, by the serving "
        "engine and chip family each run was priced with (error = 100 (predicted - measured) / measured; half of a "
        "scope's runs within median_ape_pct, four in five within p80_ape_pct). Read by chipwise.catalog.track_record.",
        "generated": dt.date.today().isoformat(),
        "command": "python scripts/write_accuracy.py (make accuracy)",
        "files": {
            "serve": ["../shared/data/groundtruth_inference.csv", *(f"docs/research/{n}" for n in heldout)],
            "train": ["../shared/data/groundtruth_training.csv"],
        },
        "min_runs": MIN_RUNS,
        "serve": _record_groups(serve_errors),
        "train": _record_groups(_errors(cat, train, False)),
        "guard": [
            *_guard(serve, "serve", "groundtruth_inference.csv", lambda r: r["engine"]),
            *_guard(train, "train", "groundtruth_training.csv", lambda r: cat.chips[r["chip"]].family),
        ],
    }
    TRACK.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    lines = [
        "## Track record quoted with predictions",
        "",
        "`chipwise predict`, `plan serve`, `plan train` and `catalog engine ENGINE --chip ID` quote how far the "
        "model has been from the published runs of a serving engine on a chip family: the shared table and the "
        f"{len(heldout)} held-out files pooled (`{TRACK.relative_to(ROOT)}`, written with this document). Half of "
        "a scope's measured metrics were predicted within the first figure, four in five within the second (scopes "
        f"of at least {MIN_RUNS} metrics; `*` is any):",
        "",
        "| engine | chip family | " + " | ".join(f"{RECORD_LABELS[m]} (n)" for m in METRICS) + " |",
        "|---|---|" + "---:|" * len(METRICS),
    ]
    cells: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for metric, groups in record["serve"].items():
        for g in groups:
            cells[(g["engine"], g["family"])][metric] = (
                f"{g['median_ape_pct']:.0f} / {g['p80_ape_pct']:.0f}% ({g['n']})"
            )
    for (engine, family), row in sorted(cells.items()):
        lines.append(f"| {engine} | {chips_label(family)} | " + " | ".join(row.get(m, "-") for m in METRICS) + " |")
    train_groups = record["train"].get("tokens_per_s_per_chip", [])
    lines += [
        "",
        "Training throughput (step times read as throughput), by chip family: "
        + "; ".join(
            f"{chips_label(g['family'])} {g['median_ape_pct']:.0f} / {g['p80_ape_pct']:.0f}% ({g['n']})"
            for g in train_groups
        )
        + ".",
        "",
    ]
    return lines


def _kernels(cat: Any) -> list[str]:
    """Kernels and whole steps timed on one H200 against the device model (validation.kernels)."""
    report = validate_kernels(cat, measured_path())
    m = report["measurement"]
    rows = report["rows"]

    def steps(metric: str, head: str) -> list[str]:
        out = [f"| {head} | measured ms | chipwise ms | error % |", "|---|---:|---:|---:|"]
        lead = metric.replace("_", " ") + " "
        for r in rows:
            if r["metric"] == metric:
                out.append(
                    f"| {r['id'].removeprefix(lead)} | {1e3 * r['measured']:.2f} | {1e3 * r['predicted']:.2f} | "
                    f"{r['error_pct']:+.1f} |"
                )
        return out

    return [
        "## Kernels timed on an H200 (chipwise device run)",
        "",
        f"`scripts/measure_serving_gpu.py` timed, on one {m['device']} ({m['date']}, torch {m['torch']}, CUDA "
        f"{m['cuda']}), the kernels of a serving iteration and whole steps of a Llama-3.1-8B-shaped decoder "
        "(random weights; cuBLAS GEMMs, flash attention with flash-decoding splits, fused add-and-norm, RoPE and "
        "SiLU x up; each step one CUDA graph, as vLLM runs it); `chipwise validate --data "
        "src/chipwise/validation/data/h200_serving_kernels.json` prices each with the device model and vLLM's "
        "Hopper figures, without the engine's host time (no engine ran). Run the script on another GPU (`--chip "
        "ID`) and validate its JSON the same way.",
        "",
        *_table(report["summary"]["by_metric"], "measured"),
        "",
        "Whole steps, which is what TTFT and TPOT are made of:",
        "",
        *steps("decode_step", "decode step (weights, sequences B, context L)"),
        "",
        *steps("prefill_step", "prefill step (weights, prompt tokens)"),
        "",
        "What the kernels show, and was left as it is: a GEMM of a few rows takes 5-8 us more than its weight "
        "read at 0.87 of 4.8 TB/s (a small weight never reaches full bandwidth), which the model charges per layer "
        "(`layer_overhead`, fitted) rather than per kernel, so single GEMMs of a few rows are under-predicted "
        "(-30 to -50%) while whole steps are not; bf16 GEMMs of 512-4,096 rows ran at 660-790 TFLOP/s (0.67-0.80 "
        "of peak, above the fitted 0.63) and fp8 ones at 1,180-1,410 (0.60-0.71, below the fitted 0.81), so bf16 "
        "prefill is over-predicted and fp8 prefill under-predicted by 10-20%; causal prefill attention reached 590-610 "
        "TFLOP/s from 8K tokens (the serving rate is 0.38 of peak, 377 TFLOP/s: +55-62% there) and 150 TFLOP/s at "
        "512 tokens (-60%), so the attention of long prompts is over-priced. Decode attention is priced as the "
        "iteration prices it, the cache read alone (its launches are in the per-layer overhead): rows with work "
        "for the whole machine (32 or more sequences of 8 KV heads, 128 or more of one) came within 6%, while rows "
        "of few sequences are launch-bound (10-17 us where the read takes under a microsecond) or read their cache "
        "at 0.05-2.6 TB/s through flash-decoding's splits, -30 to -99%, most of that section's MAPE (decode of one "
        "sequence over 131,072 tokens -17% as a whole step). The family factors are fitted to published "
        "end-to-end runs (`scripts/calibrate.py`); these kernel figures are a check on them, not an input.",
        "",
        "Power in the same run (nvidia-smi, 700 W limit): decode steps back to back drew 693 W (SM clock 1,658 "
        "MHz), prefill steps 692 W, the idle GPU 122 W: without an engine's host gaps a decoding H200 draws its "
        "limit (`datacenter.yaml` records it beside the 0.8 serving uses).",
        "",
    ]


def main() -> None:
    cat = load_catalog()
    lines = [
        "# Accuracy",
        "",
        f"Generated by `scripts/write_accuracy.py` ({dt.date.today().isoformat()}) from `chipwise validate` on the "
        "published runs in `../shared/data` (sources, dates and caveats per row in `groundtruth.md` there). "
        "`error = 100 x (predicted - measured) / measured`; a row is skipped only for the stated reason.",
        "",
        "## How the efficiency factors were set",
        "",
        "The model is physical: a roofline per operator (GEMM tile and wave quantisation, flash attention, "
        "memory-bound element-wise work), alpha-beta collectives per fabric tier, pipeline bubbles, ZeRO/FSDP "
        "overlap, memory per rank. Its few free factors are **per chip family** (never per row or per source) and "
        "live in "
        "`src/chipwise/catalog/data/efficiency.yaml`, each with its derivation:",
        "",
        "1. Priors come from kernel-level measurements collected in `docs/research/efficiency-evidence.md` (maximum "
        "achievable GEMM FLOP/s, STREAM bandwidth, FlashAttention rates, NCCL bus bandwidth).",
        "2. `scripts/calibrate.py` then fits, for each family, the GEMM fraction per precision used by its rows, the "
        "attention rate, per-layer, per-micro-batch and per-step framework overheads, the data-parallel overlap and, "
        "for families with MoE runs, the grouped-GEMM rate and the all-to-all overlap, by robust least squares on "
        "log(predicted/measured) with a pull towards the prior. Fabric efficiencies and latencies are measured "
        "figures (`fabrics.yaml`), not fitted.",
        "3. The fit is in-sample on these rows; the cross-validation below refits without each source family in turn "
        "and predicts it, which is the honest estimate of the error on new runs.",
        "",
        *_efficiency_table(),
        "",
    ]
    train = validate_file(cat, DATA / "groundtruth_training.csv", "train")
    serve = validate_file(cat, DATA / "groundtruth_inference.csv", "serve", workers=WORKERS)
    if CV.exists():
        cv = json.loads(CV.read_text())
        now = train["summary"]["mape_pct"]
        since = (
            ""
            if abs(now - cv["in_sample_mape_pct"]) < 0.05
            else f" (in sample when the check was run; the model reads {now:.1f}% in sample now)"
        )
        lines += [
            "## Out-of-sample check (leave one source family out)",
            "",
            f"Refitting without each source family and predicting it gives **MAPE {cv['mape_pct']:.1f}%** "
            f"(median {cv['median_ape_pct']:.1f}%) over {cv['n']} rows, against {cv['in_sample_mape_pct']:.1f}% in "
            f"sample{since}. Per held-out family:",
            "",
            *_table(cv["by_source_family"], "held-out source family"),
            "",
        ]
    lines[4:4] = _targets(train, serve)
    lines += _section("Training (groundtruth_training.csv)", train)
    lines += _section("Serving (groundtruth_inference.csv)", serve)
    lines += [
        "The serving factors (per engine family and chip family, `engines.yaml`), how they were fitted and where the "
        "remaining error comes from are in `docs/serving.md` (section 7).",
        "",
    ]
    heldout_lines, heldout = _heldout(cat)
    HELDOUT_RECORD.write_text(heldout_record(heldout), encoding="utf-8")
    lines += [*heldout_lines, "", *_kernels(cat), *_track_record(cat, train, serve, heldout)]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = README.read_text(encoding="utf-8")
    passage = readme_passage(f"{readme_headline(train, serve)} {readme_heldout(heldout)}")
    README.write_text(between(text, README_START, README_END, passage), "utf-8")
    print(
        f"wrote {OUT.relative_to(ROOT)} and README.md's accuracy passage: training MAPE "
        f"{train['summary']['mape_pct']:.1f}%"
    )


if __name__ == "__main__":
    main()
