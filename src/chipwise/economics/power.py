"""Power drawn per chip: a load-dependent fraction of the accelerator's TDP plus its share of host and network.

    P_it(busy)  = (TDP + P_host) x busy + P_net
    P_it(idle)  = TDP x idle + P_host x host idle + P_net

- TDP: the chip's board power (catalog `chips.*.tdp`).
- P_host: the chip's share of the rest of its system at full load (CPUs, DRAM, NICs, switches, fans, PSU losses).
  One convention for every system: where the catalog gives a system power (a vendor's rating, or a DGX's for the
  cloud instances built on its board), system power / chips - TDP (a DGX H100 is rated 10.2 kW for 8 x 700 W GPUs,
  so 575 W per GPU); where no system power is published, TDP x the host_power_fraction of its design class
  (hardware.build.host_power_fraction): an 8-accelerator server's (AMD, Gaudi, Trn2 instances) is
  `datacenter.opex.host_power_fraction` (0.82, that same DGX H100 host share); a switched rack-scale UltraServer's
  (Trn3) the GB200 NVL72's (120 kW over 72 x 1.2 kW: 0.389), while a Trn2 UltraServer, four trn2u.48xlarge
  instances, keeps the instance's 0.82 per chip (it had taken the rack's 0.389: 194 W of host a Trn2 against the
  same chip's 410 W in a trn2.48xlarge), a TPU pod's the TPU7x pod's (10 MW over 9,216 x 900 W:
  0.206), each its system's own figure. An unsourced x 1.3 on all of them had given an MI300X 225 W of host against
  an H100's 575 W, a third of their energy gap; 0.82 on all had given a Trn3 in a 144-chip UltraServer 820 W. A GH200
  system's power is its own estimate (systems.yaml): its TDP is the whole superchip, Grace CPU and LPDDR5X included,
  and the DGX H100's 0.82 on top had counted a host CPU and memory twice (820 W a superchip; it now reads 235 W).
- busy: `datacenter.opex.utilisation_power_fraction`, node-level: Newkirk et al. 2025 measured an 8x H100 node at
  76% of its 10.2 kW rating (7.75 kW) while training, so 0.76 of chip and host alike (0.8 had drawn 8.16 kW).
- idle: `datacenter.opex.idle_power_fraction` (0.11, measured on an idle H200) for the accelerator; the host's own
  idle share `datacenter.opex.host_idle_power_fraction` (0.25, an estimate: CPUs, memory, NICs and fans do not idle
  down as far as a GPU, and no host was measured).
- a serving fleet busy a share b of the hour draws P_it(busy) b + P_it(idle) (1 - b) (mixed).
- P_net: `datacenter.opex.network_power_w_per_chip`, the scale-out fabric's switches and optics per chip, sized for
  one 400G port a chip, x the system's scale-out Gb/s per chip / 400 (`scaleout_share`: a TPU v5p pod's 50 Gb/s a
  chip draws 1/8 of it); only where the chips' traffic crosses systems, as the caller says (`scaleout`): a training
  fleet past one system, a serving replica across systems or a split's KV cache between them
  (planner.serving_economics.uses_network), each part of a mix joined over the network (planner.hetero).

Facility power multiplies IT power by the PUE (cooling and power distribution), see economics.energy.
"""

from __future__ import annotations

from dataclasses import dataclass

from chipwise.catalog.loader import Catalog
from chipwise.catalog.terms import Term, derived, override, term
from chipwise.errors import ChipwiseError
from chipwise.hardware.build import host_power_fraction
from chipwise.hardware.objects import FigureRef, System

#: How a figure's derivation starts where the prediction does not use it (a scale-out network its chips' traffic
#: never crosses): its 0 is 'not used', not a catalog or --set value of 0, and a what-if on it moves nothing
#: (planner.sensitivity lists such a figure as unused by comparing it with the catalog's own value)
NOT_USED = "not used: "

