"""Terminal view of `plan serve`: the ranking of the cheapest fleet per option, the simulated check of the best ones
with their notes, the verdict, and each chip's throughput-latency Pareto front."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table

from chipwise.economics.providers import one_operator_note
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import compact_table, console, hidden_rows_line, projected_banner
from chipwise.interfaces.cli.serve_cells import handover_caveat, latency_stats, rented_mark, router_name
from chipwise.planner.serving_check import CONFIRM_MARGIN
from chipwise.planner.serving_deployment import SPLIT_MARK
from chipwise.serve.plan import chip_count, count_text
from chipwise.workload.lengths import read_length

_ms = fmt.latency
_usd = fmt.price
_plan_text = fmt.serving_plan


def _chip_share(chips: float) -> str:
    """'one chip', '4 chips', 'a quarter of a chip' (replicas smaller than a chip share it)."""
    if chips == 1:
        return "one chip"
    if chips > 1:
        return chip_count(chips)
    return {0.5: "half a chip", 0.25: "a quarter of a chip"}.get(chips, f"{chips:g} of a chip") + " (replicas share it)"


def _settled(checked: dict[int, dict[str, Any]], rank: int, row: dict[str, Any]) -> bool:
    """Whether the simulated check of the ranking's row `rank` settled on another fleet: another chip count, or the
    same count made up otherwise (a split's pools resized: 7 + 1 -> 6 + 2 chips had kept its row's estimated price
    unmarked)."""
    return rank in checked and (
        checked[rank]["chips"] != row["chips"] or _replica_counts(checked[rank]["plan"]) != _replica_counts(row["plan"])
    )


def _replica_counts(plan: Mapping[str, Any]) -> list[int]:
    """A plan's replicas, pool by pool (a colocated row's plan is its one pool's)."""
    return [plan["replicas"]] if "replicas" in plan else [p["replicas"] for p in plan.values()]


def _span(values: Sequence[float], text: Callable[[float], str]) -> str:
    """The least and the most of some values as `text` writes them ('18.9 ms to 19.1 ms'), one where they read
    alike."""
    low, high = text(min(values)), text(max(values))
    return low if low == high else f"{low} to {high}"


def _trn4_overhead(verified: Sequence[Mapping[str, Any]]) -> str:
    """The ‡ note's word on Trainium4 run on Trainium2's engine fit: the carried per-step overhead is Trainium2's
    time, not scaled to a chip several times faster, and it, not the silicon, puts Trainium4 behind GB300
    (docs/hybrid.md). Its size is read from the simulated checks whose decode pool is Trainium4 (a check's
    breakdown is its decode pool's steady iteration): it had been fixed in the text at Llama 3.1 70B's 'about 20 ms,
    half to 60% of a step', whatever the model or --set."""
    steps = [v["breakdown"] for v in verified if v["hardware"].split(">")[-1] == "trn4" and v.get("breakdown")]
    size = ""
    if steps:
        seconds = [b.get("overhead", 0.0) for b in steps]
        shares = [s / sum(b.values()) for s, b in zip(seconds, steps, strict=True)]
        size = (
            f" ({_span(seconds, _ms)} a step, {_span(shares, lambda x: f'{100 * x:.0f}%')} of the Trainium4 decode "
            f"step{'s' if len(steps) > 1 else ''} simulated below)"
        )
    return (
        f"; Trainium2's per-step engine overhead is carried as it is{size}, and so decides Trainium4's ranking "
        "against GB300, which its silicon alone would not (docs/hybrid.md)"
    )


def _ranks_per_chip(row: Mapping[str, Any]) -> int:
    """Ranks (tp x pp) a colocated row's chips hold each: 1 on a GPU, a NeuronCore count on Trainium."""
    if row["disaggregated"] or not row.get("chips"):
        return 1
    p = row["plan"]
    ranks: float = p["tp"] * p.get("pp", 1) * p["replicas"] / row["chips"]
    return round(ranks)


