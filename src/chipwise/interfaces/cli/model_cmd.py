"""`chipwise model list|show`: model presets and what follows from a model's shape."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import (
    CatalogFiles,
    JsonFlag,
    SetFigures,
    catalog_from,
    compact_table,
    console,
    print_json,
)
from chipwise.workload import load_model
from chipwise.workload.presets import preset_summaries

app = typer.Typer(
    help="List model presets and show a model's parameters, FLOPs and KV-cache size.", no_args_is_help=True
)


@app.command("list")
def list_(catalog_files: CatalogFiles = None, sets: SetFigures = None, as_json: JsonFlag = False) -> None:
    """List the model presets."""
    cat = catalog_from(catalog_files, sets)
    rows = preset_summaries(cat)
    if as_json:
        print_json({"models": rows})
        return
    table = compact_table("Model presets (Hugging Face config.json form; 'chipwise model show ID' for one)")
    for col in ("id", "name", "arch", "attn", "total", "active", "layers", "alias"):
        numeric = col in ("total", "active", "layers")
        wraps = col in ("name", "alias")
        table.add_column(col, justify="right" if numeric else "left", no_wrap=not wraps, overflow="fold")
    for r in rows:
        alias = min((a for a in r["aliases"] if a.lower() != r["id"].lower()), key=len, default="")
        table.add_row(
            r["id"],
            r["name"],
            r["architecture"],
            r["attention"],
            fmt.count(r["params_total"]),
            fmt.count(r["params_active"]),
            str(r["layers"]),
            alias,
        )
    console.print(table)


@app.command("show")
def show(
    name: Annotated[
        str,
        typer.Argument(help="A preset name or alias, or a path to a Hugging Face config.json.", metavar="NAME_OR_PATH"),
    ],
    seq_len: Annotated[int, typer.Option("--seq-len", min=1, help="Sequence length for FLOPs per token.")] = 4096,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a model's parameters, FLOPs per token (matmuls and attention apart) and KV-cache bytes per token."""
    cat = catalog_from(catalog_files, sets)
    spec = load_model(cat, name)
    data = spec.summary(seq_len)
    if as_json:
        print_json(data)
        return
    table = Table(
        title=f"{spec.display} ({data['architecture']}, {data['attention']}, {data['mlp']})",
        header_style="bold",
        show_header=False,
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("parameters (total)", fmt.count(spec.params_total))
    table.add_row("parameters (active per token)", fmt.count(spec.params_active))
    table.add_row(
        "layers / hidden / heads / kv heads",
        f"{spec.layers} / {spec.hidden} / {spec.attention.heads} / {spec.attention.kv_heads}",
    )
    if spec.moe:
        table.add_row(
            "experts (routed / per token / shared)",
            f"{spec.moe.experts} / {spec.moe.top_k} / {spec.moe.shared} in {spec.moe_layers} layers",
        )
    table.add_row(f"forward FLOPs per token @ {seq_len}", fmt.flop(data["flops_per_token_fwd"]))
    table.add_row("  of which matmuls", fmt.flop(data["flops_per_token_fwd_matmul"]))
    table.add_row("  of which attention (causal)", fmt.flop(data["flops_per_token_fwd_attention"]))
    table.add_row("weights (bf16)", fmt.bytes_(data["weight_bytes_bf16"]))
    table.add_row("weights as released (serving's default)", spec.released_precision)
    table.add_row("KV cache per token (bf16)", f"{data['kv_bytes_per_token'] / 1024:,.1f} KiB")
    context = data["context_tokens"]
    table.add_row("context length", f"{context:,} tokens" if context else "not stated in the config.json")
    console.print(table)
    for note in spec.notes:
        console.print(f"note: {note}")
    console.print(f"source: {spec.source}", style="dim")
