"""Terminal views of training results: the fleet ranking table and the one-plan explanation."""

from __future__ import annotations

import math
from contextvars import ContextVar
from typing import Any

import numpy as np
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from chipwise.catalog.overrides import USER_PROVIDER
from chipwise.catalog.regions import PRICE_REGIONS
from chipwise.economics.pricing import catalog_estimate
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import (
    TRACK_COLUMNS,
    compact_table,
    console,
    figure_table,
    hidden_rows_line,
    print_track_record,
    projected_banner,
    track_record_cells,
)
from chipwise.serve.plan import chip_count
from chipwise.train.explain import BREAKDOWN_LABELS
from chipwise.train.plans import batch_bound, cp_split, cp_split_fix, cp_split_reason
from chipwise.workload.training import LARGEST_PUBLISHED_BATCH_TOKENS

#: the notes under plan train's tables, collected as plain text while ranking_notes runs (the web page draws them)
_COLLECTED: ContextVar[list[str] | None] = ContextVar("train_notes", default=None)


def _say(markup: str) -> None:
    """A note under the tables: printed, or, while ranking_notes collects, kept as plain text."""
    kept = _COLLECTED.get()
    if kept is None:
        console.print(markup)
    else:
        kept.append(Text.from_markup(markup).plain)


#: the interfaces a note's fix is worded for: the command line's flags, or the web page's API fields
WHERE = ("cli", "web")


def ranking_notes(report: dict[str, Any], where: str = "cli") -> list[str]:
    """The notes plan train prints under its ranking about its rows (failures at scale, left-out and billed chips,
    the precision computed, user and missing prices, another region's, carried efficiencies, a default batch past
    the largest published), as plain text: the web page had drawn none of them. `where` 'web': each fix names the
    API's field or the server's start-up option, not a command-line flag (the page had been told
    '--global-batch-tokens' and '--set trn4.unit_price=USD', which it cannot give)."""
    kept: list[str] = []
    token = _COLLECTED.set(kept)
    try:
        _row_notes(report, where)
    finally:
        _COLLECTED.reset(token)
    return kept


def _row_notes(report: dict[str, Any], where: str = "cli") -> None:
    """The notes about the ranking's rows that the CLI prints and the web page draws (one list for both), their
    fixes worded for `where` (WHERE)."""
    rows = report["results"]
    if not rows:
        return
    names = _names(rows)
    _scale_note(rows, names)
    _left_out_note(rows, names)
    _cp_split_note(rows, names)
    _billed_notes(rows, names)
    _precision_notes(rows, names)
    _user_price_notes(rows, names)
    _price_notes(rows, names, where)
    _spot_note(rows)
    _region_note(report, names)
    _term_commitment_note(rows, names)
    _carried_efficiency_note(rows)
    _unfitted_efficiency_note(rows, where)
    _batch_note(report, where)
    _under_one_batch_note(report, names, where)


def _batch_option(where: str) -> str:
    """The option that sets the global batch, as `where` (WHERE) takes it."""
    return "the global_batch_tokens field" if where == "web" else "--global-batch-tokens"


def _title(report: dict[str, Any]) -> str:
    return (
        f"{fmt.model_label(report)} on {report['chips']:,} chip{'s' if report['chips'] != 1 else ''}, "
        f"{report['precision']}"
        + (f", {fmt.count(report['tokens'])} tokens" if report.get("tokens") else "")
        + f" - ranked by {report['objective']} ({_prices(report)})"
    )


def _prices(report: dict[str, Any]) -> str:
    """The prices the ranking is costed at: the mode, and a managed service's markup where it is in every price
    ('on-demand prices x 1.15, sagemaker's managed-service markup'; it had read 'on-demand prices' alone)."""
    # the region asked for, as plan serve, plan fleet and plan lifecycle name it (the title had dropped --region)
    where = f", {report['region']}" if report.get("region") else ""
    if not report.get("managed"):
        return f"{report['pricing']} prices{where}"
    return (
        f"{report['pricing']} prices x {report['managed_markup']:g}, {report['managed']}'s managed-service "
        f"markup{where}"
    )


def _columns(table: Table, headers: tuple[str, ...]) -> None:
    for c in headers:
        wraps = c == "plan"
        table.add_column(c, justify="left" if c in ("hardware", "plan") else "right", no_wrap=not wraps)


def _names(rows: list[dict[str, Any]]) -> list[str]:
    """Each row's hardware as the ranking names it: the chip, with its system where another row runs the same
    chip on another system (h100-sxm,azure-nd-h100-v5,gcp-a3-megagpu-8g,dgx-h100 had read as four h100-sxm rows
    at four costs)."""
    systems: dict[str, set[str]] = {}
    for r in rows:
        systems.setdefault(str(r["hardware"]), set()).add(str(r.get("system") or r["hardware"]))
    return [
        f"{r['hardware']} ({r['system']})" if len(systems[str(r["hardware"])]) > 1 else str(r["hardware"]) for r in rows
    ]


def _hardware(name: str, r: dict[str, Any]) -> str:
    """The row's hardware with its marks: * projected, ‡ efficiencies carried from a fitted predecessor, † unfitted
    priors (gaudi3 had ranked first for deepseek-v3 on 65,536 chips with no mark, where fitted families' rows rest
    on published runs)."""
    return (
        name
        + (" [yellow]*[/]" if r.get("projected") else "")
        + (" ‡" if r.get("efficiency_carried_from") else "")
        + (" †" if r.get("efficiency_unfitted") else "")
    )


