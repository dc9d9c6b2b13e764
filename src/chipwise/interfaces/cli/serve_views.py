"""Terminal views of serving results: one deployment's prediction, and the plan-serve fleet ranking."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table

from chipwise.economics.pricing import catalog_estimate
from chipwise.economics.providers import one_operator_note
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import (
    compact_table,
    console,
    figure_table,
    print_track_record,
    projected_banner,
)
from chipwise.planner.serving_check import CONFIRM_MARGIN
from chipwise.serve.iteration import COMPONENT_LABELS
from chipwise.serve.plan import chip_count, count_text
from chipwise.serve.search import held_tokens
from chipwise.serve.simulate import NEAR_CAPACITY
from chipwise.workload.serve_scenario import DEFAULT_ROUTER

_ms = fmt.latency


PERCENTILES = ("p50", "p90", "p99")


#: how the check's footnote names each router (--router)
ROUTER_NAMES = {"least_loaded": "least-loaded", "power_of_two": "power-of-two-choices", "round_robin": "round-robin"}


def _router_name(report: dict[str, Any]) -> str:
    return ROUTER_NAMES[report.get("router", DEFAULT_ROUTER)]


def _stats(d: dict[str, float], unit: tuple[float, str] | None = None) -> str:
    return fmt.latencies([d.get(k) for k in PERCENTILES], unit, sep=" / " if unit is None else "/")


_usd = fmt.price
_plan_text = fmt.serving_plan


def _handover(engines: str) -> str:
    """A caveat for a split whose pools run two engines ('neuron>trtllm'): no shipping pair hands a KV cache over."""
    ends = engines.split(">")
    if len(ends) != 2 or ends[0] == ends[1]:
        return ""
    return f" [yellow](from {ends[0]} to {ends[1]}: no shipping engine pair hands a KV cache over; assumed one does)[/]"


def _chip_share(chips: float) -> str:
    """'one chip', '4 chips', 'a quarter of a chip' (replicas smaller than a chip share it)."""
    if chips == 1:
        return "one chip"
    if chips > 1:
        return chip_count(chips)
    return {0.5: "half a chip", 0.25: "a quarter of a chip"}.get(chips, f"{chips:g} of a chip") + " (replicas share it)"


def _systems(result: dict[str, Any]) -> list[str]:
    """The systems a prediction's pools run on (one, or a split's two), as its price sources name them."""
    return list(dict.fromkeys(str(q["system"]) for q in result.get("price_sources") or () if q.get("system")))


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


def _rented(row: dict[str, Any]) -> str:
    """' [n]': the chips a row rents, where its provider's units hold more than it uses (else '')."""
    billed = row.get("billed_chips")
    return f" [{count_text(billed)}]" if billed is not None and billed > row["chips"] + 1e-9 else ""


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
    names = dict(zip(hardware.split(">"), systems.split(">"), strict=True)) if systems else {}
    marks = {c: " †" if c in defaults else " ‡" if c in (carried or {}) else "" for c in hardware.split(">")}
    marks = {c: m + (" [yellow](proj.)[/]" if c in projected else "") for c, m in marks.items()}
    marked = {c: c + (f" ({names[c]})" if c in names else "") + marks[c] for c in hardware.split(">")}
    if len(plans) == 1:
        return marked[hardware], _plan_text(next(iter(plans.values())))
    chips = dict(zip(("prefill", "decode"), hardware.split(">"), strict=True))
    return (
        "\n".join(f"{role[0].upper()}: {marked[chips[role]]}" for role in plans),
        "\n".join(f"{role[0].upper()}: {_plan_text(p)}" for role, p in plans.items()),
    )