def _pools(
    hardware: str,
    plans: dict[str, dict[str, Any]],
    defaults: Sequence[str] = (),
    systems: str | None = None,
    carried: Mapping[str, str] | None = None,
    projected: Sequence[str] = (),
) -> tuple[str, str]:
    """Hardware and plan cells of a ranking row: one line, or one line per pool of a disaggregated deployment
    ('P: b200' over 'D: h200'; the planner names such a pair 'b200>h200'); a chip whose engine runs on its
    defaults (`defaults`) is marked with a dagger, one whose engine figures are carried from another fit
    (`carried`) with a double dagger; with `systems` ('p5.48xlarge', or a pair 'a>b') each chip is followed by
    its system, where one chip is ranked in several."""
    chips = hardware.split(">")
    # each pool's system by its position: keyed by chip, a split between two systems of one chip (azure-nd-h100-v5
    # > p5.48xlarge) had named the decode pool's system for both pools
    names = systems.split(">") if systems else [""] * len(chips)
    marks = {c: engine_mark(c, defaults, carried) for c in chips}
    marks = {c: m + (" [yellow](proj.)[/]" if c in projected else "") for c, m in marks.items()}
    marked = [c + (f" ({name})" if name else "") + marks[c] for c, name in zip(chips, names, strict=True)]
    if len(plans) == 1:
        return marked[0], _plan_text(next(iter(plans.values())))
    pool = {"prefill": 0, "decode": 1}
    return (
        "\n".join(f"{role[0].upper()}: {marked[pool[role]]}" for role in plans),
        "\n".join(f"{role[0].upper()}: {_plan_text(p)}" for role, p in plans.items()),
    )


def engine_mark(chip: str, defaults: Sequence[str] = (), carried: Mapping[str, str] | None = None) -> str:
    """A chip's mark where its engine figures are its engine's defaults (' †') or carried from a sibling's fit
    (' ‡'), as engine_notes explains them; '' where fitted."""
    return " †" if chip in defaults else " ‡" if chip in (carried or {}) else ""


def _pool_rows(table: Table, lead: list[str], hardware: str, plan: str, figures: list[str]) -> None:
    """One row per pool of an option (a split's prefill then decode pool), its figures on the first: a plan that
    wraps in a narrow terminal then stays beside its own chip ('x1' of the prefill pool's plan fell beside the
    decode pool's chip at 80 columns)."""
    for k, (chip, pool) in enumerate(zip(hardware.split("\n"), plan.split("\n"), strict=True)):
        blank = [""] * len(lead)
        table.add_row(*(blank if k else lead), chip, pool, *(figures if k == 0 else [""] * len(figures)))


def _column(table: Table, header: str) -> None:
    """Hardware and plan cells wrap at spaces (a pool per line); figures stay whole."""
    if header in ("hardware", "plan"):
        table.add_column(header, overflow="fold", min_width=len("P: mi300x") if header == "hardware" else 6)
    else:
        table.add_column(header, justify="right", no_wrap=True)


def _simulated_ranks(report: Mapping[str, Any]) -> str:
    """Which ranking rows the checks simulate: 'the 3 cheapest are', or with the cheapest option on fitted figures
    checked beside options on engine defaults, 'the 3 cheapest and #7 (the cheapest on fitted figures) are'."""
    ranks = sorted(int(v["rank"]) for v in report["verified"])
    head = [r for i, r in enumerate(ranks, start=1) if r == i]
    extra = ranks[len(head) :]
    text = f"{len(head)} cheapest" if len(head) != 1 else "cheapest"
    if extra:
        text += " and " + ", ".join(f"#{r}" for r in extra) + " (the cheapest on fitted figures)"
    return text + (" are" if len(ranks) != 1 else " is")


def _unpriced(report: Mapping[str, Any], top: int) -> list[str]:
    """Why rows shown with '-' for $/h have no price: each row's or check's `price_note` (serving_economics), and
    the report's `unpriced` notes by system; a row without either is named with no reason."""
    notes: dict[str, str] = dict(report.get("unpriced") or {})
    for r in [*report["results"][:top], *report["verified"]]:
        cost = r.get("cost_usd_per_hour")
        if isinstance(cost, int | float) and math.isnan(cost):
            key = str(r.get("system") or r["hardware"])
            notes.setdefault(key, str(r.get("price_note") or f"{r['hardware']}: no {report['pricing']} price"))
    return list(dict.fromkeys(notes.values()))