def print_ranking_tables(report: dict[str, Any]) -> None:
    """The ranking in two tables narrow enough for an 80-column terminal: time and money first, then each plan
    with its step, memory, goodput, energy and carbon (same order, same numbers)."""
    table = compact_table(_title(report))
    results = report["results"]
    names = _names(results)
    # without --tokens the run has no length: cost, energy and carbon are of one hour (they read as totals)
    hourly = any(r.get("economics_basis") == "one hour" for r in results)
    per = "\n/hour" if hourly else ""
    _columns(table, ("#", "hardware", "time to\ntrain", "expected", "MFU", "tok/s\n/chip", f"cost{per}", "$/Mtok"))
    for i, (name, r) in enumerate(zip(names, results, strict=True), start=1):
        table.add_row(
            str(i),
            _hardware(name, r),
            fmt.duration(r["time_to_train_s"]) if r.get("time_to_train_s") else "-",
            _expected_time(r),
            fmt.percent(r["mfu"]),
            f"{r['tokens_per_s_per_chip']:,.0f}",
            fmt.usd(_expected(r, "cost_usd")) + (" §" if _estimated_price(r) else ""),
            fmt.per_mtok(_expected(r, "usd_per_million_tokens")),
        )
    console.print(table)
    console.print()
    plans = compact_table("Their plans")
    _columns(plans, ("#", "hardware", "plan", "step", "mem\n/chip", "goodput", f"energy{per}", f"CO2e{per}"))
    for i, (name, r) in enumerate(zip(names, results, strict=True), start=1):
        plans.add_row(
            str(i),
            _hardware(name, r),
            fmt.plan(r["plan"]),
            fmt.duration(r["step_time_s"]),
            f"{r['memory_per_chip_gib']:.0f} GiB",
            _goodput(r.get("goodput")),
            fmt.energy(_expected(r, "energy_j")),
            fmt.carbon(_expected(r, "co2e_kg")).replace(" CO2e", ""),
        )
    console.print(plans)


def _user_price(r: dict[str, Any]) -> bool:
    """Whether the row's price was set on the command line (--set ID.price=...): status estimate, no catalog's."""
    return (r.get("price_source") or {}).get("provider") == USER_PROVIDER


def _estimated_price(r: dict[str, Any]) -> bool:
    """Whether the row is priced by a catalog estimate (no offer found for its chip or system); a price set on the
    command line is the user's, not the catalog's (it had read '§ a catalog estimate')."""
    return catalog_estimate(r.get("price_source"))


def _estimate_pointer(r: dict[str, Any]) -> str:
    """Where an estimated price's derivation is shown: an owned cost's estimated inputs are --sources rows
    (economics_figures); a rental estimate's derivation is in --json's price_source only."""
    return "--sources lists its inputs" if r.get("pricing") == "owned" else "--json price_source gives its derivation"


def _expected(r: dict[str, Any], key: str) -> float:
    """The expected (goodput-adjusted) figure when there is one, else the ideal one."""
    v = r.get(f"expected_{key}")
    return float(v) if v is not None else float(r.get(key, math.nan))


def _expected_time(r: dict[str, Any]) -> str:
    """The expected time, in years where it is long; 'never' only where it is infinite (failures leave no progress),
    as the cost, energy and carbon beside it are. Under 0.1% goodput it had read 'never' beside $268B and 13.8 TWh
    priced on its 5.8 years; the goodput column's '<0.1%' and the note below the tables say what it is."""
    v = r.get("expected_time_to_train_s")
    if v is None:
        return "-"
    return "never" if math.isinf(v) else fmt.duration(v)


def _goodput(g: float | None) -> str:
    if g is None:
        return "-"
    return "<0.1%" if g < 1e-3 else fmt.percent(g)


def print_ranking(report: dict[str, Any], hidden: int = 0) -> None:
    """The ranking's tables and notes; `hidden`: the rows ranked past --top, which a line counts (--top 2 of four
    ranked had shown two rows with no word of the other two)."""
    if report["results"]:  # no result: the reasons below, not two empty tables
        print_ranking_tables(report)
    s = report["search"]
    console.print(
        f"searched {s['evaluated']:,} plans ({s['feasible']:,} fit in memory) in {s['seconds']:.2f} s", style="dim"
    )
    if hidden:
        console.print(hidden_rows_line(hidden, len(report["results"])), style="dim")
    if report["results"]:
        first = report["results"][0]
        rel = first.get("reliability", {})
        used = "/".join(sorted({r.get("reliability", {}).get("recovery", "?") for r in report["results"]}))
        how = " (the better of checkpoint-restart and in-memory, per row)" if report.get("recovery") == "best" else ""
        console.print(
            f"expected = goodput-adjusted with {used} recovery{how} and {rel.get('spare_fraction', 0):.0%} spare "
            "chips paid for; cost, $/Mtok, energy and CO2e are expected figures (--json has the ideal ones too)",
            style="dim",
        )
        names = _names(report["results"])
        _row_notes(report)
        _cores_notes(report["results"], names)  # the page draws these two itself
        _commitment_notes(report["results"])
        estimated = [name for name, r in zip(names, report["results"], strict=True) if _estimated_price(r)]
        if estimated:
            console.print(f"[dim]{fmt.estimate_note(estimated, 'price_source', report.get('pricing', ''))}[/]")
        _track_records(report["results"])
    projected_banner([r["hardware"] for r in report["results"] if r.get("projected")])
    for sk in report["skipped"]:
        console.print(f"[dim]not ranked: {sk['hardware']}: {sk['reason']}[/]")


def _commitment_notes(rows: list[dict[str, Any]]) -> None:
    """What a reserved or an owned row's cost rests on, once each: a reservation's whole term paid (a 43.9 h run on
    reserved-1y costs the year), an owned fleet's idle hours carried in its price but not in its energy."""
    for key in ("reservation", "owned_idle_hours"):
        for note in dict.fromkeys(r[key]["note"] for r in rows if r.get(key)):
            console.print(f"[dim]{escape(note)}[/]")


def _term_commitment_note(rows: list[dict[str, Any]], names: list[str]) -> None:
    """What each reserved row's term commits its fleet to, one line for the ranking ('the reserved-1y term commits
    each fleet to: 1 h100-sxm $255,177; 2 trn2 $180,420'): the reservation's note, once, has no row's figure (it
    had printed once a row, 30 lines differing only in their dollars)."""
    reserved = [
        (i, name, r) for i, (name, r) in enumerate(zip(names, rows, strict=True), start=1) if r.get("reservation")
    ]
    if reserved:
        terms = "; ".join(f"{i} {name} {_term_usd(r)}" for i, name, r in reserved)
        _say(f"[dim]the {reserved[0][2]['pricing']} term commits each fleet to: {terms}[/]")


