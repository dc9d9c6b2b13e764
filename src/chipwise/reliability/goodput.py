"""Goodput of a training run: the share of wall-clock time that is useful training, with failures and restarts.

With exponential failures of mean M, a checkpoint of cost delta every tau seconds of computation and a downtime
R per failure (detection, restart, restore), the expected wall-clock time to finish T seconds of work is
(Daly 2006, eq. 20)

    T_wall = T x M e^(R/M) (e^((tau + delta)/M) - 1) / tau

so goodput = T / T_wall. Planned maintenance at a rate p per job-second (the job's hosts' share of the cluster's,
rates.planned_rate), each costing R_p with no lost work (a checkpoint is taken first, and the job restarts from it),
divides goodput further by 1 / (1 - p R_p):

    goodput = (1 - p R_p) tau / (M e^(R/M) (e^((tau + delta)/M) - 1))

Two recovery strategies are modelled:
- checkpoint: persistent checkpoints every tau (Daly's optimum, at least one step) written at the storage
  bandwidth; R = detection + max(restart overhead, restore time), and a planned stop R_p = delta + max(restart
  overhead, restore time): the checkpoint written before it and the restart from it. The restore reads back the
  checkpoint and, for a LoRA run, the frozen base it does not save (run_goodputs).
- in-memory: state is recovered from peers' memory (Gemini's replicas, SageMaker HyperPod checkpointless
  training); tau = one step, delta ~ 0, R = detection + the in-memory recovery time. The copy is another host's:
  a job on one host has no peer that outlives its failure (a 1-chip run had recovered "from peers"), so it
  checkpoints whatever recovery is asked for. A planned stop costs R_p = the in-memory recovery time.
With no failures at all (every rate 0) M is infinite: goodput is the planned factor alone, with no checkpoint
(tau infinite) and nothing lost.
Spare capacity (hot spares so a failed host is swapped without shrinking the job) costs money, not goodput.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from chipwise.catalog.loader import Catalog
from chipwise.catalog.terms import Term, derived, fix_at_origin, override, term
from chipwise.catalog.units import SECONDS_PER_DAY
from chipwise.errors import ChipwiseError, one_of
from chipwise.hardware.objects import System
from chipwise.reliability.checkpoint import checkpoint_bytes, daly_interval, storage_bandwidth, transfer_time
from chipwise.reliability.rates import (
    FailureRates,
    chips_per_host,
    failure_rates,
    hosts_of,
    interruption_rate,
    planned_rate,
)
from chipwise.train.data_parallel import FP32_PRECISIONS
from chipwise.train.memory import optimizer_bytes
from chipwise.types import Array, ArrayLike

RECOVERIES: tuple[str, ...] = ("checkpoint", "in-memory", "best")


def wall_time_factor(tau: ArrayLike, delta: ArrayLike, restart: ArrayLike, mtbf: ArrayLike) -> Array:
    """T_wall / T_work for exponential failures (Daly 2006, eq. 20); inf when the run cannot progress."""
    t = np.asarray(tau, dtype=np.float64)
    d = np.asarray(delta, dtype=np.float64)
    m = np.asarray(mtbf, dtype=np.float64)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        f = m * np.exp(np.asarray(restart, dtype=np.float64) / m) * np.expm1((t + d) / m) / t
        # no failures (M infinite): the limit, 1 + delta / tau, which is 1 where nothing is checkpointed (tau inf)
        f = np.where(np.isinf(m), 1.0 + d / t, f)
    return np.asarray(np.where(np.isfinite(f), f, np.inf), dtype=np.float64)


def goodput(
    tau: ArrayLike,
    delta: ArrayLike,
    restart: ArrayLike,
    mtbf: ArrayLike,
    planned_rate: ArrayLike = 0.0,
    planned_restart: ArrayLike = 0.0,
) -> Array:
    """Useful share of wall-clock time, in [0, 1] (NumPy arrays broadcast)."""
    planned = np.clip(1.0 - np.asarray(planned_rate) * np.asarray(planned_restart), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        return np.asarray(planned / wall_time_factor(tau, delta, restart, mtbf), dtype=np.float64)


@dataclass(frozen=True)
class ReliabilityInputs:
    """The figures a run's reliability rests on, each with its provenance (SI units)."""

    rates: FailureRates
    chips_per_host: Term
    bytes_per_param: Term
    storage_aggregate: Term
    storage_per_host: Term
    restart_overhead: Term
    in_memory_recovery: Term
    detection: Term
    spare_fraction: Term

    def terms(self) -> list[Term]:
        return [
            *self.rates.terms(),
            self.chips_per_host,
            self.bytes_per_param,
            self.storage_aggregate,
            self.storage_per_host,
            self.restart_overhead,
            self.in_memory_recovery,
            self.detection,
            self.spare_fraction,
        ]