def _processes_note(search: int, checks: int) -> str:
    """Where the search and the simulated checks ran where not in this process alone: ' (the checks on 2 processes)'."""
    if search > 1 and search == checks:
        return f" (the search and the checks on {search} processes)"
    parts = [f"the {what} on {n} processes" for what, n in (("search", search), ("checks", checks)) if n > 1]
    return f" ({', '.join(parts)})" if parts else ""


def print_plan_serve(report: dict[str, Any], top: int = 20, fronts: bool = False) -> None:
    """The plan-serve ranking: the cheapest fleet per option, then the simulated check of the best ones, and the
    verdict; with `fronts`, each chip's throughput-latency Pareto front first."""
    if fronts:
        print_fronts(report)
    # a chip ranked in more than one system (--hardware p5.48xlarge,azure-nd-h100-v5) is named with its system
    rows = report["results"] + report["verified"]
    several = len({r.get("system") for r in rows}) > len({r["hardware"] for r in rows})
    checked = {v["rank"]: v for v in report["verified"] if "rank" in v}  # the counts the check settled on
    table = _ranking_table(report, top, several, checked)
    if report["results"]:
        console.print(table)
    _print_ranking_notes(report, top, checked)
    if report["verified"]:
        console.print()
        console.print(_check_table(report, several))
        _print_check_notes(report)
    text, answered = fmt.plan_serve_verdict(report)
    console.print()
    console.print(f"[bold]{text}[/]" if answered else f"[bold yellow]{text}[/]")
    if report.get("why"):
        console.print(report["why"])
    if report.get("track_record_text"):
        console.print(report["track_record_text"], style="dim")
    s = report["search"]
    on = _processes_note(s.get("search_processes", 1), s.get("check_processes", 1))
    console.print(f"searched {s['evaluated']:,} replica shapes in {s['seconds']:.2f} s{on}", style="dim")
    if len(report["results"]) > top:  # as plan train says it: --top 1 had hidden the other rows without a word
        console.print(hidden_rows_line(len(report["results"]) - top, top), style="dim")
    projected_banner([r["hardware"] for r in report["results"][:top] if r.get("projected")])
    for sk in report["skipped"]:
        console.print(f"[dim]not ranked: {sk['hardware']}: {sk['reason']}[/]")


def lengths_text(report: dict[str, Any]) -> str:
    """'1,024 in / 256 out', or with the distributions the lengths were drawn from ('lognormal 2,000 (std 1,500,
    max 16,000) in / 256 out')."""
    inp, out = (read_length(report[f"{k}_lengths"], k, "1024").label() for k in ("input", "output"))
    return f"{inp} in / {out} out"


def _ranking_table(report: dict[str, Any], top: int, several: bool, checked: dict[int, dict[str, Any]]) -> Table:
    """The ranking: per option (its first `top`), the fleet with its hardware (named with its system where a chip is
    ranked in `several`), plan and chips (and the count its check settled on: `checked`), $/h, $/M output tokens
    and the estimate's TPOT and p99 TTFT."""
    slo = ", ".join(f"{k} <= {_ms(v)}" for k, v in report["slo"].items()) or "no SLO"
    table = compact_table(
        f"{fmt.model_label(report)}: {report['load']['label']}, {lengths_text(report)}, {report['precision']}"
        + (f", {report['kv_precision']} KV cache" if report.get("kv_precision") else "")
        + f" - {slo} ({report['pricing']} prices"
        + (f", {report['region']})" if report.get("region") else ")")
    )
    for c in ("#", "hardware", "plan", "chips", "$/h", "$/M\nout tok", "est.\nTPOT", "est. TTFT\np99"):
        _column(table, c)
    for i, r in enumerate(report["results"][:top], start=1):
        plan = r["plan"]
        hardware, plan_text = _pools(
            r["hardware"],
            {role: plan[role] for role in ("prefill", "decode")} if r["disaggregated"] else {"": plan},
            r.get("engine_defaults", ()),
            r.get("system") if several else None,
            r.get("engine_carried"),
            r.get("projected_chips", ()),
        )
        est = r["estimate"]
        _pool_rows(
            table,
            [str(i)],
            hardware,
            plan_text,
            [
                count_text(r["chips"])
                + rented_mark(r)
                + (
                    f" -> {count_text(checked[i]['chips'])}{rented_mark(checked[i])}" if _settled(checked, i, r) else ""
                ),
                _usd(r["cost_usd_per_hour"]) + (" §" if r.get("price_estimated") else ""),
                _usd(r["cost_usd_per_mtok"]),
                "-" if report["output_tokens"] <= 1 else _ms(est["tpot_s"]),  # one token: no time between two
                "-" if est["ttft_p99_s"] is None else _ms(est["ttft_p99_s"]),
            ],
        )
    return table


