"""`chipwise predict` for a serve scenario: build the deployment (serving_deployment: its open settings searched),
simulate it, and report it with what dominated an iteration (serving_breakdown), the figures used (serving_figures),
the dollars, energy and carbon (serving_economics), and what its run leaves in doubt (a short run, dropped
requests, lock-step cohorts); the deployment's plan as the JSON shows it."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.economics.pricing import check_mode, check_rental_options
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.planner.fleet_workload import busiest_window
from chipwise.planner.serving_breakdown import where_time_goes
from chipwise.planner.serving_deployment import SPLIT_MARK, build_deployment
from chipwise.planner.serving_economics import busy_shares, economics
from chipwise.planner.serving_figures import engine_carried, engine_fitted_on, pool_figures, serving_track_record
from chipwise.planner.serving_inputs import check_tpot_target
from chipwise.planner.serving_outcome import priced_request_rate, served_tokens, stat_ok
from chipwise.planner.serving_report import (
    CLOSED_WAVES,
    STEADY_FILLS,
    STEADY_REQUESTS,
    STEADY_WAVES,
    fleet_problem,
    plan_dict,
    transfer_dict,
    whole_count,
)
from chipwise.planner.training import check_utilisation
from chipwise.serve.build import ReplicaSetup
from chipwise.serve.quant import QUANTISED, RELEASED, default_kv_precision, dequantised_note, float8_fallback
from chipwise.serve.sim.arrivals import offered_request_rate
from chipwise.serve.sim.run import SimOutput
from chipwise.serve.simulate import ServingSetup, load_against_capacity, run_job
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model
from chipwise.workload.serve_scenario import ServeScenario
from chipwise.workload.serving_job import ServingJob, serving_job


def pool_names(setup: ServingSetup, name: Callable[[ReplicaSetup], str]) -> str:
    """One name of each pool of a deployment, joined as plan serve joins a split's ('h100-sxm>b200': prefill, then
    decode); a deployment of one pool, its own name."""
    return SPLIT_MARK.join(name(p.setup) for p in setup.pools)


#: the simulated run's figures a prediction reports as the run's summary has them
SIMULATED_FIGURES = (
    "throughput_tokens_per_s",
    "output_tokens_per_s",
    "input_tokens_per_s",
    "output_tokens_per_s_per_chip",
    "throughput_tokens_per_s_per_chip",
    "requests_per_s",
    "ttft_s",
    "ttft_wait_s",
    "ttft_front_end_s",
    "tpot_s",
    "e2e_s",
    "goodput",
    "kv_cache_utilisation",
    "requests",
    "latency_requests",
    "little_law",
)
#: a split's figures besides (serve.sim.metrics.summarise has them for two pools only)
SPLIT_FIGURES = ("ttft_decode_wait_s", "ttft_transfer_s")


def predict_serving(catalog: Catalog, sc: ServeScenario) -> dict[str, Any]:
    """DESIGN.md's `chipwise predict` for a serve scenario: a missing plan is searched, then simulated."""
    check_mode(sc.pricing)
    check_utilisation(sc.utilisation, sc.pricing, "utilisation", "pricing: owned")  # as a train scenario's
    check_rental_options(sc.pricing, {"provider": sc.provider})
    model = load_model(catalog, sc.model)
    job = serving_job(model, sc)
    targets = sc.slo.targets() if sc.slo else {}
    check_tpot_target(targets, int(job.trace.output.max()) if job.trace is not None else job.output.maximum)
    setup, source, idle, sized = build_deployment(catalog, model, sc, job, targets)
    if (too_many := fleet_problem(setup.chips, f"serving {job.load.label()} on {sc.hardware}")) is not None:
        raise ChipwiseError(f"{too_many}.")
    against = load_against_capacity(job, setup, seed=sc.seed) or {}
    # over capacity an open loop has no steady state to wait for: the queue grows while arrivals come, so its
    # throughput is the deployment's saturated rate over the whole run (a steady window read the batch filling,
    # 7,228 output tok/s on one H100 that sustains 5,568, and advised runs that could never settle)
    over = against.get("utilisation", 0.0) >= 1.0
    summary, sim = run_job(
        job, setup, seed=sc.seed, targets=targets, steady_latencies=True, basis="run" if over else "steady"
    )
    summary["capacity_utilisation"] = against.get("utilisation", 0.0)  # over capacity: priced on what it delivers
    first = setup.pools[0].setup
    econ = economics(
        catalog,
        setup.pools,
        *served_tokens(job, summary),
        sc.pricing,
        sc.region,
        sc.provider,
        busy=busy_shares(sim, priced_request_rate(job, summary)),
        transfer=setup.transfer,
        utilisation=sc.utilisation,
    )
    slo_met = all(stat_ok(summary, k, v) for k, v in targets.items()) if targets else None
    result: dict[str, Any] = {
        "kind": "serve",
        "model": model.name,
        "model_alias": model.alias or None,  # as given, where not the id ("model" had read "alias = id")
        # a split named as plan serve names one: its prefill then its decode pool's ('h100-sxm>b200')
        "hardware": pool_names(setup, lambda s: s.system.chip.id),
        "system": pool_names(setup, lambda s: s.system.id),
        "engine": pool_names(setup, lambda s: s.engine.engine),
        "chips": whole_count(setup.chips),
        "precision": first.plan.weight_precision,
        "kv_precision": first.plan.kv_precision,
        "projected": any(p.setup.system.projected for p in setup.pools),
        "projected_chips": sorted({p.setup.system.chip.id for p in setup.pools if p.setup.system.projected}),
        "load": _load_entry(job, against),
        "plan": _deployment_plan(setup),
        "plan_source": source,
        "router": setup.router,
        "slo": targets,
        "slo_met": slo_met,
        **{k: summary[k] for k in SIMULATED_FIGURES},
        **{k: summary[k] for k in SPLIT_FIGURES if k in summary},
        **where_time_goes(setup, model, job, summary),
        **econ,
        "billed_chips": whole_count(econ["billed_chips"]),
        **_provenance(catalog, setup, model),
        "simulation": {
            "wall_s": summary["simulation_wall_s"],
            "makespan_s": summary["makespan_s"],
            "window_s": summary["window_s"],
        },
    }
    result.update(_short_run(job, setup, summary, over))
    fallbacks = (float8_fallback(p.setup.engine.engine, p.setup.system.chip, p.setup.plan.weight_precision,
                                 p.setup.plan.kv_precision) for p in setup.pools)  # fmt: skip
    loaded = (dequantised_note(model.released_precision, p.setup.plan.weight_precision, p.setup.engine.engine,
                               p.setup.system.chip) for p in setup.pools)  # fmt: skip
    if notes := list(dict.fromkeys(n for n in (*fallbacks, *loaded) if n)):  # one note per pool that falls back
        result["precision_note"] = "; ".join(notes)
    if (chosen := precision_source(sc, model, setup)) is not None:
        result["precision_source"] = chosen
    if (lost := dropped(summary, sim, setup)) is not None:
        result["dropped"] = lost
    if idle and sc.chips:
        result["stated_chips"] = {"stated": sc.chips, "used": result["chips"], "reason": idle}
    if sized:  # a split's prefill replicas the load's rate sized, or a batch limit the KV cache set: which requests
        # it holds, and the users it seats
        result["prefill_sizing" if setup.disaggregated else "batch_note"] = sized
    if (cohorts := lockstep_note(job, setup)) is not None:
        result["lockstep_note"] = cohorts
    if (across := placement_note(setup)) is not None:
        result["placement_note"] = across
    caveat = _slo_caveat(result)
    if caveat:
        result["slo_caveat"] = caveat
    if setup.transfer is not None:
        result["kv_transfer"] = transfer_dict(setup.transfer, job)
    return result


