"""Build typed SI hardware objects from the validated catalog, and resolve names (ids, aliases) to them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.catalog.overrides import set_on_command_line
from chipwise.catalog.schema import ChipEntry, FabricEntry, Figure, SystemEntry
from chipwise.catalog.terms import Term, from_figure, term
from chipwise.catalog.units import from_si
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware.objects import Chip, Efficiency, Fabric, FigureRef, ScaleUpDomain, System

DEFAULT_FAMILY = "default"


def ref(fig: Figure) -> FigureRef:
    return FigureRef(
        value=fig.value,
        unit=fig.unit,
        status=fig.status,
        sources=tuple(fig.source),
        note=fig.note,
        derivation=fig.derivation,
    )


def _num(tree: Mapping[str, Any], key: str, family: str) -> tuple[float, FigureRef]:
    fig = tree.get(key)
    if not isinstance(fig, Figure):
        raise ChipwiseError(
            f"efficiency family '{family}' has no figure '{key}'. Fix: add it to the catalog's efficiency section."
        )
    return fig.si, ref(fig)


def build_efficiency(catalog: Catalog, family: str) -> Efficiency:
    """The efficiency factors of a chip family, each missing factor taken from the 'default' family."""
    base = catalog.efficiency.get(DEFAULT_FAMILY, {})
    own = catalog.efficiency.get(family, {})
    merged: dict[str, Any] = {**base, **own}
    merged["matmul"] = {**(base.get("matmul") or {}), **(own.get("matmul") or {})}
    prov: dict[str, FigureRef] = {}

    def get(key: str) -> float:
        value, r = _num(merged, key, family)
        prov[key] = r
        return value

    matmul: dict[str, float] = {}
    for prec, fig in merged["matmul"].items():
        if isinstance(fig, Figure):
            matmul[prec] = fig.si
            prov[f"matmul.{prec}"] = ref(fig)
    if not matmul:
        raise ChipwiseError(
            f"efficiency family '{family}' has no matmul fractions. Fix: add efficiency.{family}.matmul."
        )
    return Efficiency(
        family=family,
        matmul=matmul,
        memory=get("memory"),
        attention=get("attention"),
        kernel_overhead_s=get("kernel_overhead"),
        layer_overhead_s=get("layer_overhead"),
        compute_units=int(get("compute_units")),
        tile_m=int(get("tile_m")),
        tile_n=int(get("tile_n")),
        reserved_memory_bytes=get("reserved_memory"),
        tp_overlap=get("tp_overlap"),
        dp_overlap=get("dp_overlap"),
        step_overhead_s=get("step_overhead"),
        microbatch_overhead_s=get("microbatch_overhead"),
        ep_overlap=get("ep_overlap"),
        moe_gemm=get("moe_gemm"),
        reference_tdp_w=get("reference_tdp"),
        provenance=prov,
    )


def build_chip(catalog: Catalog, chip_id: str, entry: ChipEntry) -> Chip:
    prov: dict[str, FigureRef] = {}

    def si(name: str, fig: Figure | None, default: float = 0.0) -> float:
        if fig is None:
            return default
        prov[name] = ref(fig)
        return fig.si

    flops: dict[str, float] = {str(p): si(f"flops.{p}", f) for p, f in entry.flops.items()}
    year = entry.launch_year
    launch_year: int | None = None
    if year is not None:
        prov["launch_year"] = ref(year)
        try:
            launch_year = int(float(str(year.value)))
        except ValueError:
            launch_year = None
    process = ""
    if entry.process is not None:
        prov["process"] = ref(entry.process)
        process = str(entry.process.value)
    return Chip(
        id=chip_id,
        name=entry.name,
        vendor=entry.vendor,
        family=entry.family,
        status=entry.status,
        cores_per_chip=entry.cores_per_chip,
        flops=flops,
        hbm_capacity=si("hbm_capacity", entry.hbm_capacity),
        hbm_bandwidth=si("hbm_bandwidth", entry.hbm_bandwidth),
        sram=si("sram", entry.sram),
        tdp=si("tdp", entry.tdp),
        scaleup_bandwidth=si("scaleup_bandwidth", entry.scaleup_bandwidth),
        scaleout_bandwidth=si("scaleout_bandwidth", entry.scaleout_bandwidth),
        launch_year=launch_year,
        unit_price=si("unit_price", entry.unit_price) if entry.unit_price is not None else None,
        process=process,
        efficiency=build_efficiency(catalog, entry.family),
        provenance=prov,
    )


def build_fabric(fabric_id: str, entry: FabricEntry) -> Fabric:
    prov = {"latency": ref(entry.latency), "bus_efficiency": ref(entry.bus_efficiency)}
    tiers: list[tuple[int, float]] = []
    # A group reaching beyond the chips under one tier's switch group crosses that tier's uplinks.
    # Both figures are named by the tier's place in the list, as --set takes them (tiers.1.chips); the chips had gone
    # unlisted, though they decide where the oversubscription starts.
    for i, tier in enumerate(entry.tiers):
        if tier.chips is not None and tier.oversubscription is not None:
            tiers.append((int(tier.chips.si), tier.oversubscription.si))
            prov[f"tiers.{i}.chips"] = ref(tier.chips)
            prov[f"tiers.{i}.oversubscription"] = ref(tier.oversubscription)
    return Fabric(
        id=fabric_id,
        name=entry.name,
        layer=entry.layer,
        kind=entry.kind,
        latency_s=entry.latency.si,
        bus_efficiency=entry.bus_efficiency.si,
        status=entry.status,
        tiers=tuple(tiers),
        provenance=prov,
    )


class Hardware:
    """Typed view of a catalog: chips, systems and fabrics by id or alias, built once and cached."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._alias: dict[str, tuple[str, str]] = {}
        for cid, chip in catalog.chips.items():
            for name in (cid, *chip.aliases):
                self._alias.setdefault(name.lower(), ("chip", cid))
        for sid, system in catalog.systems.items():
            for name in (sid, *system.aliases):
                self._alias.setdefault(name.lower(), ("system", sid))
        self._chips: dict[str, Chip] = {}
        self._systems: dict[str, System] = {}
        self._fabrics: dict[str, Fabric] = {}

    def chip_aliases(self) -> dict[str, str]:
        """Every chip and system id and alias (lower case) with the chip it names (a system names its chip)."""
        return {
            name: ident if kind == "chip" else self.catalog.systems[ident].chip
            for name, (kind, ident) in self._alias.items()
        }

    @property
    def chip_ids(self) -> list[str]:
        return list(self.catalog.chips)

    @property
    def system_ids(self) -> list[str]:
        return list(self.catalog.systems)

    # each built once, in this Hardware's own dicts: functools.cache on the methods had been one cache for every
    # Hardware, holding each (and its catalog) alive
    def chip(self, name: str) -> Chip:
        if name not in self._chips:
            self._chips[name] = self._chip(name)
        return self._chips[name]

    def _chip(self, name: str) -> Chip:
        kind, ident = self._lookup(name, "chip")
        if kind != "chip":
            return self.system(ident).chip
        return build_chip(self.catalog, ident, self.catalog.chips[ident])

    def fabric(self, fabric_id: str) -> Fabric:
        if fabric_id not in self._fabrics:
            if fabric_id not in self.catalog.fabrics:
                raise UnknownNameError("fabric", fabric_id, self.catalog.fabrics)
            self._fabrics[fabric_id] = build_fabric(fabric_id, self.catalog.fabrics[fabric_id])
        return self._fabrics[fabric_id]

    def system(self, name: str) -> System:
        """A system by id or alias; a chip id resolves to that chip's default system."""
        if name not in self._systems:
            self._systems[name] = self._system(name)
        return self._systems[name]

    def _system(self, name: str) -> System:
        kind, ident = self._lookup(name, "system")
        if kind == "chip":
            ident = self.catalog.chips[ident].default_system
        return self._build_system(ident, self.catalog.systems[ident])

    def member_system(self, hybrid: System, chip_id: str) -> System:
        """One member type of a hybrid domain seen on its own: its chips in the domain, on their own links."""
        from dataclasses import replace

        base = self.system(chip_id)
        count = hybrid.members[chip_id]
        link = hybrid.link(chip_id, chip_id)
        domain = replace(
            hybrid.scaleup,
            size=count,
            bandwidth=link[0] if link else base.scaleup.bandwidth,
            fabric=replace(hybrid.scaleup.fabric, latency_s=link[1]) if link else hybrid.scaleup.fabric,
        )
        # the rack's power and NICs split by each type's own figures, as the rack's derivation sums them (36 x 2,000 W
        # Trainium4 + 36 x 1,400 W GB300, x 1.29): an even split had drawn one figure a chip for both, a GB300 priced
        # a third above its share and a Trainium4 below it
        chips = {mid: self.chip(mid) for mid in hybrid.members}
        power_share, power_how = _share(hybrid, {m: c.tdp for m, c in chips.items()}, chip_id, "W", 1.0)
        nic_share, nic_how = _share(hybrid, {m: c.scaleout_bandwidth for m, c in chips.items()}, chip_id, "Gb/s", 8e-9)
        power_w = hybrid.power * power_share
        nic = hybrid.scaleout_bandwidth_per_chip * hybrid.chips * nic_share / count
        prov = dict(base.provenance)
        for key, value, unit, how in (
            ("power", power_w, "W", f"{hybrid.id} power {hybrid.power:,.0f} W x {power_how}"),
            ("scaleout.bandwidth", from_si(nic * count, "Gb/s"), "Gb/s",
             f"{hybrid.id} scale-out {from_si(hybrid.scaleout_bandwidth_per_chip * hybrid.chips, 'Gb/s'):,.0f} Gb/s "
             f"x {nic_how}"),
        ):  # fmt: skip
            whole = hybrid.provenance.get(key)
            status, sources = (whole.status, whole.sources) if whole else (hybrid.status, ())
            prov[key] = FigureRef(value, unit, status, sources, derivation=how)
        return replace(
            base,
            id=f"{hybrid.id}:{chip_id}",
            name=f"{base.chip.name} in {hybrid.name}",
            chips=count,
            status=hybrid.status,
            scaleup=domain,
            scaleout_fabric=hybrid.scaleout_fabric,
            scaleout_bandwidth_per_chip=nic,
            power=power_w,
            provenance=prov,
        )

    def _lookup(self, name: str, want: str) -> tuple[str, str]:
        hit = self._alias.get(name.strip().lower())
        if hit is None:
            raise UnknownNameError("chip or system", name, list(self.catalog.chips) + list(self.catalog.systems))
        return hit

    def _build_system(self, sid: str, entry: SystemEntry) -> System:
        chip = self.chip(entry.chip)
        prov: dict[str, Any] = {}
        up = entry.scaleup
        fabric_id = up.fabric or entry.scaleout.fabric
        up_fabric = self.fabric(fabric_id)
        # dim_bandwidth: each torus dimension's own figure, the total their sum; a total the system gives, or a
        # what-if on the chip's (--set trn2.scaleup_bandwidth=...), splits in their proportions instead (scaling
        # them to the chip's catalog figure had turned a file's 256/256/256 into 213 GB/s each). A chip what-if, a
        # --set's or a --catalog file's, has moved the dimensions' figures with it already (overrides._follow_chip)
        bandwidth = chip.scaleup_bandwidth
        total_ref = chip.provenance["scaleup_bandwidth"]
        if up.bandwidth is not None:
            bandwidth = up.bandwidth.si
            total_ref = prov["scaleup.bandwidth"] = ref(up.bandwidth)
        dim_bandwidth: tuple[float, ...] = ()
        if up.dim_bandwidth:
            given = sum(fig.si for fig in up.dim_bandwidth)
            if up.bandwidth is None and not set_on_command_line(total_ref.derivation):
                bandwidth, prov["scaleup.bandwidth"] = given, _dims_total(up.dim_bandwidth)
            else:
                prov["scaleup.bandwidth"] = _split(total_ref, sid, up.dim_bandwidth)
            dim_bandwidth = tuple(fig.si * bandwidth / given for fig in up.dim_bandwidth)
        if up.latency is not None:
            up_fabric = _with_latency(up_fabric, up.latency.si)
            prov["scaleup.latency"] = ref(up.latency)
        domain = ScaleUpDomain(up.kind, up.size, tuple(up.dims), bandwidth, up_fabric, dim_bandwidth)
        out_fabric = self.fabric(entry.scaleout.fabric)
        prov["scaleout.bandwidth"] = ref(entry.scaleout.bandwidth)
        if entry.power is not None:
            power = entry.power.si
            prov["power"] = ref(entry.power)
        else:
            # no published power: the host share economics.power.host_power prices, a fraction of the chips' TDP
            # (host_power_fraction: the system's own or the datacenter default; claims move it with a TDP)
            frac = host_power_fraction(self.catalog, sid)
            power = chip.tdp * entry.chips * (1.0 + frac.value)
            prov["power"] = FigureRef(
                value=from_si(power, "kW"),
                unit="kW",
                status="estimate",
                sources=frac.source,
                derivation=f"no published system power: {entry.chips} chips x TDP {chip.tdp:,.0f} W x (1 + "
                f"{frac.key} {frac.value:g}, {frac.status})",
            )
        if entry.rental is not None:
            r = entry.rental
            ladders = ([", ".join(map(str, r.chips))] if r.chips else []) + [
                f"{mode}: {', '.join(map(str, chips))}" for mode, chips in r.modes.items()
            ]
            prov["rental"] = FigureRef("; ".join(ladders), "chips", r.status, tuple(r.source), r.note, r.derivation)
        host_overhead = 1.0
        if entry.host_overhead is not None:
            host_overhead = float(entry.host_overhead.si)
            prov["host_overhead"] = ref(entry.host_overhead)
        return System(
            id=sid,
            name=entry.name,
            kind=entry.kind,
            provider=entry.provider,
            chip=chip,
            chips=entry.chips,
            status=entry.status,
            scaleup=domain,
            scaleout_fabric=out_fabric,
            scaleout_bandwidth_per_chip=entry.scaleout.bandwidth.si / entry.chips,
            power=power,
            provenance=prov,
            members=dict(entry.members),
            links={frozenset(link.between): (link.bandwidth.si, link.latency.si) for link in entry.links},
            host_overhead=host_overhead,
            rental_chips=tuple(entry.rental.chips) if entry.rental else (),
            rental_modes={m: tuple(c) for m, c in entry.rental.modes.items()} if entry.rental else {},
        )


