"""`chipwise plan fleet` (the cheapest instance mix for a multi-bucket serving workload) and `chipwise plan
lifecycle` (train on one fleet, serve on another: the best pair against the best single-vendor choice).

Its commands import their planners when run, to keep the CLI's start-up fast.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import typer
from rich.markup import escape

from chipwise.economics.power import NOT_USED
from chipwise.economics.pricing import check_mode
from chipwise.errors import ChipwiseError, one_of
from chipwise.hardware import hardware_ids
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import (
    WEIGHTS_HELP,
    CatalogFiles,
    JsonFlag,
    NoDisaggregatedOpt,
    ProviderOpt,
    SetFigures,
    SloTargets,
    UtilisationOpt,
    catalog_from,
    compact_table,
    console,
    print_json,
    print_model_notes,
    projected_banner,
    slo_text,
    transient_spinner,
    whatif_banner,
    whatif_lines,
)
from chipwise.interfaces.cli.plan_serve_cmd import (
    INPUT_TOKENS,
    KV_HELP,
    OUTPUT_TOKENS,
    InputTokens,
    OutputTokens,
    PricingOpt,
    RegionOpt,
    request_lengths,
)
from chipwise.planner.serving_inputs import LIFECYCLE_SLO, check_slo
from chipwise.serve.plan import count_text
from chipwise.serve.quant import RELEASED
from chipwise.workload.counts import count_value, read_count
from chipwise.workload.training import PRECISIONS

HardwareOpt = Annotated[
    str, typer.Option("--hardware", help="Comma-separated chip or system ids, or 'all' for every chip.")
]


def fleet(
    model: Annotated[str, typer.Option("--model", help="A model preset or a path to a config.json.")],
    workload: Annotated[
        str,
        typer.Option(
            "--workload",
            help="A YAML bucket mix (see examples/chat-mix.yaml) or a trace (.csv, .tsv, .jsonl, .ndjson, .json).",
        ),
    ],
    slo: SloTargets,
    hardware: HardwareOpt = "all",
    limits: Annotated[
        str | None,
        typer.Option(
            "--limits",
            help="Chips available, e.g. h100-sxm=64,trn2=128: a chip id caps all the systems of that chip together, "
            "a system id (p5.48xlarge=16) that system only.",
        ),
    ] = None,
    precision: Annotated[str, typer.Option("--precision", help=f"{WEIGHTS_HELP}.")] = RELEASED,
    replay: Annotated[
        bool, typer.Option("--replay/--no-replay", help="Check (and correct) the fleet in the simulator.")
    ] = True,
    pricing: PricingOpt = "on-demand",
    region: RegionOpt = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help="Processes for the replayed searches (default: one per CPU, copies of this process where it can "
            "fork; 1: in this process). The answer is the same.",
        ),
    ] = None,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
) -> None:
    """The cheapest mix of instance types (MILP) that serves a multi-bucket workload within its SLO."""
    from chipwise.planner.fleet import plan_fleet
    from chipwise.planner.fleet_workload import parse_limits
    from chipwise.pools import may_fork
    from chipwise.sweep.backends import cpu_count

    targets = check_slo(slo_text(slo), required=True)  # --slo is required here: no 'leave it out' in its fix
    check_mode(pricing)  # before the catalog, as plan serve checks it (the region: the planner, before its search)
    cat = catalog_from(catalog_files, sets)
    print_model_notes(cat, model)
    workers = workers or cpu_count()
    # the searches fork where they can: no spinner thread then, which would keep them from it
    spinner = transient_spinner(
        "sizing instance types, solving the fleet MILP and replaying it...",
        refresh_thread=not may_fork(workers),
    )
    with spinner:  # on a terminal only, gone once the answer prints
        report = plan_fleet(
            cat,
            model,
            workload,
            targets,
            hardware_ids(cat, hardware),
            parse_limits(limits),
            precision,
            replay,
            pricing=pricing,
            region=region,
            workers=workers,
            tick=spinner.refresh,
        )
    if as_json:
        print_json({**report, "what_if": whatif_lines(cat)})
    else:
        whatif_banner(cat)
        print_fleet(report)


def _on(r: dict[str, Any]) -> str:
    """Where the replayed searches ran, where not in this process alone: ' on 2 processes'."""
    n = r.get("search_processes", 1)
    return f" on {n} processes" if n > 1 else ""


def request_rate(per_s: float) -> str:
    """Requests/s as plan fleet's table shows them: '30', '2,400', '0.931', '1e-05': a rate a trace gives (its
    count over its span) to three figures, not six (0.931177/s)."""
    if float(per_s).is_integer():
        return count_text(per_s)
    return f"{per_s:,.0f}" if per_s >= 100 else f"{per_s:.3g}"


def _precision_text(r: dict[str, Any]) -> str:
    """The title's word on the precisions the fleet runs, as plan serve's title gives them: ', bf16 weights, bf16 KV
    cache' (the KV cache's where the fleet's types share one); '' for a report without them. The title had named
    none, and --json had read 'auto'."""
    if not r.get("precision"):
        return ""
    kv = f", {r['kv_precision']} KV cache" if r.get("kv_precision") else ""
    return f", {r['precision']} weights{kv}"


def _pricing(r: dict[str, Any]) -> str:
    """The pricing mode a fleet or lifecycle report ranks by; one stored before it named one was on-demand."""
    return str(r.get("pricing") or "on-demand")


def _prices_text(r: dict[str, Any]) -> str:
    """The mode and region a fleet or lifecycle report is priced in, as plan serve's title gives them: '(on-demand
    prices)', '(reserved-1y prices, us-east-2)'. They had read on-demand whatever the report, and taken no
    --pricing or --region."""
    return f"{_pricing(r)} prices" + (f", {r['region']}" if r.get("region") else "")


def _site(q: dict[str, Any]) -> str:
    """Where one instance type's price is from: its offer's provider and region, or an owned chip's site."""
    if q.get("basis") == "owned":
        site = (q.get("tco") or {}).get("region") or "the owner's site"
        return f"its owned cost at {site}"
    return f"{q.get('provider')} {q.get('region') or 'no region listed'}"


