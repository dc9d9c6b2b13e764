"""Which `plan serve` options are simulated, and where: the cheapest, one after another or side by side in worker
processes, then second looks at the other shapes of a chip whose check had to grow; the checks in rank order."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.planner.serving_check import VERIFY_MAX, check_option, check_requests
from chipwise.planner.serving_choice import choose_any
from chipwise.planner.serving_plan_rows import (
    ChipSearch,
    ColocatedOption,
    check_order,
    colocated_row,
    rank_order,
    ranking_cost,
)
from chipwise.pools import Pending, fork_safe, forked_pool, spawned_pool, waited
from chipwise.serve.candidates import BATCHES
from chipwise.workload.load import Load
from chipwise.workload.model import ModelSpec
from chipwise.workload.presets import allow_files, files_allowed
from chipwise.workload.serving_job import ServingJob

#: what plan_serving tells of its work: (what it is doing, steps done, steps in all)
Progress = Callable[[str, int, int], None]


#: what every check of one `plan serve` shares: catalog, model, its name, job and SLO targets; and how it is priced:
#: pricing, region, provider, utilisation (check_option's arguments)
_Common = tuple[Catalog, ModelSpec, str, ServingJob, Mapping[str, float]]
_Priced = tuple[str, str | None, str | None, float | None]

#: the simulated checks of one `plan serve` run side by side in spawned worker processes, where they cannot run in
#: copies of this process (pools.fork_safe: another platform, another thread running), where together they would
#: simulate this many requests or more (a spawned worker's start, about 0.7 s, is then a few % of the work): at
#: 10,000 req/s each check simulates up to VERIFY_MAX requests, and some run again
PARALLEL_CHECK_REQUESTS = 40_000


def verify_options(
    catalog: Catalog,
    model: ModelSpec,
    model_name: str,
    job: ServingJob,
    targets: Mapping[str, float],
    rows: list[dict[str, Any]],
    pricing: str = "on-demand",
    region: str | None = None,
    tell: Progress = lambda what, done, total: None,
    done_before: int = 0,
    steps: int = 0,
    workers: int = 1,
    provider: str | None = None,
    utilisation: float | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The cheapest options simulated (check_option), one after another, or side by side on up to `workers`
    processes: copies of this process where it can fork, else spawned ones where their runs add up to
    PARALLEL_CHECK_REQUESTS requests or more (each check is seeded, so it reads the same either way); and the
    processes they ran on. `provider` and `utilisation` price them (check_option)."""
    limit = max(VERIFY_MAX, job.requests)  # a user who asks for more requests has them simulated
    work = sum(min(limit, check_requests(job, row)) for row in rows)
    workers = max(1, min(int(workers), len(rows)))
    spawn = workers > 1 and not fork_safe()
    if spawn and work < PARALLEL_CHECK_REQUESTS:
        workers, spawn = 1, False
    common: _Common = (catalog, model, model_name, job, targets)
    priced: _Priced = (pricing, region, provider, utilisation)

    def check(row: dict[str, Any], rank: int) -> dict[str, Any] | None:
        return _check_with(common, row, rank, priced)

    done: list[dict[str, Any]] = []
    with _spawned_checks(workers, common, priced) if spawn else forked_pool(workers, check) as (submit, processes):
        pending = [submit(row, rank) for rank, row in enumerate(rows, start=1)]
        for rank, (row, call) in enumerate(zip(rows, pending, strict=True), start=1):
            simulating = f"simulating {row['hardware'].replace('>', ' -> ')}"
            checked = waited(call, partial(tell, simulating, done_before + rank - 1, steps))
            if checked is not None:
                done.append(checked)
    done.sort(key=lambda r: check_order(r, job.load))
    return done, processes


@contextmanager
def _spawned_checks(workers: int, common: _Common, priced: _Priced) -> Iterator[tuple[Callable[..., Pending], int]]:
    """Checks in `workers` spawned processes, as forked_pool yields them: each worker reads model names as this
    process does (files_allowed: the web page's no_files)."""
    with spawned_pool(workers, "plan_serving", allow_files, (files_allowed(),)) as pool:
        yield (lambda row, rank: pool.submit(_check_with, common, row, rank, priced)), workers


def _check_with(common: _Common, row: dict[str, Any], rank: int, priced: _Priced) -> dict[str, Any] | None:
    """check_option of a row with the arguments every check shares, as a spawned worker is sent them."""
    return check_option(*common, row, rank, *priced)


#: An open loop's check that had to grow its option past the estimate's fleet (the estimate was optimistic for that
#: shape) looks again at the chip's other tensor-parallel sizes: the cheapest of them by the estimate, up to this
#: many a system, are simulated too where their estimate undercuts every checked fleet that met the SLO. Llama 3.1
#: 70B at 10 req/s on H200 under a 10 s / 100 ms SLO: TP2 x2 (4 chips) grew to x3 in its check and an H100 fleet won
#: at $4.48 per M tokens, where TP1 x5 H200 met a tighter SLO at $4.29. Its own shape with the next batch limit is
#: looked at too: Llama 3.1 8B at 15 req/s on H200, TP1 b64 x1 ran at 92% of its capacity in its check and grew to
#: x2 ($1.14 per M tokens), where TP1 b128 x1 meets the SLO at 81% ($0.57).
SECOND_LOOKS = 2

