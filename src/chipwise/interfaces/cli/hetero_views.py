"""Terminal view of a mixed-fleet training comparison."""

from __future__ import annotations

import math
from typing import Any

from rich.markup import escape
from rich.table import Table

from chipwise.economics.pricing import catalog_estimate
from chipwise.economics.providers import one_operator_note
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import console, projected_banner
from chipwise.interfaces.cli.train_views import _goodput, _precision_note


def _stages(plan: dict[str, Any]) -> str:
    return " -> ".join(
        f"{s['hardware']} TP{s['tp']} PP{s['pp']} ({s['layers']} layer{'' if s['layers'] == 1 else 's'})"
        for s in plan["stages"]
    )


def _parts_line(m: dict[str, Any]) -> str:
    """Each part's share of the mix's $/hour, facility power, and expected energy and carbon (as the tables give the
    mix's): 'trn4 $570.24/h (36 billed), 47.6 kW, 60.1 kWh, 23.3 t CO2e; gb300 ...'; the row had given totals only."""
    per = "/hour" if m.get("economics_basis") == "one hour" else ""

    def one(chip: str, f: dict[str, Any]) -> str:
        usd = f"{fmt.usd(f['usd_per_hour'])}/h" if f["usd_per_hour"] is not None else "no price"
        return (
            f"{chip} {usd} ({f['billed_chips']:,g} chips billed), {fmt.power(f['facility_power_w'])}, "
            f"{fmt.energy(f['expected_energy_j'])}{per}, {fmt.carbon(f['expected_co2e_kg'])}{per}"
        )

    return "per part of the mix: " + "; ".join(one(chip, f) for chip, f in m["parts"].items())


def _figure(x: dict[str, Any], key: str) -> float | None:
    """The expected (goodput-adjusted) figure, as plan train's table shows it; None where it is unknown (no price)."""
    v = x.get(f"expected_{key}")
    return float(v) if v is not None and math.isfinite(v) else None


#: how each term of the mix's step is named, in the order it is shown (largest first)
_TERMS = {
    "compute": "{} stage compute",
    "bubble": "pipeline bubble",
    "hand_offs": "hand-offs",
    "dp_comm": "{} data-parallel traffic",
    "optimizer": "{} optimizer",
    "step_overhead": "{} step overhead",
}


def _step_terms(m: dict[str, Any]) -> str:
    """Every term of the mix's step, largest first, naming the part a term is one part's; they add up to the step
    (the bubble and hand-offs had been the only terms given)."""
    terms, owner = m["step_terms_s"], m["step_term_hardware"]
    order = sorted(_TERMS, key=lambda k: -terms[k])
    return ", ".join(f"{_TERMS[k].format(owner.get(k, ''))} {fmt.duration(terms[k])}" for k in order if terms[k] > 0)


def _batch_basis(r: dict[str, Any]) -> str:
    """Whose default the batch is, and where plan train's default for a part's chips alone is smaller, that it is:
    every row trains on one batch (one job's), so a part's row differs from plan train's for the same chips, which
    the table had left unsaid (1,024 H100 read 5.07M tokens/s here at 2M tokens a step, 3.45M in plan train at 1M)."""
    chips = r.get("global_batch_default_chips")
    if not chips:
        return ""
    text = f": every option trains on it, the default for the whole fleet's {chips:,} chips"
    own = r.get("plan_train_default_batch_tokens") or {}
    if not own:
        return text
    parts = {x["hardware"]: x["chips"] for x in (*r["alone"], *r.get("alone_infeasible", ()))}
    smaller = ", ".join(f"{tokens:,} for {parts.get(chip, 0):,} {chip}" for chip, tokens in own.items())
    return (
        f"{text}; plan train's default for a part's chips alone is smaller ({smaller}), so its row here differs "
        f"from plan train's (give plan train --global-batch-tokens {r['global_batch_tokens']:,} to match)"
    )