def _print_ranking_notes(report: dict[str, Any], top: int, checked: dict[int, dict[str, Any]]) -> None:
    """The notes under the ranking: how it is ranked and which rows are checked, the counts the checks settled on,
    hybrid racks searched as their member chips, engine figures that are defaults (†) or carried (‡), estimated
    prices (§), rented units, NeuronCore ranks, prices from elsewhere or none, and an offline load's TTFT."""
    if report["results"]:
        console.print(
            f"[dim]ranked by the steady-state estimate (est. TPOT: the mean step; est. TTFT: its p99); the "
            f"{_simulated_ranks(report)} simulated below[/]"
        )
    if any(_settled(checked, i, r) for i, r in enumerate(report["results"][:top], start=1)):
        console.print(
            "[dim]a -> b chips: the estimate's count, and the one its simulated check settled on (below; a -> a: "
            "its pools resized); the row's $/h and $/M are the estimate's, for a chips, the check's are below[/]"
        )
    for rack, members in (report.get("search") or {}).get("hybrid_members", {}).items():
        console.print(
            f"[dim]{rack} is searched as its member chips, {' and '.join(members)}; a split between them moves its "
            "KV cache over the rack's fabric[/]"
        )
    shown = report["results"][:top] + report["verified"]
    for note in engine_notes(shown, report["verified"]):
        console.print(note)
    estimated = sorted({c for r in shown for c in r.get("price_estimated") or ()})
    if estimated:
        console.print(f"[dim]{fmt.estimate_note(estimated, 'price_estimates', report.get('pricing', ''))}[/]")
    if any(rented_mark(r) for r in shown):
        console.print(f"[dim]{escape(fmt.RENTED_NOTE)}[/]")
    neuron = _neuron_note(report, top)
    if neuron:
        console.print(neuron)
    if report.get("price_notes"):
        console.print(f"[yellow]priced elsewhere: {'; '.join(report['price_notes'])}[/]")
    for note in shown_precision_notes(report, shown):  # gpt-oss on Neuron: bf16 where the header says mxfp4
        console.print(f"[yellow]precision: {escape(note)}[/]")
    unpriced = _unpriced(report, top)
    if unpriced:
        console.print(f"[yellow]no price ('-'): {escape('; '.join(unpriced))}[/]")
    if report["load"]["kind"] == "offline" and report["results"]:
        console.print("[dim]offline: a request's first token waits for the batch ahead of it (simulated below)[/]")


def shown_precision_notes(report: dict[str, Any], shown: list[dict[str, Any]]) -> list[str]:
    """The report's precision notes of the chips the `shown` rows use (a split's pools each), as the § footnote
    names the shown rows' chips only: gpt-oss-20b on trn1, inf2, trn2 and h100-sxm had noted trn1's bf16 experts
    under six rows none of which is trn1. The report keys each note by its chip."""
    chips = {c for r in shown for c in str(r["hardware"]).split(SPLIT_MARK)}
    return [note for chip, note in (report.get("precision_notes") or {}).items() if chip in chips]