def host_power_fraction(catalog: Catalog, system_id: str) -> Term:
    """The host share of its chips' TDP that a system with no published power draws (economics.power.host_power,
    the power Hardware fills in for it, chipwise claims): its own `host_power_fraction`, taken from a sourced system
    of its design class, or else datacenter.opex.host_power_fraction, an 8-GPU DGX H100's (0.82). The host share
    follows the design: a rack-scale NVLink rack's is 0.39 (GB200 NVL72), a TPU pod's 0.21 (TPU7x), and one rule for
    all had given a Trn3 UltraServer an 8-GPU server's host."""
    entry = catalog.systems.get(system_id)
    fig = entry.host_power_fraction if entry is not None else None
    if fig is None:
        return term(catalog, "datacenter", "opex", "host_power_fraction")
    own = from_figure(fig, f"{system_id}.host_power_fraction")
    origin = catalog.origins.get(f"systems.{system_id}")  # a --catalog file's or a --set's, as term() records
    return replace(own, extra={"origin": origin}) if origin else own


def _share(hybrid: System, figure: Mapping[str, float], chip_id: str, unit: str, scale: float) -> tuple[float, str]:
    """The share of a hybrid domain's whole (power, NICs) that its `chip_id` chips take: count x the type's own figure
    over the sum of count x figure, and how (figures shown x `scale` in `unit`). A member with no figure (0) leaves no
    basis to weigh by, so every chip then takes an even share."""
    members = hybrid.members
    if min(figure.values()) <= 0:
        return members[chip_id] / hybrid.chips, f"{members[chip_id]} / {hybrid.chips} chips (an even share: no figure)"
    terms = {m: f"{n} x {figure[m] * scale:,.4g} {unit}" for m, n in members.items()}
    how = f"{terms[chip_id]} / ({' + '.join(terms.values())}), the members' own figures"
    return members[chip_id] * figure[chip_id] / sum(n * figure[m] for m, n in members.items()), how


