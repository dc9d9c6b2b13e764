"""Terminal view of one serving prediction (`chipwise predict` of a serve scenario): the deployment, its throughput
and load, latency percentiles, KV cache, cost and energy, and where a steady iteration's and a lone prompt's time
goes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from chipwise.economics.pricing import catalog_estimate
from chipwise.economics.providers import one_operator_note
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.common import console, figure_table, print_track_record, projected_banner
from chipwise.interfaces.cli.serve_cells import handover_caveat, latency_stats, rented_mark, router_name
from chipwise.planner.serving_report import STEADY_REQUESTS
from chipwise.serve.estimate import held_tokens
from chipwise.serve.iteration import COMPONENT_LABELS
from chipwise.serve.plan import chip_count, count_text
from chipwise.serve.simulate import NEAR_CAPACITY

_ms = fmt.latency
_usd = fmt.price
_plan_text = fmt.serving_plan


def _systems(result: dict[str, Any]) -> list[str]:
    """The systems a prediction's pools run on (one, or a split's two), as its price sources name them."""
    return list(dict.fromkeys(str(q["system"]) for q in result.get("price_sources") or () if q.get("system")))


def _kv_bound(r: dict[str, Any]) -> str:
    """Where the KV cache holds fewer mean requests than the plan's batch limit, say so: the cache, not max_batch,
    then bounds the batch (a given TensorRT-LLM b256 of DeepSeek-R1's 8,500-token requests on 8 H200 holds 185).
    A request holds what estimate.held_tokens says: its whole context under reserve admission (and where the plan
    does not say), its prompt and half its answer on demand. A searched limit says so itself (batch_note). Under
    attention DP the bound is a rank's share, named instead."""
    plan, load = r["plan"], r.get("load") or {}
    inp, out = float(load.get("input_tokens_mean") or 0.0), float(load.get("output_tokens_mean") or 0.0)
    mean = held_tokens(str(plan.get("admission", "reserve")), inp, out)
    if plan.get("attention_dp"):  # each rank caches its own requests whole: a rank's share is the bound
        tp = plan.get("tp", 1)
        rank = plan["kv_cache_tokens_per_replica"] // tp
        return f" ({rank:,} a rank: each attention-DP rank caches its own requests)" if tp > 1 else ""
    if mean <= 0 or r.get("batch_note"):
        return ""
    held = int(plan["kv_cache_tokens_per_replica"] // mean)
    if held >= plan["max_batch"]:
        return ""
    return f" (about {held:,} mean requests of b{plan['max_batch']}: the cache, not max_batch, bounds the batch)"


def _priced_note(r: dict[str, Any], short: dict[str, Any] | None) -> str:
    """What the per-token figures divide by, from the basis used (priced_output_tokens_per_s): the load the run kept
    up with where that is not the throughput printed above (a short window reads a few % under it; $1.49 per M read
    as at 1,096 tok/s), short run or not; else a short run's throughput. Never the load beside a load over capacity,
    which is priced on what it delivers (serving_outcome.keeps_up). One request at 0.01 req/s, priced at the load's
    2 output tok/s, had read '$955.56 per M output tokens (at the throughput of the batch filling)', its 168 tok/s."""
    priced, shown = r.get("priced_output_tokens_per_s"), r["output_tokens_per_s"]
    over = float((r.get("load") or {}).get("utilisation") or 0.0) >= 1.0
    if over or not priced or not shown or abs(priced / shown - 1.0) <= 0.01:
        if not short:
            return ""
        filling = "the batch filling" if "arrival_span_s" in short else "a short run"
        return f" (at the throughput of {filling}: see 'run too short')"
    return f" (per the load's {fmt.significant(priced)} output tok/s, which the run keeps up with)"  # not 0 at 0.001


def _load_text(load: dict[str, Any], waiting: float, waits: str = "the wait to start") -> str:
    """The load against capacity; near capacity, the share of the mean TTFT spent waiting (`waiting`: to start, and
    in a split for the decode pool too, as `waits` names them: format.waits_named)."""
    util = load["utilisation"]
    text = fmt.load_share(load)
    if util >= 1.0:
        return text + (
            ": over capacity, the queue and TTFT grow for as long as the run lasts; throughput is what the deployment "
            "delivers saturated, over the whole run"
        )
    if util >= NEAR_CAPACITY and math.isfinite(waiting):
        return text + f": near capacity, {fmt.percent(waiting)} of the mean TTFT is {waits}"
    return text


def _stated_chips_text(stated: Mapping[str, Any]) -> str:
    """Where a searched plan leaves some of the scenario's chips idle: how many it uses, and why."""
    return (
        f"[yellow]the searched plan uses {count_text(stated['used'])} of the {count_text(stated['stated'])} stated: "
        f"{escape(str(stated['reason']))}[/]"
    )


def caveats(r: dict[str, Any]) -> list[tuple[str, str]]:
    """The warnings predict's table gives a serving run, as (label, plain text) for the web page, which had drawn
    none of them: a run too short (its throughput and cost of the batch filling), a searched plan on fewer chips
    than stated, lock-step cohorts, a replayed trace's bursts, a missing price."""
    rows = [
        ("run too short", _short_run_text(r, r["short_run"]) if r.get("short_run") else ""),
        ("bursts", escape(str((r.get("load") or {}).get("burst_note") or ""))),
        ("chips", _stated_chips_text(r["stated_chips"]) if "stated_chips" in r else ""),
        ("lock-step users", escape(str(r.get("lockstep_note") or ""))),  # plain text, read as markup below
        ("placement", escape(str(r.get("placement_note") or ""))),
        ("site", escape(str(r.get("site_note") or ""))),  # the table's site row (the page had drawn none)
        ("no price", escape(str(r.get("price_note") or ""))),
    ]
    return [(label, Text.from_markup(text).plain) for label, text in rows if text]


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
        head.add_row("offered load", _load_text(r["load"], fmt.waiting_share(r), fmt.waits_named(r)))
    if r["load"].get("burst_note"):  # a replayed trace's busiest window, well above the mean the load quotes
        head.add_row("[yellow]bursts[/yellow]", f"[yellow]{escape(r['load']['burst_note'])}[/yellow]")
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
    if r.get("site_note"):  # a split in one hybrid rack or on one network: one site (it had been in --json alone)
        head.add_row("site", escape(str(r["site_note"])))
    console.print(head)
    console.print(_breakdown_table(r, bool(spec)))
    print_track_record(r.get("track_record") or {}, str(r["hardware"]) if r.get("projected") else None)
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
        f"{fmt.model_label(r)} on {fmt.serving_fleet(r)} ({engine}), {r['precision']} weights, "
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
        if r.get("prefill_sizing"):  # how the load's rate sized the prefill pool
            head.add_row("prefill replicas", escape(str(r["prefill_sizing"])))
        if "kv_transfer" in r:
            k = r["kv_transfer"]
            engines = f"{plan['prefill']['engine']}>{plan['decode']['engine']}"
            priced = (q["provider"] for q in r.get("price_sources") or () if q.get("provider"))
            head.add_row("KV transfer per mean prompt", f"{_ms(k['seconds_for_mean_prompt'])} over {k['fabric']}"
                         + handover_caveat(engines) + one_operator_note(priced, "pools"))  # fmt: skip
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
    if r.get("precision_source"):  # precisions the scenario left to the checkpoint and the engine
        head.add_row("precision from", escape(r["precision_source"]))
    pools = [plan["prefill"], plan["decode"]] if plan.get("disaggregated") else [plan]
    if any(p.get("front_end") == "dynamo" for p in pools):
        head.add_row("front end", "Dynamo's: the engine's own HTTP server is not in the path (plan.front_end)")
    if sum(p["replicas"] for p in pools) > 1:
        head.add_row("router", f"{router_name(r)} (plan.router)")
    provenance = [f"{c}: defaults (no serving run of its family fitted)" for c in r.get("engine_defaults") or ()]
    provenance += [f"{c}: carried from {src}" for c, src in (r.get("engine_carried") or {}).items()]
    if provenance:
        head.add_row("engine figures", "[yellow]" + "; ".join(provenance) + "[/]")


def _short_run_text(r: dict[str, Any], short: dict[str, Any]) -> str:
    """Why a run is too short to read a steady state from (a single batch, the users' start and drain, arrivals
    that span less than two request latencies, or a throughput window of a few requests), and the requests that
    would be enough."""
    finished = r["requests"]["finished"]
    if "batch_slots" in short:
        why = (
            f"{finished:,} requests for {short['batch_slots']:,} batch slots: one batch, in which no request waits "
            "for a slot or joins a running batch; "
        )
    elif "users" in short and finished < short["users"]:
        # 100,000 users and 2,000 requests had read as a short run alone, its latencies those of 2,000 users in the
        # system (Little's law: 191 req/s x 10.3 s), some 50x under what 100,000 would wait
        why = (
            f"only {finished:,} of the {short['users']:,} users sent a request: the latencies are of about "
            f"{finished:,} users in the system, far under what {short['users']:,} would wait; "
        )
    elif "users" in short:
        why = (
            f"{finished:,} requests for {short['users']:,} users: the users' start, all together, and the final "
            "drain are a large part of the run; "
        )
    elif "window_requests" in short:
        why = (
            f"the throughput window holds the output of {short['window_requests']:.3g} of the {STEADY_REQUESTS} "
            "requests a steady reading needs: its two ends each cut a request's tokens, so throughput and the cost "
            "per token can read a request's output off; "
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
    if r.get("lockstep_note"):  # fixed lengths and queued users: cohorts in lock-step (planner.serving_predict)
        head.add_row("[yellow]lock-step users[/yellow]", f"[yellow]{escape(str(r['lockstep_note']))}[/]")
    if r.get("placement_note"):  # a replica packed across two scale-up domains (planner.serving_predict)
        head.add_row("[yellow]placement[/yellow]", f"[yellow]{escape(str(r['placement_note']))}[/]")
    head.add_row("TTFT p50 / p90 / p99", latency_stats(r["ttft_s"]))
    front = r.get("ttft_front_end_s") or 0.0
    head.add_row(
        "TTFT's wait to start p50 / p90 / p99",
        f"{latency_stats(r['ttft_wait_s'])} (to the prompt's first iteration"
        + (", past the front end)" if front > 0 else ")"),
    )
    if "ttft_decode_wait_s" in r:  # a split: the wait for a decode slot, which the wait to start leaves out
        head.add_row(
            "TTFT's wait for the decode pool p50 / p90 / p99",
            f"{latency_stats(r['ttft_decode_wait_s'])} (from the prompt's prefill to the decode replica taking it, "
            f"less the KV transfer's {_ms(r['ttft_transfer_s']['p50'])} p50)",
        )
    if front > 0:  # it had been counted in the wait: vLLM's 30 ms read as a wait of 30.0 ms at 0.01 req/s
        head.add_row(
            "TTFT's front end",
            f"{_ms(front)} a request (the engine's HTTP server and tokenising, before its scheduler sees the request)",
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
        f", kernels launched from the host {_ms(launches)} (prompts run without CUDA graphs)" if launches > 0 else ""
    )
    head.add_row("one prompt's prefill, alone", f"{_ms(alone['seconds'])} ({detail})")
    if r["load"].get("prompt_pool"):
        head.add_row(
            "repeated prompts",
            f"{r['load']['prompt_pool']:,} distinct prompts, cycled: a repeat is served from the prefix cache (one "
            "token encoded) where its replica still holds it",
        )
    head.add_row("TPOT p50 / p90 / p99", latency_stats(r["tpot_s"]))
    head.add_row("end-to-end p50 / p90 / p99", latency_stats(r["e2e_s"]))
    if r["slo"]:
        met = "met" if r["slo_met"] else "NOT met"
        if r.get("slo_caveat"):
            met = f"[yellow]{met} in this run only: {r['slo_caveat']}[/yellow]"
        head.add_row("SLO", f"{', '.join(f'{k} <= {_ms(v)}' for k, v in r['slo'].items())}: {met}")
        head.add_row("goodput", _goodput_text(r["goodput"]["fraction"], r["slo"]))


def _goodput_text(fraction: float, slo: Mapping[str, float]) -> str:
    """The share of requests that met every target, each its own latency against the target's limit: beside p50
    targets met, '61.7% of requests within the SLO' read as if 38% had missed the SLO the row above says was met."""
    names = {"ttft": "TTFT", "tpot": "TPOT", "e2e": "end-to-end"}
    limits = " and ".join(f"{_ms(v)} {names.get(k.split('_')[0], k)}" for k, v in slo.items())
    return f"{100 * fraction:.1f}% of requests each within {limits}"


def _cost_row(r: dict[str, Any], short: dict[str, Any] | None) -> tuple[str, str]:
    """The cost row: its label (pricing, regions) and the cost per hour and per M output tokens, with what it is
    for and where its prices come from."""
    quotes = r.get("price_sources") or []
    # in the pools' order, prefill then decode, as the energy row's 'a>b' (they had been sorted by name)
    regions = list(dict.fromkeys(str(q["region"]) for q in quotes if q.get("region")))
    where = f", {', '.join(regions)}" if regions else ""
    elsewhere = _priced_elsewhere(r, quotes)
    estimated = sorted({str(q.get("entry") or q.get("system")) for q in quotes if catalog_estimate(q)})
    owned = sorted({str(q.get("system")) for q in quotes if (q.get("tco") or {}).get("status") == "estimate"})
    return (
        f"cost ({r['pricing']}{where})",
        f"{_usd(r['cost_usd_per_hour'])}/h, {_usd(r['cost_usd_per_mtok'])} per M output tokens"
        + (f" [yellow]({escape(elsewhere)})[/]" if elsewhere else "")
        + (
            f" for the {chip_count(r['billed_chips'])} rented (units: catalog show {' / '.join(_systems(r))})"
            if rented_mark(r)
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


def _priced_elsewhere(r: Mapping[str, Any], quotes: list[dict[str, Any]]) -> str:
    """Each price taken outside the region asked for, which lists none of it (a quote's region_note), in plain words:
    'no gcp on-demand price listed in europe-west4; priced at gcp us-central1's' ('' where none is), a split's
    naming its system. The region asked for is the one the energy is reckoned in (the prediction's region). The row
    had read '(none listed where asked)'."""
    named = len(quotes) > 1

    def said(q: Mapping[str, Any]) -> str:
        seller, of = q.get("provider"), f" of {q.get('system')}" if named else ""
        return (
            f"no {seller} {r['pricing']} price{of} listed in {r['region']}; priced at {seller} "
            f"{q.get('region') or 'another region'}'s"
        )

    return "; ".join(said(q) for q in quotes if q.get("region_note"))


def _breakdown_table(r: dict[str, Any], spec: bool) -> Table:
    """Where the time goes: a steady iteration's components (a speculative verification step where `spec`) beside
    one prompt's prefill alone, each with its share."""
    plan = r["plan"]
    steady, prefill = r["breakdown"], r["prefill_breakdown"]
    first = max(prefill, key=lambda k: prefill[k])
    yields = " (a speculative verification step: several tokens a sequence)" if spec else ""
    if "decode" not in plan:  # one pool: its steps carry the prompts too, so a step is not one token's wait (TPOT)
        yields += " (a decode step with its share of the prompts run beside or between the steps)"
    # its total and batch beside the simulated iterations' mean and TPOT, as validate --explain gives them: parts
    # summing to 36.3 ms had stood beside a mean TPOT of 33.1 ms and iterations of 29.3 ms, unreconciled
    bd = Table(
        title=f"Where the time goes: a steady iteration{yields}, mostly {COMPONENT_LABELS[r['dominated_by']]}; "
        f"one prompt's prefill alone, mostly {COMPONENT_LABELS[first]}",
        header_style="bold",
        caption=iterations_text(r),
        caption_justify="left",
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
    bd.add_row("total", _ms(sum(steady.values())), "100%", _ms(sum(prefill.values())), "100%", style="bold")
    return bd


def iterations_text(e: Mapping[str, Any]) -> str:
    """The steady iteration's batch, and the simulated iterations' mean beside it and beside TPOT (planner.
    serving_breakdown.where_time_goes's steady_batch, iteration_mean_s and tpot_mean_s): a prediction's and a
    validation row's explanation alike."""
    text = f"the steady iteration is priced at the run's mean batch, {e['steady_batch']:,.1f} sequences a replica"
    if math.isfinite(e["iteration_mean_s"]):
        text += (
            f"; its simulated iterations averaged {fmt.latency(e['iteration_mean_s'])} over the whole run (ramp and"
            " drain included: busy time / iterations)"
        )
    if math.isfinite(e["tpot_mean_s"]):
        text += (
            f"; the mean TPOT ({fmt.latency(e['tpot_mean_s'])}) weighs each iteration by the sequences it"
            " carried, so the fuller ones count more"
        )
    return text


def _figures_table(r: dict[str, Any]) -> Table:
    """The figures used (--sources): each with its value, status and source or derivation."""
    ft = Table(title="Figures used", header_style="bold")
    for c in ("figure", "value", "status", "source / derivation"):
        ft.add_column(c, overflow="fold")
    # the engine's and chip's figures, then the site's and the power model's (PUE, grid, load fractions)
    for name, f in {**r["figures"], **(r.get("economics_figures") or {})}.items():
        text = f.get("derivation") or "; ".join(f["source"])
        for note in ("located", "read_as"):
            if f.get(note):
                text += f" ({f[note]})"
        ft.add_row(name, fmt.figure_value(f), f["status"], escape(text))
    return ft