def precision_source(sc: ServeScenario, model: ModelSpec, setup: ServingSetup) -> str | None:
    """Where the weights' and the KV cache's precisions came from, for those the scenario leaves to chipwise
    (precision auto, no kv_precision); None where it gives both. deepseek-v3 on 8 B200 had read 'fp8 weights, fp8 KV
    cache' with no word that fp8 is the checkpoint's own and the fp8 cache TensorRT-LLM's default under fp8 weights
    (vLLM's, for the same weights, is bf16)."""
    parts = []
    if sc.precision.strip().lower() == RELEASED:
        parts.append(f"weights: {model.name}'s checkpoint as released ({model.released_precision}; precision auto)")
    if sc.kv_precision is None:
        parts.append(_split_kv(setup) or "; ".join(dict.fromkeys(_kv_default(p.setup) for p in setup.pools)))
    return "; ".join(parts) or None


def _own_kv(setup: ReplicaSetup) -> str:
    """The KV cache a pool's engine holds by default for its weights on its chip (quant.default_kv_precision)."""
    eng, chip = setup.engine, setup.system.chip
    return default_kv_precision(setup.plan.weight_precision, eng.quantised_kv, eng.engine, chip)


def _split_kv(setup: ServingSetup) -> str | None:
    """Where a split's pools' engines default to different KV caches, the one format they share and why (None where
    they agree): the decode pool reads the cache the prefill pool writes, so a split whose defaults differ holds a
    16-bit one (planner.serving_deployment._handed_over_kv); plan serve pairs no such pools without --kv-precision.
    TensorRT-LLM's h100-sxm prefill (fp8 by default under fp8 weights) beside vLLM's mi300x decode (bf16) had read
    'trtllm holds no fp8 cache on h100-sxm', which it does."""
    own = {f"{p.setup.engine.engine} on {p.setup.system.chip.id}": _own_kv(p.setup) for p in setup.pools}
    if len(set(own.values())) < 2:
        return None
    kv = setup.pools[0].setup.plan.kv_precision
    defaults = " and ".join(f"{fmt} ({who})" for who, fmt in own.items())
    return (
        f"KV cache: {kv}, a split's one format: its pools' engines default to {defaults}, and the decode pool reads "
        "the cache the prefill pool writes, so both hold a 16-bit one (twice an fp8 cache's bytes held and handed "
        "over). Fix: set kv_precision for both"
    )