def _owned_sites(r: dict[str, Any]) -> str:
    """Where an owned fleet with no region asked for is costed: every type at the owner's default site, as plan
    lifecycle says it (cost only: the fleet report gives no energy). It had read 'owned prices, no region chosen
    (each offer at its own region): p6-b200.48xlarge at its owned cost at country-usa', where an owned price has no
    offer or offer region."""
    sites = {site for f in r["fleet"] if (site := _tco(f).get("region"))}
    where = f" ({', '.join(sorted(sites))})" if sites else ""
    return f"owned prices, no region chosen: each instance type's owned cost at the owner's default site{where}"


def _fleet_sites(r: dict[str, Any]) -> str:
    """Where each instance type is priced: the mode, the region asked for or none ('p5.48xlarge at aws us-east-1,
    trn2.48xlarge at aws us-east-2'); the line had said plan fleet takes no --pricing or --region."""
    if _pricing(r) == "owned" and not r.get("region"):
        return _owned_sites(r)
    sites = {f["system"]: _site(q) for f in r["fleet"] if (q := f.get("price_source"))}
    where = ", ".join(f"{system} at {site}" for system, site in sites.items())
    chosen = f"in {r['region']}" if r.get("region") else "no region chosen (each offer at its own region)"
    return f"{_pricing(r)} prices, {chosen}" + (f": {where}" if where else "")


def _tco(f: dict[str, Any]) -> dict[str, Any]:
    """An owned fleet entry's TCO breakdown (economics.tco), {} for a rented one."""
    return dict((f.get("price_source") or {}).get("tco") or {})


def _no_scaleout(f: dict[str, Any]) -> bool:
    """Whether an owned fleet entry's cost buys no scale-out network: its replicas each stay inside one system, the
    TCO's term marked 'not used' (economics.power.NOT_USED)."""
    term = (_tco(f).get("inputs") or {}).get("capex.scaleout_network") or {}
    return str(term.get("derivation", "")).startswith(NOT_USED)


def _no_network_clause(r: dict[str, Any]) -> str:
    """Why the owned § footnote's 'chipwise tco CHIP' reads higher than the fleet's price, where a type's replicas
    each stay inside one system: they pay no scale-out network (economics.md), which tco's fleet of many systems
    includes. Owned b200 had read $1.847 a chip-hour here ($7.39/h for 4) beside tco's $2.065 ($6,600 a chip of
    scale-out network in its capex) with no word why; the footnote now says it."""
    unused = [f["hardware"] for f in r["fleet"] if _no_scaleout(f)]
    if not unused:
        return ""
    return (
        f"; {', '.join(dict.fromkeys(unused))}: a replica inside one system pays no scale-out network, which "
        "'chipwise tco' includes (its chip-hour reads higher)"
    )