def _term_usd(r: dict[str, Any]) -> str:
    """What a reserved row's term commits its fleet to, in whole dollars ('$255,177')."""
    return f"${r['reservation']['term_cost_usd']:,.0f}"


def _carried_efficiency_note(rows: list[dict[str, Any]]) -> None:
    """Chips no training run of whose family is in the fit: they run at a predecessor's fitted fractions of peak."""
    if note := fmt.carried_efficiency_note(rows):
        _say(f"[dim]{escape(note)}[/]")


def _unfitted_efficiency_note(rows: list[dict[str, Any]], where: str = "cli") -> None:
    """Chips whose families' training efficiencies are unfitted priors (train.explain.unfitted_reason): no published
    run of theirs, nor of a family they take theirs from, is in the fit, and a prior's zero framework overheads lean
    fast (Gaudi 2's one published run, MLPerf's GPT-3 175B on 1,024, took 66.24 min where chipwise prices 46.3)."""
    reason_at = "efficiency_unfitted_reason in /api/plan/train's answer" if where == "web" else None
    if note := fmt.unfitted_efficiency_note(rows, *([reason_at] if reason_at else [])):
        _say(f"[yellow]{escape(note)}[/]")


def _price_notes(rows: list[dict[str, Any]], names: list[str], where: str = "cli") -> None:
    """Why a row's price is '-' (SageMaker on a TPU, a Capacity Block off AWS), once a chip (or system); a --set fix
    worded for the web page where it draws them (fmt.server_set)."""
    said: set[str] = set()
    for name, r in zip(names, rows, strict=True):
        note = r.get("price_note")
        if note and name not in said:
            said.add(name)
            _say(f"[dim]no price: {name}: {escape(fmt.server_set(note) if where == 'web' else note)}[/]")


def _spot_note(rows: list[dict[str, Any]]) -> None:
    """Spot prices with a goodput that has no reclaims in it (planner.training.SPOT_NOTE), once: 70B on 64 H100 had
    read the same 99.995% goodput and 86.27 h expected on spot as on demand, only the cost moving ($23,248 against
    $38,747), under 'expected = goodput-adjusted'."""
    for note in dict.fromkeys(r["spot_note"] for r in rows if r.get("spot_note")):
        _say(f"[yellow]{escape(note)}[/]")


def _region_note(report: dict[str, Any], names: list[str]) -> None:
    """The rows priced outside the region asked for, where it lists no price of them (as predict's price row says):
    the table had shown AWS us-east-1's rate for --region eu-west-1 with no word, only the grid moving."""
    elsewhere = {
        name: f"{q.get('provider')} {q.get('region') or 'another region'}"
        for name, r in zip(names, report["results"], strict=True)
        if (q := r.get("price_source") or {}).get("region_note")
    }
    if elsewhere:
        where = "; ".join(f"{name} at {quote}" for name, quote in elsewhere.items())
        _say(
            f"[dim]priced outside {report.get('region')}, which lists no price of them: {where} (the nearest listed; "
            f"energy and CO2e are {report.get('region')}'s)[/]"
        )


def _user_price_notes(rows: list[dict[str, Any]], names: list[str]) -> None:
    """A row priced by --set: its cost is the user's figure, not an offer or estimate of the catalog's."""
    said: set[str] = set()
    for name, r in zip(names, rows, strict=True):
        if _user_price(r) and name not in said:
            said.add(name)
            _say(f"[dim]{name}: price {escape(r['price_source']['derivation'])}[/]")


def _left_out_note(rows: list[dict[str, Any]], names: list[str]) -> None:
    """Rows whose plan runs on fewer chips than the fleet (data parallelism must divide the global batch, and a
    plan on fewer chips can be the fastest): the rest are paid for and draw idle power."""
    for i, (name, r) in enumerate(zip(names, rows, strict=True), start=1):
        used = r.get("chips_used")
        if used is not None and used < r["chips"]:
            _say(
                f"[dim]{i} {name}: the plan runs on {used:,} of the {r['chips']:,} chips "
                f"({_idle_reason(r['plan'], r['global_batch'], seq_len=r.get('seq_len') or 0, ranks=_ranks(r))}); "
                f"{_paid_idle(r, used)}[/]"
            )
        if r.get("network_note"):
            _say(f"[yellow]{i} {name}: {escape(r['network_note'])}[/]")


def _ranks(r: dict[str, Any]) -> int:
    """The fleet's ranks, chips x cores per chip, as the search counted them."""
    return int(r["chips"]) * int(r.get("cores_per_chip") or 1)


def _cp_held(plan: dict[str, Any], seq_len: int, ranks: int) -> bool:
    """Whether a searched plan has the most cp its seq_len splits into, below what the length and the ranks would
    take (train.plans.cp_split): the sequence, not the search, kept its context parallelism there."""
    if not seq_len or not ranks:
        return False
    split, reach = cp_split(seq_len, ranks)
    return split < reach and int(plan.get("cp", 1)) == split


def _cp_note(r: dict[str, Any]) -> str:
    """The row's seq_len that held its context parallelism, and the one that frees it ('' where none did)."""
    seq, ranks = int(r.get("seq_len") or 0), _ranks(r)
    if not _cp_held(r["plan"], seq, ranks):
        return ""
    return f"{cp_split_reason(seq, ranks)}. Fix: {cp_split_fix(seq, ranks)}"


def _cp_split_note(rows: list[dict[str, Any]], names: list[str]) -> None:
    """Rows whose seq_len held context parallelism below what its length and the ranks would take, once a note with
    the rows it holds for, and the seq_len that frees it. seq_len 131,070 had turned it off with no word: Llama-3.1-70B
    on 1,024 H100 ranked TP2 PP40 DP8 at 6.5 min a step, 10.8 days, where 131,072 runs TP1 DP32 CP32 at 16.4 s."""
    held: dict[str, list[str]] = {}
    for i, (name, r) in enumerate(zip(names, rows, strict=True), start=1):
        if note := _cp_note(r):
            held.setdefault(note, []).append(f"{i} {name}")
    for note, named in held.items():
        _say(f"[yellow]{', '.join(named)}: {escape(note)}.[/]")