def _kv_default(setup: ReplicaSetup) -> str:
    """Why a pool's engine holds the KV cache it does when none is asked for (quant.default_kv_precision)."""
    eng, plan = setup.engine, setup.plan
    kv, weights = plan.kv_precision, plan.weight_precision
    if kv not in ("bf16", "fp16"):
        why = f"{eng.engine} quantises the cache with {weights} weights"
    elif weights in QUANTISED and eng.quantised_kv:  # a split's differing defaults are _split_kv's
        why = f"{eng.engine} holds no fp8 cache on {setup.system.chip.id}"
    elif weights in QUANTISED:
        why = f"{eng.engine} keeps a 16-bit cache under {weights} weights"
    else:
        why = f"as the weights, held in {weights}"
    return f"KV cache: {kv}, the engine's default ({why}; kv_precision sets it)"


def _load_entry(job: ServingJob, against: Mapping[str, Any]) -> dict[str, Any]:
    """The load as a prediction reports it: its kind and label, its rate or users, the mean lengths and prefix
    reuse, and what it asks of the deployment's capacity (simulate.load_against_capacity's `against`)."""
    return {
        "kind": job.load.kind,
        "label": job.load.label(),
        "arrival_rate_per_s": job.load.rate or None,
        "concurrency": job.load.concurrency or None,
        "input_tokens_mean": job.mean_input,
        "output_tokens_mean": job.mean_output,
        "prefix_hit_rate": job.prefix_hit_rate,
        "prompt_pool": job.prompt_pool or None,
        **against,
        **({"burst_note": note} if (note := trace_bursts(job)) is not None else {}),
    }


def trace_bursts(job: ServingJob) -> str | None:
    """Where a replayed trace's busiest window offers well above its mean rate (fleet_workload.busiest_window), that
    window and rate beside the offered load, which is the mean's: a trace offering 40.4 req/s over its busiest 49.5 s,
    4.0x its mean, had read 'offered load 53.6% of the 18.9 req/s the deployment sustains' beside a TTFT p99 of 99 s,
    with no word of the bursts. Read from the job's own arrivals (the file is not read again)."""
    if job.load.kind != "trace" or job.trace is None:
        return None
    if (measured := busiest_window(job.trace.arrival)) is None:
        return None
    return f"{measured}: the offered load is the trace's mean, and the latencies its replay, bursts included"


def _deployment_plan(setup: ServingSetup) -> dict[str, Any]:
    """The deployment's plan as a prediction reports it: a split's pools by role, or its one pool's (plan_dict)."""
    first = setup.pools[0].setup
    return (
        {"disaggregated": True, **{p.role: plan_dict(p.setup, p.replicas, p.role) for p in setup.pools}}
        if setup.disaggregated
        else {"disaggregated": False, **plan_dict(first, setup.pools[0].replicas, "both")}
    )