def print_fleet(r: dict[str, Any]) -> None:
    from chipwise.interfaces.cli.plan_serve_views import engine_mark, engine_notes

    projected_banner([f["hardware"] for f in r["fleet"] if f["projected"]])
    buckets = ", ".join(
        f"{b['name']} {b['input_tokens']}/{b['output_tokens']} tok at {request_rate(b['rate'])}/s" for b in r["buckets"]
    )
    slo = ", ".join(f"{k} {fmt.latency(v)}" for k, v in r["slo"].items())
    table = compact_table(
        f"{fmt.model_label(r)}{_precision_text(r)}: cheapest fleet for {buckets} within {slo} ({_prices_text(r)})"
    )
    # the replay's latency at each target's own percentile (the columns had read p99 under a p90 SLO)
    targeted = list(r["slo"])
    for col in ("instance type", "count", "chips", "$/hour", "busy", "cap.\nused", "routed\nreq/s", "replay\nSLO",
                *(key.replace("_", "\n").upper().replace("\nP", "\np") for key in targeted)):  # fmt: skip
        wraps = col in ("instance type", "routed\nreq/s")
        table.add_column(col, justify="left" if wraps or col == "replay\nSLO" else "right", no_wrap=not wraps)
    replayed = any(f.get("replay") for f in r["fleet"])  # --no-replay: no simulator ran, nothing it let carry
    for f in r["fleet"]:
        routed = ", ".join(f"{k} {request_rate(v)}" for k, v in f["routed_requests_per_s"].items() if v > 0)
        rp = f.get("replay")
        verdict, worst = "-", [math.nan] * len(targeted)
        if rp:
            worst = [max(b[f"{key}_s"] for b in rp["buckets"].values()) for key in targeted]
            verdict = "[green]met[/]" if rp["slo_met"] else "[red]missed[/]"
        table.add_row(
            f["type"] + engine_mark(f["hardware"], f.get("engine_defaults", ()), f.get("engine_carried")),
            str(f["instances"]),
            str(f["chips"]),
            fmt.usd(f["usd_per_hour"]) + (" §" if f.get("price_estimated") else ""),
            fmt.percent(f["utilisation"]),
            fmt.percent(f["capacity_derate"]) if replayed else "-",
            routed,
            verdict,
            *(fmt.latency(v) for v in worst),
        )
    console.print(table)
    for note in engine_notes(r["fleet"], []):
        console.print(note)
    estimated = [f["hardware"] for f in r["fleet"] if f.get("price_estimated")]
    if estimated:  # as plan train and plan lifecycle footnote the same price
        console.print(f"[dim]{fmt.estimate_note(estimated, 'price_source', _pricing(r))}{_no_network_clause(r)}[/]")
    console.print(f"[dim]{escape(_fleet_sites(r))}[/]")
    if r.get("price_notes"):  # as plan serve's: offers outside the region asked for
        console.print(f"[yellow]priced elsewhere: {escape('; '.join(r['price_notes']))}[/]")
    for sk in r.get("skipped", []):
        console.print(f"[dim]not considered: {sk['hardware']}: {escape(sk['reason'])}[/]")
    if replayed:
        console.print(
            f"[bold]{fmt.usd(r['cost_usd_per_hour'])}/hour[/] (steady-state MILP before the simulator check: "
            f"{fmt.usd(r['steady_state_cost_usd_per_hour'])}/hour); solved in {r['seconds']:.1f} s{_on(r)}."
        )
        console.print(
            "'cap. used' is the share of the steady-state capacity estimate the simulator let each type carry; "
            "'busy' is how full the MILP packs it."
        )
    else:
        console.print(
            f"[bold]{fmt.usd(r['cost_usd_per_hour'])}/hour[/] (steady-state MILP, unchecked by the simulator: "
            f"--no-replay); solved in {r['seconds']:.1f} s."
        )
        console.print("'busy' is how full the MILP packs each type; rerun without --no-replay to check the SLO.")
    if r.get("slo_met_in_replay") is False:  # the fleet shown is the closest found, not an answer
        console.print(f"[bold yellow]No fleet found meets the SLO in its replay:[/] [yellow]{r['note']}[/]")
    elif r.get("note"):
        console.print(f"[yellow]{r['note']}[/]")
    if r.get("workload_note"):  # a bursty trace: sized and replayed at its mean rates
        console.print(f"[yellow]{escape(r['workload_note'])}[/]")