def _billed(r: dict[str, Any]) -> str | None:
    """'billed for 16 chips (two 8-chip p5.48xlarge units)' where the provider's units in the pricing mode hold more
    chips than the fleet (planner.training bills 12 H100s in Capacity Blocks as two p5 instances), else None: the
    cost is of the chips billed, and 12 x the price per chip-hour x the time had not reached it."""
    billed = r.get("billed_chips")
    if billed is None or billed <= r["chips"] + 1e-9:
        return None
    return f"billed for {billed:,.0f} chips ({_units_text(r)})"


_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def _units_text(r: dict[str, Any]) -> str:
    """The units billed, by size: 'one 128-chip slice' (100 TPU v5e chips had read 'whole tpu-v5e-256 units', the
    name of a 256-chip system for one 128-chip slice), 'two 8-chip p5.48xlarge units'; a result without
    `billed_units` (stored before they were) names the system's units as before."""
    units = r.get("billed_units")
    if not units:
        return f"whole {r['system']} units"
    parts = []
    for u in units:
        n = u["count"]
        noun = "slice" if u["kind"] == "slice" else f"{_unit_name(str(r['system']), u)}unit"
        parts.append(
            f"{_WORDS[n - 1] if n <= len(_WORDS) else f'{n:,}'} {u['chips']:,}-chip {noun}{'' if n == 1 else 's'}"
        )
    return " and ".join(parts)


def _unit_name(system: str, unit: dict[str, Any]) -> str:
    """The instance a billed unit is, then a space: the unit's `name` (System.unit_name), '' where the catalog names
    none; a result stored before units carried names names the system's. Inf2's 6-chip unit had read 'one 6-chip
    inf2.48xlarge unit', the 12-chip instance's name; it reads 'one 6-chip inf2.24xlarge unit'."""
    if "name" not in unit:
        return f"{system} "
    return f"{unit['name']} " if unit["name"] else ""


def _paid_idle(r: dict[str, Any], used: int) -> str:
    """What the chips a plan leaves out are counted in: of the fleet's alone, cost, MFU and energy; where the units
    billed hold more (100 TPU v5e rent one 128-chip slice), cost and energy count every billed chip past the plan's
    (idle power) and MFU the fleet's. 96 of 100 v5e had read 'the other 4 are paid for and idle' beside a cost
    billed for 128."""
    chips, billed = r["chips"], r.get("billed_chips") or r["chips"]
    if billed <= chips + 1e-9:
        return f"the other {chips - used:,} are paid for and idle in cost, MFU and energy"
    return (
        f"{billed:,.0f} are billed ({_units_text(r)}), the {billed - used:,.0f} past the {used:,} paid for and idle "
        f"in cost and energy; MFU is over the {chips:,}"
    )


def _billed_notes(rows: list[dict[str, Any]], names: list[str]) -> None:
    """Rows billed for more chips than the fleet's, a line each below the tables (the cost column stays narrow); a
    row whose plan leaves chips out says its billed chips in that note (_left_out_note). Rows billed per chip on
    part of a system, once a chip (or system), as predict's cost row says (planner.training.billed_per_chip_note)."""
    said: set[str] = set()
    for i, (name, r) in enumerate(zip(names, rows, strict=True), start=1):
        if (per_chip := r.get("billed_per_chip_note")) and name not in said:
            said.add(name)
            _say(f"[dim]{i} {name}: {escape(per_chip)}[/]")
        if (r.get("chips_used") or r["chips"]) < r["chips"]:
            continue
        if (billed := _billed(r)) is not None:
            _say(
                f"[dim]{i} {name}: {billed} in {r['pricing']} pricing, {r['billed_chips'] - r['chips']:,.0f} more "
                "than it runs on: cost and $/Mtok count them, and energy at idle power[/]"
            )


def _batch_note(report: dict[str, Any], where: str = "cli") -> None:
    """A default batch past the largest published one (it grows with the fleet so that data parallelism can use it):
    past the critical batch size a run needs more tokens for the same loss, which the time shown leaves out."""
    batch = max((r["global_batch_tokens"] for r in report["results"]), default=0)
    if report.get("batch") != "default" or batch <= LARGEST_PUBLISHED_BATCH_TOKENS:
        return
    _say(
        f"[yellow]the default batch grows with the fleet (1,024 tokens a chip): {fmt.count(batch)} tokens here, past "
        f"the {fmt.count(LARGEST_PUBLISHED_BATCH_TOKENS)} Llama 3 405B trained with; past the critical batch size a "
        f"run needs more tokens for the same loss, which this time to train leaves out. Fix: give "
        f"{_batch_option(where)}.[/]"
    )


def _under_one_batch_note(report: dict[str, Any], names: list[str], where: str = "cli") -> None:
    """Rows whose batch holds more than the tokens asked: each is priced as one whole step, and $/Mtok is that
    step's rate (predict's batch_note). Llama 3.1 8B on 8 H100s with --tokens 1000 had ranked at $0.25 beside
    0.25 $/Mtok, $253 a million over the 1,000 tokens asked, with nothing between them."""
    tokens = report.get("tokens")
    under = [
        (i, name, r)
        for i, (name, r) in enumerate(zip(names, report["results"], strict=True), start=1)
        if tokens and r.get("global_batch_tokens") and tokens < r["global_batch_tokens"]
    ]
    if not under:
        return
    batches = sorted({r["global_batch_tokens"] for _, _, r in under})
    rows = "every row" if len(under) == len(names) else "rows " + ", ".join(str(i) for i, _, _ in under)
    i, name, first = under[0]
    cost = first.get("expected_cost_usd", first.get("cost_usd"))  # the table's cost column
    over = (
        f" ({i} {name}: {fmt.usd(cost)} over {tokens:,.0f} tokens is {fmt.usd(cost / tokens * 1e6)} a million)"
        if cost is not None and math.isfinite(cost)
        else ""
    )
    _say(
        f"[yellow]the {tokens:,.0f} tokens asked are under one batch ({' or '.join(f'{b:,.0f}' for b in batches)} "
        f"tokens on {rows}): each run is priced as one whole step, and $/Mtok is that step's rate, not the cost over "
        f"the tokens asked{over}. Fix: give {_batch_option(where)} to price a smaller step.[/]"
    )