def print_hetero(r: dict[str, Any]) -> None:
    if r["projected"]:
        projected_banner(r["projected_items"])
    table = Table(
        title=f"{fmt.model_label(r)} on a mixed fleet {', '.join(f'{n} x {k}' for k, n in r['fleet'].items())} "
        f"in {r['precision']} (hand-off over the {r['link']['between']})",
        header_style="bold",
    )
    rows = [x for x in (r["mixed"], *r["alone"]) if x]
    # without --tokens the run has no length: energy and carbon are of one hour, as plan train says
    per = "/hour" if any(x.get("economics_basis") == "one hour" for x in rows) else ""
    for col in ("option", "plan", "tokens/s", "time to train", "$/hour", "$/Mtok"):
        table.add_column(col, overflow="fold", justify="right" if col not in ("option", "plan") else "left")
    # energy and carbon in a second table, as plan train gives them: eight columns had folded the plans at 80
    power = Table(title="Their energy and carbon", header_style="bold")
    for col in ("option", "goodput", f"energy{per}", f"CO2e{per}"):
        power.add_column(col, justify="left" if col == "option" else "right")

    estimated: list[str] = []

    def row(name: str, x: dict[str, Any], plan: str) -> None:
        sources = x.get("price_sources") or {x.get("hardware"): x.get("price_source")}
        guessed = [chip for chip, q in sources.items() if catalog_estimate(q)]
        estimated.extend(guessed)
        usd, joules, kg = (_figure(x, k) for k in ("usd_per_million_tokens", "energy_j", "co2e_kg"))
        power.add_row(
            name,
            _goodput(x.get("goodput")),
            fmt.energy(joules) if joules is not None else "-",
            fmt.carbon(kg).replace(" CO2e", "") if kg is not None else "-",
        )
        table.add_row(
            name,
            plan,
            f"{x['tokens_per_s']:,.0f}",
            fmt.duration(x["time_to_train_s"]) if x.get("time_to_train_s") else "-",
            (fmt.usd(x["usd_per_hour"]) if x.get("usd_per_hour") else "-") + (" §" if guessed else ""),
            fmt.per_mtok(usd) if usd is not None else "-",
        )

    if r["mixed"]:
        m = r["mixed"]
        row("mixed pipeline", m, _stages(m["plan"]) + f", DP{m['plan']['dp']}")
    for a in r["alone"]:
        row(f"{a['hardware']} alone ({a['chips']})", a, fmt.plan(a["plan"]))
    for c in r.get("alone_infeasible", ()):
        table.add_row(f"{c['hardware']} alone ({c['chips']})", "[yellow]cannot train alone[/]", "-", "-", "-", "-")
    console.print(table)
    for c in r.get("alone_infeasible", ()):
        console.print(f"[yellow]{c['hardware']} alone ({c['chips']}): {escape(c['reason'])}[/]")
    console.print(power)
    if rows and "goodput" in rows[0]:
        console.print(
            "[dim]$/Mtok, energy and CO2e are expected figures, as plan train's: goodput-adjusted for failures (the "
            f"mix's over both parts' chips) with {rows[0]['spare_fraction']:.0%} spare chips paid for (--json has "
            "the ideal ones too)[/]"
        )
    if r.get("placement") and r["mixed"]:
        console.print(f"mixed pipeline over {r['placement']}")
    asked = r.get("global_batch_tokens_asked")
    given = f" ({asked:,.0f} asked for, as whole sequences that data parallelism divides)" if asked else ""
    console.print(
        f"global batch: {r['global_batch']:,} sequences of {r['seq_len']:,} tokens, "
        f"{r['global_batch_tokens']:,} tokens a step{given}{_batch_basis(r)}"
    )
    for chip, ran in r["compute_precision"].items():  # as plan train says it, for each part and the mix
        listed = chip in r.get("precision_listed", ())
        part = {"hardware": chip, "precision": r["precision"], "compute_precision": ran, "precision_listed": listed}
        if note := _precision_note(part):
            console.print(f"[dim]{chip}: computes in {note}[/]")
    if estimated:
        console.print(f"[dim]{fmt.estimate_note(estimated, 'price_source', r.get('pricing', 'on-demand'))}[/]")
    if r["mixed"]:
        m = r["mixed"]
        stages = ", ".join(f"{k} {fmt.duration(v)}" for k, v in m["stage_time_s"].items())
        console.print(
            f"stage time per micro-batch: {stages}; hand-off {fmt.duration(m['hand_off_s'])}"
            + one_operator_note(m.get("providers") or (), "parts")
        )
        console.print(f"mixed step {fmt.duration(m['step_time_s'])}: {_step_terms(m)}")
        if m.get("parts"):
            console.print(_parts_line(m))
        if m.get("site_note"):  # the mix's one site: its PUE and grid (a hybrid rack's, or the larger draw's)
            console.print(f"[dim]{escape(m['site_note'])}[/]")
    console.print(f"[bold]{r['verdict']}[/]: {r['reason']}")