def lifecycle(
    model: Annotated[str, typer.Option("--model", help="A model preset or a path to a config.json.")],
    train_tokens: Annotated[str, typer.Option("--train-tokens", help="Tokens to train on (15e12 or 15T).")],
    # read as plan serve reads --concurrency (2k), not as Typer's float, which had refused the '2k' the API takes
    serve_rate: Annotated[str, typer.Option("--serve-rate", help="Serving load, requests/s, e.g. 20 or 2k.")],
    serve_months: Annotated[float, typer.Option("--serve-months", help="Months of serving.")] = 12.0,
    # counts read as plan serve reads the same options (4k), not as Typer's int
    input_tokens: InputTokens = INPUT_TOKENS,
    output_tokens: OutputTokens = OUTPUT_TOKENS,
    slo: Annotated[
        list[str] | None,
        typer.Option(
            "--slo",
            help=f"Latency targets of the serving side, with units (repeatable; default {LIFECYCLE_SLO}).",
            show_default=False,
        ),
    ] = None,
    hardware: HardwareOpt = "all",
    train_chips: Annotated[
        str,
        typer.Option("--train-chips", help="Chips in the training fleet (4096, 1e5 or 100k, as plan train's --chips)."),
    ] = "4096",
    train_precision: Annotated[
        str,
        typer.Option(
            "--train-precision",
            help=f"Number format of the training's matrix maths: {', '.join(PRECISIONS)} (plan train's --precision).",
        ),
    ] = "bf16",
    serve_precision: Annotated[str, typer.Option("--serve-precision", help=f"{WEIGHTS_HELP}.")] = RELEASED,
    serve_kv_precision: Annotated[str | None, typer.Option("--serve-kv-precision", help=KV_HELP)] = None,
    objective: Annotated[str, typer.Option("--objective", help="cost, energy or carbon.")] = "cost",
    pricing: PricingOpt = "on-demand",
    region: RegionOpt = None,
    provider: ProviderOpt = None,
    utilisation: UtilisationOpt = None,
    no_disaggregated: NoDisaggregatedOpt = False,
    catalog_files: CatalogFiles = None,
    sets: SetFigures = None,
    as_json: JsonFlag = False,
) -> None:
    """Train on one fleet, serve on another: the best (train, serve) pair and the best single-vendor plan."""
    from chipwise.planner.lifecycle import OBJECTIVES, plan_lifecycle
    from chipwise.pools import may_fork
    from chipwise.sweep.backends import cpu_count

    tokens = read_count(train_tokens, "--train-tokens")
    prompt, generated = request_lengths(input_tokens, output_tokens)
    one_of(objective, OBJECTIVES, "objective")
    check_mode(pricing)  # before the catalog, as plan serve checks it (the region: the planner, before its search)
    cat = catalog_from(catalog_files, sets)
    print_model_notes(cat, model)
    workers = cpu_count()  # plan train's searches, plan serve's searches and checks side by side
    # they fork where they can: no spinner thread then, which would keep them from it (as plan fleet's)
    spinner = transient_spinner("ranking training fleets and serving fleets...", refresh_thread=not may_fork(workers))
    with spinner:
        report = plan_lifecycle(
            cat,
            model,
            float(tokens),
            _serve_rate(serve_rate),
            serve_months,
            hardware_ids(cat, hardware),
            read_count(train_chips, "--train-chips", whole=True),
            prompt,
            generated,
            check_slo(slo_text(slo, LIFECYCLE_SLO)),
            train_precision,
            serve_precision,
            objective,
            workers=workers,
            serve_kv_precision=serve_kv_precision,
            pricing=pricing,
            region=region,
            provider=provider,
            utilisation=utilisation,
            disaggregated=not no_disaggregated,
            tick=spinner.refresh,
        )
    if as_json:
        print_json({**report, "what_if": whatif_lines(cat)})
    else:
        whatif_banner(cat)
        print_lifecycle(report)


def _serve_rate(text: str) -> float:
    """--serve-rate read as a count ('20', '2k'); text that is no number is one line (a number that is not positive
    and finite, or past plan serve's bound, plan_lifecycle refuses by name)."""
    rate = count_value(text)
    if isinstance(rate, str):
        raise ChipwiseError(f"--serve-rate {text!r} is not a number of requests/s. Fix: give e.g. 20 or 2k.")
    return float(rate)


#: a projected chip's mark in a row, as plan train marks its rows (the PROJECTED banner says what it is)
_PROJECTED_MARK = " [yellow]*[/]"