def _split(total: FigureRef, sid: str, figs: list[Figure]) -> FigureRef:
    """A torus's scale-up bandwidth per chip (`total`) with where its split over the dimensions comes from."""
    sources = tuple(dict.fromkeys((*total.sources, *(s for fig in figs for s in fig.source))))
    parts = " : ".join(f"{fig.si / 1e9:g}" for fig in figs)
    split = f"split over the torus dimensions in the proportions of {sid}.scaleup.dim_bandwidth ({parts} GB/s)"
    said = total.derivation or total.note or "; ".join(total.sources)
    return FigureRef(total.value, total.unit, total.status, sources, total.note, f"{split}; the total: {said}")


def _dims_total(figs: Sequence[Figure]) -> FigureRef:
    """A torus's scale-up bandwidth per chip as the sum of its dimensions' figures."""
    sources = tuple(dict.fromkeys(s for fig in figs for s in fig.source))
    parts = " + ".join(f"{fig.si / 1e9:g}" for fig in figs)
    total = sum(fig.si for fig in figs) / 1e9
    statuses = {fig.status for fig in figs}
    status = statuses.pop() if len(statuses) == 1 else "estimate"
    return FigureRef(total, "GB/s", status, sources, derivation=f"sum of scaleup.dim_bandwidth: {parts} GB/s")


def _with_latency(fabric: Fabric, latency: float) -> Fabric:
    from dataclasses import replace

    return replace(fabric, latency_s=latency)


def hardware(catalog: Catalog) -> Hardware:
    """The typed hardware view of a catalog, built once and kept on it (Catalog.memo): a functools.cache keyed on
    the catalog had held every catalog of every --set alive (hardware.cache_info().currsize 201 after 201 predicts)."""
    view = catalog.memo.get("hardware")
    if view is None:
        view = catalog.memo["hardware"] = Hardware(catalog)
    return view