#: second looks in all, each system's cheapest first (enough for the three checks `plan serve` runs by default to
#: have their two each). The cap had been SECOND_LOOKS over every chip together, cheapest first: Llama 3.1 70B fp8
#: at 20 req/s on MI300X and Gaudi3 at $4.80 (2 s / 50 ms), Gaudi3's two looks ($38.40/h each) took both and
#: MI300X's TP8 b256 x2 ($41.44/h, 16 chips) was never simulated, the answer reading $48.00/h where MI300X alone
#: answers $41.44/h.
SECOND_LOOKS_MAX = 6


def second_looks(
    catalog: Catalog,
    model: ModelSpec,
    model_name: str,
    job: ServingJob,
    targets: Mapping[str, float],
    rows: list[dict[str, Any]],
    verified: list[dict[str, Any]],
    pricing: str,
    region: str | None,
    provider: str | None = None,
    utilisation: float | None = None,
) -> list[dict[str, Any]]:
    """The checks, with those of the other shapes (SECOND_LOOKS a system: other TP sizes, or the next batch limit)
    of the chips whose check grew: their rows join the ranking (re-ranked, the checks' ranks following their rows).
    A look is simulated only while its estimate undercuts every check so far that met the SLO (its own too)."""
    bar = min((_passed_cost(v, job.load) for v in verified), default=math.inf)
    looks = _fair_share(_shape_looks(catalog, model, job, targets, rows, verified), job.load)
    ranked = [rows[v["rank"] - 1] for v in verified]
    extra: list[tuple[dict[str, Any] | None, dict[str, Any]]] = []
    for look in looks:
        if ranking_cost(look, job.load) >= bar:  # a fleet already checked is as cheap
            continue
        rows.append(look)
        checked = check_option(
            catalog, model, model_name, job, targets, look, len(rows), pricing, region, provider, utilisation
        )
        extra.append((checked, look))
        bar = min(bar, _passed_cost(checked, job.load) if checked is not None else math.inf)
    if not extra:
        return verified
    rows.sort(key=lambda r: rank_order(r, job.load))
    position = {id(r): i + 1 for i, r in enumerate(rows)}
    checked_rows = [{**v, "rank": position[id(r)]} for v, r in zip(verified, ranked, strict=True)]
    checked_rows += [{**c, "rank": position[id(look)]} for c, look in extra if c is not None]
    return sorted(checked_rows, key=lambda r: check_order(r, job.load))


def _passed_cost(checked: Mapping[str, Any], load: Load) -> float:
    """A check's cost where it kept up and met the SLO (what a second look has to undercut), else infinite."""
    return ranking_cost(checked, load) if checked["keeps_up"] and checked["slo_met"] else math.inf


def _shape_looks(
    catalog: Catalog,
    model: ModelSpec,
    job: ServingJob,
    targets: Mapping[str, float],
    rows: list[dict[str, Any]],
    verified: list[dict[str, Any]],
) -> dict[str, list[dict[str, Any]]]:
    """By system, the ranking rows of the other shapes of each colocated check that grew: its chip's other TP sizes
    and its own shape with the next batch limit, as the estimate sizes them (those already ranked left out)."""
    seen = {_option_key(r) for r in rows}
    looks: dict[str, list[dict[str, Any]]] = {}
    for v in verified:
        row = rows[v["rank"] - 1]
        if v["disaggregated"] or v["chips"] <= row["chips"] or "_search" not in row:
            continue
        option: ColocatedOption = row["_choice"]
        search: ChipSearch = row["_search"]
        system, choice = option.system, option.choice
        shapes: list[dict[str, int]] = [{"tp": tp} for tp in search.tps if tp != choice.plan.tp]
        wider = [b for b in BATCHES if b > choice.plan.max_batch][:1]
        shapes += [{"tp": choice.plan.tp, "max_batch": b} for b in wider]  # its own shape, the next batch limit
        for shape in shapes:
            try:
                alt = choose_any(
                    model, system, search.eng, job, search.weight, search.kv, targets, search.drafting, fixed=shape
                )[0]
            except (InfeasibleError, ChipwiseError):
                continue
            look = colocated_row(catalog, system, option.engine, alt, search.price, job.load, job.mean_output)
            look["price_estimated"] = row.get("price_estimated", [])  # its chip's price, as its row's (§)
            # a shape the estimate answers with an option already ranked (a next batch limit its KV cache
            # cannot hold: Llama 3.1 70B on trn2, TP32 b128 came back as the checked b104) is not a second look
            if _option_key(look) not in seen:
                seen.add(_option_key(look))
                looks.setdefault(system.id, []).append(look)
    return looks


def _fair_share(looks: Mapping[str, list[dict[str, Any]]], load: Load) -> list[dict[str, Any]]:
    """The looks to simulate, in order: each system's SECOND_LOOKS cheapest by the estimate, its cheapest before any
    system's second (cheapest first within each), SECOND_LOOKS_MAX in all."""
    turns = [
        (turn, ranking_cost(look, load), look)
        for own in looks.values()
        for turn, look in enumerate(sorted(own, key=lambda r: ranking_cost(r, load))[:SECOND_LOOKS])
    ]
    turns.sort(key=lambda t: (t[0], t[1]))
    return [look for _, _, look in turns[:SECOND_LOOKS_MAX]]


def _option_key(row: Mapping[str, Any]) -> tuple[str, str, str]:
    """What tells two ranked options apart: the system, engine and plan (each pool's shape, batch limit, replicas,
    precisions and drafting); rows alike in these are one option, priced and simulated alike."""
    return row["system"], row["engine"], json.dumps(row["plan"], sort_keys=True)