def _precision_note(r: dict[str, Any]) -> str | None:
    """Where the chip computes the precision asked for no faster than a wider one, what it runs at instead ('fp4'
    on an H100 runs as fp8: no faster than fp8, which the table's 'fp4' did not say). A precision the chip lists
    at the wider one's rate (`precision_listed`) runs on units of its own, with no speed-up: Gaudi 3's FP8 at its
    BF16 rate had read 'gaudi3 has no fp8 units'."""
    ran, asked = r.get("compute_precision"), r["precision"]
    if ran is None or ran == asked:
        return None
    hw = r["hardware"]
    why = (
        f"{asked} runs at the {ran} rate on {hw} (no speed-up)"
        if r.get("precision_listed")
        else f"{hw} has no {asked} units"
    )
    return f"{ran}: {why}, so this run is no faster than at {ran}"


def _cores_note(r: dict[str, Any]) -> str | None:
    """On a chip of several cores (Trainium's NeuronCores) a rank is a core, so the plan's degrees multiply to
    chips x cores: 'TP4 DP512 CP2' on 1,024 Trainium2 had read as twice the chips."""
    cores = int(r.get("cores_per_chip") or 1)
    if cores == 1:
        return None
    used, plan = int(r["chips_used"]), r["plan"]
    # the plan's own product: used x cores had read 48 ranks on 12 chips for TP1 PP7 DP7's 49 on 13
    ranks = f"tp x pp x dp x cp = {plan['tp'] * plan['pp'] * plan['dp'] * plan['cp']:,} ranks on {used:,} chips"
    return f"a rank is a core ({cores} NeuronCores a chip): {ranks}"


def _cores_notes(rows: list[dict[str, Any]], names: list[str]) -> None:
    """One line per note, naming the chips it holds for."""
    chips: dict[str, list[str]] = {}
    for name, r in zip(names, rows, strict=True):
        if (note := _cores_note(r)) is not None and name not in chips.setdefault(note, []):
            chips[note].append(name)
    for note, named in chips.items():
        console.print(f"[dim]{', '.join(named)}: {note}[/]")


def _precision_notes(rows: list[dict[str, Any]], names: list[str]) -> None:
    for i, (name, r) in enumerate(zip(names, rows, strict=True), start=1):
        if (note := _precision_note(r)) is not None:
            _say(f"[dim]{i} {name}: computes in {note}[/]")


def _track_records(rows: list[dict[str, Any]]) -> None:
    """The ranked rows' track records (catalog.track_record), a line per scope: how far the model's tokens/s per
    chip has been from the published training runs of each row's chip family."""
    scopes = {rec["scope"]: rec for r in rows for rec in (r.get("track_record") or {}).values()}
    if not scopes:
        return
    table = compact_table("Track record: tokens/s per chip against published training runs (docs/accuracy.md)")
    table.add_column("chips")
    for name in TRACK_COLUMNS:
        table.add_column(name, justify="right")
    for scope, rec in scopes.items():
        table.add_row(scope, *track_record_cells(rec))
    console.print(table)


def _idle_reason(plan: dict[str, Any], batch: int, dp_given: bool = False, seq_len: int = 0, ranks: int = 0) -> str:
    """Why a plan leaves chips idle: a dp the user gave (the search would have spread over them), else its dp at
    its micro-batch takes the whole batch (train.plans.batch_bound), else its degrees divide the batch but not the
    chips; with the cp its `seq_len` held it to where the sequence splits into no more over the `ranks`
    (_cp_held). A given dp 32 of TP8 PP2 on 1,024 H100s had been put down to the batch, which dp 64 divides too."""
    if dp_given:
        used = plan["tp"] * plan["pp"] * plan["dp"] * plan.get("cp", 1)
        return f"the plan given uses {used:,} ranks"
    return _batch_reason(plan, batch) + _cp_clause(plan, seq_len, ranks)


def _batch_reason(plan: dict[str, Any], batch: int) -> str:
    """What the batch leaves a searched plan: data parallelism that takes it whole, or divides it."""
    dp, mb, pp, vpp = (np.asarray([plan[k]]) for k in ("dp", "microbatch", "pp", "vpp"))
    if batch_bound(dp, mb, pp, vpp, batch)[0]:
        return f"dp {plan['dp']} x {batch // plan['dp']:,} sequences each take the whole {batch:,}-sequence batch"
    if plan["dp"] == 1:
        # one replica divides any batch: its model-parallel degrees are what fill the chips (a TP1 PP21 DP1 CP4 plan
        # on 100 MI355X had been put down to the batch)
        shape = " x ".join(f"{k.upper()}{plan[k]}" for k in ("tp", "pp", "cp") if plan.get(k, 1) > 1) or "one rank"
        return f"one replica of {shape}: its degrees, not the batch, set the chips it runs on"
    return f"its data parallelism divides the {batch:,}-sequence batch"


def _cp_clause(plan: dict[str, Any], seq_len: int, ranks: int) -> str:
    """', and seq_len 131,070 allows no cp above 1' where the sequence, not the batch, held the plan's context
    parallelism (_cp_held), else '': a larger cp is the lever that would use the idle chips. 70B at seq_len 131,070
    on 1,024 MI300X had read 'dp 32 x 1 sequences each take the whole 32-sequence batch' alone."""
    if not _cp_held(plan, seq_len, ranks):
        return ""
    return f", and seq_len {seq_len:,} allows no cp above {int(plan.get('cp', 1)):,}"


def lora_title(r: dict[str, Any]) -> str:
    """' LoRA fine-tune' after the model in a title where the run is one: it had read as full training, whose step and
    checkpoint differ (validate --explain says it as predict does)."""
    return " LoRA fine-tune" if r.get("lora") else ""


def lora_row(head: Table, r: dict[str, Any]) -> None:
    """A LoRA run's adapters: their rank and the parameters trained, the base frozen (nothing for full training)."""
    if r.get("lora"):
        adapters = fmt.parameters(r["lora_adapter_params"])
        head.add_row("LoRA adapters", f"rank {r['lora_rank']}, {adapters} parameters trained; the base frozen")


