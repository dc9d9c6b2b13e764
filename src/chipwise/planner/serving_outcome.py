"""A simulated serving run judged: whether a statistic meets its SLO target, whether the run kept up with its
open-loop load (and the share of it delivered), and the tokens/s it is priced per."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from chipwise.serve.sim.arrivals import offered_request_rate
from chipwise.workload.serving_job import ServingJob


def stat_value(summary: Mapping[str, Any], key: str) -> float | None:
    """A simulated run's statistic named by an SLO key ('ttft_p99': the summary's ttft_s p99), None where absent."""
    metric, stat = key.split("_")
    value: float | None = (summary.get(f"{metric}_s") or {}).get(stat)
    return value


def stat_ok(summary: Mapping[str, Any], key: str, limit: float) -> bool:
    """Whether a simulated run's statistic meets its target; a TPOT target of a run whose answers are all one
    token long (no request has a second token to time) holds, where a stated deployment's run draws no answer
    longer (the scenario's and plan serve's targets on answers of one token are refused: check_tpot_target)."""
    value = stat_value(summary, key)
    if key.startswith("tpot_") and value is not None and math.isnan(value):
        return bool(summary.get("requests", {}).get("finished", 0) > 0)
    return value is not None and math.isfinite(value) and value <= limit


#: A simulated check keeps up with its open-loop load when it delivers at least this share of the offered output
#: tokens/s: the steady window of a short check reads a healthy deployment up to ~5% under the load it serves
#: (Llama-3.1-8B on 14 TPU v6e at 50 req/s, SLO met: 95.4%), while one a fifth short of its replicas reads ~80%.
KEEPS_UP = 0.9

#: An open-loop check that meets its SLO passes only below this share of what the fleet delivers with its batch
#: always full (serving_check._utilisation): near capacity a queue settles slower than a check runs, and a planned
#: fleet meets its SLO with room for the load's swings; the search loads a replica no further
#: (serving_choice.choose), nor does `plan fleet`. Llama-3.1-70B at 10 req/s on two TP4 MI300X replicas (97% of
#: their offline rate, 95% of the 10.5 req/s they sustain) read a p99 TTFT of 0.90 s on 1,200 requests against a
#: 2 s target, and 2.1-4.8 s on 5,000-20,000; at 4 req/s on four TP16 trn2 replicas (87%), 2.04 s against 3 s,
#: then 2.89 s on 5,000 and 3.53 s on 20,000. Below it, loaded queues run longer (SETTLE_LOAD), at most as long as
#: a narrow pass's.
MAX_CHECK_LOAD = 0.85


def keeps_up(job: ServingJob, summary: Mapping[str, Any], nominal: bool = False) -> bool:
    """Whether a simulated run delivered the output tokens/s its open-loop load offered (a saturated deployment's
    queue, and TTFT, grow for as long as the run lasts); closed loops and offline runs always keep up. The load is
    the one the run's arrivals brought, where it fell short of the rate asked for: 400 Poisson arrivals at 5 req/s
    come 5% apart in rate, and such a run read 'overloaded' on a fleet at a fifth of its capacity and grew it to
    four chips. `nominal`: against the rate asked for, whatever arrived (the test a smaller fleet must pass, so
    that light arrivals do not shrink it). A run whose load is past what its deployment sustains (the summary's
    `capacity_utilisation`, simulate.load_against_capacity's, at 1 or more) never keeps up, however its window
    reads: the KEEPS_UP tolerance is for a short window of a deployment within its capacity, and Llama-3.1-70B at
    22 req/s on four H200 pairs (106% of the 20.8 they sustain) delivered 90.4% of it."""
    if offered_request_rate(job) is None:
        return True
    if float(summary.get("capacity_utilisation", 0.0)) >= 1.0:
        return False
    return delivered_share(job, summary, nominal) >= KEEPS_UP


def delivered_share(job: ServingJob, summary: Mapping[str, Any], nominal: bool = False) -> float:
    """The output tokens/s an open-loop run delivered over those its load offered (keeps_up: the load its arrivals
    brought, or with `nominal` the rate asked for); 1 for closed loops and offline runs."""
    offered = offered_request_rate(job)
    if offered is None:
        return 1.0
    share = float((summary.get("simulated") or {}).get("fleet_share", 1.0))
    arrived = float((summary.get("little_law") or {}).get("arrivals_per_s", math.nan)) / share
    light = not nominal and math.isfinite(arrived) and arrived > 0
    rate = min(offered, arrived) if light else offered
    return float(summary["output_tokens_per_s"]) / (rate * job.mean_output)


def priced_request_rate(job: ServingJob, summary: Mapping[str, Any]) -> float | None:
    """The requests/s a run's tokens are priced at where that is its open-loop load, which it keeps up with
    (served_tokens); None where it is priced at what it delivered (a closed loop, an offline run, an overloaded
    one)."""
    offered = offered_request_rate(job)
    return offered if offered is not None and keeps_up(job, summary) else None


def served_tokens(job: ServingJob, summary: Mapping[str, Any]) -> tuple[float, float]:
    """(output tokens/s, all tokens/s) a deployment is priced per: a run that keeps up with its open-loop load
    serves that load, so it is priced per token of it, not of its run's window (a short window reads a few % either
    way, which reordered options of equal $/h, and `predict` of a checked option priced it apart from its check);
    otherwise what the run delivered."""
    offered = priced_request_rate(job, summary)
    if offered is not None:
        return offered * job.mean_output, offered * (job.mean_output + job.mean_input)
    return float(summary["output_tokens_per_s"]), float(summary["throughput_tokens_per_s"])
