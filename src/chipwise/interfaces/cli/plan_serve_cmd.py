"""`chipwise plan serve`: the cheapest fleet and configuration that serves a load within its latency SLO.

Its command imports the serving planner when run, to keep the CLI's start-up fast.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.markup import escape

from chipwise.economics.pricing import check_mode
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware_ids
from chipwise.interfaces import format as fmt
from chipwise.interfaces.chart import check_writable
from chipwise.interfaces.cli.common import (
    NO_OPTION_EXIT,
    WEIGHTS_HELP,
    CatalogFiles,
    JsonFlag,
    NoDisaggregatedOpt,
    ProviderOpt,
    SetFigures,
    SloTargets,
    UtilisationOpt,
    catalog_from,
    err_console,
    print_json,
    print_model_notes,
    slo_text,
    transient_bar,
    whatif_banner,
    whatif_lines,
)
from chipwise.interfaces.cli.plot_opt import PlotFile, write_plot
from chipwise.planner.serving_inputs import check_slo, plan_serve_inputs
from chipwise.serve.engine import ENGINES
from chipwise.serve.quant import KV_PRECISIONS, QUANTISED
from chipwise.serve.sim.policies import check_router
from chipwise.workload.bounds import MAX_SIMULATED
from chipwise.workload.counts import count_value, read_count
from chipwise.workload.lengths import LengthDist, read_length
from chipwise.workload.load import load_of
from chipwise.workload.serve_scenario import DEFAULT_ROUTER, name_value

#: every KV cache format the option takes, and the default (serve.quant.default_kv_precision)
KV_HELP = (
    f"KV cache: {', '.join(KV_PRECISIONS)} (default: fp8 under {', '.join(QUANTISED)} weights on an engine that "
    "quantises the KV cache with them, e.g. TensorRT-LLM; else the weights' 16-bit format)."
)
#: the request shape plan serve prices without --input-tokens and --output-tokens
INPUT_TOKENS, OUTPUT_TOKENS = "1024", "256"
#: plan lifecycle's prompt and answer lengths, read as counts (4k) by request_lengths
InputTokens = Annotated[
    str, typer.Option("--input-tokens", help=f"Prompt tokens per request, e.g. {INPUT_TOKENS} or 4k.")
]
OutputTokens = Annotated[
    str, typer.Option("--output-tokens", help=f"Generated tokens per request, e.g. {OUTPUT_TOKENS} or 1k.")
]


#: plan serve's lengths, which may also be distributions (read_length: fixed, uniform, normal, lognormal, exponential)
InputLengths = Annotated[
    str,
    typer.Option(
        "--input-tokens",
        help=f"Prompt tokens per request, e.g. {INPUT_TOKENS} or 4k, or a distribution of them, e.g. "
        "lognormal:mean=2k,std=1.5k,max=16k or uniform:min=256,max=4k (also normal, exponential).",
    ),
]
OutputLengths = Annotated[
    str,
    typer.Option(
        "--output-tokens",
        help=f"Generated tokens per request, e.g. {OUTPUT_TOKENS} or 1k, or a distribution as --input-tokens takes "
        "one, e.g. lognormal:mean=400,std=300,max=2k.",
    ),
]


def request_length_dists(input_tokens: str, output_tokens: str) -> tuple[LengthDist, LengthDist]:
    """--input-tokens and --output-tokens as plan serve reads them: counts or distributions (read_length)."""
    return (
        read_length(input_tokens, "--input-tokens", f"{INPUT_TOKENS} or 4k"),
        read_length(output_tokens, "--output-tokens", f"{OUTPUT_TOKENS} or 1k"),
    )


def request_lengths(input_tokens: str, output_tokens: str) -> tuple[int, int]:
    """The --input-tokens and --output-tokens counts, or one line naming the option and an example."""
    prompt = read_count(input_tokens, "--input-tokens", whole=True, example=f"{INPUT_TOKENS} or 4k")
    return int(prompt), int(read_count(output_tokens, "--output-tokens", whole=True, example=f"{OUTPUT_TOKENS} or 1k"))


def simulated_requests(text: str) -> int:
    """--requests read as a count (1200, 2k), at most MAX_SIMULATED, or one line naming the option and the fix."""
    n = int(read_count(text, "--requests", whole=True, example="1200 or 2k"))
    if n > MAX_SIMULATED:
        raise ChipwiseError(
            f"--requests {n:,} is more than the {MAX_SIMULATED:,} a check simulates at most (a million take about a "
            f"minute). Fix: give at most {MAX_SIMULATED:,}, e.g. 2k."
        )
    return n


def _scenario_path(path: Path | None) -> Path | None:
    """Checked as the command line is read, before the search, as --plot's path is (chart.check_path): a .yaml,
    .yml or .json file (not a folder) in a folder that exists and can be written to (a read-only one had failed
    after the search, its answer printed and the exit 2). ChipwiseError, not Typer's BadParameter, whose message
    had been given a second, generic fix."""
    if path is None:
        return None
    if path.suffix.lower() not in (".yaml", ".yml", ".json"):
        raise ChipwiseError(f"cannot write a scenario to '{path}'. Fix: name it .yaml, .yml or .json.")
    if not path.parent.is_dir():
        raise ChipwiseError(
            f"folder '{path.parent}' for the scenario does not exist. Fix: create it, or write the scenario elsewhere."
        )
    if path.is_dir():
        raise ChipwiseError(f"cannot write '{path}': it is a folder. Fix: name a file, e.g. '{path / 'plan.yaml'}'.")
    if not os.access(path.parent, os.W_OK):
        raise ChipwiseError(f"cannot write '{path}': folder '{path.parent}' is not writable. Fix: choose another path.")
    check_writable(path)  # the file itself, as --plot's is (an immutable file had failed after the search)
    return path


def write_scenario(
    report: dict[str, Any], path: Path | None, catalogs: list[Path] | None = None, sets: list[str] | None = None
) -> None:
    """Write the cheapest checked option that kept up and met its SLO as a `chipwise predict` scenario and say on
    stderr where it went, with the `--catalog` and `--set` options its figures came from (a scenario does not
    carry them); without such an option, say so and write nothing."""
    if path is None:
        return
    passed = [v for v in report["verified"] if v["keeps_up"] and v["slo_met"] is not False]
    if not passed:
        err_console.print(
            f"[yellow]no checked option met the SLO: no scenario written to {escape(str(path))}[/]", soft_wrap=True
        )
        return
    scenario = passed[0]["scenario"]
    json_file = path.suffix.lower() == ".json"
    text = json.dumps(scenario, indent=2) if json_file else yaml.safe_dump(scenario, sort_keys=False)
    try:
        path.write_text(text)
    except OSError as exc:  # an output: not the generic 'cannot read' of an input file
        raise ChipwiseError(
            f"cannot write the scenario to '{path}': {exc.strerror or exc}. Fix: check the path and permissions."
        ) from None
    figures = [f"--catalog {shlex.quote(str(c.resolve()))}" for c in catalogs or ()]
    figures += [f"--set {shlex.quote(x)}" for x in sets or ()]
    command = " ".join(["chipwise predict", shlex.quote(str(path)), *figures])
    # one line however wide stderr is, as errors print: a command to copy and run (Rich had broken it at 80
    # columns where stderr is a file or a pipe), its path as written, not read as markup
    chips = passed[0]["hardware"].replace(">", " -> ")
    err_console.print(
        f"[dim]{escape(chips)} written to {escape(str(path))}: {escape(command)}[/]", highlight=False, soft_wrap=True
    )


#: --pricing and --region, as plan serve, plan fleet and plan lifecycle take them
PricingOpt = Annotated[
    str, typer.Option("--pricing", help="on-demand, capacity-block, reserved-1y, reserved-3y, spot or owned.")
]
RegionOpt = Annotated[str | None, typer.Option("--region", help="Cloud region for prices and carbon.")]


def serve(
    model: Annotated[str, typer.Option("--model", help="A model preset or a path to a config.json.")],
    # counts and the rate read as --chips and a scenario read them (4k, 2k), not as Typer's int and float: Typer had
    # refused --rate 2k ('Input should be a valid number'), which the web page and the API take
    rate: Annotated[
        str | None, typer.Option("--rate", help="Arrival rate, requests/s (Poisson), e.g. 20 or 2k.")
    ] = None,
    concurrency: Annotated[
        str | None, typer.Option("--concurrency", help="Concurrent users (closed loop), e.g. 64 or 1k.")
    ] = None,
    offline: Annotated[
        bool,
        typer.Option("--offline", help="All requests at once, timed to the last one's end."),
    ] = False,
    input_tokens: InputLengths = INPUT_TOKENS,
    output_tokens: OutputLengths = OUTPUT_TOKENS,
    slo: SloTargets = None,
    hardware: Annotated[
        str, typer.Option("--hardware", help="Comma-separated chip or system ids, or 'all' for every chip.")
    ] = "all",
    precision: Annotated[
        str,
        typer.Option(
            "--precision",
            help=f"{WEIGHTS_HELP} (its config.json's quantization_config: fp8 for DeepSeek-V3/R1, mxfp4 for gpt-oss).",
        ),
    ] = "auto",
    kv_precision: Annotated[str | None, typer.Option("--kv-precision", help=KV_HELP)] = None,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            # every engine check_engine_name accepts (a hand list here had left out fastertransformer)
            help=f"{', '.join(ENGINES)} (default per vendor; trtllm is TensorRT-LLM's PyTorch back end, "
            "trtllm-engine its TensorRT engine builds).",
            callback=name_value,  # any case, as a scenario's engine
        ),
    ] = None,
    pricing: PricingOpt = "on-demand",
    region: RegionOpt = None,
    provider: ProviderOpt = None,
    utilisation: UtilisationOpt = None,
    # a count, read as --concurrency is (2k): Typer's int had refused --requests 1k ('unable to parse string as an
    # integer') beside --rate 2k
    requests: Annotated[
        str,
        typer.Option(
            "--requests",
            help="Requests simulated to check each option, at least, e.g. 1200 or 2k (more where a steady state needs "
            "them; a fleet whose check would need more than 20,000, or than this count, is checked on a slice of its "
            f"replicas; at most {MAX_SIMULATED:,}).",
        ),
    ] = "1200",
    # two flags, not one '--disaggregated/--no-disaggregated': help shows that as two name columns, and at 80
    # columns it had cut the second name short
    disaggregated: Annotated[
        bool,
        typer.Option(
            "--disaggregated",
            help="Also try prefill/decode pool splits (the default under --rate; under --concurrency sized for "
            "the requests/s its users bring).",
        ),
    ] = False,
    no_disaggregated: NoDisaggregatedOpt = False,
    speculative: Annotated[
        str | None,
        typer.Option(
            "--speculative",
            help="Speculative decoding: mtp:K, eagle:K or draft:MODEL:K, optionally @ACCEPTANCE (e.g. mtp:3@0.8); "
            "several, and none, separated by commas are compared (e.g. none,mtp:1,mtp:3).",
        ),
    ] = None,
    router: Annotated[
        str,
        typer.Option(
            "--router",
            help="How requests are spread over the replicas: least_loaded (fewest outstanding requests, ties in turn: "
            "HAProxy leastconn, NGINX least_conn), power_of_two (the fewer of two drawn at random: Envoy, gRPC "
            "least_request) or round_robin.",
        ),
    ] = DEFAULT_ROUTER,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help="Processes for the chips' searches and the simulated checks (default: one per CPU; copies of this "
            "process where it can fork, else fresh ones for long checks only; 1: in this process). The answer is the "
            "same.",
        ),
    ] = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Rows to show.")] = 20,
    pareto: Annotated[
        bool, typer.Option("--pareto", help="Also print each chip's throughput-per-chip vs TPOT Pareto front.")
    ] = False,
    plot: PlotFile = None,
    scenario: Annotated[
        Path | None,
        typer.Option(
            "--scenario",
            help="Also write the cheapest option that met the SLO in simulation to FILE (.yaml or .json), a serving "
            "scenario `chipwise predict FILE` runs as it was checked.",
            show_default=False,
            metavar="FILE",
            callback=_scenario_path,
        ),
    ] = None,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
) -> None:
    """The cheapest fleet and configuration that serves a load within its SLO, per chip and overall."""
    from chipwise.interfaces.cli.plan_serve_views import print_plan_serve
    from chipwise.planner.serving_plan import check_split_load, plan_serving
    from chipwise.pools import may_fork
    from chipwise.sweep.backends import cpu_count

    users = read_count(concurrency, "--concurrency", whole=True, example="64 or 1k")
    simulated = simulated_requests(requests)
    prompt, generated = request_length_dists(input_tokens, output_tokens)
    load = load_of(count_value(rate), users, offline)
    if disaggregated and no_disaggregated:
        raise ChipwiseError("--disaggregated and --no-disaggregated contradict each other. Fix: give one of them.")
    check_split_load(disaggregated, load, "--disaggregated", "--rate R")
    targets = check_slo(slo_text(slo))
    check_router(router)
    check_mode(pricing)
    cat = catalog_from(catalog_files, sets)
    print_model_notes(cat, model)
    ids, unrunnable = plan_serve_inputs(  # once, before the long work
        cat, model, hardware_ids(cat, hardware), prompt, generated, engine, region
    )
    workers = workers or cpu_count()
    # the search and the checks fork where they can: no bar thread then, which would keep them from it
    bar, task = transient_bar("plan serve", refresh_thread=not may_fork(workers))

    def tell(what: str, done: int, total: int) -> None:
        bar.update(task, description=what, completed=done, total=total, refresh=True)

    with bar:  # on a terminal only, gone once the answer prints
        report = plan_serving(
            cat,
            model,
            ids,
            load,
            prompt,
            generated,
            targets,
            precision=precision,
            kv_precision=kv_precision,
            engine=engine,
            pricing=pricing,
            region=region,
            requests=simulated,
            disaggregated=True if disaggregated else False if no_disaggregated else None,
            speculative=speculative,
            progress=tell,
            router=router,
            workers=workers,
            provider=provider,
            utilisation=utilisation,
        )
    report["skipped"].extend(unrunnable)
    fmt.explain_plan_serve(report)
    write_plot(report, plot)  # before the output: a reader that stops early (`| head`) had left no plot
    # before the output too: a write that fails (exit 2) had followed the whole answer, which a script reading
    # exit 2 as bad input throws away
    write_scenario(report, scenario, catalog_files, sets)
    if as_json:  # what a --set or --catalog changed, as claims --json names it (only the table had said it)
        print_json({**fmt.first_rows(report, top), "what_if": whatif_lines(cat)})
    else:
        whatif_banner(cat)
        print_plan_serve(report, top, fronts=pareto)
    if not report["results"]:
        raise typer.Exit(code=NO_OPTION_EXIT)  # each chip's reason is printed; a script sees that none serves