def checkpoint_bytes_per_param(catalog: Catalog, precision: str) -> Term:
    """Bytes a checkpoint saves per parameter: the catalog's mixed-precision figure (14: the bf16 weights, which
    Megatron's checkpoints save beside the fp32 master and Adam's moments; fp8 and fp4 runs are taken to save the
    same), or, in fp32/tf32 training, the fp32 weights that are their own master and the two moments, 12, as
    train/memory.py holds them (fp32 runs had saved a bf16 copy they never hold, 17% more)."""
    mixed = term(catalog, "reliability", "checkpoint", "bytes_per_parameter")
    if precision not in FP32_PRECISIONS:
        return mixed
    return derived(
        4.0 + optimizer_bytes(precision),
        mixed.key,
        "1",
        f"{precision} training saves its fp32 weights (their own master) 4 B and Adam's two fp32 moments "
        f"{optimizer_bytes(precision):g} B, no 16-bit copy; the catalog's {mixed.value:g} B is mixed precision's",
    )


def frozen_base_bytes(params: float, precision: str) -> float:
    """Bytes of a LoRA run's frozen base on storage, which a restarted job reads back before it steps though no
    checkpoint saves it: its weights, 2 B a parameter (the 16-bit copy a mixed-precision checkpoint keeps,
    checkpoint_bytes_per_param, as fp8 and fp4 runs are taken to keep it), 4 B in fp32/tf32 training. Llama-3.1-70B:
    70.55e9 x 2 = 141.1 GB."""
    return params * (4.0 if precision in FP32_PRECISIONS else 2.0)


def reliability_inputs(
    catalog: Catalog,
    system: System,
    detection_s: float | None = None,
    spare_fraction: float | None = None,
    precision: str = "bf16",
) -> ReliabilityInputs:
    """The catalog's reliability figures for a run on `system` trained at `precision` (which sets the checkpoint's
    bytes per parameter); detection and spares may be overridden."""
    det = term(catalog, "reliability", "checkpoint", "detection_time_s")
    if detection_s is None:
        detection = derived(
            0.0,
            det.key,
            "s",
            "crash-type faults (most of them) surface within seconds and are inside the restart overhead; the "
            f"{det.value:.0f} s watchdog timeout applies only to hung collectives (pass detection_s to add it)",
        )
    else:
        if detection_s < 0:
            raise ChipwiseError(f"detection time {detection_s:g} s is negative. Fix: give seconds >= 0.")
        detection = override(detection_s, det.key, "s")
    spares = (
        term(catalog, "reliability", "spares", "spare_fraction")
        if spare_fraction is None
        else override(spare_fraction, "reliability.spares.spare_fraction", "1")
    )
    if not 0 <= spares.value < 1:  # given here, or by --set or a catalog file (5 had paid for a 500% spare fleet)
        how, fix = ("", "0.02") if spare_fraction is not None else fix_at_origin(spares, "0.02")
        raise ChipwiseError(f"spare fraction {spares.value:g} is not in [0, 1){how}. Fix: give e.g. {fix}.")
    return ReliabilityInputs(
        rates=failure_rates(catalog, system),
        chips_per_host=chips_per_host(catalog, system),
        bytes_per_param=checkpoint_bytes_per_param(catalog, precision),
        # above 0: catalog.fields refuses a --set or a file's 0 (each checkpoint had taken forever, priced at $inf)
        storage_aggregate=term(catalog, "reliability", "checkpoint", "storage_aggregate_bandwidth"),
        storage_per_host=term(catalog, "reliability", "checkpoint", "storage_write_bandwidth_per_node"),
        restart_overhead=term(catalog, "reliability", "checkpoint", "restart_overhead_s"),
        in_memory_recovery=term(catalog, "reliability", "checkpoint", "in_memory_recovery_s"),
        detection=detection,
        spare_fraction=spares,
    )


