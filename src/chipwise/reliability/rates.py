"""Failure rates of a training fleet and the job's interruption rate.

A synchronous training job stops when any of its chips, hosts or links fails, or when its software does. With
independent failures at constant rates (exponential inter-arrival times) the job's interruption rate is the sum

    lambda_job = N_chips x (r_chip + r_link + k x r_software) + N_hosts x r_host      [per second]
    MTBF_job   = 1 / lambda_job

with k ranks a chip (the chip's cores_per_chip: one process per logical NeuronCore on Trainium, 4 a chip on
Trn2/Trn3/Trn4 and 2 on Trn1; 1 on a GPU): software faults are charged per rank, as the catalog's rate is derived.

Defaults are the catalog's `reliability.failures` rates, derived from the Llama 3 paper's 54-day log of
16,384 H100s (Dubey et al. 2024, Table 5): 268 GPU, 53 host, 35 network and 63 software interruptions; so the
model reproduces that run's 419 unexpected interruptions by construction, and docs/economics.md compares it with
other published runs (OPT-175B, BLOOM, MegaScale). No other accelerator has published rates: the same per-chip
rates are applied to every chip. Planned maintenance (47 in those 54 days) is a per-host rate capped at the
per-job one:

    p_job = min(p_per_job, N_hosts x p_per_host)       (p_per_host = p_per_job / 2,048 Llama 3 hosts)

a job meets its hosts' share of the cluster's maintenance, and at Meta's size or beyond the whole-job rate.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

import numpy as np

from chipwise.catalog.loader import Catalog
from chipwise.catalog.terms import Term, derived, term
from chipwise.catalog.units import SECONDS_PER_HOUR
from chipwise.hardware.objects import System
from chipwise.types import Array, ArrayLike

#: Chips per host (one host failure takes down this many chips) for multi-host systems, with where it comes from.
HOST_CHIPS: dict[str, tuple[int, str]] = {
    "trn2-ultraserver": (16, "4 trn2.48xlarge hosts of 16 Trainium2 each (NRN_TRN2_ARCH)"),
    "trn3-ultraserver-gen1": (16, "Gen1 Trn3 UltraServer: 4 servers x 16 chips (NRN_TRN3_ARCH)"),
    "trn3-ultraserver": (4, "Gen2 Trn3 UltraServer: 36 servers x 4 chips (NRN_TRN3_ARCH)"),
    "gb200-nvl72": (4, "NVL72: 18 compute trays x 4 GPUs"),
    "gb300-nvl72": (4, "NVL72: 18 compute trays x 4 GPUs"),
    "p6e-gb200-ultraserver": (4, "GB200 NVL72 compute trays of 4 GPUs"),
    "p6e-gb200-ultraserver-36": (4, "GB200 NVL72 compute trays of 4 GPUs"),
}
_PER_HOST = re.compile(r"(\d+)\s+chips\s+(?:and [^,;]*\s+)?per\s+(?:host|VM)", re.IGNORECASE)


@dataclass(frozen=True)
class FailureRates:
    """Interruption rates per second: per chip (accelerator, link, software), per host, and planned maintenance per
    host up to a per-job cap."""

    chip: Term
    link: Term
    software: Term  # per rank
    host: Term
    planned: Term  # per job: the cap
    planned_host: Term
    # the ranks a chip runs, each charged `software`; a mixed fleet's mean over its chips may be fractional
    ranks_per_chip: float = 1.0

    @property
    def per_chip_s(self) -> float:
        return self.chip.value + self.link.value + self.software.value * self.ranks_per_chip

    def terms(self) -> list[Term]:
        return [self.chip, self.link, self.software, self.host, self.planned, self.planned_host]


def failure_rates(catalog: Catalog, system: System | None = None) -> FailureRates:
    """The catalog's failure rates, per device-second (the catalog gives them per hour, '/h', converted when loaded;
    the loader refuses a file's rate in another quantity), the software rate charged per rank of `system`'s chip
    (software_rate)."""
    rate = functools.partial(term, catalog, "reliability", "failures")
    ranks = system.chip.cores_per_chip if system is not None else 1
    return FailureRates(
        chip=rate("gpu_failure_rate_per_chip_hour"),
        link=rate("network_failure_rate_per_chip_hour"),
        software=software_rate(rate("software_failure_rate_per_chip_hour"), ranks),
        host=rate("host_failure_rate_per_host_hour"),
        planned=rate("planned_interruptions_per_job_hour"),
        planned_host=rate("planned_interruptions_per_host_hour"),
        ranks_per_chip=float(ranks),
    )


def software_rate(rate: Term, ranks: int) -> Term:
    """The software fault rate, the catalog's per rank (each rank a process running the same code, which can hit the
    same fault: one per GPU in Llama 3's log), its record saying how many ranks a chip it is charged for. A Trainium
    job runs one process per logical NeuronCore (the chip's cores_per_chip, 4 on Trn2/Trn3/Trn4): 1,000,000 trn3,
    524,288 of them on a plan, had been charged 2.97e-6 a chip-hour, 279.6 failures a day; 4 x 2.97e-6 = 1.188e-5
    a chip-hour reads 391.7."""
    if ranks == 1:
        return rate
    return replace(
        rate, extra={**rate.extra, "ranks_per_chip": ranks, "per_chip_hour": rate.value * ranks * SECONDS_PER_HOUR}
    )


def chips_per_host(catalog: Catalog, system: System) -> Term:
    """How many chips one host failure takes down (the catalog's host description, or a documented default)."""
    if system.id in HOST_CHIPS:
        n, why = HOST_CHIPS[system.id]
        return derived(float(n), f"{system.id}.chips_per_host", "1", why, status="spec")
    entry = catalog.systems.get(system.id)
    text = entry.host if entry is not None else ""
    m = _PER_HOST.search(text)
    if m:
        return derived(float(m.group(1)), f"{system.id}.chips_per_host", "1", f"catalog host note: '{m.group(0)}'")
    if system.kind in ("instance", "server"):
        return derived(float(system.chips), f"{system.id}.chips_per_host", "1", f"one {system.kind} is one host")
    return derived(
        4.0,
        f"{system.id}.chips_per_host",
        "1",
        f"{system.kind} with no published host size: assumed 4 chips per host, like NVL72 trays and Trn3 Gen2",
    )


def hosts_of(chips: ArrayLike, chips_per_host: float) -> Array:
    """The whole hosts a job on `chips` runs on (NumPy arrays broadcast): 2 GPUs of an 8-GPU instance die with its
    host, 12 span two; a fractional count had charged them a quarter and one and a half hosts' failures."""
    return np.ceil(np.asarray(chips, dtype=np.float64) / chips_per_host)


def interruption_rate(
    rates: FailureRates, chips: ArrayLike, chips_per_host: float, hosts: ArrayLike | None = None
) -> Array:
    """Unexpected interruptions per second of a job on `chips` (NumPy arrays broadcast), over `hosts` where the
    caller knows them (a job across two systems' hosts), else the whole hosts `chips` fill."""
    per_host = hosts_of(chips, chips_per_host) if hosts is None else np.asarray(hosts, dtype=np.float64)
    return np.asarray(chips, dtype=np.float64) * rates.per_chip_s + per_host * rates.host.value


def planned_rate(rates: FailureRates, hosts: ArrayLike) -> Array:
    """Planned stops per second of a job on `hosts` (NumPy arrays broadcast): its hosts' share of the cluster's
    maintenance, at most the per-job rate. The per-job rate alone had charged one 8-GPU host Meta's 2,048 hosts'
    0.87 stops a day, 99.6% of its expected downtime."""
    return np.minimum(rates.planned.value, np.asarray(hosts, dtype=np.float64) * rates.planned_host.value)
