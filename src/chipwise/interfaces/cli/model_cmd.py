"""`chipwise model list|show`: model presets and what follows from a model's shape."""

from __future__ import annotations

from collections.abc import Iterable
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
    whatif_banner,
    whatif_lines,
)
from chipwise.workload import load_model
from chipwise.workload.counts import read_count
from chipwise.workload.presets import DEFAULT_SEQ_LEN, model_summary, preset_summaries

#: the fix of an unreadable --seq-len: a sequence's tokens, as plan train gives it (read_count's default offers a chip
#: count); 8k is SI, 8,000 tokens ("8192 or 8k" had read as if 8k were 8,192)
SEQ_LEN_EXAMPLE = "8192 or 8k (8,000)"

app = typer.Typer(
    help="List model presets and show a model's parameters, FLOPs and KV-cache size.", no_args_is_help=True
)


@app.command("list")
def list_(catalog_files: CatalogFiles = None, sets: SetFigures = None, as_json: JsonFlag = False) -> None:
    """List the model presets."""
    cat = catalog_from(catalog_files, sets)
    rows = preset_summaries(cat)
    if as_json:  # what a --set or --catalog changed, as every command's --json names it (model's had not)
        print_json({"models": rows, "what_if": whatif_lines(cat)})
        return
    whatif_banner(cat)  # the table says what a --set or --catalog changed, as catalog list's does
    cells = [
        [
            r["id"],
            r["name"],
            r["architecture"],
            r["attention"],
            fmt.parameters(r["params_total"]),
            fmt.parameters(r["params_active"]),
            str(r["layers"]),
            min((a for a in r["aliases"] if a.lower() != r["id"].lower()), key=len, default=""),
        ]
        for r in rows
    ]
    id_width, alias_width, with_name = _alias_width(cells)
    columns = [c for c in PRESET_COLUMNS if with_name or c != "name"]
    table = compact_table("Model presets (Hugging Face config.json form; 'chipwise model show ID' for one)")
    for col in columns:
        numeric = col in ("total", "active", "layers")
        table.add_column(
            col,
            justify="right" if numeric else "left",
            # the alias folds where a piece is wider than its column: kept whole and cropped, 'llama2-7b' had read
            # 'llama' and '7b'
            no_wrap=col not in ("id", "name", "alias"),
            overflow="fold",
            width={"id": id_width, "alias": alias_width}.get(col),
        )
    for row in cells:
        shown = [cell for col, cell in zip(PRESET_COLUMNS, row, strict=True) if col in columns]
        ident, alias = (fmt.break_at_separators(shown[i], w) for i, w in ((0, id_width), (-1, alias_width)))
        table.add_row(ident, *shown[1:-1], alias)
    console.print(table)
    if not with_name:
        console.print(
            f"[dim]names left out at {console.width} columns: 'chipwise model show ID' gives one, --json all[/]"
        )


#: the model list's columns: the name wraps at its spaces, the alias (last) at its separators, the rest never
PRESET_COLUMNS = ("id", "name", "arch", "attn", "total", "active", "layers", "alias")


def _alias_width(cells: list[list[str]]) -> tuple[int, int, bool]:
    """The id and alias columns' widths, and whether the name column is shown: the widest alias where the row fits
    the console, else what the other columns leave (the name at its longest word), the aliases then broken after a
    separator; where the name does not fit beside an alias of the header's width, the list leaves the name out
    (Rich had shrunk it to nothing, without a word). Where that leaves the alias narrower than its widest piece
    between separators, the id column gives it room, its ids broken after their own separators too: at 60 columns
    the ids had kept their 21 characters and the aliases 5, 'llama3-8b' read 'llama3', '-' and '8b' on three lines;
    the ids take 18 and the aliases 9, 'llama3-8b' on one line and 'qwen3-coder-480b-a35b' broken after '480b-'."""
    name = PRESET_COLUMNS.index("name")
    widths = [
        max(len(col), *(max(map(len, row[i].split() if i == name else [row[i]])) for row in cells))
        for i, col in enumerate(PRESET_COLUMNS)
    ]
    others = sum(widths[:-1]) + len(PRESET_COLUMNS) - 1  # one blank between columns
    if others + widths[-1] <= console.width:
        return widths[0], widths[-1], True
    with_name = console.width - others >= len("alias")
    room = console.width - others + (0 if with_name else widths[name] + 1)
    give = max(0, min(_widest_piece(row[-1] for row in cells) - room, widths[0] - _widest_piece(r[0] for r in cells)))
    return widths[0] - give, max(room + give, len("alias")), with_name


