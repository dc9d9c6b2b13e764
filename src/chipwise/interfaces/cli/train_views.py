"""Terminal views of training results: the fleet ranking table and the one-plan explanation."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import console, projected_banner
from chipwise.train.explain import BREAKDOWN_LABELS


def ranking_table(report: dict[str, Any]) -> Table:
    objective = report["objective"]
    title = (
        f"{report['model']} on {report['chips']:,} chips, {report['precision']}"
        + (f", {fmt.count(report['tokens'])} tokens" if report.get("tokens") else "")
        + f" - ranked by {objective} ({report['pricing']} prices)"
    )
    table = Table(title=title, header_style="bold", show_lines=False)
    cols = [
        "#",
        "hardware",
        "time to train",
        "step",
        "tok/s/chip",
        "MFU",
        "mem/chip",
        "plan",
        "cost",
        "$/Mtok",
        "energy",
        "CO2e",
    ]
    for c in cols:
        table.add_column(c, justify="left" if c in ("hardware", "plan") else "right", overflow="fold")
    for i, r in enumerate(report["results"], start=1):
        name = r["hardware"] + (" [yellow](proj.)[/]" if r.get("projected") else "")
        table.add_row(
            str(i),
            name,
            fmt.duration(r["time_to_train_s"]) if r.get("time_to_train_s") else "-",
            fmt.duration(r["step_time_s"]),
            f"{r['tokens_per_s_per_chip']:,.0f}",
            fmt.percent(r["mfu"]),
            f"{r['memory_per_chip_gib']:.0f} GiB",
            fmt.plan(r["plan"]),
            fmt.usd(r["cost_usd"]),
            f"{r['usd_per_million_tokens']:.2f}" if r["usd_per_million_tokens"] == r["usd_per_million_tokens"] else "-",
            fmt.energy(r["energy_j"]),
            fmt.carbon(r["co2e_kg"]),
        )
    return table


def print_ranking(report: dict[str, Any]) -> None:
    console.print(ranking_table(report))
    s = report["search"]
    console.print(
        f"searched {s['evaluated']:,} plans ({s['feasible']:,} fit in memory) in {s['seconds']:.2f} s", style="dim"
    )
    projected_banner([r["hardware"] for r in report["results"] if r.get("projected")])
    for sk in report["skipped"]:
        console.print(f"[dim]not ranked: {sk['hardware']}: {sk['reason']}[/]")


def print_prediction(r: dict[str, Any], sources: bool = False) -> None:
    """One training prediction with its breakdown and the figures it rests on."""
    projected_banner([r["hardware"]] if r.get("projected") else [])
    head = Table(
        title=f"{r['model']} on {r['chips']:,} x {r['hardware']} ({r['system']}), {r['precision']}",
        show_header=False,
        header_style="bold",
    )
    head.add_column("figure")
    head.add_column("value", justify="right")
    head.add_row("plan", fmt.plan(r["plan"]) + f"  ({r['plan_source']})")
    head.add_row("step time", fmt.duration(r["step_time_s"]))
    head.add_row("throughput", f"{r['tokens_per_s']:,.0f} tokens/s ({r['tokens_per_s_per_chip']:,.0f} per chip)")
    head.add_row("model TFLOP/s per chip", f"{r['tflops_per_chip']:,.0f}")
    head.add_row("MFU / HFU", f"{fmt.percent(r['mfu'])} / {fmt.percent(r['hfu'])}")
    head.add_row("memory per chip", f"{r['memory_per_chip_gib']:.1f} of {r['memory_capacity_gib']:.0f} GiB")
    if r.get("time_to_train_s") is not None:
        head.add_row("time to train", fmt.duration(r["time_to_train_s"]))
    head.add_row(f"cost ({r['pricing']}, {r['economics_basis']})", fmt.usd(r["cost_usd"]))
    head.add_row("energy / carbon", f"{fmt.energy(r['energy_j'])} / {fmt.carbon(r['co2e_kg'])}")
    console.print(head)
    bd = Table(
        title=f"Where the step time goes (dominated by {BREAKDOWN_LABELS[r['dominated_by']]})", header_style="bold"
    )
    bd.add_column("component")
    bd.add_column("seconds", justify="right")
    bd.add_column("share", justify="right")
    for k, v in sorted(r["breakdown"].items(), key=lambda kv: -kv[1]):
        if v > 0:
            bd.add_row(BREAKDOWN_LABELS[k], f"{v:.3f}", fmt.percent(r["breakdown_fraction"][k]))
    console.print(bd)
    if sources:
        ft = Table(title="Figures used", header_style="bold")
        for c in ("figure", "value", "status", "source / derivation"):
            ft.add_column(c, overflow="fold")
        for name, f in r["figures"].items():
            ft.add_row(name, f"{f['value']} {f['unit']}", f["status"], f.get("derivation") or "; ".join(f["source"]))
        console.print(ft)