def _plan_rows(head: Table, r: dict[str, Any]) -> None:
    """The prediction's plan and what it runs on: LoRA adapters, ranks a core, chips it leaves idle, and the
    precision the chip computes in."""
    head.add_row("plan", fmt.plan(r["plan"]) + f"  ({r['plan_source']})")
    lora_row(head, r)
    if (cores := _cores_note(r)) is not None:
        head.add_row("ranks", cores)
    given = set(r.get("plan_given", []))
    # the search chose cp (plans.left_to_search): a cp given, or tp, pp and dp given (cp 1), is the plan's own
    searched_cp = "cp" not in given and not {"tp", "pp", "dp"} <= given
    seq = int(r.get("seq_len") or 0) if searched_cp else 0
    if (used := r.get("chips_used")) is not None and used < r["chips"]:
        head.add_row(
            "chips the plan runs on",
            f"{used:,} of {r['chips']:,} "
            f"({_idle_reason(r['plan'], r['global_batch'], 'dp' in given, seq, _ranks(r))}); "
            f"{_paid_idle(r, used)}",
        )
    if searched_cp and (held := _cp_note(r)):
        head.add_row("seq_len", f"[yellow]{escape(held)}.[/]")
    if (note := _precision_note(r)) is not None:
        head.add_row("compute precision", note)
    if r.get("efficiency_unfitted"):
        head.add_row("efficiencies", f"[yellow]unfitted: {escape(r['efficiency_unfitted_reason'])}[/]")


def _speed_rows(head: Table, r: dict[str, Any]) -> None:
    """Step time, throughput, FLOP/s, MFU and memory, their notes, and the time to train."""
    head.add_row("step time", fmt.duration(r["step_time_s"]))
    head.add_row("throughput", f"{r['tokens_per_s']:,.0f} tokens/s ({r['tokens_per_s_per_chip']:,.0f} per chip)")
    head.add_row("model TFLOP/s per chip", f"{r['tflops_per_chip']:,.0f}")
    head.add_row("MFU / HFU", f"{fmt.percent(r['mfu'])} / {fmt.percent(r['hfu'])}")
    # the capacity to the use's one decimal: an 8B full fine-tune on 2 H100 had read '79.4 of 80 GiB', headroom the
    # chip's 79.6 GiB (its refusal's figure) does not have; it reads '79.4 of 79.6 GiB'
    head.add_row("memory per chip", f"{r['memory_per_chip_gib']:.1f} of {r['memory_capacity_gib']:.1f} GiB")
    if r.get("plan_note"):
        head.add_row("plan note", escape(r["plan_note"]))
    if r.get("memory_note"):
        head.add_row("memory note", f"[yellow]{escape(r['memory_note'])}[/]")
    if r.get("network_note"):
        head.add_row("network note", f"[yellow]{escape(r['network_note'])}[/]")
    if r.get("time_to_train_s") is not None:
        head.add_row(
            "time to train (ideal / expected)",
            f"{fmt.duration(r['time_to_train_s'])} / {fmt.duration(r.get('expected_time_to_train_s', math.nan))}",
        )
    trained = r.get("steps", 0) * r.get("global_batch_tokens", 0)
    if (note := batch_note(r)) is not None:
        head.add_row("steps", escape(note))
    elif r.get("tokens") and trained > 1.01 * r["tokens"]:  # 15.1M tokens of 4M batches train (and price) 16M
        head.add_row(
            "steps",
            f"{r['steps']:,} of {r['global_batch_tokens']:,.0f} tokens: {trained:,.0f} tokens trained and priced, the "
            f"{r['tokens']:,.0f} asked rounded up to whole steps",
        )


def with_batch_note(result: dict[str, Any]) -> dict[str, Any]:
    """A training prediction with its batch_note where it has one, as predict's table, its --json, chipwise.api's
    predict and the web page's /api/predict all give it (only the command line had)."""
    note = batch_note(result) if result.get("kind") != "serve" else None
    return result if note is None else {**result, "batch_note": note}


def batch_note(r: dict[str, Any]) -> str | None:
    """Where the tokens asked are under one batch, that the run is priced as one whole step and that $/Mtok is the
    step's rate, not the cost over the tokens asked; else None. Llama 3.1 8B LoRA on one H100 with 'tokens: 1000' of
    262,144-token batches had read a cost of $0.05 beside 0.19 $/Mtok, which is $49.88 a million over the 1,000
    tokens, with only 'the 1,000 asked rounded up to whole steps' between them (predict's text and --json)."""
    tokens, batch = r.get("tokens"), r.get("global_batch_tokens")
    if not tokens or not batch or tokens >= batch:
        return None
    step = (
        f"{tokens:,.0f} tokens are under one {batch:,.0f}-token batch: the run is priced as one whole step of "
        f"{batch:,.0f} tokens"
    )
    cost = r.get("cost_usd")
    if cost is None or not math.isfinite(cost):  # no price: no rate to explain
        return step
    return (
        f"{step} ({fmt.usd(cost)} ideal); $/Mtok is that step's rate ({fmt.per_mtok(r['usd_per_million_tokens'])} "
        f"ideal), not the cost over the {tokens:,.0f} tokens asked ({fmt.usd(cost / tokens * 1e6)} a million)"
    )