def _lifecycle_labels(rows: list[dict[str, Any]], side: str) -> list[str]:
    """Each row's hardware on one side ('train' or 'serve'): its chip, or its system where another row runs that chip
    on another system (p5.48xlarge and azure-nd-h100-v5 had both read 'h100-sxm' at different prices); a
    prefill/decode split is 'a>b', as plan serve's JSON gives it."""
    systems: dict[str, set[str]] = {}
    for p in rows:
        systems.setdefault(p[side]["hardware"], set()).add(p[side].get("system", p[side]["hardware"]))
    return [p[side]["system"] if len(systems[p[side]["hardware"]]) > 1 else p[side]["hardware"] for p in rows]


def _projected_names(rows: list[dict[str, Any]]) -> list[str]:
    """The projected hardware of the rows shown, either side (the banner had read the first pair only: trn4 ranked
    #2 went unlabelled): a projected split names its parts another row shows projected, else the pair 'a>b'."""
    sides = [p[k] for p in rows for k in ("train", "serve") if p[k]["projected"]]
    known = {side["hardware"] for side in sides if ">" not in side["hardware"]}
    names = []
    for side in sides:
        parts = [c for c in side["hardware"].split(">") if c in known]
        names += parts or [side["hardware"]]
    return names


def _serve_marked(label: str, sv: dict[str, Any]) -> str:
    """A serving fleet's label with each pool's chip marked where its engine figures are defaults (†) or carried
    (‡), as plan serve marks them: a split 'a>b' pool by pool ('gaudi3 †>h100-sxm')."""
    from chipwise.interfaces.cli.plan_serve_views import engine_mark

    defaults, carried = sv.get("engine_defaults", ()), sv.get("engine_carried")
    pools = zip(label.split(">"), sv["hardware"].split(">"), strict=True)
    return ">".join(part + engine_mark(chip, defaults, carried) for part, chip in pools)


def _lifecycle_notes(listed: list[dict[str, Any]], trains: list[str], serves: list[str]) -> None:
    """Each row's training fleet that computes in a wider precision than asked, as plan train says it (fp4 on an
    H100 had been trained at fp8 without a word), and each split priced at two providers, as plan serve says it
    (one operator running both is assumed); one line each, by the names the table gives them."""
    from chipwise.economics.providers import one_operator_note
    from chipwise.interfaces.cli.train_views import _precision_note

    lines = []
    for p, train, serve in zip(listed, trains, serves, strict=True):
        if p["train"].get("precision") and (note := _precision_note(p["train"])) is not None:  # none without it
            lines.append(f"{train}: computes in {note}")
        if operator := one_operator_note(p["serve"].get("providers") or (), "pools"):
            lines.append(serve + operator)
    for line in dict.fromkeys(lines):
        console.print(f"[dim]{escape(line)}[/]")


def _lifecycle_sites(r: dict[str, Any]) -> str:
    """Where both sides are priced and their energy and CO2e reckoned: the region asked for, else each fleet at its
    offer's (the line had said plan lifecycle takes no --pricing or --region)."""
    if r.get("region"):
        return (
            f"{_pricing(r)} prices in {r['region']} (an offer not listed there at its nearest listed price, as plan "
            f"train and plan serve take it): both sides' energy and CO2e reckoned at {r['region']}"
        )
    if _pricing(r) == "owned":
        return "owned prices, no region chosen: each fleet's owned cost, energy and CO2e at the owner's default site"
    return (
        f"{_pricing(r)} prices, no region chosen: each fleet priced at its offer's region, its energy and CO2e "
        "reckoned there (at its provider's default region where the catalog has no grid figure of that one)"
    )


def _lifecycle_left_out(r: dict[str, Any]) -> None:
    """The chips asked for that a side could not price, as plan train and plan serve say it ('train and serve: no
    price: tpu-v6e: capacity-block is sold by aws only, ...'; they had been left out of every row unsaid), then what
    plan train and plan serve left unranked and why (a split plan serve left out names its fix)."""
    for e in r.get("no_price", []):
        console.print(f"[yellow]{' and '.join(e['sides'])}: no price: {e['hardware']}: {escape(e['reason'])}[/]")
    for side in ("train", "serve"):
        for sk in r.get(f"{side}_skipped", []):
            console.print(f"[dim]{side}: not ranked: {sk['hardware']}: {escape(sk['reason'])}[/]")