def _widest_piece(texts: Iterable[str]) -> int:
    """The longest piece of `texts` between separators, as format.break_at_separators breaks them: 'deepseek-' of
    'deepseek-r1'."""
    return max(len(piece) for text in texts for piece in fmt.break_at_separators(text, 1).splitlines())


@app.command("show")
def show(
    name: Annotated[
        str,
        typer.Argument(help="A preset name or alias, or a path to a Hugging Face config.json.", metavar="NAME_OR_PATH"),
    ],
    # a count, read as plan train's --seq-len is (8k): Typer's int had refused --seq-len 8k ('Input should be a
    # valid integer')
    seq_len: Annotated[
        str | None,
        typer.Option(
            "--seq-len",
            help=f"Sequence length for FLOPs per token, within the model's context, e.g. {SEQ_LEN_EXAMPLE} (default: "
            f"{DEFAULT_SEQ_LEN}, or the context where shorter).",
            show_default=False,
        ),
    ] = None,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a model's parameters, FLOPs per token (matmuls and attention apart) and KV-cache bytes per token."""
    cat = catalog_from(catalog_files, sets)
    spec = load_model(cat, name)
    data = model_summary(spec, read_count(seq_len, "--seq-len", whole=True, example=SEQ_LEN_EXAMPLE), "--seq-len")
    tokens = data["seq_len"]
    if as_json:
        print_json({**data, "what_if": whatif_lines(cat)})
        return
    whatif_banner(cat)
    table = Table(
        title=f"{spec.display} ({data['architecture']}, {data['attention']}, {data['mlp']})",
        header_style="bold",
        show_header=False,
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("parameters (total)", fmt.parameters(spec.params_total))
    table.add_row("parameters (active per token, incl. input embedding)", fmt.parameters(spec.params_active))
    if spec.is_moe:  # model cards count active parameters without the input embedding (gpt-oss-120b: 5.1 B)
        table.add_row("  without the input embedding", fmt.parameters(data["params_active_without_embedding"]))
    table.add_row(
        "layers / hidden / heads / kv heads",
        f"{spec.layers} / {spec.hidden} / {spec.attention.heads} / {spec.attention.kv_heads}",
    )
    if mla := data.get("mla"):  # the KV bytes of a latent cache, (kv_lora_rank + rope) a layer, follow from these
        table.add_row(
            "MLA ranks (q / kv latent / rope / v head)",
            f"{mla['q_lora_rank']} / {mla['kv_lora_rank']} / {mla['rope_dim']} / {mla['v_head_dim']}",
        )
    if spec.moe:
        table.add_row(
            "experts (routed / per token / shared)",
            f"{spec.moe.experts} / {spec.moe.top_k} / {spec.moe.shared} in {spec.moe_layers} layers",
        )
    table.add_row(f"forward FLOPs per token @ {tokens:,}", fmt.flop(data["flops_per_token_fwd"]))
    table.add_row("  of which matmuls", fmt.flop(data["flops_per_token_fwd_matmul"]))
    table.add_row("  of which attention (causal)", fmt.flop(data["flops_per_token_fwd_attention"]))
    table.add_row("weights (bf16)", fmt.bytes_(data["weight_bytes_bf16"]))
    released = spec.released_format or f"unknown ({spec.quant_method or 'no quant_method'}): give --precision"
    table.add_row("weights as released (serving's default)", released)
    windows = data["attention_windows"]
    context = data["context_tokens"]
    if windows:
        layout = ", ".join(f"{w['layers']} of {spec.layers} layers {w['kind']} {w['window']:,}" for w in windows)
        table.add_row("attention windows", layout)
        smallest = min(w["window"] for w in windows)
        table.add_row(f"KV cache per token up to {smallest:,} (bf16)", fmt.bytes_binary(data["kv_bytes_per_token"]))
        if context:
            table.add_row(
                f"KV cache of one {context:,}-token context (bf16)", fmt.bytes_binary(data["kv_bytes_at_context"])
            )
    else:
        table.add_row("KV cache per token (bf16)", fmt.bytes_binary(data["kv_bytes_per_token"]))
    table.add_row("context length", f"{context:,} tokens" if context else "not stated in the config.json")
    console.print(table)
    for note in spec.notes:
        console.print(f"note: {note}")
    console.print(f"source: {spec.source}", style="dim")
