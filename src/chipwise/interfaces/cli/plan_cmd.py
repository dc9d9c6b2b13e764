"""`chipwise plan train|serve|...`: search plans and rank fleets.

Its commands import their planners and views when run, to keep the CLI's start-up fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from chipwise.economics.pricing import check_mode
from chipwise.errors import one_of
from chipwise.hardware import hardware_ids
from chipwise.interfaces.cli import plan_fleet_cmd, plan_serve_cmd
from chipwise.interfaces.cli.common import (
    NO_OPTION_EXIT,
    CatalogFiles,
    JsonFlag,
    ProviderOpt,
    SetFigures,
    UtilisationOpt,
    catalog_from,
    console,
    print_json,
    print_model_notes,
    whatif_banner,
    whatif_lines,
)
from chipwise.interfaces.cli.plot_opt import PlotFile, write_plot
from chipwise.workload.counts import read_count
from chipwise.workload.presets import DEFAULT_SEQ_LEN
from chipwise.workload.training import DEFAULT_TRAIN_SEQ_LEN, PRECISIONS

app = typer.Typer(help="Search plans and rank fleets for a training run or a serving load.", no_args_is_help=True)

#: the training precisions a job may name (the one list TrainingJob accepts; its error lists the same)
PRECISION_HELP = f"Number format of the matrix maths: {', '.join(PRECISIONS)}."
#: planner.training.make_job's default: longer than model show's 4,096, so FLOPs per token differ between the two
SEQ_LEN_HELP = (
    f"Sequence length (default: {DEFAULT_TRAIN_SEQ_LEN}, or the model's context where that is shorter; "
    f"{DEFAULT_SEQ_LEN} where the model states none)."
)
#: the fix of an unreadable --global-batch-tokens: the tokens of one optimizer step (read_count's default, a chip or
#: token count, had offered 15T, a whole training run)
BATCH_TOKENS_EXAMPLE = "4M or 4194304"
#: the fix of an unreadable --seq-len: a sequence's tokens (read_count's default offers a chip count); 8k is SI, 8,000
#: tokens ("8192 or 8k" had read as if 8k were 8,192)
SEQ_LEN_EXAMPLE = "8192 or 8k (8,000)"
BATCH_TOKENS_HELP = (
    "Tokens per optimizer step (e.g. 4M), taken as the batch of whole sequences within 5% of it that data "
    "parallelism divides best (4M of 8K sequences: 512 of them, 4,194,304 tokens; an exact number of sequences is "
    "kept); the batch used is shown."
)
HardwareOpt = Annotated[
    str,
    typer.Option("--hardware", help="Comma-separated chip or system ids, or 'all' for every chip in the catalog."),
]

#: the economics options plan train and plan hetero share (attach_economics's)
PricingOpt = Annotated[
    str,
    typer.Option("--pricing", help="on-demand, capacity-block, reserved-1y, reserved-3y, spot, or owned (fleet TCO)."),
]
RegionOpt = Annotated[str | None, typer.Option("--region", help="Cloud region for prices and carbon.")]
PueOpt = Annotated[float | None, typer.Option("--pue", help="Power usage effectiveness of the site (>= 1).")]


@app.command("train")
def train(
    model: Annotated[str, typer.Option("--model", help="A model preset or a path to a config.json.")],
    tokens: Annotated[
        str | None,
        typer.Option(
            "--tokens",
            help="Tokens to train on (15e12 or 15T); without it, cost, energy and CO2e are of one hour of training "
            "and the time to train reads '-'.",
        ),
    ] = None,
    chips: Annotated[str, typer.Option("--chips", help="Chips in the fleet (4096, 1e5 or 100k).")] = "4096",
    hardware: HardwareOpt = "all",
    # a count, read as --chips is (8k): Typer's int had refused --seq-len 8k, which the web page and the API take
    seq_len: Annotated[str | None, typer.Option("--seq-len", help=SEQ_LEN_HELP)] = None,
    global_batch_tokens: Annotated[str | None, typer.Option("--global-batch-tokens", help=BATCH_TOKENS_HELP)] = None,
    precision: Annotated[str, typer.Option("--precision", help=PRECISION_HELP)] = "bf16",
    top: Annotated[int, typer.Option("--top", min=1, help="Rows to show.")] = 30,
    objective: Annotated[str, typer.Option("--objective", help="Rank by time, cost, energy or carbon.")] = "time",
    pricing: PricingOpt = "on-demand",
    region: RegionOpt = None,
    provider: ProviderOpt = None,
    managed: Annotated[
        str | None, typer.Option("--managed", help="Add a managed-service markup, e.g. sagemaker.")
    ] = None,
    utilisation: UtilisationOpt = None,
    pue: PueOpt = None,
    recovery: Annotated[
        str, typer.Option("--recovery", help="Failure recovery: checkpoint, in-memory, or best (the better one).")
    ] = "best",
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help="Processes for the chips' searches (default: one per CPU, copies of this process where it can fork; "
            "1: in this process). The answer is the same.",
        ),
    ] = None,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
    plot: PlotFile = None,
) -> None:
    """Rank hardware for a training run: time to train, plan, MFU, memory, cost, energy and carbon."""
    from chipwise.interfaces.cli.train_views import print_ranking
    from chipwise.planner.training import OBJECTIVES, plan_training
    from chipwise.reliability.goodput import RECOVERIES
    from chipwise.sweep.backends import cpu_count

    one_of(objective, OBJECTIVES, "objective")
    check_mode(pricing)
    one_of(recovery, RECOVERIES, "recovery")
    cat = catalog_from(catalog_files, sets)
    print_model_notes(cat, model)
    report = plan_training(
        cat,
        model,
        read_count(chips, "--chips", whole=True),
        hardware_ids(cat, hardware),
        tokens=read_count(tokens, "--tokens"),
        seq_len=read_count(seq_len, "--seq-len", whole=True, example=SEQ_LEN_EXAMPLE),
        global_batch_tokens=read_count(global_batch_tokens, "--global-batch-tokens", example=BATCH_TOKENS_EXAMPLE),
        precision=precision,
        objective=objective,
        pricing=pricing,
        region=region,
        provider=provider,
        utilisation=utilisation,
        pue=pue,
        managed=managed,
        recovery=recovery,
        workers=workers or cpu_count(),
    )
    report["results"], hidden = report["results"][:top], report["results"][top:]
    write_plot(report, plot)  # before the output: a reader that stops early (`| head`) had left no plot
    if as_json:  # what a --set or --catalog changed, as claims --json names it (only the table had said it)
        print_json({**report, "what_if": whatif_lines(cat)})
    else:
        whatif_banner(cat)
        print_ranking(report, len(hidden))
        if global_batch_tokens and report["results"]:  # the batch the tokens asked for became (train.batch)
            r = report["results"][0]
            console.print(
                f"[dim]global batch: {r['global_batch']:,} sequences of {r['seq_len']:,} tokens, "
                f"{r['global_batch_tokens']:,} tokens a step (--global-batch-tokens {global_batch_tokens})[/]"
            )
    if not report["results"]:
        raise typer.Exit(code=NO_OPTION_EXIT)  # each chip's reason is printed; a script sees that none fits


@app.command("hetero")
def hetero(
    model: Annotated[str, typer.Option("--model", help="A model preset or a path to a config.json.")],
    fleet: Annotated[str, typer.Option("--fleet", help="Two chip types and counts, e.g. trn4=512,gb300=512.")],
    tokens: Annotated[str | None, typer.Option("--tokens", help="Tokens to train on (15e12 or 15T).")] = None,
    hybrid: Annotated[
        str | None,
        typer.Option("--hybrid", help="A hybrid scale-up system holding both types (e.g. trn4-gb300-fusion-rack)."),
    ] = None,
    seq_len: Annotated[str | None, typer.Option("--seq-len", help=SEQ_LEN_HELP)] = None,
    global_batch_tokens: Annotated[str | None, typer.Option("--global-batch-tokens", help=BATCH_TOKENS_HELP)] = None,
    precision: Annotated[str, typer.Option("--precision", help=PRECISION_HELP)] = "bf16",
    pricing: PricingOpt = "on-demand",
    region: RegionOpt = None,
    provider: ProviderOpt = None,
    utilisation: UtilisationOpt = None,
    pue: PueOpt = None,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
) -> None:
    """Train on a mixed fleet: pipelines with stages on two chip types, against each part alone."""
    from chipwise.interfaces.cli.hetero_views import print_hetero
    from chipwise.planner.hetero import parse_fleet, plan_hetero_training

    cat = catalog_from(catalog_files, sets)
    print_model_notes(cat, model)
    # where the model fits neither the mix nor a part, the planner's NoMixError exits 1 as plan train's search that
    # ranks nothing does (it had read 2, bad input's)
    report = plan_hetero_training(
        cat,
        model,
        parse_fleet(fleet),
        tokens=read_count(tokens, "--tokens"),
        seq_len=read_count(seq_len, "--seq-len", whole=True, example=SEQ_LEN_EXAMPLE),
        global_batch_tokens=read_count(global_batch_tokens, "--global-batch-tokens", example=BATCH_TOKENS_EXAMPLE),
        precision=precision,
        hybrid=hybrid,
        pricing=pricing,
        region=region,
        provider=provider,
        utilisation=utilisation,
        pue=pue,
    )
    if as_json:
        print_json({**report, "what_if": whatif_lines(cat)})
    else:
        whatif_banner(cat)
        print_hetero(report)


app.command("serve")(plan_serve_cmd.serve)
app.command("fleet")(plan_fleet_cmd.fleet)
app.command("lifecycle")(plan_fleet_cmd.lifecycle)
