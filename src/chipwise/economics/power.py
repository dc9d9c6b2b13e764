"""Power drawn per chip: a load-dependent fraction of the accelerator's TDP plus its share of host and network.

    P_it(busy)  = (TDP + P_host) x busy + P_net
    P_it(idle)  = TDP x idle + P_host x host idle + P_net

- TDP: the chip's board power (catalog `chips.*.tdp`).
- P_host: the chip's share of the rest of its system at full load, system power / chips - TDP (CPUs, DRAM,
  NICs, switches, fans, PSU losses; a DGX H100 is rated 10.2 kW for 8 x 700 W GPUs, so 575 W per GPU).
- busy: `datacenter.opex.utilisation_power_fraction` (~0.8 of rated power during LLM training; Newkirk et al.
  2025 measured 76% of the 10.2 kW rating on H100 nodes, host included).
- idle: `datacenter.opex.idle_power_fraction` (0.11, measured on an idle H200) for the accelerator; the host's own
  idle share `datacenter.opex.host_idle_power_fraction` (0.25, an estimate: CPUs, memory, NICs and fans do not idle
  down as far as a GPU, and no host was measured).
- a serving fleet busy a share b of the hour draws P_it(busy) b + P_it(idle) (1 - b) (mixed).
- P_net: `datacenter.opex.network_power_w_per_chip`, the scale-out fabric's switches and optics per chip, sized for
  one 400G port a chip, x the system's scale-out Gb/s per chip / 400 (`scaleout_share`: a TPU v5p pod's 50 Gb/s a
  chip draws 1/8 of it); only when the fleet spans more than one system.

Facility power multiplies IT power by the PUE (cooling and power distribution), see economics.energy.
"""

from __future__ import annotations

from dataclasses import dataclass

from chipwise.catalog.loader import Catalog
from chipwise.catalog.terms import Term, derived, override, term
from chipwise.errors import ChipwiseError
from chipwise.hardware.objects import FigureRef, System


@dataclass(frozen=True)
class PowerModel:
    """Per-chip IT power of a system, its parts, and the load fractions used (all W)."""

    tdp_w: float
    host_w: float
    network_w: float
    busy: Term
    idle: Term  # the accelerator's idle share of its TDP
    host_idle: Term  # the host's idle share of its full-load draw
    network: Term
    host: Term
    #: the chip's TDP and the system's power the host's share is derived from, as the catalog gives them: listed
    #: with the load fractions (`--sources` had named them only inside host_power_per_chip's derivation)
    rated: tuple[Term, ...] = ()

    def it_power(self, load: float) -> float:
        """IT power per chip at a load fraction of rated power (accelerator and host alike), watts."""
        return (self.tdp_w + self.host_w) * load + self.network_w

    @property
    def busy_w(self) -> float:
        return self.it_power(self.busy.value)

    @property
    def idle_w(self) -> float:
        """Idle IT power per chip: the accelerator at its measured idle fraction, the host at its own."""
        return self.tdp_w * self.idle.value + self.host_w * self.host_idle.value + self.network_w

    def mixed_w(self, busy_share: float) -> float:
        """Mean IT power per chip of a fleet busy `busy_share` of the time (in [0, 1]) and idle otherwise, watts."""
        b = min(max(busy_share, 0.0), 1.0)
        return self.busy_w * b + self.idle_w * (1.0 - b)

    @property
    def rated_w(self) -> float:
        """Provisioned (nameplate) IT power per chip: what colocation and facility capacity are sized for."""
        return self.tdp_w + self.host_w + self.network_w

    def terms(self) -> list[Term]:
        return [*self.rated, self.busy, self.idle, self.host_idle, self.host, self.network]


def check_fraction(value: float, name: str) -> float:
    """A fraction in (0, 1], or a one-line error."""
    if not value > 0 or value > 1:
        raise ChipwiseError(f"{name} {value:g} is not in (0, 1]. Fix: give a fraction such as 0.8.")
    return value