def _reliability_rows(head: Table, r: dict[str, Any], rel: dict[str, Any]) -> None:
    """Goodput by recovery, failures and planned stops with the MTBF, and the checkpoint (or in-memory snapshot)."""
    # one host has no peer to hold a copy: in-memory recovery falls back to the checkpoint (reliability.goodput)
    in_memory = _goodput(rel["goodput_in_memory"]) if rel.get("in_memory_possible", True) else "needs a second host"
    head.add_row(
        f"goodput ({rel['recovery']} recovery)",
        f"{_goodput(r['goodput'])}  (checkpoint {_goodput(rel['goodput_checkpoint'])}, in-memory {in_memory})",
    )
    # planned stops beside the failures: on one host they are most of the downtime, which 0.0038 failures a
    # day had left unexplained
    head.add_row(
        "failures + planned stops per day / MTBF",
        f"{_rate(rel['failures_per_day'])} + {_rate(rel['planned_interruptions_per_day'])} / "
        f"{_or_never(rel['mtbf_s'])}",
    )
    size = f"{fmt.bytes_(rel['checkpoint_bytes'])} / {fmt.duration(rel['checkpoint_write_s'])}"
    if rel["recovery"] == "in-memory":  # a peer-memory snapshot each step; storage checkpoints only as backup
        head.add_row("checkpoint size / write to storage", size)
        head.add_row("in-memory snapshot", f"every step ({fmt.duration(rel['checkpoint_interval_s'])})")
    else:
        head.add_row("checkpoint size / write / interval", f"{size} / {_or_never(rel['checkpoint_interval_s'])}")


def _price_row(head: Table, r: dict[str, Any]) -> None:
    """The price per chip-hour, where it was listed, and whose it is: the user's (--set), a catalog estimate (§),
    or none, with why."""
    price = r.get("price_usd_per_chip_hour")
    quote = r.get("price_source") or {}
    head.add_row(
        f"price ({r['pricing']}{_price_where(r, quote)})",
        (f"${price:,.3f} per chip-hour" if price is not None else "-")
        + (f" ({escape(quote['derivation'])})" if _user_price(r) else "")
        + (f" § (a catalog estimate: {_estimate_pointer(r)})" if _estimated_price(r) else "")
        + (f" [yellow](no price: {escape(r['price_note'])})[/]" if price is None and r.get("price_note") else ""),
    )
    if r.get("spot_note"):  # the expected time and cost beside it leave reclaims out
        head.add_row("spot prices", f"[yellow]{escape(r['spot_note'])}[/]")


def _price_where(r: dict[str, Any], quote: dict[str, Any]) -> str:
    """Where the price was listed, for its row's label: the region a price was listed in, where the one asked for
    lists none (eu-north-1 read the us-east-1 rate under its own name); the quote's own region where it is not the
    site's (catalog.regions.PRICE_REGIONS: a worldwide or country-wide list price); a price set on the command line
    has no region. 70B on 1,024 MI300X had read 'price (on-demand, country-usa)', the grid's region, for
    DigitalOcean's global list price; it reads 'price (on-demand, digitalocean global: a provider's one worldwide list
    price)'."""
    if _user_price(r):
        return ""
    listed = quote.get("region")
    if quote.get("region_note"):
        return f", {listed or 'another region'}, none listed in {r['region']}"
    if not listed or listed == r["region"]:
        return f", {r['region']}"
    what = f": {PRICE_REGIONS[listed][1]}" if listed in PRICE_REGIONS else ""
    return f", {quote.get('provider')} {listed}{what}"


def spares_text(r: dict[str, Any]) -> str | None:
    """The spare chips the expected cost, energy and carbon pay for (planner.training: `spare_chips` past the billed
    or left-out chips, which stand in for the `spare_chips_wanted` first), or None without a reliability record. Llama
    70B LoRA on 64 H100 had read 'goodput 100.0%' beside an expected cost 2.0% over the ideal ($1,398 / $1,426) with
    no word of its spares; it now reads '1.28 (2% of the 64 it runs on), paid for and idle in the expected cost,
    energy and carbon'."""
    rel = r.get("reliability")
    if not rel:
        return None
    used, fraction = rel["chips"], rel.get("spare_fraction", 0.0)
    wanted = r.get("spare_chips_wanted", used * fraction)
    paid = r.get("spare_chips", wanted)  # a result stored before these keys paid for all it wanted
    if wanted <= 0.0:
        return "none (the catalog's spare fraction is 0)"
    share = f"{_chips(wanted)} ({fraction:.0%} of the {used:,} it runs on)"
    if paid >= wanted - 1e-9:
        return f"{share}, paid for and idle in the expected cost, energy and carbon"
    past = max(r.get("billed_chips") or r["chips"], r["chips"]) - used  # billed or left-out chips past the plan's
    stand_in = f"{share}: the {_chips(past)} chips paid for past those it runs on stand in for"
    if paid <= 1e-9:
        return f"{stand_in} them (no more paid for)"
    return (
        f"{stand_in} {_chips(past)} of them, and {_chips(paid)} more are paid for and idle in the "
        "expected cost, energy and carbon"
    )


def _chips(n: float) -> str:
    """A count of chips, grouped, fractions of one to two decimals (spares are a share of a pool): '1.28', '19,968',
    '18,350.08' (2% of 917,504 had read '18350.1', six significant figures and no separator, beside --json's
    18350.08)."""
    return f"{round(n, 2):,.2f}".rstrip("0").rstrip(".")


def _economics_rows(head: Table, r: dict[str, Any]) -> None:
    """Cost, energy and carbon, ideal and expected, the spares the expected ones pay for, and the efficiency in
    tokens a joule and dollars a million."""
    head.add_row(
        f"cost, ideal / expected ({r['economics_basis']})",
        f"{fmt.usd(r['cost_usd'])} / {fmt.usd(_expected(r, 'cost_usd'))}"
        + (f", {billed}" if (billed := _billed(r)) is not None else "")
        + (f", {escape(per_chip)}" if (per_chip := r.get("billed_per_chip_note")) else ""),
    )
    head.add_row(
        "energy, ideal / expected",
        f"{fmt.energy(r['energy_j'])} / {fmt.energy(_expected(r, 'energy_j'))}  (PUE {r['pue']:.2f})",
    )
    head.add_row(
        "carbon, ideal / expected",
        f"{fmt.carbon(r['co2e_kg'])} / {fmt.carbon(_expected(r, 'co2e_kg'))}  "
        f"({r['grid_kg_co2e_per_kwh'] * 1000:.0f} g/kWh)",
    )
    if (spares := spares_text(r)) is not None:
        head.add_row("spare chips (expected figures)", spares)
    if r.get("reservation"):
        head.add_row("reservation", f"[dim]{escape(r['reservation']['note'])}; the term commits {_term_usd(r)}[/]")
    if idle := r.get("owned_idle_hours"):
        head.add_row(
            "owned idle hours, ideal",
            f"{fmt.energy(idle['energy_j'])}, {fmt.carbon(idle['co2e_kg'])}: the fleet idle "
            f"{1 / idle['utilisation'] - 1:.3g} h for each hour of the run (utilisation), its electricity in the cost, "
            "not in the energy and carbon rows",
        )
    if r.get("tokens_per_joule") is not None:
        # labelled as the cost row is: plan train and sweep rank by the expected $/Mtok, and an unlabelled ideal
        # figure here had read as a second price for the same plan
        head.add_row(
            "efficiency, ideal / expected",
            f"{r['tokens_per_joule']:.3g} / {_expected(r, 'tokens_per_joule'):.3g} tokens/J, "
            f"{fmt.per_mtok(r['usd_per_million_tokens'])} / {fmt.per_mtok(_expected(r, 'usd_per_million_tokens'))}"
            f" $/Mtok; {r['flop_per_joule'] / 1e9:,.0f} GFLOP/J ideal",
        )