def _provenance(catalog: Catalog, setup: ServingSetup, model: ModelSpec) -> dict[str, Any]:
    """Where a deployment's figures come from: the catalog figures its pools read, the chips whose engine runs on
    its defaults alone or on figures carried from another chip family, and the model's track record on runs like
    it."""
    return {
        "figures": pool_figures(setup.pools, model, setup.transfer),
        "engine_defaults": sorted(
            {
                p.setup.system.chip.id
                for p in setup.pools
                if not engine_fitted_on(catalog, p.setup.engine.engine, p.setup.system)
            }
        ),
        "engine_carried": engine_carried(catalog, [(p.setup.engine.engine, p.setup.system) for p in setup.pools]),
        "track_record": serving_track_record(setup.pools),
    }


def _short_run(job: ServingJob, setup: ServingSetup, summary: Mapping[str, Any], over: bool) -> dict[str, Any]:
    """A run too short to describe its deployment, flagged ({} where it is not): an open loop within capacity whose
    arrivals end before its first requests do or whose throughput window holds fewer than STEADY_REQUESTS requests'
    tokens, an offline run of one batch, or a closed loop of fewer requests than CLOSED_WAVES per user or whose
    window includes the users' ramp-up; with the requests a steady state needs."""
    issued = summary["requests"]["issued"]
    offered = offered_request_rate(job)
    if not summary["steady_state"] and offered is not None and not over:
        # an open loop (a rate, or a trace's own times) whose arrivals end before the first requests do: its figures
        # are of the fill (a 30-request trace read 11% above the load it offered, a two-row one 0 req/s, unflagged);
        # more requests of a trace replay it again, a span later (serve.sim.arrivals.arrival_times)
        fill = summary["e2e_s"]["p50"]
        return {
            "short_run": {
                "arrival_span_s": summary["arrival_span_s"],
                "request_latency_s": fill,
                "requests_for_steady_state": max(issued + 1, math.ceil(STEADY_FILLS * fill * offered)),
            }
        }
    lo, hi = summary["window_s"]
    if offered is not None and not over and (held := summary["requests_per_s"] * (hi - lo)) < STEADY_REQUESTS:
        # an open loop whose window is a few requests long: its ends, each cutting a request's tokens, weigh
        short = {"window_requests": held, "requests_for_steady_state": issued + math.ceil(STEADY_REQUESTS - held)}
        return {"short_run": short, "steady_state": False}
    if job.load.kind == "offline" and issued < 2 * (slots := deployment_batch_slots(setup)):
        # an offline run of one batch: no request waits for a slot or joins a running batch
        short = {"batch_slots": slots, "requests_for_steady_state": STEADY_WAVES * slots}
        return {"short_run": short, "steady_state": False}
    if job.load.kind == "closed" and (
        issued < CLOSED_WAVES * (users := job.load.concurrency) or not summary["steady_state"]
    ):
        # fewer requests than the waves a steady state needs, as its advice says (flagged under two per user only,
        # 130 requests of 64 users, whose window then included the users' ramp-up, read 22% low unflagged), or a
        # window that includes the ramp
        wanted = CLOSED_WAVES * users
        short = {"users": users, "requests_for_steady_state": wanted if issued < wanted else 2 * issued}
        return {"short_run": short, "steady_state": False}
    return {}


def dropped(summary: Mapping[str, Any], sim: SimOutput, setup: ServingSetup) -> dict[str, Any] | None:
    """The requests a run dropped and why (None where it dropped none). The simulated engine drops a request that
    alone outgrows a replica's KV cache (serve.sim.replica), as an engine refuses one its cache cannot hold; the
    lengths the replicas are sized for (LengthDist.maximum, a trace's longest) fit it, so what remains is a request
    the steps' growth carries past it (a decode step's speculative positions). A run that finished none has no
    figures to give: one line."""
    count = int(summary["requests"]["dropped"])
    if count == 0:
        return None
    r = sim.requests
    lost = np.flatnonzero(r["dropped"] > 0)
    longest = int(lost[np.argmax(r["input"][lost] + r["output"][lost])])
    kv = min(p.setup.kv_tokens for p in setup.pools)
    inp, out = int(r["input"][longest]), int(r["output"][longest])
    reason = (
        f"{count:,} of {int(summary['requests']['issued']):,} requests outgrew a replica's KV cache of {kv:,} tokens "
        f"alone (the longest: {inp:,} input + {out:,} output tokens, with the positions each decode step adds) and "
        "were dropped unserved"
    )
    if int(summary["requests"]["finished"]) == 0:
        raise InfeasibleError(
            f"no request finished: {reason}. Fix: raise plan.memory_fraction or tp, quantise the KV cache, or "
            "shorten the requests."
        )
    return {"requests": count, "kv_cache_tokens": kv, "longest": {"input": inp, "output": out}, "reason": reason}