def engine_notes(shown: list[dict[str, Any]], verified: list[dict[str, Any]]) -> list[str]:
    """The footnotes of the `shown` rows whose engine figures are defaults (†: no serving run of the chip's family
    fitted) or carried from a sibling's fit (‡, with Trainium4's overhead in the `verified` checks); plan fleet's
    and plan lifecycle's rows carry the same fields and notes."""
    notes: list[str] = []
    defaults = {c for r in shown for c in r.get("engine_defaults") or ()}
    if defaults:
        tpu = any(c.startswith("tpu") for c in defaults)
        notes.append(
            "[dim]† no serving measurement on this chip family was fitted: its engine's figures are defaults (its "
            "training efficiencies at full engine scale, 5 us a layer). Checked on Gaudi's held-out runs only: "
            "throughput MAPE 17.9% (7-8B models -17..+24%, 70B -21..+33% but two rows 2.2-2.3x fast), MLPerf Server "
            "p99 TPOT 68% fast"
            + ("; TPU serving is unchecked" if tpu else "")
            + " (docs/research/heldout_serving.md)[/]"
        )
    carried = {c: s for r in shown for c, s in (r.get("engine_carried") or {}).items()}
    if carried:
        sources = "; ".join(f"{chip} from {source}" for chip, source in sorted(carried.items()))
        trn4 = _trn4_overhead(verified) if carried.get("trn4", "").endswith("on trainium2") else ""
        notes.append(
            "[dim]‡ no serving run of this engine on the chip's family was fitted: the figures a sibling's fit sets "
            f"('chipwise catalog engine ENGINE --chip ID' names each) are carried from it ({sources}; docs/serving.md "
            f"section 4){trn4}[/]"
        )
    return notes


def _neuron_note(report: dict[str, Any], top: int) -> str:
    """Where a ranked chip runs several ranks a chip (a NeuronCore each, on Trainium and Inferentia), what each
    plan's ranks take of its chips; '' where none does."""
    neuron = {r["hardware"]: r for r in report["results"][:top] if _ranks_per_chip(r) > 1}
    if not neuron:
        return ""
    examples = []
    for chip, r in neuron.items():
        per, ranks = _ranks_per_chip(r), r["plan"]["tp"] * r["plan"].get("pp", 1)
        shape = f"TP{r['plan']['tp']}" + (f" PP{r['plan']['pp']}" if r["plan"].get("pp", 1) > 1 else "")
        examples.append(f"{chip} has {per} per chip, so its {shape} takes {_chip_share(ranks / per)}")
    return f"[dim]a rank on Trainium and Inferentia is a NeuronCore: {'; '.join(examples)}[/]"


def _check_table(report: dict[str, Any], several: bool) -> Table:
    """The simulated check of the cheapest options: each one's fleet, whether it meets the SLO, output per chip,
    latency percentiles (each column in the unit of its medians) and $/M output tokens."""
    vt = compact_table("Simulated check of the cheapest options")
    # each column in the unit of its medians (a p99 of 1.2 s reads '1,200' ms beside p50s of a few hundred)
    # an end-to-end target's column where the SLO has one (it was checked and never shown)
    e2e = any(k.startswith("e2e") for k in report.get("slo") or {})
    metrics = ("ttft_s", "tpot_s", "e2e_s") if e2e else ("ttft_s", "tpot_s")
    units = {m: fmt.latency_unit([v[m].get("p50") for v in report["verified"]]) for m in metrics}
    heads = [f"{m[:-2].upper()} ({units[m][1]})\np50/p90/p99" for m in metrics]
    for c in ("hardware", "plan", "chips", "SLO", "tok/s\n/chip", *heads, "$/M\nout tok"):
        _column(vt, c)
    for v in report["verified"]:
        hardware, plan = _pools(
            v["hardware"],
            v["plan"],
            v.get("engine_defaults", ()),
            v.get("system") if several else None,
            v.get("engine_carried"),
            v.get("projected_chips", ()),
        )
        _pool_rows(
            vt,
            [],
            hardware,
            plan,
            [
                count_text(v["chips"]) + rented_mark(v),
                fmt.check_status(v),
                f"{v['output_tokens_per_s_per_chip']:,.0f}",
                *(latency_stats(v[m], units[m]) for m in metrics),
                _usd(v["cost_usd_per_mtok"]) + (" §" if v.get("price_estimated") else ""),
            ],
        )
    return vt