def _breakdown_table(r: dict[str, Any]) -> Table:
    """Where the step time goes: each component's seconds and share, largest first."""
    bd = Table(
        title=f"Where the step time goes (dominated by {BREAKDOWN_LABELS[r['dominated_by']]})", header_style="bold"
    )
    bd.add_column("component")
    bd.add_column("seconds", justify="right")
    bd.add_column("share", justify="right")
    for k, v in sorted(r["breakdown"].items(), key=lambda kv: -kv[1]):
        if v > 0:
            bd.add_row(BREAKDOWN_LABELS[k], f"{v:.3f}", fmt.percent(r["breakdown_fraction"][k]))
    return bd


def _figures_used_table(r: dict[str, Any]) -> Table:
    """The figures the prediction rests on (the model's, then the economics'), each with its status and source."""
    ft = Table(title="Figures used", header_style="bold")
    for c in ("figure", "value", "status", "source / derivation"):
        ft.add_column(c, overflow="fold")
    for name, f in r["figures"].items():
        ft.add_row(name, fmt.figure_value(f), f["status"], f.get("derivation") or "; ".join(f["source"]))
    for name, f in (r.get("economics_figures") or {}).items():
        ft.add_row(
            name,
            fmt.figure_value(f),
            f["status"],
            f.get("derivation") or "; ".join(f["source"]) or f.get("note", ""),
        )
    return ft


def print_prediction(r: dict[str, Any], sources: bool = False) -> None:
    """One training prediction with its breakdown and the figures it rests on."""
    projected_banner([r["hardware"]] if r.get("projected") else [])
    head = figure_table(
        f"{fmt.model_label(r)}{lora_title(r)} on {r['chips']:,} x {r['hardware']} ({r['system']}), {r['precision']}"
    )
    _plan_rows(head, r)
    _speed_rows(head, r)
    rel = r.get("reliability")
    if rel:
        _reliability_rows(head, r, rel)
    _price_row(head, r)
    _economics_rows(head, r)
    console.print(head)
    # where failures take over half the run, the note plan train prints under its ranking (its 49.7% goodput on 1M
    # H100 had stood with no word of why, nor of the fleet size that keeps half the run)
    _scale_note([r])
    console.print(_breakdown_table(r))
    print_track_record(r.get("track_record") or {}, str(r["hardware"]) if r.get("projected") else None)
    if sources:
        console.print(_figures_used_table(r))


def _rate(per_day: float) -> str:
    """Failures a day to one decimal, or two significant figures below 1: 64 H100s fail once in 33 days, which one
    decimal had printed as 0.0 beside that MTBF, and 1,024 Trn2 0.454 a day had read 0.5 beside an MTBF of 2.2 d."""
    return fmt.significant(per_day, 2) if per_day < 1.0 else f"{per_day:,.1f}"


def _or_never(seconds: float) -> str:
    """A duration, or 'never' where it is infinite (no failures: no MTBF, no checkpoint), not '-' (none known)."""
    return "never" if math.isinf(seconds) else fmt.duration(seconds)


def _scale_note(rows: list[dict[str, Any]], names: list[str] | None = None) -> None:
    """Say so when failures dominate: checkpoint-restart cannot keep up with the failure rate at this scale. A line
    for each row under half goodput, named as the other notes name rows ('3 tpu-v5p: on the 262,144 chips ...'),
    each with its own fleet that keeps half the run; predict's one row (`names` None) is not numbered. With three
    rows under half (405B on 1M gaudi3, h100-sxm and tpu-v5p) one unnamed line had said the worst row's 179,909
    chips, where h100-sxm's is 204,551. The rate reads as the table's (_rate): '(0 per day)' had stood beside
    'every 33.0 d'; a fleet where even one chip misses half goodput (half_goodput_chips 0) is said so, where 'at
    most 1 chips' had read as one that works."""
    for i, r in enumerate(rows, start=1):
        if r.get("reliability") and (r.get("goodput") or 0.0) < 0.5:
            _say(f"[yellow]{'' if names is None else f'{i} {names[i - 1]}: '}{_scale_text(r)}[/]")


def _scale_text(r: dict[str, Any]) -> str:
    """One row's failures at scale: its rate, its goodput by recovery, and the fleet that would keep half the run."""
    rel = r["reliability"]
    half = r.get("half_goodput_chips")
    where = (
        ""
        if half is None
        else f"; at its step time, half the run goes to training on at most {chip_count(half)}"
        if half > 0
        else "; at its step time, no fleet size keeps half the run for training"
    )
    in_memory = rel.get("in_memory_possible", True)
    return (
        f"on the {chip_count(rel['chips'])} it runs"
        + (f" (of {r['chips']:,})" if rel["chips"] < r["chips"] else "")
        + f" a failure every {fmt.duration(rel['mtbf_s'])} "
        f"({_rate(rel['failures_per_day'])} per day) leaves {_goodput(rel['goodput_checkpoint'])} goodput with "
        "checkpoint-restart"
        + (
            f" and {_goodput(rel['goodput_in_memory'])} with in-memory recovery"
            if in_memory
            else " (in-memory recovery needs a second host)"
        )
        + where
    )
