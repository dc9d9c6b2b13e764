"""The `chipwise validate` command: predict every row of a ground-truth CSV and print the error tables.

The command imports the predictors (validation.run) when run, to keep the CLI's start-up fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import (
    CatalogFiles,
    JsonFlag,
    SetFigures,
    catalog_from,
    console,
    figure_table,
    print_json,
    transient_bar,
    whatif_banner,
    whatif_lines,
)
from chipwise.validation.report import TOP_ROWS, mape_cell


def _table(title: str, groups: dict[str, dict[str, float]]) -> Table:
    table = Table(title=title, header_style="bold")
    for col in ("", "n", "MAPE %", "median APE %", "bias %"):
        table.add_column(col, justify="left" if not col else "right")
    for name, st in groups.items():
        table.add_row(
            name, str(int(st["n"])), f"{st['mape_pct']:.1f}", f"{st['median_ape_pct']:.1f}", f"{st['bias_pct']:+.1f}"
        )
    return table


#: Column headings of the serving metrics (validation rows name them in full)
METRIC_LABELS = {"output_tokens_per_s_per_chip": "tok/s per chip", "tpot_s": "TPOT", "ttft_s": "TTFT"}


def _engine_table(by_engine: dict[str, dict[str, dict[str, float]]], metrics: list[str]) -> Table:
    """MAPE (and count) of each metric for each engine family a serving validation priced its rows with."""
    table = Table(title="By engine: MAPE % (n)", header_style="bold")
    table.add_column("")
    for m in metrics:
        table.add_column(METRIC_LABELS.get(m, m), justify="right")
    for engine, groups in by_engine.items():
        table.add_row(engine, *(mape_cell(groups, m) for m in metrics))
    return table


def _concentration_table(kind: str, by_metric: dict[str, dict[str, Any]]) -> Table:
    """Per metric: how few rows carry half of its MAPE, and the rows that add the most to it."""
    table = Table(title="Where the error is", header_style="bold")
    for col in ("", "MAPE %", "rows carrying half", f"largest (error %, points of the MAPE), top {TOP_ROWS}"):
        table.add_column(col, justify="right" if col in ("MAPE %", "rows carrying half") else "left")
    for metric, c in by_metric.items():
        largest = ", ".join(f"{r['id']} {r['chip']} {r['error_pct']:+.0f}% ({r['points']:.1f})" for r in c["largest"])
        half = f"{c['rows_for_half']} of {c['n']}"
        table.add_row(METRIC_LABELS.get(metric, metric), f"{c['mape_pct']:.1f}", half, largest)
    table.caption = "chipwise validate --data FILE --explain ID: how a row was read and where its time goes"
    return table


def validate(
    data: Annotated[
        Path,
        typer.Option(
            "--data",
            help="A ground-truth CSV (training or inference columns), or the JSON of kernels timed by "
            "scripts/measure_serving_gpu.py.",
        ),
    ],
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
    rows: Annotated[bool, typer.Option("--rows", help="Also print every row's prediction.")] = False,
    explain: Annotated[
        list[str] | None,
        typer.Option(
            "--explain",
            metavar="ID",
            help="Explain one row instead of validating the file: how it was read, the deployment simulated or the "
            "plan priced, where its time goes, its metrics (repeatable).",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help="Processes for a serving file's rows (default: one per CPU; copies of this process where it can "
            "fork, else one; 1: in this process). The report is the same.",
        ),
    ] = None,
) -> None:
    """Predict each published run in a CSV (or each kernel timed on a GPU) and report the errors by chip and by
    source family."""
    from chipwise.validation.consistency import SELF_CONSISTENCY_TOLERANCE

    if explain and rows:
        # --explain prints the named rows instead of validating the file: --rows had been dropped in silence
        raise ChipwiseError("--rows lists a validation's rows; --explain prints only the named ones. Fix: drop one.")
    cat = catalog_from(catalog_files, sets)
    if explain:
        _explain(cat, data, explain, as_json)
        return
    report = _validated(cat, data, workers)
    kind = report["kind"]
    if as_json:
        # what a --set or --catalog changed, as the table's banner says it (errors measured against a what-if)
        print_json({**report, "what_if": whatif_lines(cat)})
        return
    whatif_banner(cat)
    s = report["summary"]
    console.print(
        f"[bold]{kind} validation[/] on {data.name}: {s['rows_predicted']} of {s['rows_total']} rows predicted "
        f"({100 * s['predicted_fraction']:.0f}%), {_measurements(s)}; MAPE {s['mape_pct']:.1f}%, "
        f"median {s['median_ape_pct']:.1f}%"
    )
    if len(s["by_metric"]) > 1:
        console.print(_table("By metric", s["by_metric"]))
    if s.get("self_inconsistent_rows"):
        ids = s["self_inconsistent_rows"]
        console.print(
            f"{len(ids)} {'row contradicts itself' if len(ids) == 1 else 'rows contradict themselves'} (output "
            f"tokens/s more than {SELF_CONSISTENCY_TOLERANCE:g}x off what their own load and latencies imply; kept "
            f"above): {', '.join(ids)}"
        )
        console.print(_table("By metric, without those rows", s["by_metric_self_consistent"]))
    console.print(_concentration_table(kind, s["concentration"]))
    if s.get("by_engine"):
        console.print(_engine_table(s["by_engine"], list(s["by_metric"])))
    console.print(_table("By chip", s["by_chip"]))
    console.print(_table("By source family", s["by_source_family"]))
    if rows:
        table = Table(title="Rows", header_style="bold")
        for col in ("id", "chip", "metric", "measured", "predicted", "error %", "plan", "row"):
            table.add_column(col)
        for r in report["rows"]:
            table.add_row(
                r["id"],
                r["chip"],
                r["metric"],
                f"{r['measured']:.4g}",
                f"{r['predicted']:.4g}",
                f"{r['error_pct']:+.1f}",
                r["plan_source"],
                "contradicts itself" if r.get("self_consistent") is False else "",
            )
        console.print(table)
    if report["skipped"]:
        console.print(
            f"skipped {len(report['skipped'])} rows: "
            + "; ".join(f"{x['id']} ({x['reason']})" for x in report["skipped"][:8])
            + (" ..." if len(report["skipped"]) > 8 else "")
        )


def _validated(catalog: Catalog, data: Path, workers: int | None) -> dict[str, Any]:
    """The file's validation, with a bar on stderr counting its rows (on a terminal only, gone once the tables
    print): a serving file had shown nothing for minutes. stdout, --json's, is left alone. A serving file's rows
    run on `workers` processes (default one per CPU): the bar is then redrawn at each update, no thread of its own,
    which would keep the work from forking (pools.fork_safe)."""
    from chipwise.pools import may_fork
    from chipwise.sweep.backends import cpu_count
    from chipwise.validation.run import validate_path

    workers = workers or cpu_count()
    bar, task = transient_bar("validate", refresh_thread=not may_fork(workers))

    def tell(done: int, total: int) -> None:
        bar.update(task, description=data.name, completed=done, total=total, refresh=True)

    with bar:
        return validate_path(catalog, data, tell, workers)


def _explain(catalog: Catalog, data: Path, ids: list[str], as_json: bool) -> None:
    """`--explain`: each named row of a serving or training file, explained (validation.explain); training rows had
    been refused ('--explain reads serving rows'), where README promises any published row."""
    from chipwise.validation.explain import explain_serving, explain_training
    from chipwise.validation.run import data_kind

    kind = data_kind(data)
    if kind == "kernels":
        raise ChipwiseError(
            f"--explain reads serving and training rows; {data.name} holds kernel measurements. Fix: drop --explain."
        )
    found = (explain_serving if kind == "serve" else explain_training)(catalog, data, ids)
    if as_json:
        print_json({"kind": kind, "explain": found, "what_if": whatif_lines(catalog)})
        return
    whatif_banner(catalog)
    for e in found:
        (_print_explanation if kind == "serve" else _print_training_explanation)(e)


def _not_predicted(e: dict[str, Any]) -> bool:
    """Print why a row was not predicted, where it was not."""
    if e["predicted"]:
        return False
    where = ", ".join(x for x in (e["chip"], e["source_family"]) if x)  # no '(h100-sxm, )' without a family
    console.print(f"[bold]{e['id']}[/] ({where}): not predicted: {e['reason']}")
    return True


def _print_training_explanation(e: dict[str, Any]) -> None:
    """A training row: how it was read, the plan priced against the knobs the row states, the prediction's step,
    throughput and memory, the metric against the measurement, and where the step goes with the figures used, as
    `chipwise predict` prints them (train_views)."""
    from chipwise.interfaces.cli.train_views import (
        _breakdown_table,
        _figures_used_table,
        _speed_rows,
        lora_row,
        lora_title,
    )

    if _not_predicted(e):
        return
    # a row priced as LoRA says so as predict does: T353 (MLPerf's Llama 2 70B LoRA) had read as full training in
    # its title and rows, its 'lora: true' and rank-16 adapters in --json alone
    head = figure_table(
        f"{e['id']}: {fmt.model_label(e)}{lora_title(e)} on {e['chips']:,} {e['hardware']} ({e['system']}), "
        f"{e['precision']}" + (f", {e['source_family']}" if e["source_family"] else ""),
        title_justify="left",
    )
    head.add_row("read as", "\n".join(f"- {escape(n)}" for n in e["reading"]) or "-")
    stated = ", ".join(f"{k} {v}" for k, v in e["plan_stated"].items())
    head.add_row("parallelism the row states", stated or "none: the search chose the plan")
    head.add_row("plan", f"{fmt.plan(e['plan'])} ({e['plan_source']})")
    lora_row(head, e)
    _speed_rows(head, e)
    console.print(head)
    console.print(_metrics_table(e))
    console.print(_breakdown_table(e))
    console.print(_figures_used_table(e))


def _metrics_table(e: dict[str, Any]) -> Table:
    """Each metric the row measured beside the prediction, with the error."""
    table = Table(header_style="bold")
    for col in ("metric", "stat", "measured", "predicted", "error %"):
        table.add_column(col, justify="left" if col in ("metric", "stat") else "right")
    for m in e["metrics"]:
        table.add_row(
            METRIC_LABELS.get(m["metric"], m["metric"]),
            m["stat"],
            *_metric_values(m["metric"], m["measured"], m["predicted"]),
            f"{m['error_pct']:+.1f}",
        )
    return table


def _print_explanation(e: dict[str, Any]) -> None:
    if _not_predicted(e):
        return
    pools = e["plan"]
    plans = "; ".join(
        (f"{p['role']}: " if len(pools) > 1 else "") + f"{p['hardware']} {fmt.serving_plan(p)}" for p in pools
    )
    head = figure_table(
        f"{e['id']}: {fmt.model_label(e)} on {e['chips']:g} {e['chip']} ({e['engine']})"
        + (f", {e['source_family']}" if e["source_family"] else ""),
        title_justify="left",
    )
    head.add_row("read as", "\n".join(f"- {escape(n)}" for n in e["reading"]) or "-")
    head.add_row("plan", f"{plans} ({e['plan_source']})")
    head.add_row(
        "precision / KV cache per replica",
        "; ".join(
            f"{p['weight_precision']} weights, {p['kv_precision']} KV: {p['kv_cache_tokens_per_replica']:,} tokens"
            for p in pools
        ),
    )
    load = e["load"]
    head.add_row(
        "load",
        f"{load['label']}, {load['requests']:,} requests"
        + (f" issued over {load['issued_for_s']:g} s" if load.get("issued_for_s") else "")
        + f", {load['input_tokens_mean']:,.0f} in / "
        f"{load['output_tokens_mean']:,.0f} out (means); throughput over "
        + ("the whole run" if load["throughput_basis"] == "run" else "the steady state"),
    )
    head.add_row(
        "one prompt's prefill, alone",
        _by_component(e["prefill_one_prompt"]["seconds"], e["prefill_breakdown"]),
    )
    wait = e["ttft_wait_s"]
    head.add_row(
        "TTFT's wait to start",
        f"mean {fmt.latency(wait['mean'])}, p50 {fmt.latency(wait['p50'])} (from the engine's front end handing the "
        "request over to the prompt's first iteration)",
    )
    head.add_row("steady iteration", _by_component(sum(e["breakdown"].values()), e["breakdown"]))
    from chipwise.interfaces.cli.serve_views import iterations_text  # the serving views load the simulator

    head.add_row("the run's iterations", iterations_text(e))
    console.print(head)
    console.print(_metrics_table(e))


def _metric_values(metric: str, measured: float, predicted: float) -> tuple[str, str]:
    """A metric's measured and predicted values as an explanation prints them: latencies (a metric in seconds,
    '_s') in one unit named with each ('26.7 ms' beside '31.2 ms'), a rate bare (its label names its unit)."""
    if not metric.endswith("_s"):
        return f"{measured:.4g}", f"{predicted:.4g}"
    unit = fmt.latency_unit([measured, predicted])
    shown = (f"{fmt.latencies([v], unit)} {unit[1]}" for v in (measured, predicted))
    return next(shown), next(shown)


def _by_component(total: float, parts: dict[str, float]) -> str:
    """'total: component time, ...', the largest first."""
    from chipwise.serve.iteration import COMPONENT_LABELS

    shown = sorted(((k, v) for k, v in parts.items() if v > 0), key=lambda kv: -kv[1])
    return f"{fmt.latency(total)}: " + ", ".join(f"{COMPONENT_LABELS[k]} {fmt.latency(v)}" for k, v in shown)


def _measurements(summary: dict[str, Any]) -> str:
    """'542 measurements of 3 metrics': a row measures one or more metrics (it had read '3 metrics' for three rows'
    throughputs, one metric)."""
    kinds = len(summary["by_metric"])
    return f"{summary['n']:,} measurement{'s' * (summary['n'] != 1)} of {kinds} metric{'s' * (kinds != 1)}"