@dataclass(frozen=True)
class RunReliability:
    """What failures do to one run: rates, checkpoint plan, downtime and goodput (SI units). `checkpoint_cost_s`
    (delta) and `planned_restart_s` (R_p) are the chosen recovery's: 0 and the in-memory recovery time in memory,
    the checkpoint write and the write + max(restart overhead, restore) otherwise; `peer_copy`: another host holds
    the state, which in-memory recovery needs."""

    recovery: str
    chips: int
    hosts: float
    failures_per_s: float
    planned_per_s: float
    checkpoint_bytes: float
    checkpoint_write_s: float
    checkpoint_restore_s: float
    checkpoint_interval_s: float
    downtime_per_failure_s: float
    goodput: float
    goodput_checkpoint: float
    goodput_in_memory: float
    spare_fraction: float
    inputs: ReliabilityInputs
    frozen_bytes: float = 0.0  # what a restart reads back beside the checkpoint: a LoRA run's frozen base

    @property
    def mtbf_s(self) -> float:
        return 1.0 / self.failures_per_s if self.failures_per_s > 0 else float("inf")

    @property
    def checkpoint_cost_s(self) -> float:
        return 0.0 if self.recovery == "in-memory" else self.checkpoint_write_s

    @property
    def planned_restart_s(self) -> float:
        """R_p: in memory, the in-memory recovery; with checkpoints, the checkpoint written before the stop and the
        restart from it, max(restart overhead, restore) as a failure's less detection. It had been the restart
        overhead alone: DeepSeek-V3 LoRA on 8 MI355X, whose restore reads its adapters and 1,342 GB frozen base in
        1,375 s, had paid 1,200 s a planned stop; it now pays 1,375 s and the adapters' 1.39 s write."""
        if self.recovery == "in-memory":
            return self.inputs.in_memory_recovery.value
        return self.checkpoint_write_s + max(self.inputs.restart_overhead.value, self.checkpoint_restore_s)

    @property
    def planned_stopped_s(self) -> float:
        """The seconds of R_p the chips stand stopped, at idle power: all of it but the checkpoint written before
        the stop, which runs busy as every checkpoint write does."""
        return self.planned_restart_s - self.checkpoint_cost_s

    @property
    def peer_copy(self) -> bool:
        return self.hosts > 1

    def downtime_s(self, work_s: float) -> float:
        """Expected seconds stopped, restarting, in a run of `work_s` seconds of training, on Daly's model (the one
        goodput is): (T / tau)(e^((tau + delta)/M) - 1) failures strike during computation and checkpoints, and
        each costs M(e^(R/M) - 1) of restarting (a restart can fail and begin again); planned stops, p T_wall of
        them, R_p each less the checkpoint written before it (planned_stopped_s). The rest of T_wall - T is lost
        work and checkpoint writes, the chips busy. Failures x T_wall x R had counted failures during restarts as if
        each cost a whole R, over T_wall - T at 1M chips (1,956 where Daly's 990 cost 171.8 s each)."""
        if self.goodput <= 0:
            return math.inf
        planned = self.planned_per_s * work_s / self.goodput * self.planned_stopped_s
        if self.failures_per_s == 0:
            return planned
        m, tau, r = self.mtbf_s, self.checkpoint_interval_s, self.downtime_per_failure_s
        failures = work_s / tau * math.expm1((tau + self.checkpoint_cost_s) / m)
        return failures * m * math.expm1(r / m) + planned

    @property
    def failures_per_day(self) -> float:
        return self.failures_per_s * SECONDS_PER_DAY

    def record(self) -> dict[str, Any]:
        return {
            "recovery": self.recovery,
            "chips": self.chips,
            "hosts": self.hosts,
            "failures_per_day": self.failures_per_day,
            "planned_interruptions_per_day": self.planned_per_s * SECONDS_PER_DAY,
            "mtbf_s": self.mtbf_s,
            "checkpoint_bytes": self.checkpoint_bytes,
            "checkpoint_write_s": self.checkpoint_write_s,
            "checkpoint_restore_s": self.checkpoint_restore_s,
            "restore_bytes": self.checkpoint_bytes + self.frozen_bytes,
            "checkpoint_interval_s": self.checkpoint_interval_s,
            "downtime_per_failure_s": self.downtime_per_failure_s,
            "goodput": self.goodput,
            "goodput_checkpoint": self.goodput_checkpoint,
            "goodput_in_memory": self.goodput_in_memory,
            "spare_fraction": self.spare_fraction,
            "in_memory_possible": self.peer_copy,
            "figures": {t.key: t.record() for t in self.inputs.terms()},
        }