def _print_check_notes(report: dict[str, Any]) -> None:
    """The notes under the simulated check: each split's KV transfer, the requests each check simulated and its
    router, the checks run again to confirm a narrow result, and the checks of a slice of the fleet."""
    for v in report["verified"]:
        if v.get("kv_transfer"):
            k = v["kv_transfer"]
            console.print(
                f"{v['hardware'].replace('>', ' -> ')}: KV cache of a mean prompt moves in "
                f"{_ms(k['seconds_for_mean_prompt'])} over {k['fabric']}"
                + (" [yellow](projected)[/]" if k.get("projected") else "")
                + handover_caveat(str(v.get("engine", "")))
                + one_operator_note(v.get("providers") or (), "pools")
            )
    counts = sorted({v["simulated"]["requests"] for v in report["verified"] if v.get("simulated")})
    if counts:
        span = f"{counts[0]:,}" + (f"-{counts[-1]:,}" if len(counts) > 1 else "")
        steady = all(v["simulated"].get("steady_state", True) for v in report["verified"] if v.get("simulated"))
        behind = f", the replicas behind a {router_name(report)} router"
        console.print(
            f"[dim]each check simulated {span} requests (enough for a steady state){behind} (--router)[/]"
            if steady
            else f"[yellow]each check simulated {span} requests: too few for a steady state (the arrivals end "
            "before the first requests do); raise --requests[/]"
        )
    for v in report["verified"]:
        sim = v.get("simulated") or {}
        if not sim.get("confirming"):
            continue
        probe = (
            "timed while its decode pool is full: about the capacity predict reports"
            if v.get("disaggregated")
            else "a capacity below the one predict reports"
        )
        why = (
            f"at {fmt.percent(sim['utilisation'])} of what it delivers with its batch full (two batches run "
            f"offline, {probe}), its queue settles slowly: its check ran again"
            if sim.get("rerun") == "loaded" and sim.get("utilisation") is not None
            else f"its check met a percentile target narrowly (within {fmt.percent(CONFIRM_MARGIN)} of it, or of "
            "its sampling error) and ran again"
        )
        console.print(
            f"[dim]{v['hardware'].replace('>', ' -> ')}: {why} on {sim['requests']:,} requests (another seed) "
            "to confirm it[/]"
        )
    for v in report["verified"]:
        share = (v.get("simulated") or {}).get("fleet_share", 1.0)
        if share < 1.0:
            console.print(
                f"[dim]{v['hardware'].replace('>', ' -> ')}: a {fmt.share(share)} slice of the fleet simulated "
                "under its share of the load (the whole fleet would need more requests)[/]"
            )


#: TPOT budgets (s) at which `plan serve --pareto` reads each chip's front, besides the SLO's own TPOT target
TPOT_BUDGETS = (0.01, 0.02, 0.05, 0.1)


def print_fronts(report: dict[str, Any]) -> None:
    """Each chip's throughput-latency Pareto front as a table: the most output tokens/s per chip any replica shape
    reaches at saturation within each TPOT budget ('-': none is that fast), the best chips first."""
    budgets = sorted({*TPOT_BUDGETS, *(v for k, v in report["slo"].items() if k.startswith("tpot"))})

    def best(front: list[dict[str, float]], budget: float) -> float:
        return max((p["output_tokens_per_s_per_chip"] for p in front if p["tpot_s"] <= budget), default=0.0)

    fronts = sorted(report["pareto"].items(), key=lambda kv: -best(kv[1], budgets[-1]))
    projected = {r["hardware"] for r in report["results"] if r.get("projected")}
    table = compact_table(
        f"Pareto fronts: output tok/s per chip within a TPOT budget ({report['precision']}, saturated replicas)"
    )
    table.add_column("hardware", no_wrap=True)
    for b in budgets:
        _column(table, f"TPOT\n<= {_ms(b)}")
    for chip, front in fronts:
        cells = (f"{v:,.0f}" if v > 0 else "-" for v in (best(front, b) for b in budgets))
        table.add_row(chip + (" [yellow](proj.)[/]" if chip in projected else ""), *cells)
    console.print(table)
    console.print()
