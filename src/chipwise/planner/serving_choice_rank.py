"""Ranking a serving search's replica shapes (planner.serving_choice.choose): the replicas each needs for the load,
the share of their capacity the load takes, the chips that rank it (rented, or left idle of those stated), how fast
its replicas run where they would, a stated deployment's batch limit, and why the shape ranked first leaves some of
the stated chips idle."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from chipwise.economics.rental import rent
from chipwise.hardware.objects import System
from chipwise.serve.candidates import Candidates
from chipwise.serve.estimate import Estimate
from chipwise.serve.operating import MAX_UTILISATION, batch_slots
from chipwise.serve.plan import chip_count
from chipwise.workload.load import Load

#: Batch limits of a stated deployment within this share of the fastest's estimated speed count as just as fast
STATED_TIE = 0.01
#: ... and a compiled-shape engine's (Neuron), whose every step runs all its compiled slots: its limits within this
#: share of the fastest TPOT at the load, where the one with the most capacity is taken
STATED_TIE_COMPILED = 0.10
#: Added to a closed-loop shape's speed (seconds of TPOT) where its replicas leave users waiting for a batch slot:
#: it ranks after every shape of as many chips that seats them all, and before none of fewer chips
QUEUED_USERS_RANK = 10.0


def replicas_needed(load: Load, lam: float, carried: np.ndarray, chips: int | None, per_chip: np.ndarray) -> np.ndarray:
    """Per candidate, the replicas the load needs (inf where they cannot carry it): the rate `lam` over the requests/s
    one replica `carried` within the SLO, a closed loop's users over the users it seats, one offline; with stated
    `chips`, every replica that fits them, where those carry the load (offline: all that fit)."""
    if load.kind in ("rate", "trace"):
        need = np.where(carried > 0, np.ceil(lam / np.maximum(carried, 1e-12)), np.inf)
    elif load.kind == "closed":
        need = np.where(carried >= 1, np.ceil(load.concurrency / np.maximum(carried, 1e-9)), np.inf)
    else:
        need = np.ones(len(per_chip))
    if chips:
        fit_count = np.floor(chips / per_chip)
        need = np.where(need <= fit_count, fit_count, np.inf) if load.kind != "offline" else fit_count
        need = np.where(fit_count >= 1, need, np.inf)
    return need


def load_share(
    system: System, chips: int | None, load: Load, lam: float, carried: np.ndarray, need: np.ndarray
) -> np.ndarray:
    """Per candidate, the share of a searched fleet's capacity its load takes, where its provider's rental units leave
    some spare (else 0): of equal rentals, the fleet its load keeps least busy ranks first. Not the share of a run a
    simulated pool is busy (serving_economics.busy_shares)."""
    taken = np.zeros(len(need))
    if system.rental_chips and not chips and load.kind != "offline":
        demand = load.concurrency if load.kind == "closed" else lam
        capacity = np.where(np.isfinite(need), need, 0.0) * carried
        taken = np.where(capacity > 0, demand / np.maximum(capacity, 1e-12), 1.0)
    return taken


def stated_fallback(
    est: Estimate,
    chips: int,
    per_chip: np.ndarray,
    total_chips: np.ndarray,
    load: Load,
    lam: float,
    out: float,
    targets: Mapping[str, float],
) -> tuple[np.ndarray, np.ndarray]:
    """The replicas and their chips (`total_chips` where they stay as they were) of a stated deployment that cannot
    carry the load (or meet the SLO) with any shape: predicted anyway at its most throughput per chip, every replica
    that fits; the simulation then shows the queue and the misses."""
    fit_count = np.floor(chips / per_chip)
    need = np.where(fit_count >= 1, fit_count, np.inf)
    if targets and load.kind in ("rate", "trace"):
        # an SLO the estimate finds out of reach, at a load the deployment carries: the shapes that carry it,
        # ranked as without the SLO (fastest where they run), not the most throughput per chip, the slowest
        carries = est.fits & np.isfinite(need) & (need * est.throughput / out * MAX_UTILISATION >= lam)
        if carries.any():
            need = np.where(carries, need, np.inf)
            total_chips = need * per_chip
    return need, total_chips


def output_per_chip_score(
    est: Estimate, per_chip: np.ndarray, need: np.ndarray, load: Load, targets: Mapping[str, float], out: float
) -> np.ndarray:
    """Per candidate, its rank where output per chip decides (offline, or a stated deployment that carries the load
    with no shape): the most output tokens/s per chip first; inf where it does not fit, or where offline its
    saturated step misses a TPOT target."""
    score = -est.throughput / per_chip
    score = np.where(est.fits & np.isfinite(need), score, np.inf)
    if load.kind == "offline":  # every slot busy: a token comes each saturated step, which a TPOT target bounds
        for key, limit in targets.items():
            score = np.where(est.step <= limit, score, np.inf) if key.startswith("tpot") and out > 1 else score
    return score


def speed_rank(
    tpot: np.ndarray, ttft: np.ndarray, est: Estimate, need: np.ndarray, load: Load, output: np.ndarray | None = None
) -> np.ndarray:
    """Per candidate, how fast its replicas run where they would, which ranks shapes of as many chips: the TPOT, then
    the TTFT a thousandth as much (1,000 s for either where it is not finite). Where they leave closed-loop users
    waiting for a batch slot, QUEUED_USERS_RANK plus the seconds an output token takes its replicas (1 / `output`,
    their output tokens/s at their share of the users) instead: of shapes that queue users, the most throughput."""
    speed = np.where(np.isfinite(tpot), tpot, 1e3)
    speed = speed + 1e-3 * np.where(np.isfinite(ttft), ttft, 1e3)
    if load.kind == "closed":
        # a closed loop's users all want a batch slot: of shapes of as many chips, one whose replicas seat
        # every user comes before one that queues some (a small batch cap that queues three users in four
        # decodes each step faster, at a third of the throughput: Llama-3.1-8B, 16 users on one H100 under a
        # 50 ms TPOT target, b4 at $3.17 per M tokens against b16's $1.03)
        slots = batch_slots(est)
        queues = ~(np.where(np.isfinite(need), need, 0.0) * slots >= load.concurrency)
        # and of those that queue some, the one that serves the most tokens/s: their users all wait, the fastest
        # step only serves fewer of them (Qwen3-30B-A3B, 64 users on one MI300X under a 40 ms TPOT target had
        # taken b16 at 25.6 ms and $1.16 per M tokens, where b32 meets the target at $0.77)
        per_token = 1.0 / np.maximum(output, 1e-9) if output is not None else speed
        speed = np.where(queues, QUEUED_USERS_RANK + np.minimum(per_token, 1e3), speed)
    return speed


def per_token_first(score: np.ndarray, rented: np.ndarray, output: np.ndarray) -> np.ndarray:
    """The ranks of a searched closed loop's shapes, the cheapest per output token first: its users set the load, so
    a fleet's cost per token is the chips it rents over the output tokens/s it serves them (`output`, at their
    share of the users), not its chips alone; of equal costs, `score`'s order (the fewest chips, then the fastest).
    Llama-3.1-70B for 200 users on H100s under 2 s TTFT and 50 ms TPOT had taken TP2 b37 x5 (10 chips, checked at
    12: $5.44 per M output tokens), where TP4 x3 serves the same users on 12 chips at $4.66."""
    per_token = np.where(np.isfinite(score) & (output > 0), rented / np.maximum(output, 1e-12), np.inf)
    if not np.isfinite(per_token).any():
        return np.full(len(score), np.inf)
    # costs equal to a billionth tie (batch limits that seat every user serve them alike, to rounding)
    cost = np.round(per_token / np.min(per_token), 9)
    order = np.lexsort((score, cost))
    ranks = np.empty(len(score))
    ranks[order] = np.arange(len(score), dtype=np.float64)
    return np.where(np.isfinite(per_token), ranks, np.inf)


def chips_rank(
    system: System,
    chips: int | None,
    per_chip: np.ndarray,
    need: np.ndarray,
    total_chips: np.ndarray,
    rented: np.ndarray,
    taken: np.ndarray,
) -> np.ndarray:
    """Per candidate, the chips that rank it first (the fewer the better). A stated deployment fills as many of its
    chips as a shape can (it pays for them all); a searched one takes the fewest it rents and, of equal rentals, the
    one its load keeps least busy (`taken`: load_share): the headroom a check can give back (Llama-3.1-70B at 5 req/s
    on trn2.48xlarge instances: TP16 replicas of 8 or 16 slots, and TP32 ones, all rent 48 chips; the 16-slot TP16
    fleet has the most to spare, and its check settles on two instances, where the others stay at three)."""
    if chips:
        # of the stated chips, the shape that leaves fewest idle, and rents no more than them where its
        # provider rents units (4 trn2 chips as four TP4 replicas rent four trn2.3xlarge; as two TP8 replicas
        # they rent a trn2.48xlarge of 16)
        leased = rent(system.rental_chips, per_chip, need)[0]
        idle: np.ndarray = chips - total_chips + np.maximum(np.where(np.isfinite(leased), leased, 0.0) - chips, 0.0)
        return idle
    return np.where(np.isfinite(total_chips), rented + 1e-3 * np.minimum(taken, 1.0), np.inf)


def stated_batch_first(
    score: np.ndarray, used: np.ndarray, speed: np.ndarray, need: np.ndarray, est: Estimate, static_batch: bool
) -> np.ndarray:
    """The ranks with a stated deployment's batch limit first: of the limits as fast as the fastest where it runs
    (within STATED_TIE), the largest, what its KV cache holds; the estimate's last fraction of a percent of TPOT
    chose 64 slots for a DEP4 replica with 23 busy, and with them a third of its capacity."""
    cand = est.cand
    j = int(np.argmin(score))
    near = np.isfinite(score) & (used == used[j])
    if static_batch:
        # a compiled batch is fixed when the graphs are built, for the load to come: of the shapes and limits
        # within STATED_TIE_COMPILED of the fastest TPOT at this load, the most capacity (the fastest at the
        # load alone took the fewest slots that carry it: 32 trn2 served 5.8 req/s where 16 served 6.6)
        near &= speed <= speed[j] * (1.0 + STATED_TIE_COMPILED)
        capacity = np.where(near, np.where(near, need, 0.0) * est.throughput, -np.inf)
        return np.where(np.arange(len(score)) == int(np.argmax(capacity)), score[j] - 1e-12, score)
    near &= (speed <= speed[j] * (1.0 + STATED_TIE)) & (cand.max_batch > cand.max_batch[j])
    return np.where(near, score[j] - 1e-12 * cand.max_batch, score)


def _shape(cand: Candidates, j: int) -> str:
    """A candidate's parallel shape without its batch limit: 'TP2', 'TP4 PP2', 'TP8 EP8 ADP'."""
    parts = [f"TP{int(cand.tp[j])}"]
    parts += [f"{name}{int(n)}" for name, n in (("PP", cand.pp[j]), ("EP", cand.ep[j])) if n > 1]
    return " ".join(parts + (["ADP"] if cand.adp[j] else []))