class RunGoodputs(NamedTuple):
    """run_goodputs' figures, arrays over runs (or scalars): failures and planned stops per second, the checkpoint's
    size, write and restore time and Daly interval, each recovery's downtime a failure and goodput."""

    failures_per_s: Array
    planned_per_s: Array
    checkpoint_bytes: Array
    write_s: Array
    restore_s: Array
    interval_s: Array
    restart_checkpoint_s: Array
    restart_in_memory_s: float  # the same for every run
    checkpoint: Array
    in_memory: Array
    peer_copy: NDArray[np.bool_]


def run_goodputs(
    inputs: ReliabilityInputs,
    chips: ArrayLike,
    params: float,
    step_time_s: ArrayLike,
    hosts: ArrayLike | None = None,
    frozen_bytes: float = 0.0,
) -> RunGoodputs:
    """Goodput of synchronous runs checkpointing `params` on `chips` at `step_time_s` (arrays broadcast: plan train
    prices every plan of a fleet at its own chips and step), with persistent checkpoints and with in-memory recovery,
    over `hosts` (default the whole hosts `chips` fill at the inputs' chips per host). `frozen_bytes`: what a restart
    reads back beside the checkpoint, which no checkpoint writes (a LoRA run's frozen base: frozen_base_bytes)."""
    if hosts is None:
        hosts = hosts_of(chips, inputs.chips_per_host.value)
    lam = interruption_rate(inputs.rates, chips, inputs.chips_per_host.value, hosts)
    with np.errstate(divide="ignore"):
        mtbf = np.where(lam > 0, 1.0 / np.where(lam > 0, lam, 1.0), np.inf)  # every rate 0: no failure stops the job
    planned = planned_rate(inputs.rates, hosts)
    size = checkpoint_bytes(params, inputs.bytes_per_param.value)
    bandwidth = storage_bandwidth(inputs.storage_aggregate.value, inputs.storage_per_host.value, hosts)
    write = transfer_time(size, bandwidth)
    # the whole job restarts, so every host reads back its shard of the checkpoint and of a LoRA run's frozen base
    # (data-parallel replicas that hold the same weights each read a part and pass the rest over the network, faster
    # than storage), at the bandwidth the checkpoint is written at. The base had been left out: Llama-3.1-70B LoRA on
    # one 8-H100 host restored its 0.62 GB of adapters in 0.64 s where the 141 GB base takes 144 s more
    restore = transfer_time(size + frozen_bytes, bandwidth)
    det = inputs.detection.value
    # persistent checkpoints; a planned stop writes one first and restarts from it, as a failure does (it had paid
    # the restart overhead alone)
    restart = np.maximum(inputs.restart_overhead.value, restore)
    r_ckpt = det + restart
    tau = np.maximum(daly_interval(write, mtbf), step_time_s)
    g_ckpt = goodput(tau, write, r_ckpt, mtbf, planned, write + restart)
    # in-memory recovery from peers: another host's copy of the state (Gemini's replicas in other hosts' memory,
    # HyperPod's peer-to-peer recovery), whatever the parallelism; on one host the copy dies with it, so the run
    # checkpoints (a 1-chip DP1 run had recovered "from peers" at 99.9% goodput)
    peer_copy = np.asarray(hosts) > 1
    r_mem = det + inputs.in_memory_recovery.value
    g_mem = goodput(step_time_s, 0.0, r_mem, mtbf, planned, inputs.in_memory_recovery.value)
    g_mem = np.where(peer_copy, g_mem, g_ckpt)  # in-memory recovery falls back to the checkpoint
    return RunGoodputs(lam, planned, size, write, restore, tau, r_ckpt, r_mem, g_ckpt, g_mem, peer_copy)


