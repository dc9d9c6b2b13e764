"""Owned-fleet total cost of ownership per chip-hour, and the utilisation at which owning beats renting.

Per chip, per hour of calendar time (every input a catalog figure from `datacenter`, each overridable):

    capex          = chip price + server (non-accelerator) + scale-up network + scale-out network + storage
    depreciation   = capex / (life x 8,766 h)                                       straight line, no residual
    operations     = operations fraction x capex / 8,766 h                          staff, support, spares
    colocation     = $/kW-month x rated IT kW / 730.5 h                             space, power and cooling capacity
      (or facility = $/kW to build x rated IT kW / (facility life x 8,766 h) with facility='owned')
    energy         = P_it(load) x PUE x $/kWh,  load = busy share u at the training load, idle otherwise

    cost per used chip-hour(u) = [depreciation + operations + colocation + E_idle + (E_busy - E_idle) u] / u

Break-even utilisation against a rental price r (per chip-hour) paid by the hour used (on-demand, spot, a capacity
block booked for the job): owning is cheaper when u > u*, with

    u* = (depreciation + operations + colocation + E_idle) / (r - E_busy + E_idle)

(no break-even when u* > 1). A reservation (reserved-1y, reserved-3y) is paid every calendar hour of its term, r / u
per used hour like the owned cost, so the two compare per calendar hour: owning is cheaper iff
F + E_idle + (E_busy - E_idle) u < r (F the fixed terms), which turns on u only through the energy term: owning
wins at any utilisation when F + E_busy <= r, renting when F + E_idle >= r, and between them owning wins below
u = (r - F - E_idle) / (E_busy - E_idle) (COMMITMENTS, commitment_verdict).

The scale-out network (its capex, the colocation capacity and the power of its switches and optics) is counted only
for a fleet past one system (`scaleout`: chipwise tco prices a chip of a fleet of many; a planner passes whether its
fleet spans more than one). Sources: the catalog's datacenter section (capex per chip from SemiAnalysis, the
SHEET_H100 fabric sizing and the Llama 3 storage fabric; colocation from CBRE; electricity from EIA; PUE from
Uptime/Equinix); power per economics.power. Cost of capital, taxes and residual value are not modelled.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.catalog.schema import PRICING_MODES
from chipwise.catalog.terms import Term, derived, fix_at_origin, override, term
from chipwise.catalog.units import JOULES_PER_KWH, SECONDS_PER_HOUR, SECONDS_PER_MONTH, SECONDS_PER_YEAR
from chipwise.economics.energy import EnergySite, require_electricity, site_for
from chipwise.economics.power import NO_SCALEOUT_TRAFFIC, NOT_USED, PowerModel, per_scaleout_port, power_model
from chipwise.economics.pricing import (
    latest_quotes,
    no_unit_price,
    price_gap,
    price_per_chip_hour,
)
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.hardware.objects import System
from chipwise.workload.train_scenario import MIN_UTILISATION

FACILITIES: tuple[str, ...] = ("colocation", "owned")
#: Rental modes paid for every calendar hour of a term, used or not (no utilisation break-even against them), each
#: with its term, seconds (a year of 8,766 h): what the reservation commits a fleet to (planner.training says it)
COMMITMENT_TERM_S: Mapping[str, float] = {"reserved-1y": SECONDS_PER_YEAR, "reserved-3y": 3 * SECONDS_PER_YEAR}
COMMITMENTS: tuple[str, ...] = tuple(COMMITMENT_TERM_S)

#: Overridable inputs: name -> (catalog path under datacenter, unit of the override, SI factor of that unit).
OVERRIDES: Mapping[str, tuple[tuple[str, ...], str, float]] = {
    "chip_price_usd": ((), "USD", 1.0),
    "server_usd_per_chip": (("capex", "server_non_accelerator_usd_per_chip"), "USD", 1.0),
    "scaleup_network_usd_per_chip": (("capex", "scaleup_network_usd_per_chip"), "USD", 1.0),
    "scaleout_network_usd_per_chip": (("capex", "scaleout_network_usd_per_chip"), "USD", 1.0),
    "storage_usd_per_chip": (("capex", "storage_usd_per_chip"), "USD", 1.0),
    "depreciation_years": (("depreciation_years",), "year", SECONDS_PER_YEAR),
    "operations_fraction": (("opex", "operations_fraction_of_capex_per_year"), "1", 1.0),
    "colocation_usd_per_kw_month": (("colocation_usd_per_kw_month",), "USD/kW/month", 1.0 / (1e3 * SECONDS_PER_MONTH)),
    "electricity_usd_per_kwh": (("electricity_usd_per_kwh",), "USD/kWh", 1.0 / JOULES_PER_KWH),
}


@dataclass(frozen=True)
class Plausible:
    """The range a figure of a fleet may take (in its override's unit), and why: past it the figure is a slip, not a
    fleet (--depreciation-years 1e-9 had priced a chip-hour at $4.8 billion, --electricity 1e9 at $1.6 billion). It
    holds however the figure is given: a tco option, the API, or `--set` / a catalog file (through which plan train,
    predict and plan serve take them: an operations fraction of 5 had priced a $62k run at $958k)."""

    low: float
    high: float
    what: str  # 'depreciation life'
    unit: str  # 'years'; '' for a fraction
    why: str
    example: str

    def require(self, value: float, figure: Term | None = None) -> float:
        """`value` where it is in range, else one line; `figure`: the catalog figure it was read from (a `--set` or a
        catalog file's), which the line names with the --set or the file that fixes it."""
        if self.low <= value <= self.high:
            return value
        unit = f" {self.unit}" if self.unit else ""
        origin, fix = ("", self.example) if figure is None else fix_at_origin(figure, self.example)
        low, high = f"{self.low:.15g}", f"{self.high:.15g}"
        shown = f"{value:g}" if f"{value:g}" not in (low, high) else f"{value:.15g}"  # not '0.01 is outside 0.01'
        raise ChipwiseError(
            f"{self.what} {shown}{unit} is outside {low} to {high}{unit} ({self.why}){origin}. "
            f"Fix: give one in [{low}, {high}], e.g. {fix}."
        )


def _capex_part(what: str, example: str) -> Plausible:
    """A per-chip capex part's range: the catalog's are $0-10,000 a chip; $100,000 is twice an H100's all-in cost."""
    return Plausible(
        0.0,
        1e5,
        what,
        "USD",
        "the catalog's per-chip parts are $0-10,000: server $6,250, an NVL72 rack's network at most $8,900, a 400G "
        "fabric at most $10,000, storage $3,700; an H100 with its share of everything costs ~$50,000 all in, per "
        "AMCOMPUTE; past $100,000 a chip is a server's or a cluster's price given per chip",
        example,
    )


PLAUSIBLE: Mapping[str, Plausible] = {
    "chip_price_usd": Plausible(
        0.0,
        1e6,
        "chip price",
        "USD",
        "the dearest chip the catalog prices is the GH200 at $40,000; past $1M, 25x that, is a server's or a "
        "cluster's price given per chip",
        "30000",
    ),
    "server_usd_per_chip": _capex_part("server capex per chip", "6250"),
    "scaleup_network_usd_per_chip": _capex_part("scale-up network capex per chip", "4400"),
    "scaleout_network_usd_per_chip": _capex_part("scale-out network capex per chip", "6600"),
    "storage_usd_per_chip": _capex_part("storage capex per chip", "3700"),
    "depreciation_years": Plausible(
        0.5,
        30.0,
        "depreciation life",
        "years",
        "hyperscalers write accelerator servers off over 5-6 years; under half a year or over 30 is a slip",
        "5",
    ),
    "operations_fraction": Plausible(
        0.0,
        1.0,
        "operations fraction",
        "",
        "of capex a year: above 1 is more than the fleet costs to buy each year, not a plausible staff, support and "
        "spares budget",
        "0.04",
    ),
    "colocation_usd_per_kw_month": Plausible(
        0.0,
        2000.0,
        "colocation price",
        "USD/kW-month",
        "CBRE's average asking rates are $184-217 per kW-month, North America H2 2024 and 2025 and global Q1 2025; "
        "past $2,000, 10x any market's average, is a per-MW or per-year figure",
        "184",
    ),
    "electricity_usd_per_kwh": Plausible(
        0.0,
        5.0,
        "electricity price",
        "USD/kWh",
        "$5/kWh is ERCOT's wholesale offer cap, the most Texas's grid pays in any hour; industrial tariffs run "
        "$0.05-0.30",
        "0.09",
    ),
    "utilisation": Plausible(
        MIN_UTILISATION,
        1.0,
        "utilisation",
        "",
        "the share of calendar hours the chips do paid work: under 1%, 88 hours a year, a used hour costs over 100x "
        "its full-use cost",
        "0.5",
    ),
}


def check_utilisation_share(utilisation: float) -> float:
    """An owned fleet's utilisation in [0.01, 1], or one line (PLAUSIBLE['utilisation'])."""
    return PLAUSIBLE["utilisation"].require(float(utilisation))


@dataclass(frozen=True)
class TcoInputs:
    """Everything the owned-fleet cost rests on, each with its provenance."""

    system: System
    capex: dict[str, Term]  # per chip, USD
    life: Term  # seconds
    operations: Term  # fraction of capex per year
    space: Term  # colocation USD/W/s, or facility USD/W (capex) when facility == 'owned'
    facility: str
    facility_life: Term | None
    power: PowerModel
    site: EnergySite
    electricity: Term  # USD/J
    utilisation: Term


@dataclass(frozen=True)
class Tco:
    """Owned cost of one chip: per calendar second (SI) by term, and per used chip-hour at the utilisation."""

    inputs: TcoInputs
    capex_usd: float
    fixed_usd_per_s: dict[str, float]  # depreciation, operations, colocation/facility
    energy_busy_usd_per_s: float
    energy_idle_usd_per_s: float
    formulas: dict[str, str] = field(default_factory=dict)

    @property
    def fixed_total_usd_per_s(self) -> float:
        return sum(self.fixed_usd_per_s.values())

    def usd_per_used_chip_hour(self, utilisation: Any = None) -> Any:
        """Owned cost per chip-hour actually used, at a utilisation u in (0, 1] (NumPy arrays broadcast)."""
        u = self.inputs.utilisation.value if utilisation is None else utilisation
        idle, busy = self.energy_idle_usd_per_s, self.energy_busy_usd_per_s
        per_s = (self.fixed_total_usd_per_s + idle + (busy - idle) * u) / u
        return per_s * SECONDS_PER_HOUR

    @property
    def usd_per_chip_hour(self) -> float:
        return float(self.usd_per_used_chip_hour())

    def charged_per_chip_hour(self, chips: float, facility_j_per_hour: float) -> dict[str, float]:
        """USD per chip-hour by term of `chips` chips that draw `facility_j_per_hour` of facility energy in an hour:
        the fixed terms, and that energy at the site's $/kWh shared over them (usd_per_hour is chips x their sum). A
        serving pool busy part of the hour passes its own mixed energy (planner.serving_economics), so that its cost
        and its energy figure rest on one power model, and its price record shows these terms, not
        breakdown_per_chip_hour's busy-all-hour ones ($0.137 of energy a chip-hour beside the $0.096 charged).

        At a utilisation u < 1 an hour of work also pays for the (1 - u) / u hours the chips stand idle between
        paid work, as fixed_and_idle_usd_per_chip_hour charges a training run: the fixed terms / u, and the idle
        hours' electricity as `idle_energy` (F / u + E_idle (1 - u) / u + the hour's own energy). An owned serving
        fleet had been charged as busy every calendar hour, whatever utilisation it was given."""
        u = self.inputs.utilisation.value
        out = {k: v * SECONDS_PER_HOUR / u for k, v in self.fixed_usd_per_s.items()}
        out["energy"] = facility_j_per_hour * self.inputs.electricity.value / chips if chips > 0 else 0.0
        if u < 1.0:
            out["idle_energy"] = self.energy_idle_usd_per_s * (1.0 - u) / u * SECONDS_PER_HOUR
        return out

    def usd_per_hour(self, chips: float, facility_j_per_hour: float) -> float:
        """Owned cost of an hour of `chips` chips that draw `facility_j_per_hour` of facility energy in it
        (charged_per_chip_hour: the fixed terms over the utilisation u, and the idle hours' energy where u < 1); at
        the busy energy it is chips x usd_per_used_chip_hour() at the TCO's own u."""
        return chips * sum(self.charged_per_chip_hour(chips, facility_j_per_hour).values())

    @property
    def fixed_and_idle_usd_per_chip_hour(self) -> float:
        """USD per used chip-hour at the utilisation, less the energy of the used hour itself: the fixed terms and the
        idle draw of the unused hours, (F + E_idle (1 - u)) / u. A planner adds the energy its own figure reports
        (busy or idle through the hour, its network), as usd_per_hour does for serving."""
        u = self.inputs.utilisation.value
        return (self.fixed_total_usd_per_s + self.energy_idle_usd_per_s * (1.0 - u)) / u * SECONDS_PER_HOUR

    def commitment_verdict(self, rental_usd_per_chip_hour: float) -> tuple[str, float | None]:
        """Owning against a reservation paid every calendar hour (COMMITMENTS): ('own', None) where owning is cheaper
        at any utilisation (F + E_busy <= r), ('rent', None) where renting is (F + E_idle >= r), else ('own below',
        u) with owning cheaper below utilisation u = (r - F - E_idle) / (E_busy - E_idle)."""
        r = rental_usd_per_chip_hour / SECONDS_PER_HOUR
        f, idle, busy = self.fixed_total_usd_per_s, self.energy_idle_usd_per_s, self.energy_busy_usd_per_s
        if f + busy <= r:
            return "own", None
        if f + idle >= r:
            return "rent", None
        return "own below", (r - f - idle) / (busy - idle)  # busy > idle here: power_model refuses idle above busy

    def break_even_utilisation(self, rental_usd_per_chip_hour: float) -> float | None:
        """The utilisation above which owning costs less per used chip-hour than renting; None if never."""
        r = rental_usd_per_chip_hour / SECONDS_PER_HOUR
        denom = r - self.energy_busy_usd_per_s + self.energy_idle_usd_per_s
        if denom <= 0:
            return None
        u = (self.fixed_total_usd_per_s + self.energy_idle_usd_per_s) / denom
        return u if u <= 1.0 else None

    def breakdown_per_chip_hour(self) -> dict[str, float]:
        """USD per used chip-hour by term at the utilisation (they sum to usd_per_chip_hour)."""
        u = self.inputs.utilisation.value
        h = SECONDS_PER_HOUR / u
        out = {k: v * h for k, v in self.fixed_usd_per_s.items()}
        out["energy"] = (self.energy_idle_usd_per_s * (1 - u) + self.energy_busy_usd_per_s * u) * h
        return out

    def terms(self) -> list[Term]:
        """Every input the owned cost rests on, as catalog terms (capex parts, life, operations, space, PUE,
        electricity, power, utilisation): what `economics_figures` and `--sources` list for an owned fleet, and
        `estimated` counts. Not the grid's carbon intensity, which no dollar reads (a prediction lists it beside, for
        its carbon: EnergySite.terms): `chipwise tco h100-sxm` had counted datacenter.grid_intensity.country-usa among
        its estimated inputs, and with --region us-east-1 (a measured grid) dropped it, its cost the same."""
        inp = self.inputs
        return [
            *inp.capex.values(),
            inp.life,
            inp.operations,
            inp.space,
            *([inp.facility_life] if inp.facility_life is not None else []),
            inp.site.pue,
            inp.electricity,
            inp.utilisation,
            *inp.power.terms(),
        ]

    def figures(self) -> dict[str, dict[str, Any]]:
        """The owned cost's inputs keyed as `economics_figures` keys them (catalog key -> record)."""
        return {t.key: t.record() for t in self.terms()}

    @property
    def estimated(self) -> list[str]:
        """The inputs of the owned cost that are estimates or projections (the chip's unit price, most of the
        datacenter figures): a dollar figure built on them is itself an estimate."""
        return [t.key for t in self.terms() if t.status in ("estimate", "projected")]

    @property
    def status(self) -> str:
        """'estimate' where any input is one (the owned cost is then an estimate: the H100's $27,500 is an analyst
        figure, Trainium's an equivalent-cost one), else 'spec'."""
        return "estimate" if self.estimated else "spec"

    def record(self) -> dict[str, Any]:
        """The JSON form: the total, every term with its formula, and every input with its source."""
        inp = self.inputs
        p = inp.power
        terms = self.breakdown_per_chip_hour()
        inputs: dict[str, Any] = {f"capex.{k}": t.record() for k, t in inp.capex.items()}
        inputs["depreciation_life"] = inp.life.record()
        inputs["operations_fraction"] = inp.operations.record()
        inputs[inp.facility if inp.facility == "colocation" else "facility"] = inp.space.record()
        if inp.facility_life is not None:
            inputs["facility_life"] = inp.facility_life.record()
        inputs["pue"] = inp.site.pue.record()
        inputs["electricity"] = inp.electricity.record()
        inputs["utilisation"] = inp.utilisation.record()
        for t in p.terms():
            inputs[t.key.rsplit(".", 1)[-1]] = t.record()
        inputs["tdp"] = {
            "key": f"{inp.system.chip.id}.tdp",
            "value": p.tdp_w,
            "unit": "W",
            **_provenance(inp.system.chip.provenance.get("tdp")),
        }
        return {
            "hardware": inp.system.chip.id,
            "system": inp.system.id,
            # announced, not shipping (Trainium4): every output that uses it says so (a banner on the terminal)
            "projected": inp.system.projected,
            # an owned cost built on estimated inputs is an estimate (which inputs: estimated_inputs)
            "status": self.status,
            "estimated_inputs": self.estimated,
            "region": inp.site.region,
            "facility": inp.facility,
            "utilisation": inp.utilisation.value,
            "usd_per_chip_hour": self.usd_per_chip_hour,
            "usd_per_chip_hour_at_full_use": float(self.usd_per_used_chip_hour(1.0)),
            "capex_usd_per_chip": self.capex_usd,
            "capex_usd_per_chip_by_part": {k: t.value for k, t in inp.capex.items()},
            "terms_usd_per_chip_hour": terms,
            "formulas": self.formulas,
            "power_w_per_chip": {
                "accelerator_busy": p.tdp_w * p.busy.value,
                "host_busy": p.host_w * p.busy.value,
                "network": p.network_w,
                "it_busy": p.busy_w,
                "it_idle": p.idle_w,
                "it_rated": p.rated_w,
                "facility_busy": p.busy_w * inp.site.pue.value,
            },
            "inputs": inputs,
        }

    def price_source(self) -> dict[str, Any]:
        """The price provenance of an owned fleet, shaped as a rental quote's (`price_source`): its basis, its status
        (an estimate where any input is one: the § mark) and the cost's record."""
        return {"basis": "owned", "status": self.status, "tco": self.record()}


def _one_chip_type(system: System) -> System:
    """The system, or one line where it is a hybrid domain of two chip types (the Trainium4 + GB300 NVLink Fusion
    rack): its TCO had been priced as if all its chips were the first type's (72 Trainium4)."""
    if system.hybrid:
        parts = " and ".join(f"{n} {chip}" for chip, n in system.members.items())
        raise ChipwiseError(
            f"{system.id} holds {parts}, two chip types; chipwise tco prices one chip type. Fix: price each on its "
            f"own ({', '.join(f'chipwise tco {chip}' for chip in system.members)})."
        )
    return system


def owned_gap(system: System) -> str | None:
    """Why a system has no owned-fleet cost (no unit price for its chip in the catalog), or None when it has one."""
    chip = system.chip.id
    if system.chip.unit_price is not None:
        return None
    return no_unit_price(chip)


def _provenance(ref: Any) -> dict[str, Any]:
    if ref is None:
        return {"status": "estimate", "source": []}
    out = {"status": ref.status, "source": list(ref.sources)}
    if ref.derivation:
        out["derivation"] = ref.derivation
    return out


def _input(catalog: Catalog, name: str, overrides: Mapping[str, float], region: str | None = None) -> Term:
    path, unit, factor = OVERRIDES[name]
    if name in overrides:
        value = PLAUSIBLE[name].require(_amount(overrides[name], PLAUSIBLE[name].what))
        return override(value * factor, "datacenter." + ".".join(path + ((region,) if region else ())), unit, value)
    return _figure(catalog, name, region)


def _figure(catalog: Catalog, name: str, region: str | None = None) -> Term:
    """The catalog's figure for the input `name`, which `--set` and catalog files change too."""
    return _plausible(name, term(catalog, "datacenter", *OVERRIDES[name][0], *((region,) if region else ())))


def _plausible(name: str, figure: Term) -> Term:
    """A catalog figure in PLAUSIBLE's range for `name` (an option's is checked as given: _input, _chip_price)."""
    PLAUSIBLE[name].require(figure.value / OVERRIDES[name][2], figure)
    return figure


def _scaleup_capex(catalog: Catalog, system: System, overrides: Mapping[str, float]) -> Term:
    if "scaleup_network_usd_per_chip" in overrides:
        return _input(catalog, "scaleup_network_usd_per_chip", overrides)
    t = _figure(catalog, "scaleup_network_usd_per_chip")
    if system.scaleup.kind == "switched" and system.scaleup.size > 8:
        return t
    return derived(
        0.0,
        t.key,
        "USD",
        f"{system.id}: {system.scaleup.kind} scale-up domain of {system.scaleup.size} chips whose switches or links "
        "sit on the boards, inside the server price (the catalog figure is for rack-scale switched domains)",
    )


def _scaleout_capex(catalog: Catalog, system: System, overrides: Mapping[str, float], scaleout: bool = True) -> Term:
    """The scale-out network's capex per chip: the catalog's 400G-port-a-chip fat-tree figure x the system's
    scale-out share (power.scaleout_share: a TPU v5p pod's 50 Gb/s a chip buys 1/8 of its ports and optics); a
    figure given for this fleet is taken as it is; none where no traffic crosses the network, `scaleout` False (8
    H100s on one p5 had paid $6,600 a chip of 400G fabric, $0.21 a chip-hour; two TP8 replicas on two p5 had read 'a
    fleet of one p5.48xlarge')."""
    if "scaleout_network_usd_per_chip" in overrides:
        return _input(catalog, "scaleout_network_usd_per_chip", overrides)
    t = _figure(catalog, "scaleout_network_usd_per_chip")
    if not scaleout:
        return derived(0.0, t.key, "USD", f"{NOT_USED}{NO_SCALEOUT_TRAFFIC}: no {system.id} scale-out network bought")
    return per_scaleout_port(catalog, system, t, "USD", f"${t.value:,.0f}")


def _chip_price(system: System, overrides: Mapping[str, float]) -> Term:
    chip = system.chip
    if "chip_price_usd" in overrides:
        key, bound = f"{chip.id}.unit_price", PLAUSIBLE["chip_price_usd"]
        return override(bound.require(_amount(overrides["chip_price_usd"], f"{chip.id} {bound.what}")), key, "USD")
    ref = chip.provenance.get("unit_price")
    if chip.unit_price is None:
        projected = " (PROJECTED: announced, not shipping, no price published)" if system.projected else ""
        raise ChipwiseError(
            f"the catalog has no unit price for {chip.id}{projected}. Fix: give one, --set {chip.id}.unit_price=USD "
            "(or chipwise tco's --chip-price USD)."
        )
    price = Term(
        value=chip.unit_price,
        key=f"{chip.id}.unit_price",
        unit="USD",
        shown=chip.unit_price,
        status=ref.status if ref else "estimate",
        source=tuple(ref.sources) if ref else (),
        derivation=ref.derivation if ref else "",
        note=ref.note if ref else "",
    )
    return _plausible("chip_price_usd", price)


def _amount(value: float, name: str) -> float:
    """A figure given for this fleet (a price, a share, an electricity tariff), finite and >= 0; else one line
    naming it as its bound does, not by its key (NaN and infinity had priced a chip-hour at $nan, and every
    break-even at 'never')."""
    value = float(value)
    if not math.isfinite(value):
        raise ChipwiseError(f"{name} {value:g} is not a finite number. Fix: give a finite non-negative number.")
    if value < 0:
        raise ChipwiseError(f"{name} {value:g} is negative. Fix: give a non-negative number.")
    return value


def tco_inputs(
    catalog: Catalog,
    system: System,
    region: str | None = None,
    utilisation: float = 1.0,
    pue: float | None = None,
    facility: str = "colocation",
    overrides: Mapping[str, float] | None = None,
    *,
    scaleout: bool = True,
) -> TcoInputs:
    """Collect the owned-fleet inputs for one chip of `system` (overrides by the names in OVERRIDES); `scaleout`:
    the fleet spans more than one system, and pays for a scale-out network (capex, colocation and power)."""
    ov = dict(overrides or {})
    unknown = sorted(set(ov) - set(OVERRIDES))
    if unknown:
        raise ChipwiseError(f"unknown TCO input '{unknown[0]}'. Fix: use one of {', '.join(OVERRIDES)}.")
    if facility not in FACILITIES:
        raise UnknownNameError("facility", facility, FACILITIES, hint=f"use one of {', '.join(FACILITIES)}")
    _one_chip_type(system)
    if facility == "owned" and "colocation_usd_per_kw_month" in ov:
        raise ChipwiseError(
            "a colocation price was given for an owned facility, which pays no colocation (it builds the datacenter: "
            "datacenter.capex.facility_usd_per_kw). Fix: drop --colocation, or use --facility colocation."
        )
    check_utilisation_share(utilisation)
    site = site_for(catalog, system, region, pue=pue, owned=True)
    electricity = (
        _input(catalog, "electricity_usd_per_kwh", ov, site.region)
        if "electricity_usd_per_kwh" in ov
        else _plausible("electricity_usd_per_kwh", require_electricity(catalog, site))
    )
    capex = {
        "chip": _chip_price(system, ov),
        "server": _input(catalog, "server_usd_per_chip", ov),
        "scaleup_network": _scaleup_capex(catalog, system, ov),
        "scaleout_network": _scaleout_capex(catalog, system, ov, scaleout),
        "storage": _input(catalog, "storage_usd_per_chip", ov),
    }
    if facility == "colocation":
        space = _input(catalog, "colocation_usd_per_kw_month", ov)
        facility_life = None
    else:
        space = term(catalog, "datacenter", "capex", "facility_usd_per_kw")  # USD/kW, in SI (USD/W) when loaded
        facility_life = term(catalog, "datacenter", "capex", "facility_life_years")
    util = (
        override(utilisation, "utilisation", "1", why="share of calendar hours the chips do paid work (given)")
        if utilisation != 1.0
        else derived(1.0, "utilisation", "1", "default: every hour of the depreciation life is used; set --utilisation")
    )
    return TcoInputs(
        system=system,
        capex=capex,
        life=_input(catalog, "depreciation_years", ov),
        operations=_input(catalog, "operations_fraction", ov),
        space=space,
        facility=facility,
        facility_life=facility_life,
        power=power_model(catalog, system, scaleout=scaleout),
        site=site,
        electricity=electricity,
        utilisation=util,
    )


def owned_tco(
    catalog: Catalog,
    system: System,
    region: str | None = None,
    utilisation: float = 1.0,
    pue: float | None = None,
    facility: str = "colocation",
    overrides: Mapping[str, float] | None = None,
    *,
    scaleout: bool = True,
) -> Tco:
    """The owned-fleet cost of one chip of `system` (see the module docstring for the formulas); `scaleout`: the
    fleet spans more than one system and pays for a scale-out network (capex, colocation and power), as a fleet of
    many systems does (a caller with a chip count passes `chips > system.chips`, as the fleet's power model counts
    it)."""
    inp = tco_inputs(catalog, system, region, utilisation, pue, facility, overrides, scaleout=scaleout)
    return tco_from_inputs(inp)


def tco_from_inputs(inp: TcoInputs) -> Tco:
    capex = sum(t.value for t in inp.capex.values())
    life_s = inp.life.value
    if life_s <= 0:
        raise ChipwiseError("depreciation life is zero. Fix: give a positive number of years.")
    rated = inp.power.rated_w
    fixed = {
        "depreciation": capex / life_s,
        "operations": inp.operations.value * capex / SECONDS_PER_YEAR,
    }
    # the space term is named as its row is: the total's formula had read 'space' beside a 'colocation' row
    space = "colocation" if inp.facility == "colocation" else "facility"
    if inp.facility == "colocation":
        fixed["colocation"] = inp.space.value * rated
        space_formula = "colocation $/kW-month x rated IT kW per chip (accelerator + host + network)"
    else:
        assert inp.facility_life is not None
        fixed["facility"] = inp.space.value * rated / inp.facility_life.value
        space_formula = "facility build $/kW x rated IT kW per chip / facility life"
    price = inp.electricity.value * inp.site.pue.value
    return Tco(
        inputs=inp,
        capex_usd=capex,
        fixed_usd_per_s=fixed,
        energy_busy_usd_per_s=inp.power.busy_w * price,
        energy_idle_usd_per_s=inp.power.idle_w * price,
        formulas={
            "capex": "chip + server (non-accelerator) + scale-up network + scale-out network + storage, per chip",
            "depreciation": "capex / depreciation life (straight line, no residual value)",
            "operations": "operations fraction of capex per year x capex / 8,766 h",
            space: space_formula,
            # the idle draw is the accelerator's and the host's own idle shares, not one load on both: the text had
            # read 'P_it(load) = (TDP + host share) x load + network W' beside an H100's idle 320.75 W = 700 x 0.11 +
            # 575 x 0.25 + 100
            "energy": "[P_it(busy) x u + P_it(idle) x (1 - u)] x PUE x $/kWh, P_it(busy) = (TDP + host share) x "
            "busy fraction + network W, P_it(idle) = TDP x idle fraction + host share x host idle fraction + "
            "network W",
            "usd_per_chip_hour": f"(depreciation + operations + {space} + energy) per calendar hour / utilisation u",
        },
    )


def break_even(catalog: Catalog, tco: Tco, mode: str) -> list[dict[str, Any]]:
    """The system's own rental price in `mode` (the one `predict` and `plan train` use for it: price_per_chip_hour,
    first) and each other catalog price of the chip in that mode (each provider's newest, per region and system:
    latest_quotes), with the utilisation above which owning is cheaper; a price carried or derived from another says
    how (`derivation`)."""
    system = tco.inputs.system
    rows: list[dict[str, Any]] = []
    own = price_per_chip_hour(catalog, system, mode)
    if own is not None:
        rows.append(
            {
                "provider": own.provider,
                "region": own.region,
                "entry": own.entry,
                "usd_per_chip_hour": own.usd_per_chip_hour,
                "status": own.status,
                "derivation": own.derivation,
                "this_system": True,
            }
        )
    for q in latest_quotes(catalog, system.chip.id, mode):
        if own is not None and (q.provider, q.region, q.entry) == (own.provider, own.region, own.entry):
            continue  # the system's own price, listed first
        rows.append(
            {
                "provider": q.provider,
                "region": q.region,
                "entry": q.entry,
                "usd_per_chip_hour": q.usd_per_chip_hour,
                "status": q.status,
                "derivation": q.derivation,
                "this_system": False,
            }
        )
    return [{**{k: v for k, v in row.items() if k != "derivation" or v}, **_against(tco, mode, row)} for row in rows]


def _against(tco: Tco, mode: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """A price row's comparison: the break-even utilisation for a mode paid by the hour used; for a reservation
    (COMMITMENTS), paid every hour of its term, none (it scales as 1/u like the owned cost) but the verdict of
    commitment_verdict, which holds at any utilisation outside a narrow energy band."""
    r = row["usd_per_chip_hour"]
    if mode not in COMMITMENTS:
        return {"mode": mode, "break_even_utilisation": tco.break_even_utilisation(r)}
    verdict, below = tco.commitment_verdict(r)
    text = {
        "own": "owning is cheaper at any utilisation",
        "rent": f"renting ({mode}) is cheaper at any utilisation",
    }.get(verdict, f"owning is cheaper below {below:.1%} utilisation" if below is not None else "")
    return {
        "mode": mode,
        "break_even_utilisation": None,
        "paid": "every calendar hour of the term",
        "verdict": text,
        # commitment_verdict's code ('own', 'rent', 'own below'), which a view switches on rather than the sentence
        "cheaper": verdict,
        "own_cheaper_below_utilisation": below,
        # the calendar-hour costs the verdict compares: owned idle all hour and busy all hour, against the rate
        "owned_usd_per_calendar_hour": {
            "idle": (tco.fixed_total_usd_per_s + tco.energy_idle_usd_per_s) * SECONDS_PER_HOUR,
            "busy": (tco.fixed_total_usd_per_s + tco.energy_busy_usd_per_s) * SECONDS_PER_HOUR,
        },
    }


def tco_report(catalog: Catalog, tco: Tco, compare: str = "on-demand") -> dict[str, Any]:
    """`chipwise tco --json`: the owned cost per chip-hour with every term and input, and the break-even
    utilisation against each rental price in the `compare` mode (a reservation: the verdict at any utilisation)."""
    if compare not in PRICING_MODES:  # the rental modes it takes: check_mode's had offered 'owned', refused next
        rental = f"use one of {', '.join(PRICING_MODES)}"
        if compare == "owned":
            raise ChipwiseError(f"compare needs a rental mode. Fix: {rental}.")
        raise UnknownNameError("pricing mode", compare, PRICING_MODES, hint=rental)
    report = tco.record()
    report["kind"] = "tco"
    report["compare"] = compare
    report["break_even"] = break_even(catalog, tco, compare)
    # why the system has no price of its own in the mode (predict and plan train leave it '-'): an empty table had
    # said nothing, and a table of other systems' prices had promised its own, starred, under them
    if not any(row["this_system"] for row in report["break_even"]):
        report["break_even_note"] = price_gap(catalog, tco.inputs.system, compare)
    return report