def lockstep_note(job: ServingJob, setup: ServingSetup) -> str | None:
    """Where a closed loop of fixed lengths has more users than batch slots, what that does to its figures (None
    where it has not): users that wait for a slot are admitted together as a cohort finishes and, of one length,
    finish together, so they run in lock-step cohorts whose prompts share iterations (and the launch floor of an
    eagerly run prompt). DeepSeek-R1 on 8 H200 under SGLang, 1,024 in and out, read TPOT 74.8 ms at 320 users
    and 50.3 ms at 384 (+39% throughput); lengths spread over [0.8 L, L] read 82 and 86.8 ms."""
    # users with no request left to send wait for nothing (1,000 users of 10 requests had been called cohorts)
    users = min(job.load.concurrency, job.requests) if job.load.kind == "closed" else 0
    fixed = job.trace is None and job.input.kind == "fixed" and job.output.kind == "fixed"
    slots = deployment_batch_slots(setup)
    if not fixed or users <= slots:
        return None
    length = job.input.maximum
    return (
        f"{users:,} users of fixed lengths outnumber the {slots:,} batch slots: those waiting for a slot are admitted "
        "together as a cohort finishes and, of one length, finish together, so they run in lock-step cohorts that "
        "share prompt iterations (TPOT and throughput can read better than a real load's); a small spread of "
        f"lengths, e.g. input_tokens: {{dist: uniform, min: {math.floor(0.8 * length)}, max: {length}}} (and "
        "output_tokens alike), gives the steadier figures a real load shows"
    )


def placement_note(setup: ServingSetup) -> str | None:
    """Where a pool's replicas, packed one after another, leave one across two scale-up domains (nine TP16 replicas
    on two NVL72 racks: ranks 64-79 are 8 + 8), what the prediction assumed (None where every replica sits in one
    domain): each replica is priced as if inside one. The simulator prices a pool's replicas alike, so the straddling
    one's slower all-reduce (about 1.9x for TP16 across NVL72 racks) is not in the figures; placing whole replicas a
    domain, with its remainder idle, avoids it."""
    notes = []
    for pool in setup.pools:
        ranks, domain = pool.setup.plan.ranks, pool.setup.topo.domain_ranks
        if ranks >= domain or domain % ranks == 0:
            continue
        starts = np.arange(pool.replicas, dtype=np.int64) * ranks
        crossing = np.flatnonzero(starts // domain != (starts + ranks - 1) // domain)
        if crossing.size:
            notes.append(
                f"{pool.replicas} replicas of {ranks} ranks on {pool.setup.system.id} domains of {domain}: packed one "
                f"after another, replica {crossing[0] + 1} spans two domains, its collectives over the network, yet "
                f"each is priced as if inside one (a domain holds {domain // ranks} whole replicas, {domain % ranks} "
                "ranks left idle)"
            )
    return "; ".join(notes) or None


def deployment_batch_slots(setup: ServingSetup) -> int:
    """Batch slots of a deployment's (last) pool: requests it decodes at once, replicas x batch limit (not
    serve.operating.batch_slots, a candidate shape's slots within its KV cache)."""
    pool = setup.pools[-1]
    return pool.replicas * pool.setup.plan.max_batch


def _slo_caveat(result: Mapping[str, Any]) -> str | None:
    """Why a simulated run's SLO verdict does not describe the deployment: a run too short to leave the batch
    filling, or an open loop over capacity, whose queue and TTFT grow for as long as it runs."""
    if not result["slo"]:
        return None
    if "short_run" in result:
        why = "a few requests" if "window_requests" in result["short_run"] else "the batch filling"
        return f"the run is too short to judge (its figures are of {why})"
    if "dropped" in result and result["slo_met"]:
        return f"{result['dropped']['requests']:,} requests were dropped unserved (see dropped)"
    util = result["load"].get("utilisation")
    if util is not None and util >= 1.0 and result["slo_met"]:
        return f"at {100 * util:.0f}% of capacity the queue grows for as long as the load lasts: a longer run misses it"
    return None