def assess_run(
    inputs: ReliabilityInputs,
    chips: int,
    params: float,
    step_time_s: float,
    recovery: str = "checkpoint",
    hosts: float | None = None,
    frozen_bytes: float = 0.0,
) -> RunReliability:
    """Failures per day, the checkpoint plan and goodput of a synchronous run of `params` on `chips`, over `hosts`
    where the caller knows them (a mixed fleet's parts' hosts together; default the whole hosts `chips` fill at
    the inputs' chips per host): run_goodputs' figures for one run, the recovery asked for (`frozen_bytes`: a LoRA
    run's frozen base, which a restart reads back)."""
    one_of(recovery, RECOVERIES, "recovery")
    if hosts is None:
        hosts = float(hosts_of(chips, inputs.chips_per_host.value))
    g = run_goodputs(inputs, chips, params, step_time_s, hosts, frozen_bytes)
    g_ckpt, g_mem = float(g.checkpoint), float(g.in_memory)
    use_mem = bool(g.peer_copy) and (recovery == "in-memory" or (recovery == "best" and g_mem > g_ckpt))
    return RunReliability(
        recovery="in-memory" if use_mem else "checkpoint",
        chips=chips,
        hosts=hosts,
        failures_per_s=float(g.failures_per_s),
        planned_per_s=float(g.planned_per_s),
        checkpoint_bytes=float(g.checkpoint_bytes),
        checkpoint_write_s=float(g.write_s),
        checkpoint_restore_s=float(g.restore_s),
        checkpoint_interval_s=step_time_s if use_mem else float(g.interval_s),
        downtime_per_failure_s=float(g.restart_in_memory_s) if use_mem else float(g.restart_checkpoint_s),
        goodput=g_mem if use_mem else g_ckpt,
        goodput_checkpoint=g_ckpt,
        goodput_in_memory=g_mem,
        spare_fraction=inputs.spare_fraction.value,
        inputs=inputs,
        frozen_bytes=frozen_bytes,
    )


def largest_fleet_for_goodput(
    inputs: ReliabilityInputs,
    chips: int,
    params: float,
    step_time_s: float,
    target: float,
    recovery: str = "best",
    frozen_bytes: float = 0.0,
) -> int:
    """The most chips, at most `chips`, at which a run at this step time keeps `target` goodput (0 when even one
    chip does not: 1 had read as 'at most 1 chip' either way). Goodput falls as chips (and so failures) grow;
    bisection on the count, about 60 assessments.
    The step time is held: a smaller fleet's own plan may step slower, so this is where failures stop dominating,
    not a plan."""
    lo, hi = 1, chips

    def kept(n: int) -> bool:
        return assess_run(inputs, n, params, step_time_s, recovery, frozen_bytes=frozen_bytes).goodput >= target

    if kept(hi):
        return hi
    if not kept(lo):
        return 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if kept(mid):
            lo = mid
        else:
            hi = mid
    return lo