def _kv_bound(r: dict[str, Any]) -> str:
    """Where the KV cache holds fewer mean requests than the plan's batch limit, say so: the cache, not max_batch,
    then bounds the batch (a given TensorRT-LLM b256 of DeepSeek-R1's 8,500-token requests on 8 H200 holds 185).
    A request holds what search.held_tokens says: its whole context under reserve admission (and where the plan
    does not say), its prompt and half its answer on demand. A searched limit says so itself (batch_note)."""
    plan, load = r["plan"], r.get("load") or {}
    inp, out = float(load.get("input_tokens_mean") or 0.0), float(load.get("output_tokens_mean") or 0.0)
    mean = held_tokens(str(plan.get("admission", "reserve")), inp, out)
    if plan.get("attention_dp") or mean <= 0 or r.get("batch_note"):
        return ""  # under attention DP each rank caches its own requests: the per-replica figure is not the bound
    held = int(plan["kv_cache_tokens_per_replica"] // mean)
    if held >= plan["max_batch"]:
        return ""
    return f" (about {held:,} mean requests of b{plan['max_batch']}: the cache, not max_batch, bounds the batch)"


def _priced_note(r: dict[str, Any], short: Any) -> str:
    """Where the per-token figures divide by the load the run kept up with rather than the throughput printed
    above (a short window reads a few % under it): say so, with the figure ($1.49 per M read as at 1,096 tok/s).
    Never beside a load over capacity, which is priced on what it delivers (serving_verdict.keeps_up)."""
    priced, shown = r.get("priced_output_tokens_per_s"), r["output_tokens_per_s"]
    over = float((r.get("load") or {}).get("utilisation") or 0.0) >= 1.0
    if short or over or not priced or not shown or abs(priced / shown - 1.0) <= 0.01:
        return ""
    return f" (per the load's {fmt.significant(priced)} output tok/s, which the run keeps up with)"  # not 0 at 0.001


def _load_text(load: dict[str, Any], waiting: float) -> str:
    """The load against capacity; near capacity, the share of the mean TTFT spent waiting to start (`waiting`)."""
    util = load["utilisation"]
    text = fmt.load_share(load)
    if util >= 1.0:
        return text + (
            ": over capacity, the queue and TTFT grow for as long as the run lasts; throughput is what the deployment "
            "delivers saturated, over the whole run"
        )
    if util >= NEAR_CAPACITY and math.isfinite(waiting):
        return text + f": near capacity, {fmt.percent(waiting)} of the mean TTFT is the wait to start"
    return text


def _stated_chips_text(stated: Mapping[str, Any]) -> str:
    """Where a searched plan leaves some of the scenario's chips idle: how many it uses, and why."""
    return (
        f"[yellow]the searched plan uses {count_text(stated['used'])} of the {count_text(stated['stated'])} stated: "
        f"{escape(str(stated['reason']))}[/]"
    )


#: what a split's pool holds in its KV cache, beside its utilisation
_KV_HELD = {"decode": "", "prefill": " (a prompt's cache, until it is handed over)"}


def _kv_rows(kv: Mapping[str, Any]) -> list[tuple[str, str]]:
    """KV-cache utilisation rows: one for a deployment of one pool; one per pool of a split, its decode pool first
    (where the KV cache limits it), each over its own replicas."""
    pools = kv.get("pools") or {}
    if "mean" in kv or len(pools) <= 1:
        whole = kv if "mean" in kv else next(iter(pools.values()), {"mean": 0.0, "peak": 0.0})
        return [("KV-cache utilisation (mean / peak)", f"{fmt.percent(whole['mean'])} / {fmt.percent(whole['peak'])}")]
    return [
        (
            f"KV-cache utilisation, {role} pool (mean / peak)",
            f"{fmt.percent(u['mean'])} / {fmt.percent(u['peak'])}{_KV_HELD.get(role, '')}",
        )
        for role, u in pools.items()
    ]


def _site_text(r: Mapping[str, Any]) -> str:
    """' (region, PUE 1.15, busy 12% of the hour)': the site the energy is reckoned at and the share of the hour the
    chips run iterations at busy power, the rest at idle power (serving_economics)."""
    if "pue" not in r:
        return ""
    parts = [str(r["region"]), f"PUE {r['pue']:.2f}", f"{r['grid_kg_co2e_per_kwh'] * 1e3:,.0f} g CO2e/kWh"]
    share = r.get("busy_share")
    if isinstance(share, int | float) and math.isfinite(share) and share < 1.0 - 1e-9:
        parts.append(f"busy {fmt.percent(share)} of the hour, idle power otherwise")
    return f" [dim]({', '.join(parts)})[/]"


def print_serving(r: dict[str, Any], sources: bool = False) -> None:
    """One serving prediction: deployment, throughput, latency percentiles, cost, and where a step goes."""
    projected_banner(r.get("projected_chips") or ([r["hardware"]] if r.get("projected") else []))
    plan = r["plan"]
    head = figure_table(_serving_title(r))
    _add_deployment_rows(head, r)
    spec = plan.get("speculative") or (plan.get("decode") or {}).get("speculative")
    if spec:
        head.add_row("speculative decoding", spec)
    head.add_row(
        "throughput",
        f"{r['output_tokens_per_s']:,.0f} output tok/s ({r['output_tokens_per_s_per_chip']:,.0f} per chip), "
        f"{r['throughput_tokens_per_s']:,.0f} total tok/s",
    )
    if "utilisation" in r["load"]:
        waiting = r["ttft_wait_s"]["mean"] / r["ttft_s"]["mean"] if r["ttft_s"]["mean"] > 0 else math.nan
        head.add_row("offered load", _load_text(r["load"], waiting))
    short = r.get("short_run")
    if short:
        head.add_row("[yellow]run too short[/yellow]", _short_run_text(r, short))
    _add_latency_rows(head, r)
    for label, text in _kv_rows(r["kv_cache_utilisation"]):
        head.add_row(label, text)
    reqs = r["requests"]
    head.add_row(
        "requests finished / dropped / preemptions",
        f"{reqs['finished']:,} / {reqs['dropped']:,} / {reqs['preemptions']:,}",
    )
    if r.get("dropped"):
        head.add_row("[yellow]dropped[/yellow]", f"[yellow]{escape(r['dropped']['reason'])}[/yellow]")
    head.add_row(*_cost_row(r, short))
    head.add_row(
        "energy / carbon per M output tokens",
        f"{fmt.energy(r['energy_j_per_mtok'])} / {fmt.carbon(r['co2e_kg_per_mtok'])}" + _site_text(r),
    )
    console.print(head)
    console.print(_breakdown_table(r, bool(spec)))
    print_track_record(r.get("track_record") or {})
    if sources:
        console.print(_figures_table(r))
    console.print(f"simulated {reqs['total']:,} requests in {r['simulation']['wall_s']:.2f} s", style="dim")


def _serving_title(r: dict[str, Any]) -> str:
    """The prediction's title: the model on its fleet, the engine (each pool's, where a split's differ), the
    precisions and the load."""
    plan = r["plan"]
    engine = r["engine"]
    if plan.get("disaggregated"):
        pre, dec = plan["prefill"]["engine"], plan["decode"]["engine"]
        engine = pre if pre == dec else f"{pre} prefill, {dec} decode"
    return (
        f"{r['model']} on {fmt.serving_fleet(r)} ({engine}), {r['precision']} weights, "
        f"{r['kv_precision']} KV cache - {r['load']['label']}"
    )


def _add_deployment_rows(head: Table, r: dict[str, Any]) -> None:
    """The deployment's rows: a split's pools and the KV transfer between them, or the one plan with its chips, KV
    cache, batch limit and how it runs prompts; then the precision, the front end, the router and where the
    engine's figures come from."""
    plan = r["plan"]
    if plan.get("disaggregated"):
        for role in ("prefill", "decode"):
            p = plan[role]
            head.add_row(f"{role} pool", f"{p['hardware']} {_plan_text(p)}  ({r['plan_source']})")
        if "kv_transfer" in r:
            k = r["kv_transfer"]
            engines = f"{plan['prefill']['engine']}>{plan['decode']['engine']}"
            priced = (q["provider"] for q in r.get("price_sources") or () if q.get("provider"))
            head.add_row("KV transfer per mean prompt", f"{_ms(k['seconds_for_mean_prompt'])} over {k['fabric']}"
                         + _handover(engines) + one_operator_note(priced, "pools"))  # fmt: skip
    else:
        head.add_row("plan", f"{_plan_text(plan)}  ({r['plan_source']})")
        if "stated_chips" in r:
            head.add_row("chips", _stated_chips_text(r["stated_chips"]))
        head.add_row("KV cache per replica", f"{plan['kv_cache_tokens_per_replica']:,} tokens" + _kv_bound(r))
        if r.get("batch_note"):  # a searched batch limit: what the cache holds, and the users it seats
            head.add_row("batch limit", escape(str(r["batch_note"])))
        if plan.get("mixed_batching") is False:
            head.add_row("prompts", "in iterations of their own, the decodes waiting (plan.mixed_batching)")
    if r.get("precision_note"):
        head.add_row("precision", f"[yellow]{escape(r['precision_note'])}[/yellow]")
    pools = [plan["prefill"], plan["decode"]] if plan.get("disaggregated") else [plan]
    if any(p.get("front_end") == "dynamo" for p in pools):
        head.add_row("front end", "Dynamo's: the engine's own HTTP server is not in the path (plan.front_end)")
    if sum(p["replicas"] for p in pools) > 1:
        head.add_row("router", f"{_router_name(r)} (plan.router)")
    provenance = [f"{c}: defaults (no serving run of its family fitted)" for c in r.get("engine_defaults") or ()]
    provenance += [f"{c}: carried from {src}" for c, src in (r.get("engine_carried") or {}).items()]
    if provenance:
        head.add_row("engine figures", "[yellow]" + "; ".join(provenance) + "[/]")


def _short_run_text(r: dict[str, Any], short: dict[str, Any]) -> str:
    """Why a run is too short to read a steady state from (a single batch, the users' start and drain, or arrivals
    that span less than two request latencies), and the requests that would be enough."""
    finished = r["requests"]["finished"]
    if "batch_slots" in short:
        why = (
            f"{finished:,} requests for {short['batch_slots']:,} batch slots: one batch, in which no request waits "
            "for a slot or joins a running batch; "
        )
    elif "users" in short:
        why = (
            f"{finished:,} requests for {short['users']:,} users: the users' start, all together, and the final "
            "drain are a large part of the run; "
        )
    else:
        why = (
            f"arrivals span {fmt.duration(short['arrival_span_s'])}, less than two request latencies "
            f"({fmt.duration(short['request_latency_s'])} each): throughput and latencies are of the batch filling; "
        )
    return why + f"run at least {short['requests_for_steady_state']:,} requests"


def _add_latency_rows(head: Table, r: dict[str, Any]) -> None:
    """The latency rows: the requests they are measured over, TTFT with its wait to start and what sets it
    (attention-DP balancing, one prompt's prefill alone, repeated prompts), TPOT, end-to-end, and the SLO."""
    plan = r["plan"]
    measured, total = r.get("latency_requests", 0), r["requests"]["finished"]
    if r["load"]["kind"] == "closed" and 0 < measured < total:
        users = r["load"]["concurrency"]
        head.add_row(
            "latencies over",
            f"{measured:,} of {total:,} requests, in steady state (the users' start and the last {users:,} left out)",
        )
    if r.get("lockstep_note"):  # fixed lengths and queued users: cohorts in lock-step (planner.serving)
        head.add_row("[yellow]lock-step users[/yellow]", f"[yellow]{escape(str(r['lockstep_note']))}[/]")
    head.add_row("TTFT p50 / p90 / p99", _stats(r["ttft_s"]))
    head.add_row(
        "TTFT's wait to start p50 / p90 / p99", f"{_stats(r['ttft_wait_s'])} (to the prompt's first iteration)"
    )
    pools = [plan[role] for role in ("prefill", "decode")] if plan.get("disaggregated") else [plan]
    balance = max((int(p.get("adp_balance_iters", 0)) for p in pools), default=0)
    if balance:
        head.add_row(
            "attention-DP balancing",
            f"while every rank generates, prompts wait until each of the {max(p['tp'] for p in pools)} ranks has "
            f"one, or a counter of iterations reaches {balance} (the engine's attention_dp_config)",
        )
    alone = r["prefill_one_prompt"]
    launches = alone["host_launches_s"]
    detail = f"device work {_ms(alone['device_s'])}" + (
        f", kernels launched from the host {_ms(launches)} (prompts run eagerly)" if launches > 0 else ""
    )
    head.add_row("one prompt's prefill, alone", f"{_ms(alone['seconds'])} ({detail})")
    if r["load"].get("prompt_pool"):
        head.add_row(
            "repeated prompts",
            f"{r['load']['prompt_pool']:,} distinct prompts, cycled: a repeat is served from the prefix cache (one "
            "token encoded) where its replica still holds it",
        )
    head.add_row("TPOT p50 / p90 / p99", _stats(r["tpot_s"]))
    head.add_row("end-to-end p50 / p90 / p99", _stats(r["e2e_s"]))
    if r["slo"]:
        met = "met" if r["slo_met"] else "NOT met"
        if r.get("slo_caveat"):
            met = f"[yellow]{met} in this run only: {r['slo_caveat']}[/yellow]"
        head.add_row("SLO", f"{', '.join(f'{k} <= {_ms(v)}' for k, v in r['slo'].items())}: {met}")
        head.add_row("goodput", f"{100 * r['goodput']['fraction']:.1f}% of requests within the SLO")


def _cost_row(r: dict[str, Any], short: dict[str, Any] | None) -> tuple[str, str]:
    """The cost row: its label (pricing, regions) and the cost per hour and per M output tokens, with what it is
    for and where its prices come from."""
    quotes = r.get("price_sources") or []
    regions = sorted({str(q["region"]) for q in quotes if q.get("region")})
    where = f", {', '.join(regions)}" if regions else ""
    elsewhere = any(q.get("region_note") for q in quotes)  # no price in the region asked for: the nearest one's
    estimated = sorted({str(q.get("entry") or q.get("system")) for q in quotes if catalog_estimate(q)})
    owned = sorted({str(q.get("system")) for q in quotes if (q.get("tco") or {}).get("status") == "estimate"})
    return (
        f"cost ({r['pricing']}{where})" + (" [yellow](none listed where asked)[/]" if elsewhere else ""),
        f"{_usd(r['cost_usd_per_hour'])}/h, {_usd(r['cost_usd_per_mtok'])} per M output tokens"
        + (
            f" for the {chip_count(r['billed_chips'])} rented (units: catalog show {' / '.join(_systems(r))})"
            if _rented(r)
            else ""
        )
        + (
            f" (at the throughput of {'the batch filling' if short and 'arrival_span_s' in short else 'a short run'}: "
            "see 'run too short')"
            if short
            else ""
        )
        + _priced_note(r, short)
        + (
            f" [yellow](price of {', '.join(estimated)} a catalog estimate: --json price_sources)[/]"
            if estimated
            else ""
        )
        + (
            f" [yellow](owned cost of {', '.join(owned)} built on estimates: --json price_sources, "
            "tco.estimated_inputs)[/]"
            if owned
            else ""
        )
        + (f" [yellow](no price: {escape(r['price_note'])})[/]" if r.get("price_note") else ""),
    )


def _breakdown_table(r: dict[str, Any], spec: bool) -> Table:
    """Where the time goes: a steady iteration's components (a speculative verification step where `spec`) beside
    one prompt's prefill alone, each with its share."""
    plan = r["plan"]
    steady, prefill = r["breakdown"], r["prefill_breakdown"]
    first = max(prefill, key=lambda k: prefill[k])
    yields = " (a speculative verification step: several tokens a sequence)" if spec else ""
    if "decode" not in plan:  # one pool: its steps carry the prompts too, so a step is not one token's wait (TPOT)
        yields += " (a decode step with its share of the prompts run beside or between the steps)"
    bd = Table(
        title=f"Where the time goes: a steady iteration{yields}, mostly {COMPONENT_LABELS[r['dominated_by']]}; "
        f"one prompt's prefill alone, mostly {COMPONENT_LABELS[first]}",
        header_style="bold",
    )
    bd.add_column("component")
    for col in ("steady iteration", "share", "prompt prefill", "share"):
        bd.add_column(col, justify="right")
    totals = (sum(steady.values()) or 1.0, sum(prefill.values()) or 1.0)
    keys = [k for k in COMPONENT_LABELS if steady.get(k, 0.0) > 0 or prefill.get(k, 0.0) > 0]
    for k in sorted(keys, key=lambda k: (-steady.get(k, 0.0), -prefill.get(k, 0.0))):
        cells = [
            (_ms(v), fmt.percent(v / t)) if (v := parts.get(k, 0.0)) > 0 else ("-", "-")
            for parts, t in zip((steady, prefill), totals, strict=True)
        ]
        bd.add_row(COMPONENT_LABELS[k], *cells[0], *cells[1])
    return bd


def _figures_table(r: dict[str, Any]) -> Table:
    """The figures used (--sources): each with its value, status and source or derivation."""
    ft = Table(title="Figures used", header_style="bold")
    for c in ("figure", "value", "status", "source / derivation"):
        ft.add_column(c, overflow="fold")
    # the engine's and chip's figures, then the site's and the power model's (PUE, grid, load fractions)
    for name, f in {**r["figures"], **(r.get("economics_figures") or {})}.items():
        text = f.get("derivation") or "; ".join(f["source"])
        if f.get("located"):
            text += f" ({f['located']})"
        ft.add_row(name, fmt.figure_value(f), f["status"], escape(text))
    return ft


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
    on = f" (the checks on {s['check_processes']} processes)" if s.get("check_processes", 1) > 1 else ""
    console.print(f"searched {s['evaluated']:,} replica shapes in {s['seconds']:.2f} s{on}", style="dim")
    projected_banner([r["hardware"] for r in report["results"][:top] if r.get("projected")])
    for sk in report["skipped"]:
        console.print(f"[dim]not ranked: {sk['hardware']}: {sk['reason']}[/]")


def _ranking_table(report: dict[str, Any], top: int, several: bool, checked: dict[int, dict[str, Any]]) -> Table:
    """The ranking: per option (its first `top`), the fleet with its hardware (named with its system where a chip is
    ranked in `several`), plan and chips (and the count its check settled on: `checked`), $/h, $/M output tokens
    and the estimate's TPOT and p99 TTFT."""
    slo = ", ".join(f"{k} <= {_ms(v)}" for k, v in report["slo"].items()) or "no SLO"
    table = compact_table(
        f"{report['model']}: {report['load']['label']}, {report['input_tokens']:,} in / "
        f"{report['output_tokens']:,} out, {report['precision']}"
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
                + _rented(r)
                + (f" -> {count_text(checked[i]['chips'])}{_rented(checked[i])}" if _settled(checked, i, r) else ""),
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
    for note in _engine_notes(shown, report["verified"]):
        console.print(note)
    estimated = sorted({c for r in shown for c in r.get("price_estimated") or ()})
    if estimated:
        console.print(f"[dim]{fmt.estimate_note(estimated, 'price_estimates', report.get('pricing', ''))}[/]")
    if any(_rented(r) for r in shown):
        console.print(f"[dim]{escape(fmt.RENTED_NOTE)}[/]")
    neuron = _neuron_note(report, top)
    if neuron:
        console.print(neuron)
    if report.get("price_notes"):
        console.print(f"[yellow]priced elsewhere: {'; '.join(report['price_notes'])}[/]")
    unpriced = _unpriced(report, top)
    if unpriced:
        console.print(f"[yellow]no price ('-'): {escape('; '.join(unpriced))}[/]")
    if report["load"]["kind"] == "offline" and report["results"]:
        console.print("[dim]offline: a request's first token waits for the batch ahead of it (simulated below)[/]")


def _engine_notes(shown: list[dict[str, Any]], verified: list[dict[str, Any]]) -> list[str]:
    """The footnotes of the `shown` rows whose engine figures are defaults (†: no serving run of the chip's family
    fitted) or carried from a sibling's fit (‡, with Trainium4's overhead in the `verified` checks)."""
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
            f"[dim]‡ no serving run of this engine on the chip's family was fitted: its figures are carried from a "
            f"sibling's fit ({sources}; docs/serving.md section 4){trn4}[/]"
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
                count_text(v["chips"]) + _rented(v),
                fmt.check_status(v),
                f"{v['output_tokens_per_s_per_chip']:,.0f}",
                *(_stats(v[m], units[m]) for m in metrics),
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
                + _handover(str(v.get("engine", "")))
                + one_operator_note(v.get("providers") or (), "pools")
            )
    counts = sorted({v["simulated"]["requests"] for v in report["verified"] if v.get("simulated")})
    if counts:
        span = f"{counts[0]:,}" + (f"-{counts[-1]:,}" if len(counts) > 1 else "")
        steady = all(v["simulated"].get("steady_state", True) for v in report["verified"] if v.get("simulated"))
        behind = f", the replicas behind a {_router_name(report)} router"
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
        why = (
            f"at {fmt.percent(sim['utilisation'])} of what it delivers with its batch full (two batches run "
            "offline, a capacity below the one predict reports), its queue settles slowly: its check ran again"
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
