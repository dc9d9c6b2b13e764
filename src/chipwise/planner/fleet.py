"""`chipwise plan fleet`: the cheapest mix of instance types that serves a multi-bucket workload within its SLO.

1. The workload is a set of buckets (input and output lengths, request rate), from a YAML mix or a trace file.
2. For every chip and bucket the serving model gives, per candidate replica shape, the request rate one replica
   sustains within the SLO, at most MAX_CHECK_LOAD (85%) of its saturated rate, the bound plan serve's checks hold
   (0 for a bucket the chip cannot serve within the SLO); each chip keeps its few best shapes as instance types
   (per bucket the cheapest per request/s and the one that carries the bucket's own rate cheapest in whole
   instances, then the best for the mix), less those another of its shapes dominates (as cheap, within 1% as fast
   on every bucket, faster in all: near-twin batch limits). A bucket no chip serves stops the command (exit 1).
3. A mixed-integer program (planner.fleet_mix, SciPy HiGHS) picks how many instances of each type to run at the
   lowest $/hour within the availability limits, and how to route each bucket among them.
4. The simulator replays the workload on the chosen fleet (each type with the traffic routed to it): 1,500
   requests, at least 1,000 of each bucket that carries a tenth of the type's requests (its p99 on its ten
   slowest), longer for a type loaded past 70% of its saturated rate (as plan serve's checks), at most 20,000 (a
   slice of a larger fleet); a replay that meets the SLO runs again four times longer on another seed, which
   decides. For every bucket that misses the SLO on a type, that (type, bucket) capacity is derated by the square
   of its worst latency miss (between 10% and 50% a round) and the MILP is solved again, up to sixteen rounds; a
   pair derated below 30% is dropped. Once the replay holds, capacity is given back in 15% steps while a cheaper
   fleet still holds the SLO in replay (up to three rounds). If the rounds run out first, a type whose replay still
   misses gets one more instance for the same traffic, up to three times, within the limits.
   Derating only adds capacity, and the programme often has several fleets at the same cost (near-twin shapes of
   one chip), so where the fleet settled on costs more than the steady-state optimum (or still misses), the
   steady-state programme's next-cheapest fleets are replayed too, in cost order (each one that misses barred by a
   no-good cut, the fewest instance types first among equal costs, at most five): the first that meets the SLO and
   costs less replaces it. The search runs over all the types, and over each chip's alone.
5. Of the fleets the searches settled on that met the SLO, the answer is the cheapest whose every type meets it
   again in a confirming replay of 20,000 requests on a third seed, reported with those replays; where none does,
   the cheapest, its types that miss topped up as in step 4, with a note naming those that still miss (a fleet no
   search met is reported as replayed, saying so). The report gives, per type, the share of its steady-state
   capacity the simulator allowed (weighted by the traffic routed to it) and, per bucket, the replayed latencies.

Step 1 is planner.fleet_workload, step 3 planner.fleet_mix, steps 4 and 5 planner.fleet_replay; this module offers
the instance types (step 2) and runs the whole.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.economics.energy import check_region
from chipwise.economics.pricing import check_mode
from chipwise.economics.rental import rent, unit_for
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.planner.fleet_mix import FleetProblem
from chipwise.planner.fleet_replay import (
    REPLAY_REQUESTS,
    InstanceType,
    SettledFleet,
    confirmed_fleet,
    remember_replays,
    replay_runs,
    replays_run,
    settle_fleet,
    still_missing_note,
    to_confirm,
)
from chipwise.planner.fleet_workload import Bucket, burst_note, read_workload
from chipwise.planner.serving_choice import choose_any, kv_limited_batch, saturated_rate
from chipwise.planner.serving_economics import chip_hour_price, price_note, priced_system
from chipwise.planner.serving_figures import engine_carried, engine_fitted_on
from chipwise.planner.serving_inputs import check_slo, precisions
from chipwise.planner.serving_outcome import MAX_CHECK_LOAD
from chipwise.planner.training import check_workers
from chipwise.pools import fork_safe, forked_ahead, waited
from chipwise.serve.engine import default_engine, engine_profile, token_budget
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.quant import PrecisionUnsupportedError, check_weight_precision
from chipwise.workload.lengths import LengthDist
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import load_model
from chipwise.workload.serving_job import ServingJob

SHAPES_PER_CHIP = 3
#: instance types of one system whose capacities differ by less than this are one type (_undominated): a chosen
#: margin, a tenth of the 6-15% by which the simulator's capacity reads under the estimate's (plan serve's probe)
TWIN_TOLERANCE = 0.01


def _types_for(
    catalog: Catalog,
    model: ModelSpec,
    system: System,
    buckets: Sequence[Bucket],
    targets: Mapping[str, float],
    precision: str,
    misses: dict[str, str] | None = None,
    pricing: str = "on-demand",
    region: str | None = None,
) -> list[InstanceType]:
    """The system's instance types, each with its capacity per bucket: 0 for a bucket no shape of it carries within
    the SLO (the programme routes it none there; the whole chip had been dropped for one such bucket, the rtx
    beside a TPU for its 16K-token prompts, which made the fleet 14% dearer). `misses`, where given, gets why
    for each such bucket by its name (choose_any's line without its fix), or for every bucket where the system
    has no price in `pricing` (price_note). Each type is priced in `pricing` and `region` as plan serve's ranking
    prices a fleet (_chip_prices), in the units its provider rents in that mode (priced_system: EC2 Capacity Blocks
    rent whole instances; an owned fleet buys chips). No types where the system serves no bucket."""
    system = priced_system(system, pricing)
    engine = default_engine(system.chip.vendor)
    eng = engine_profile(catalog, engine, system.chip.family)
    weight, kv = precisions(precision, None, eng, model, system)
    prices = _chip_prices(catalog, system, pricing, region)
    misses = {} if misses is None else misses
    if math.isnan(prices[False][0]):
        misses.update({b.name: price_note(catalog, system, pricing) for b in buckets})
        return []
    rates: list[np.ndarray | None] = []
    saturations: list[np.ndarray | None] = []
    est = None
    for b in buckets:
        job = ServingJob(
            model,
            LengthDist.fixed(b.input_tokens),
            LengthDist.fixed(b.output_tokens),
            Load("rate", rate=max(b.rate, 1e-6)),
            requests=REPLAY_REQUESTS,
        )
        try:
            _, est, r = choose_any(model, system, eng, job, weight, kv, targets)
        except (InfeasibleError, ChipwiseError) as exc:
            misses[b.name] = str(exc).split(" Fix:")[0].rstrip(".")
            rates.append(None)
            saturations.append(None)
            continue
        rates.append(np.asarray(r, dtype=np.float64))
        saturations.append(saturated_rate(est, b.output_tokens))
    if est is None:
        return []
    none = np.zeros(len(est.cand))  # every bucket is estimated over the same candidate shapes
    # an instance is a unit its provider rents, running as many replicas as fit (whole chips without units): the
    # one with the fewest chips a replica (an inf2.48xlarge for three 4-chip replicas), which ranks the shapes, and
    # the smallest that holds one (an inf2.24xlarge), both offered where they differ
    chips, per = unit_for(system.rental_chips, est.chips)
    small, small_per = rent(system.rental_chips, est.chips, 1.0)
    # candidates x buckets, one replica's
    saturation = np.stack([none if x is None else x for x in saturations], axis=1)
    # a replica is loaded to at most MAX_CHECK_LOAD of its saturated rate, the bound plan serve's checks hold: past
    # it a queue settles slower than a replay runs (ten H100 pairs packed to 98% of the rate the estimate allows met
    # the SLO in 1,500 replayed requests and missed it in 20,000)
    served = np.stack([none if x is None else x for x in rates], axis=1)
    rate = np.minimum(served, MAX_CHECK_LOAD * saturation)  # candidates x buckets, one replica's
    cap = rate * per[:, None]
    # a replica of more chips than its system holds crosses the scale-out network: an owned chip pays its share of
    # it, as plan serve's ranking charges it (RankingPrice.per_chip_hour); a rental's price includes it
    crosses = est.chips > system.chips
    chip_hour = np.where(crosses, prices[True][0], prices[False][0])
    price = chips * chip_hour
    demand = np.array([b.rate for b in buckets])
    weight_j = demand / max(demand.sum(), 1e-12)
    # each bucket's cheapest shape per request/s, and the shape that carries the bucket's own rate cheapest in
    # whole instances (of either size offered), then the best by the mix: a mix weighted by request rate chose
    # three batch limits of the shape that suits its chat bucket, and carried 8K-token summaries at 1/60 of a
    # replica each (3.4x the cost of a fleet with a shape of their own); the best per request/s alone offered a
    # 0.5 req/s bucket only a 32-chip TPU v6e instance at $86.40/hour, where two of TP2 x2 carry it for $21.60
    # (and a looser TTFT target, which let that shape in, had made the fleet dearer)
    small_cap, small_price = rate * small_per[:, None], small * chip_hour
    whole = np.minimum(_whole_cost(demand, cap, price), _whole_cost(demand, small_cap, small_price))
    usable = [j for j in range(len(buckets)) if (cap[:, j] > 0).any()]
    per_bucket = [int(np.argmax(cap[:, j] / price)) for j in usable]
    # of shapes that cost alike in whole instances, the one that carries the most per dollar
    own_rate = [int(np.lexsort((-cap[:, j] / price, whole[:, j]))[0]) for j in usable if demand[j] > 0]
    first = list(dict.fromkeys(per_bucket + own_rate))
    score = (cap * weight_j).sum(axis=1) / price
    mixed = [int(i) for i in np.argsort(-score) if score[i] > 0]
    order = list(dict.fromkeys(first + mixed))[: max(SHAPES_PER_CHIP, len(first) + 1)]
    out: list[InstanceType] = []
    c = est.cand
    context = float(np.dot(weight_j, [b.input_tokens + b.output_tokens for b in buckets]))
    for i in order:
        plan = ReplicaPlan(
            tp=int(c.tp[i]),
            pp=int(c.pp[i]),
            ep=int(c.ep[i]),
            attention_dp=bool(c.adp[i]),
            adp_balance=bool(c.balance[i]),
            max_batch=kv_limited_batch(est, i, context),
            max_tokens=token_budget(eng, max(b.input_tokens for b in buckets), memory_bytes=system.chip.hbm_capacity),
            chunked_prefill=eng.chunked_prefill,
            weight_precision=weight,
            kv_precision=kv,
        )
        for unit, runs in dict.fromkeys(((int(small[i]), int(small_per[i])), (int(chips[i]), int(per[i])))):
            name = f"{system.chip.id} {plan.label()}" + (f" x{runs}" if runs > 1 else "")
            if any(t.name == name for t in out):
                continue  # candidates whose batch limits the KV cache caps to the same batch are one instance type
            unit_price = unit * float(chip_hour[i])
            source = prices[bool(crosses[i])][1]
            out.append(
                InstanceType(
                    name, system, engine, plan, unit, unit_price, rate[i] * runs, saturation[i] * runs, runs, source
                )
            )
    return out


def _chip_prices(
    catalog: Catalog, system: System, pricing: str, region: str | None
) -> dict[bool, tuple[float, dict[str, Any] | None]]:
    """USD per chip-hour of `system` in `pricing` and `region` and its provenance (serving_economics.chip_hour_price:
    NaN and None where it has none), keyed by whether the instance's replicas cross systems: an owned chip busy all
    hour, with the scale-out network's capex, colocation and power where they do (True), as plan serve's ranking
    (RankingPrice); a rental's price includes its provider's network, the same both ways."""
    alone = chip_hour_price(catalog, system, pricing, region, None)[:2]
    if pricing != "owned" or math.isnan(alone[0]):
        return {False: alone, True: alone}
    return {False: alone, True: chip_hour_price(catalog, system, pricing, region, None, scaleout=True)[:2]}


def _whole_cost(demand: np.ndarray, capacity: np.ndarray, price: np.ndarray) -> np.ndarray:
    """$/hour of the whole instances of each shape (rows) that carry each bucket's rate (columns) alone, at
    `capacity` per instance and `price` each: inf where a shape carries none of the bucket."""
    count = np.ceil(demand / np.where(capacity > 0, capacity, 1.0))
    return np.where(capacity > 0, count * price[:, None], np.inf)


def _undominated(types: list[InstanceType]) -> list[InstanceType]:
    """The instance types no other of the same system dominates: as dear or cheaper, and carrying every bucket
    within TWIN_TOLERANCE as fast and more in all (the first offered where two are alike). Batch limits the SLO
    does not bind read alike (H100 TP2 at 128, 251 and 252 slots, H200 TP1 at 207 and 208): the programme had
    as many optima as ways to mix them, and the next-cheapest fleets replayed after a miss were all the same fleet
    under other names."""

    def dominates(k: int, i: int) -> bool:
        a, b = types[i], types[k]
        return (
            b.system.id == a.system.id
            and b.price_usd_per_hour <= a.price_usd_per_hour
            and bool(np.all(b.capacity >= a.capacity * (1.0 - TWIN_TOLERANCE)))
            and (b.capacity.sum(), -k) > (a.capacity.sum(), -i)  # a strict order: of two alike, one is kept
        )

    return [t for i, t in enumerate(types) if not any(dominates(k, i) for k in range(len(types)))]


def _named_by_system(types: list[InstanceType]) -> list[InstanceType]:
    """The instance types, each named by its chip, and by its system too where several systems of that chip are
    offered ('h100-sxm (p5.48xlarge) TP1 b229'): a p5 and an Azure H100 type had read alike, told apart by price."""
    systems: dict[str, set[str]] = {}
    for t in types:
        systems.setdefault(t.system.chip.id, set()).add(t.system.id)
    return [
        replace(t, name=t.name.replace(t.system.chip.id, f"{t.system.chip.id} ({t.system.id})", 1))
        if len(systems[t.system.chip.id]) > 1
        else t
        for t in types
    ]


def _routed_mean(values: np.ndarray, routed: np.ndarray) -> float:
    """The mean of a type's per-bucket values weighted by the requests routed to each bucket."""
    total = float(routed.sum())
    return float(np.dot(values, routed) / total) if total > 0 else float(values.mean())


class NoFleetError(InfeasibleError):
    """No fleet of the hardware asked for carries the workload within the SLO: plan serve's 'nothing ranks', exit
    code 1 (NO_OPTION_EXIT), where 2 is bad input (a script could not tell it from a typo)."""

    exit_code = 1


def _check_carried(
    buckets: Sequence[Bucket], types: Sequence[InstanceType], unserved: Mapping[str, list[str]], refused: Sequence[str]
) -> None:
    """Raise NoFleetError naming each bucket with load that no instance type carries within the SLO, with why on
    each system (what its fastest shapes reach) and the systems refused for the precision."""
    lost = [b.name for j, b in enumerate(buckets) if b.rate > 0 and not any(t.capacity[j] > 0 for t in types)]
    if not lost:
        return
    whys = [f"'{name}' ({'; '.join([*unserved.get(name, []), *refused])})" for name in lost]
    raise NoFleetError(
        f"no fleet meets the SLO: no instance type carries bucket{'s' * (len(lost) > 1)} {', '.join(whys)}. Fix: "
        f"relax the SLO for {'them' if len(lost) > 1 else 'it'}, add hardware, or drop the "
        f"bucket{'s' * (len(lost) > 1)}."
    )


def _systems_asked(catalog: Catalog, hardware_ids: Sequence[str]) -> list[System]:
    """The systems asked for, each once; one line for a hybrid of two chip types, as an instance type runs one."""
    hw = hardware(catalog)
    split = "price prefill/decode splits across both with 'chipwise plan serve --hardware {id}'"
    return list(
        {
            s.id: s for s in (hw.system(h).one_chip_type("; an instance type runs one", split) for h in hardware_ids)
        }.values()
    )


def _checked_limits(limits: Mapping[str, int] | None, systems: Sequence[System]) -> dict[str, int]:
    """The chip limits, each a chip count >= 0 naming a chip or a system among `systems`, or one line."""
    limits = dict(limits or {})
    for name, count in limits.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ChipwiseError(f"limit {name}={count!r} is not a chip count >= 0. Fix: give e.g. {{'{name}': 64}}.")
    known = {s.chip.id for s in systems} | {s.id for s in systems}
    for name in limits:
        if name not in known:
            raise ChipwiseError(
                f"--limits names '{name}', which is not among the hardware considered ({', '.join(sorted(known))}). "
                "Fix: limit a chip or a system that is in --hardware."
            )
    return limits


def _offered_types(
    catalog: Catalog,
    model: ModelSpec,
    systems: Sequence[System],
    buckets: Sequence[Bucket],
    slo: Mapping[str, float],
    precision: str,
    pricing: str = "on-demand",
    region: str | None = None,
) -> tuple[list[InstanceType], list[dict[str, str]]]:
    """The instance types the systems offer (_types_for, priced in `pricing` and `region`), less those another
    dominates and named by system, and the systems left out with why: those whose engine cannot run the precision,
    then those that serve no bucket or have no price in the mode. NoFleetError where none can run the precision or
    no type carries a bucket with load."""
    types: list[InstanceType] = []
    # systems whose engine cannot run the precision (fp8 on an A100 under TensorRT-LLM) are left out and named, as
    # plan serve's 'not ranked'; any other error (an unknown precision, mxfp4 on a dense model) is the input's and
    # stops the command with its own fix. A system that serves some buckets within the SLO is offered for those; one
    # that serves none is left out and named, with why for each bucket
    skipped: list[dict[str, str]] = []
    fixes: list[str] = []  # each refusal's own fix, for the line where every system is refused
    unserved: dict[str, list[str]] = {}  # bucket -> why each system carries none of it
    left_out: list[dict[str, str]] = []  # the systems that serve no bucket
    for s in systems:
        misses: dict[str, str] = {}
        try:
            offered = _types_for(catalog, model, s, buckets, slo, precision, misses, pricing, region)
        except PrecisionUnsupportedError as exc:
            skipped.append({"hardware": s.chip.id, "system": s.id, "reason": exc.reason})
            fixes.append(exc.fix)
            continue
        types.extend(offered)
        for name, why in misses.items():
            unserved.setdefault(name, []).append(why)
        if not offered:
            # each bucket's reason by its name, one reason once (no price: the same for every bucket)
            whys = set(misses.values())
            reason = whys.pop() if len(whys) == 1 else "; ".join(f"{name}: {why}" for name, why in misses.items())
            left_out.append({"hardware": s.chip.id, "system": s.id, "reason": reason})
    refused = list(dict.fromkeys(sk["reason"] for sk in skipped))  # so far, the precision's refusals alone
    if not types and not unserved:
        # nothing ranks, as plan serve's exit 1 where it refuses every chip; the refusals' own fixes (mxfp4 on trn2
        # and trn1 had read exit 2 and 'add a chip with FP8 units to --hardware', where trn2 has them and what
        # helps is a chip that holds MXFP4 experts; it now reads exit 1 and the fix the refusal gives)
        raise NoFleetError(
            f"none of the hardware asked for can serve {precision}: {'; '.join(refused)}. Fix: "
            f"{'; or '.join(dict.fromkeys(fixes))}."
        )
    _check_carried(buckets, types, unserved, refused)
    return _named_by_system(_undominated(types)), skipped + left_out


def _fleet_problem(types: Sequence[InstanceType], buckets: Sequence[Bucket], limits: Mapping[str, int]) -> FleetProblem:
    """The mixed-integer programme over the instance types: their prices and capacities, the buckets' demand, and
    the chip limits."""
    # a chip's limit counts every system of that chip, a system's only that system (p5.48xlarge=3 had capped the
    # Azure H100s as well): each type counts against each limit that names its chip or its system
    groups = [tuple(dict.fromkeys(g for g in (t.system.chip.id, t.system.id) if g in limits)) for t in types]
    return FleetProblem(
        types=[t.name for t in types],
        buckets=[b.name for b in buckets],
        price_per_hour=np.array([t.price_usd_per_hour for t in types]),
        capacity=np.stack([t.capacity for t in types]),
        demand=np.array([b.rate for b in buckets]),
        limits=np.full(len(types), np.inf),
        chips=np.array([t.chips for t in types], dtype=np.float64),
        groups=groups,
        group_limits={name: float(count) for name, count in limits.items()},
    )


def _cheapest_settled(
    catalog: Catalog,
    model: ModelSpec,
    types: list[InstanceType],
    problem: FleetProblem,
    buckets: list[Bucket],
    slo: Mapping[str, float],
    settled: SettledFleet,
    workers: int = 1,
    tick: Callable[[], None] | None = None,
) -> SettledFleet:
    """The answer among the fleet `settled` on over all the types and those settled on over each chip's types
    alone: the one confirmed_fleet picks of those that met the SLO in replay, else, where none did, the best of
    them (SettledFleet.better_than). `workers` and `tick` as _run_ahead takes them."""
    # the derate-and-re-solve path can end on a mixed fleet dearer than one chip type alone would be (MI300X
    # alone carried this mix at $124/hour where the four types' search ended at $144): each type is settled
    # alone too, and the cheapest fleet that meets the SLO in its replay is the answer
    found = [settled]
    for own in _chip_groups(types):
        try:
            beat = settled.sol.cost_per_hour if settled.met else math.inf
            trial = settle_fleet(catalog, model, types, problem, buckets, slo, True, own, beat=beat)  # replayed
        except InfeasibleError:
            continue  # the chip's limit cannot carry the whole mix, or it cannot serve a bucket
        found.append(trial)
        if trial.better_than(settled):
            settled = trial
    # the fleets' confirming runs ahead side by side where they may be (_run_ahead), those of the cheapest awaited
    # and as many more as run beside them (the cheapest's one run had been awaited alone, and the next fleet's,
    # ended half done, run again here when the cheapest missed)
    runs = [
        [run for _, run in replay_runs(catalog, model, types, s.sol, buckets, slo, True)] for s in to_confirm(found)
    ]
    every = [run for own in runs for run in own]
    _run_ahead(catalog, every, min(len(every), max(len(runs[0]) if runs else 0, workers)), workers, tick)
    return confirmed_fleet(catalog, model, types, problem, buckets, slo, found) or settled


def _chip_groups(types: Sequence[InstanceType]) -> list[list[int]]:
    """The indices of each chip's instance types, in the order offered, where they are of two chips or more (each
    chip's settled alone too: _cheapest_settled); none where they are of one."""
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(types):
        groups.setdefault(t.system.chip.id, []).append(i)
    return list(groups.values()) if len(groups) > 1 else []


def _run_ahead(
    catalog: Catalog, works: Sequence[Callable[[], Any]], needed: int, workers: int, tick: Callable[[], None] | None
) -> tuple[list[Any], int]:
    """The first `needed` works' results (None where one ended in an error or nothing ran), and the processes they
    ran on: with `workers` > 1, where this process may fork (pools.fork_safe) and there are two works or more, every
    work runs in copies of this process, the first `needed` waited for (`tick` called meanwhile), the others kept
    where done by then (the rest ended); the replays each ran are kept on the catalog, where the searches this
    process runs after find them. A replay is seeded, so its result is the same wherever it ran, and so is every
    answer. Else nothing runs, on one process."""
    if workers < 2 or len(works) < 2 or not fork_safe():
        return [None] * needed, 1
    processes = min(workers, len(works))
    results = []
    with forked_ahead(processes, lambda k: replays_run(catalog, works[k])) as submit:
        pending = [submit(k) for k in range(len(works))]
        for k, part in enumerate(pending):
            if k < needed:
                value, ran = waited(part, tick)
                results.append(value)
            elif part.done() and not part.cancelled() and part.exception() is None:
                ran = part.result()[1]
            else:
                continue
            remember_replays(catalog, ran)
    return results, processes


def _engine_record(catalog: Catalog, t: InstanceType) -> dict[str, Any]:
    """Where a type's serving figures come from, as plan serve's rows give it (its † and ‡): `engine_defaults`,
    [chip] where no serving run of its engine on the chip's family was fitted (the engine's defaults), and
    `engine_carried`, {chip: 'ENGINE on FAMILY'} where they are carried from a sibling's fit; with the weight and
    KV-cache precisions it runs. The fleet had picked Gaudi3 on its engine's defaults unmarked."""
    return {
        "engine": t.engine,
        "engine_defaults": [] if engine_fitted_on(catalog, t.engine, t.system) else [t.system.chip.id],
        "engine_carried": engine_carried(catalog, [(t.engine, t.system)]),
        "weight_precision": t.plan.weight_precision,
        "kv_precision": t.plan.kv_precision,
    }


def _fleet_rows(
    catalog: Catalog, types: Sequence[InstanceType], buckets: Sequence[Bucket], settled: SettledFleet, replay: bool
) -> list[dict[str, Any]]:
    """The fleet's row per instance type it runs: instances, chips, cost, where its engine figures come from, the
    traffic routed to it, the share of its capacity the simulator allowed and, where replayed, its replay."""
    sol = settled.sol
    chosen = []
    for i, t in enumerate(types):
        n = int(sol.counts[i])
        if n == 0:
            continue
        row: dict[str, Any] = {
            "type": t.name,
            "hardware": t.system.chip.id,
            "system": t.system.id,
            "projected": t.system.projected,
            "instances": n,
            "replicas_per_instance": t.replicas,
            "chips": n * t.chips,
            "usd_per_hour": n * t.price_usd_per_hour,
            **t.price_record(),
            **_engine_record(catalog, t),
            "utilisation": float(sol.utilisation[i]),
            "capacity_derate": _routed_mean(settled.derate[i], sol.assignment[i]),
            "routed_requests_per_s": {b.name: float(sol.assignment[i, j]) for j, b in enumerate(buckets)},
        }
        if replay:
            row["replay"] = settled.replays[i]
        chosen.append(row)
    return chosen


def _shared_kv(chosen: Sequence[Mapping[str, Any]]) -> str | None:
    """The KV-cache precision the fleet's types share (each engine's default for the weights), None where they
    differ (each row gives its own) or the fleet is empty."""
    kinds = {r["kv_precision"] for r in chosen}
    return kinds.pop() if len(kinds) == 1 else None


def _price_notes(types: Sequence[InstanceType], pricing: str, region: str | None) -> list[str]:
    """The systems offered that have no price in the region asked for and are priced at another's, one line each,
    as plan serve's 'priced elsewhere' names them."""
    notes = {
        t.system.id: f"{t.system.id} ({t.system.chip.id}): no {region} {pricing} price; "
        f"{t.source.get('region') or 'another'}'s"
        for t in types
        if t.source is not None and t.source.get("region_note")
    }
    return list(notes.values())


def _type_record(catalog: Catalog, t: InstanceType, buckets: Sequence[Bucket]) -> dict[str, Any]:
    """An instance type offered to the programme as the report lists it, with where its engine figures come from
    and its capacity per bucket."""
    return {
        "type": t.name,
        "hardware": t.system.chip.id,
        "system": t.system.id,
        "chips": t.chips,
        "replicas": t.replicas,
        "usd_per_hour": t.price_usd_per_hour,
        **t.price_record(),
        **_engine_record(catalog, t),
        "capacity_requests_per_s": {b.name: float(c) for b, c in zip(buckets, t.capacity, strict=True)},
    }


def plan_fleet(
    catalog: Catalog,
    model_name: str,
    workload: str,
    slo: Mapping[str, float],
    hardware_ids: Sequence[str],
    limits: Mapping[str, int] | None = None,
    precision: str = "fp8",
    replay: bool = True,
    pricing: str = "on-demand",
    region: str | None = None,
    workers: int = 1,
    tick: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """The cheapest fleet mix for the workload within the SLO, checked by simulation; each instance type priced in
    `pricing` (plan serve's modes: on-demand, capacity-block, reserved-1y, reserved-3y, spot, owned) and `region`
    (None: each offer at its own region), as plan serve's ranking prices a fleet. `workers` > 1: the searches run
    side by side in that many copies of this process where it may fork (_run_ahead), `tick` called every
    0.25 s meanwhile (a spinner turned where no thread of its own turns it); the answer is the same."""
    start = time.perf_counter()
    check_workers(workers)
    if not slo:
        raise ChipwiseError("plan fleet needs an SLO. Fix: pass --slo ttft_p99=2s,tpot_p99=50ms.")
    slo = check_slo(slo)
    check_mode(pricing)  # before the long work, as plan serve checks them
    if region is not None:
        check_region(catalog, region)
    model = load_model(catalog, model_name)
    buckets = read_workload(workload, model)
    systems = _systems_asked(catalog, hardware_ids)
    limits = _checked_limits(limits, systems)
    types, skipped = _offered_types(catalog, model, systems, buckets, slo, precision, pricing, region)
    problem = _fleet_problem(types, buckets, limits)
    whole = partial(settle_fleet, catalog, model, types, problem, buckets, slo, replay)
    alone = [partial(settle_fleet, catalog, model, types, problem, buckets, slo, True, own) for own in
             (_chip_groups(types) if replay else [])]  # fmt: skip
    try:
        # the search over all the types in a copy of this process while others run each chip's search alone ahead
        # (_cheapest_settled's, with no fleet to beat yet); here where it ran in none, or met an error there (met
        # again here, on the replays run so far)
        (settled,), processes = _run_ahead(catalog, [whole, *alone], 1, workers, tick)
        settled = settled or whole()
    except NoFleetError:
        raise
    except InfeasibleError as exc:  # limits that cannot carry the demand: no fleet, not bad input (it had exited 2)
        raise NoFleetError(str(exc)) from None
    # the program's own optimum over all the types asked for, what the simulator check is measured against (the
    # winning single-type search's had been shown: '$138/hour (steady-state MILP ...: $138/hour)' where the
    # program's optimum, which missed in replay, was $113)
    steady_cost = settled.steady_cost
    if replay:
        settled = _cheapest_settled(catalog, model, types, problem, buckets, slo, settled, workers, tick)
    chosen = _fleet_rows(catalog, types, buckets, settled, replay)
    note = settled.note
    all_met = all(r["replay"]["slo_met"] for r in chosen) if replay else None
    if all_met is False and note is None:
        note = still_missing_note([r["type"] for r in chosen if not r["replay"]["slo_met"]])
    return {
        "kind": "plan-fleet",
        "model": model.name,
        "model_alias": model.alias or None,  # as given, where not the id ("model" had read "alias = id")
        "precision": check_weight_precision(precision, model),  # 'auto': the checkpoint's own (it had read 'auto')
        "kv_precision": _shared_kv(chosen),
        # the prices it ranks by, as plan serve's report names them (it had read on-demand and no region, and taken
        # neither option): None, each type at its offer's own region (price_source.region)
        "pricing": pricing,
        "region": region,
        "price_notes": _price_notes(types, pricing, region),
        "slo": dict(slo),
        "buckets": [b.__dict__ for b in buckets],
        "instance_types": [_type_record(catalog, t, buckets) for t in types],
        "fleet": chosen,
        "skipped": skipped,
        "cost_usd_per_hour": sum(r["usd_per_hour"] for r in chosen),
        "steady_state_cost_usd_per_hour": steady_cost,
        "slo_met_in_replay": all_met,
        "note": note,
        "workload_note": burst_note(workload),
        "projected": any(r["projected"] for r in chosen),
        "seconds": time.perf_counter() - start,
        "search_processes": processes,
    }