def scaleout_share(catalog: Catalog, system: System) -> Term:
    """The system's scale-out bandwidth per chip over the one the catalog's per-chip network cost and power are sized
    for (`datacenter.capex.scaleout_reference_bandwidth_per_chip`, one 400G port a GPU): the share of that fabric's
    ports, links and optics a chip of this system needs (an estimate, linear in ports)."""
    ref = term(catalog, "datacenter", "capex", "scaleout_reference_bandwidth_per_chip")
    bw = system.scaleout_bandwidth_per_chip
    return derived(
        bw / ref.value,  # above 0: catalog.fields refuses a --set or a file's 0
        f"{system.id}.scaleout_share",
        "1",
        f"{system.id} scale-out {bw * 8 / 1e9:,.4g} Gb/s per chip / {ref.shown:g} Gb/s per chip, the fabric the "
        f"network cost and power figures are sized for ({ref.key}, {ref.status})",
    )


def per_scaleout_port(catalog: Catalog, system: System, figure: Term, unit: str, shown: str) -> Term:
    """A per-chip scale-out network figure sized for one 400G port a chip (`shown`: its value as written), scaled to
    the system's ports (scaleout_share)."""
    share = scaleout_share(catalog, system)
    return derived(
        figure.value * share.value,
        figure.key,
        unit,
        f"{shown} per 400G-port chip ({figure.status}) x {share.value:.4g} ({share.derivation})",
    )


def power_model(catalog: Catalog, system: System, scaleout: bool = True, busy_load: float | None = None) -> PowerModel:
    """The power model of one chip of `system`; `scaleout` adds the fabric's per-chip power."""
    tdp = system.chip.tdp
    host_w = max(0.0, system.power / system.chips - tdp)
    busy = (
        term(catalog, "datacenter", "opex", "utilisation_power_fraction")
        if busy_load is None
        else override(check_fraction(busy_load, "power load"), "datacenter.opex.utilisation_power_fraction", "1")
    )
    idle = term(catalog, "datacenter", "opex", "idle_power_fraction")
    host_idle = term(catalog, "datacenter", "opex", "host_idle_power_fraction")
    fig = term(catalog, "datacenter", "opex", "network_power_w_per_chip")
    net = per_scaleout_port(catalog, system, fig, "W", f"{fig.shown:g} W") if scaleout else fig
    power_ref = system.provenance.get("power")
    host = derived(
        host_w,
        f"{system.id}.host_power_per_chip",
        "W",
        f"{system.id} power {system.power:,.0f} W / {system.chips} chips - {system.chip.id} TDP {tdp:,.0f} W"
        + (f" (system power: {power_ref.status})" if power_ref else ""),
    )
    # idle above busy would make every busy hour cheaper than an idle one (the break-even's E_busy - E_idle below 0,
    # higher utilisation lowering energy cost): refused as the slip it is (idle 1.0 and busy 0.3 had priced)
    idle_w, busy_w = tdp * idle.value + host_w * host_idle.value, (tdp + host_w) * busy.value
    if idle_w > busy_w:
        raise ChipwiseError(
            f"{system.id}: idle IT power {idle_w:,.0f} W a chip is above its busy {busy_w:,.0f} W (idle_power_fraction "
            f"{idle.value:g} of the {tdp:,.0f} W chip, host_idle_power_fraction {host_idle.value:g} of its "
            f"{host_w:,.0f} W host, utilisation_power_fraction {busy.value:g} of both). Fix: --set "
            "datacenter.opex.idle_power_fraction and datacenter.opex.host_idle_power_fraction below --set "
            "datacenter.opex.utilisation_power_fraction."
        )
    return PowerModel(
        tdp_w=tdp,
        host_w=host_w,
        network_w=net.value if scaleout else 0.0,
        busy=busy,
        idle=idle,
        network=net if scaleout else derived(0.0, net.key, "W", "a single system: no scale-out fabric"),
        host=host,
        host_idle=host_idle,
        rated=tuple(
            _rated(ref, key, si)
            for ref, key, si in (
                (system.chip.provenance.get("tdp"), f"{system.chip.id}.tdp", tdp),
                (power_ref, f"{system.id}.power", system.power),
            )
            if ref is not None
        ),
    )


def _rated(ref: FigureRef, key: str, si: float) -> Term:
    """A chip's or system's rated power as a term: the catalog's value, status and sources."""
    return Term(
        value=si,
        key=key,
        unit=ref.unit,
        shown=ref.value,
        status=ref.status,
        source=ref.sources,
        derivation=ref.derivation,
        note=ref.note,
    )