def print_lifecycle(r: dict[str, Any]) -> None:
    from chipwise.interfaces.cli.plan_serve_views import engine_notes

    single = r["best_single_vendor"]

    def key(p: dict[str, Any]) -> tuple[Any, ...]:
        tr, sv = p["train"], p["serve"]
        return tr.get("system", tr["hardware"]), sv.get("system", sv["hardware"]), sv["chips"], sv["usd_per_hour"]

    shown = r["top"][:6]
    rank = next((i for i, p in enumerate(shown, start=1) if single and key(p) == key(single)), None)
    listed = [*shown, *([single] if single is not None and rank is None else [])]
    projected_banner(_projected_names(listed))
    t, s = r["training"], r["serving"]
    table = compact_table(
        f"{fmt.model_label(r)}: train {fmt.count(t['tokens'])} tokens on {count_text(t['chips'])} chips, then serve "
        f"{count_text(s['rate_per_s'])} req/s for {s['months']:g} months (ranked by {r['objective']}, "
        f"{_prices_text(r)})"
    )
    for col in ("#", "train on", "train\ntime", "train $", "serve on", "serve\n$/hour", "total $", "energy", "CO2e"):
        named = col in ("train on", "serve on")  # a long system id folds rather than cut a figure
        table.add_column(col, justify="left" if named or col == "#" else "right", no_wrap=not named, overflow="fold")
    trains, serves = _lifecycle_labels(listed, "train"), _lifecycle_labels(listed, "serve")
    for i, p in enumerate(listed):
        tr, sv = p["train"], p["serve"]
        table.add_row(
            f"#{i + 1}" if i < len(shown) else "SV",
            trains[i] + _PROJECTED_MARK * tr["projected"],
            fmt.duration(tr["time_s"]),
            fmt.usd(tr["cost"]) + (" §" if tr.get("price_estimated") else ""),
            f"{_serve_marked(serves[i], sv)}{_PROJECTED_MARK * sv['projected']} x{count_text(sv['chips'])}"
            + (f" [{count_text(sv['billed_chips'])}]" if sv.get("billed_chips", sv["chips"]) > sv["chips"] else ""),
            fmt.usd(sv["usd_per_hour"]) + (" §" if sv.get("price_estimated") else ""),
            fmt.usd(p["cost_usd"]),
            fmt.energy(p["energy_j"]),
            fmt.carbon(p["co2e_kg"]).removesuffix(" CO2e"),
        )
    console.print(table)
    marks = "#1 is the best pair" + (
        f"; {'#' + str(rank) if rank else 'SV'} the best single-vendor one" if single is not None else ""
    )
    console.print(f"{marks}.")
    if any(p["serve"].get("disaggregated") for p in listed):
        console.print("[dim]a>b: prefill on a, decode on b (plan serve's split), its chips both pools'[/]")
    estimated = [
        chip
        for p in listed
        for k in ("train", "serve")
        if p[k].get("price_estimated")
        for chip in p[k].get("price_estimated_chips") or [p[k]["hardware"]]
    ]
    if estimated:
        console.print(f"[dim]{fmt.estimate_note(estimated, 'price_estimates', _pricing(r))}[/]")
    for note in engine_notes([p["serve"] for p in listed], []):  # the serving side's † and ‡, as plan serve's
        console.print(note)
    if any(p["serve"].get("billed_chips", p["serve"]["chips"]) > p["serve"]["chips"] for p in listed):
        console.print(f"[dim]{escape(fmt.RENTED_NOTE)}[/]")
    _lifecycle_notes(listed, trains, serves)
    console.print(
        "[dim]serve: plan serve's fleets that met the SLO in its simulated check (for all the hardware, and for "
        "the vendors none of whose fleets passed there, their own)[/]"
    )
    console.print(f"[dim]{escape(_lifecycle_sites(r))}[/]")
    if r.get("reservation"):
        console.print(f"[dim]{escape(r['reservation'])}[/]")
    _lifecycle_left_out(r)
    best = r["best"]
    if not best["cross_vendor"]:
        console.print(f"[bold]One vendor wins:[/] train and serve on {best['train']['vendor']}.")
    elif r["saving_vs_single_vendor"] is not None:
        at = rank - 1 if rank else len(listed) - 1  # the single-vendor row, named as the table names it
        console.print(
            f"[bold]Cross-vendor wins:[/] {fmt.share(r['saving_vs_single_vendor'])} less {r['objective']} than the "
            f"best single-vendor plan ({trains[at]} -> {serves[at]})."
        )