def _units_text(units: tuple[int, ...], upto: float) -> str:
    """The rental units a provider offers, up to the first that holds `upto` chips: '1, 4 or 8'."""
    shown = [u for u in units if u < upto] + [u for u in units if u >= upto][:1]
    return ", ".join(str(u) for u in shown[:-1]) + (" or " if len(shown) > 1 else "") + str(shown[-1])


def idle_reason(
    system: System,
    chips: int,
    cand: Candidates,
    per_chip: np.ndarray,
    need: np.ndarray,
    score: np.ndarray,
    per_chip_output: bool,
    i: int,
    slo: bool,
) -> str:
    """Why the chosen replicas (candidate `i`, `need` of them) leave some of the `chips` stated idle, or '' where
    they fill them: the shape that would fill them carries less output per chip (where that ranks the shapes:
    `per_chip_output`), or rents more than them from a provider that rents units (a TPU v5e's TP2 x3 rents two
    4-chip slices), or no shape that fits and carries the load fills them."""
    total = need * per_chip
    if total[i] >= chips - 1e-9:
        return ""
    fillers = np.isfinite(score) & np.isfinite(total) & (np.abs(total - chips) < 1e-9)
    if not fillers.any():
        within = " within the SLO" if slo else ""
        return (
            f"no replica shape that fits and carries the load{within} fills all {chips} "
            f"({_shape(cand, i)} takes {chip_count(float(per_chip[i]))} a replica)"
        )
    j = int(np.argmin(np.where(fillers, score, np.inf)))
    fill = f"{_shape(cand, j)} x{int(need[j])}"
    if per_chip_output:
        return f"{_shape(cand, i)} carries the most output per chip; {fill} would fill them with less"
    leased = float(rent(system.rental_chips, per_chip[j], need[j])[0])
    if system.rental_chips and leased > chips + 1e-9:
        units = _units_text(system.rental_chips, leased)
        return (
            f"{fill} would fill them but rents {chip_count(leased)} ({system.chip.id} is rented in units of {units} "
            "chips, each replica within one)"
        )
    return f"{fill} would fill them, and ranks after {_shape(cand, i)}"