#: why the scale-out network is not used, true of every caller that passes scaleout=False: a fleet of one system,
#: replicas each inside one (planner.serving_economics.uses_network), a split whose KV cache stays in one scale-up
#: domain or hybrid rack
NO_SCALEOUT_TRAFFIC = (
    "no traffic crosses the scale-out network (a fleet of one system, or serving replicas and a KV handover each "
    "inside one)"
)


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
    #: the chip's TDP and the system's power (or the host_power_fraction) the host's share is derived from: listed
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
    host, rated = host_power(catalog, system)
    host_w = host.value
    busy = (
        term(catalog, "datacenter", "opex", "utilisation_power_fraction")
        if busy_load is None
        else override(check_fraction(busy_load, "power load"), "datacenter.opex.utilisation_power_fraction", "1")
    )
    idle = term(catalog, "datacenter", "opex", "idle_power_fraction")
    host_idle = term(catalog, "datacenter", "opex", "host_idle_power_fraction")
    fig = term(catalog, "datacenter", "opex", "network_power_w_per_chip")
    net = per_scaleout_port(catalog, system, fig, "W", f"{fig.shown:g} W") if scaleout else fig
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
        # 'a single system: no scale-out fabric' had been said of two TP8 replicas on two p5.48xlarge too
        network=net if scaleout else derived(0.0, net.key, "W", f"{NOT_USED}{NO_SCALEOUT_TRAFFIC}: no fabric power"),
        host=host,
        host_idle=host_idle,
        rated=rated,
    )


def host_follows_tdp(catalog: Catalog, system: System) -> bool:
    """Whether `system`'s host share is a fraction of its chips' TDP, and so moves with it (`--set CHIP.tdp`, the TDP
    `chipwise claims` solves for): a system the catalog gives no power. One with a power figure keeps its host, network
    and fans as the TDP moves (catalog.overrides.tdp_moved_power). A hybrid rack's member (rack:chip), not a catalog
    system, takes its share of the rack's power."""
    entry = catalog.systems.get(system.id)
    return entry is not None and entry.power is None


def host_power(catalog: Catalog, system: System) -> tuple[Term, tuple[Term, ...]]:
    """A chip's share of its system's host at full load (W), and the rated figures it comes from (the chip's TDP with
    the system's power, or with its host_power_fraction where the catalog gives the system no power)."""
    tdp = system.chip.tdp
    key = f"{system.id}.host_power_per_chip"
    tdp_ref = system.chip.provenance.get("tdp")
    chip_tdp = (_rated(tdp_ref, f"{system.chip.id}.tdp", tdp),) if tdp_ref is not None else ()
    if host_follows_tdp(catalog, system):
        # no published system power: the host share of its design class's sourced system (an MI300X server's 2 CPUs,
        # 8 NICs and fans are the DGX H100's; a Trn3 UltraServer's switches and hosts a GB200 NVL72 rack's)
        frac = host_power_fraction(catalog, system.id)
        how = (
            f"{system.chip.id} TDP {tdp:,.0f} W x {frac.value:g} ({frac.key}, {frac.status}: no published "
            f"{system.id} power)"
        )
        return derived(tdp * frac.value, key, "W", how), (*chip_tdp, frac)
    power_ref = system.provenance.get("power")
    how = f"{system.id} power {system.power:,.0f} W / {system.chips} chips - {system.chip.id} TDP {tdp:,.0f} W" + (
        f" (system power: {power_ref.status})" if power_ref else ""
    )
    power = (_rated(power_ref, f"{system.id}.power", system.power),) if power_ref is not None else ()
    # max: a power of exactly the chips' TDP can leave a rounding's -1e-13 W (one below it is refused where the
    # catalog is loaded, catalog.loader._check_power_covers_chips: it had been clamped to a host of 0 W in silence)
    return derived(max(0.0, system.power / system.chips - tdp), key, "W", how), (*chip_tdp, *power)


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
