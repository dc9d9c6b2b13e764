"""Validated shapes of the catalog's YAML: every figure carries value, unit, status and where it came from.

The schema is strict (unknown keys are errors) so that a typo in a user's catalog file is reported, not ignored.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from chipwise.catalog.units import UNITS, quantity, to_si

Status = Literal["spec", "measured", "announced", "projected", "estimate"]
STATUSES: tuple[str, ...] = ("spec", "measured", "announced", "projected", "estimate")
#: how firm each status is: a vendor's spec or a measurement, then an announcement, then a projection from announced
#: ratios or roadmaps, then any other inference; a figure taken from another cannot be firmer than it
STATUS_STRENGTH: dict[str, int] = {"spec": 3, "measured": 3, "announced": 2, "projected": 1, "estimate": 0}
#: the mark a table cell carries after a figure of each status (docs/catalog.md, `chipwise catalog list`)
STATUS_MARKS: dict[str, str] = {
    "spec": "",
    "measured": " (m)",
    "announced": " (a)",
    "projected": " (p)",
    "estimate": " (e)",
}
STATUS_LEGEND = "Status marks: none = vendor spec, (m) measured, (a) announced, (p) projected, (e) estimate."
Precision = Literal["fp4", "fp6", "fp8", "int8", "int4", "fp16", "bf16", "tf32", "fp32"]
PricingMode = Literal["on-demand", "capacity-block", "reserved-1y", "reserved-3y", "spot"]
PRICING_MODES: tuple[str, ...] = ("on-demand", "capacity-block", "reserved-1y", "reserved-3y", "spot")
#: a number in exponent form, which PyYAML (YAML 1.1: a '.' and a signed exponent) reads as text: 1e-6, 2E+9, 5.0e2
_EXPONENT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")
#: a price's date, as prices are compared (as text, so each part zero-padded): a year, a month or a day
DATE = re.compile(r"^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$")


def status_mark(status: str) -> str:
    """The mark after a figure of `status` in a table cell: '' for a vendor spec, ' (e)' for an estimate."""
    return STATUS_MARKS[status]


def as_sources(value: Any) -> Any:
    """A `source` as a list of citations, blank ones dropped: `source: ""` had read as [""] and passed the rule that a
    spec figure (a price, a rental ladder) needs a source, as `[]` does not."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        return [v for v in value if not (isinstance(v, str) and not v.strip())]
    return value


SourceList = Annotated[list[str], BeforeValidator(as_sources)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Alternative(_Strict):
    """A value another source gives for the same figure (kept so disagreements stay visible)."""

    value: float | str | None
    unit: str = ""
    source: SourceList = Field(default_factory=list)
    status: Status | None = None
    note: str = ""


class Figure(_Strict):
    """One sourced number: value in `unit`, its status and provenance. `si` is the value in SI units."""

    value: float | str
    unit: str
    status: Status
    source: SourceList = Field(default_factory=list)
    note: str = ""
    derivation: str = ""
    alternatives: list[Alternative] = Field(default_factory=list)

    @field_validator("value", mode="before")
    @classmethod
    def _no_bool(cls, v: Any) -> Any:
        if isinstance(v, bool) or v is None:
            raise ValueError("value must be a number (or text for descriptive figures), not empty or true/false")
        if isinstance(v, str) and _EXPONENT.match(v.strip()):
            return float(v)  # YAML 1.1 (PyYAML) reads 1e-6 and 5.0e2 as text: "value '1e-6' is not a number"
        return v

    @field_validator("unit")
    @classmethod
    def _known_unit(cls, v: str) -> str:
        if v not in UNITS:
            raise ValueError(f"unknown unit '{v}' (use one of: {', '.join(u for u in UNITS if u)})")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Figure:
        if self.unit not in ("",) and quantity(self.unit) != "text":
            if isinstance(self.value, str):
                raise ValueError(f"value '{self.value}' is not a number (unit {self.unit})")
            if not math.isfinite(self.value):  # YAML's .nan and .inf: NaN had ranked a chip at 'nan tok/s'
                raise ValueError(f"value {self.value} is not a finite number")
            if self.value < 0:
                raise ValueError(f"value {self.value} is negative")
        if self.status in ("estimate", "projected") and not self.derivation.strip():
            raise ValueError(f"a figure with status '{self.status}' needs a 'derivation' saying how it was derived")
        if self.status in ("spec", "measured", "announced") and not self.source:
            raise ValueError(f"a figure with status '{self.status}' needs a 'source'")
        return self

    @property
    def si(self) -> float:
        """The value in SI units."""
        if isinstance(self.value, str):
            raise TypeError(f"figure '{self.value}' is text, not a number")
        return to_si(self.value, self.unit)

    @property
    def text(self) -> str:
        return str(self.value)


#: quantities a hardware figure cannot be zero in: a chip or link of no rate or no memory runs nothing
RATES_AND_CAPACITIES = {"bandwidth": "bandwidth", "bytes": "capacity", "flops": "compute rate"}


def expect_quantity(fig: Figure | None, wanted: str, field: str, positive: bool = False) -> None:
    """Raise if a figure's unit does not measure what the field needs (a GB figure for a bandwidth, say), or, with
    `positive`, if it is zero (every transfer or operation on it would take forever)."""
    if fig is not None and quantity(fig.unit) != wanted:
        raise ValueError(f"'{field}' needs a {wanted} unit, got '{fig.unit}'")
    if positive and fig is not None and fig.value == 0:
        raise ValueError(
            f"'{field}' is 0: a {RATES_AND_CAPACITIES.get(wanted, wanted)} of 0 runs nothing; give a positive number"
        )


class ChipEntry(_Strict):
    """One accelerator chip: dense peak compute per precision, memory, links, power, provenance."""

    name: str
    vendor: Literal["aws", "nvidia", "amd", "google", "intel", "other"]
    family: str
    status: Literal["spec", "announced", "projected"] = "spec"
    aliases: list[str] = Field(default_factory=list)
    default_system: str
    cores_per_chip: int = Field(default=1, ge=1)
    flops: dict[Precision, Figure]
    hbm_capacity: Figure
    hbm_bandwidth: Figure
    sram: Figure | None = None
    tdp: Figure
    scaleup_bandwidth: Figure
    scaleout_bandwidth: Figure
    process: Figure | None = None
    launch_year: Figure | None = None
    unit_price: Figure | None = None
    memory_type: str = ""
    note: str = ""
    source: SourceList = Field(default_factory=list)

    @model_validator(mode="after")
    def _units(self) -> ChipEntry:
        for prec, fig in self.flops.items():
            expect_quantity(fig, "flops", f"flops.{prec}", positive=True)
        if "bf16" not in self.flops and "fp16" not in self.flops:
            raise ValueError("flops needs at least a bf16 (or fp16) figure")
        expect_quantity(self.hbm_capacity, "bytes", "hbm_capacity", positive=True)
        expect_quantity(self.hbm_bandwidth, "bandwidth", "hbm_bandwidth", positive=True)
        expect_quantity(self.sram, "bytes", "sram")
        expect_quantity(self.tdp, "power", "tdp")
        expect_quantity(self.scaleup_bandwidth, "bandwidth", "scaleup_bandwidth", positive=True)
        expect_quantity(self.scaleout_bandwidth, "bandwidth", "scaleout_bandwidth", positive=True)
        expect_quantity(self.unit_price, "money", "unit_price")
        return self


class ScaleUpEntry(_Strict):
    kind: Literal["switched", "torus", "mesh", "pcie"]
    size: int = Field(ge=1)
    dims: list[int] = Field(default_factory=list)
    fabric: str = ""
    bandwidth: Figure | None = None
    #: torus only: per chip per direction along each of `dims`, where the dimensions' links differ (a Trn2
    #: UltraServer's inter-instance ring is slower than its in-instance links). The total is their sum, unless
    #: `bandwidth` is given or a --set changes the chip's scaleup_bandwidth: then they split it in their
    #: proportions; absent: the total split evenly
    dim_bandwidth: list[Figure] = Field(default_factory=list)
    latency: Figure | None = None
    note: str = ""

    @model_validator(mode="after")
    def _shape(self) -> ScaleUpEntry:
        expect_quantity(self.bandwidth, "bandwidth", "scaleup.bandwidth")
        expect_quantity(self.latency, "time", "scaleup.latency")
        if self.kind == "torus" and self.dims:
            prod = 1
            for d in self.dims:
                prod *= d
            if prod != self.size:
                raise ValueError(f"torus dims {self.dims} multiply to {prod}, not the domain size {self.size}")
        if self.dim_bandwidth:
            if self.kind != "torus" or len(self.dim_bandwidth) != len(self.dims):
                raise ValueError(
                    f"dim_bandwidth gives {len(self.dim_bandwidth)} figures; it needs a torus and one per dimension of "
                    f"dims {self.dims}"
                )
            for fig in self.dim_bandwidth:
                expect_quantity(fig, "bandwidth", "scaleup.dim_bandwidth", positive=True)
        return self


class ScaleOutEntry(_Strict):
    fabric: str
    bandwidth: Figure
    note: str = ""

    @model_validator(mode="after")
    def _units(self) -> ScaleOutEntry:
        expect_quantity(self.bandwidth, "bandwidth", "scaleout.bandwidth", positive=True)
        return self


class LinkEntry(_Strict):
    """The scale-up link between two member chip types of a hybrid domain (per chip, per direction)."""

    between: list[str] = Field(min_length=2, max_length=2)
    bandwidth: Figure
    latency: Figure
    note: str = ""

    @model_validator(mode="after")
    def _units(self) -> LinkEntry:
        expect_quantity(self.bandwidth, "bandwidth", "links.bandwidth", positive=True)
        expect_quantity(self.latency, "time", "links.latency")
        return self


def _ladder_ok(chips: list[int]) -> bool:
    return bool(chips) and all(c >= 1 for c in chips) and chips == sorted(set(chips))


class RentalEntry(_Strict):
    """The chip counts in which the system's provider rents it (instance sizes, slice shapes), ascending: in every
    rental mode (`chips`; empty: any count), or in one mode (`modes`, e.g. EC2 Capacity Blocks, which sell whole
    8-GPU or 16-chip instances)."""

    chips: list[int] = Field(default_factory=list)
    modes: dict[PricingMode, list[int]] = Field(default_factory=dict)
    status: Status
    source: SourceList = Field(default_factory=list)
    note: str = ""
    derivation: str = ""

    @model_validator(mode="after")
    def _ladder(self) -> RentalEntry:
        ladders = [self.chips] if self.chips or not self.modes else []
        if not all(_ladder_ok(c) for c in [*ladders, *self.modes.values()]):
            raise ValueError("rental.chips lists the rentable chip counts, ascending, each at least 1")
        if self.status in ("estimate", "projected") and not self.derivation.strip():
            raise ValueError(f"rental units with status '{self.status}' need a 'derivation'")
        if self.status not in ("estimate", "projected") and not self.source:
            raise ValueError(f"rental units with status '{self.status}' needs a 'source'")
        return self

    def largest(self) -> int:
        return max(c[-1] for c in (self.chips, *self.modes.values()) if c)


class SystemEntry(_Strict):
    """A server, instance, UltraServer, rack or pod slice: chips, scale-up domain, scale-out fabric, power."""

    name: str
    kind: Literal["instance", "server", "ultraserver", "rack", "slice", "pod"]
    provider: str
    chip: str
    chips: int = Field(ge=1)
    status: Literal["spec", "announced", "projected"] = "spec"
    aliases: list[str] = Field(default_factory=list)
    scaleup: ScaleUpEntry
    scaleout: ScaleOutEntry
    power: Figure | None = None
    #: where `power` is absent, the host's share of the chips' TDP (economics.power.host_power): one taken from a
    #: sourced system of the same design class (a rack-scale UltraServer a GB200 NVL72's, a TPU pod a TPU7x pod's);
    #: absent too, datacenter.opex.host_power_fraction, an 8-GPU DGX H100's
    host_power_fraction: Figure | None = None
    host: str = ""
    #: host CPU time of framework work (op dispatch, a serving engine's scheduler) relative to an x86 DGX host
    host_overhead: Figure | None = None
    note: str = ""
    source: SourceList = Field(default_factory=list)
    members: dict[str, int] = Field(default_factory=dict)
    links: list[LinkEntry] = Field(default_factory=list)
    #: how its provider rents it (absent: billed per chip used)
    rental: RentalEntry | None = None

    @model_validator(mode="after")
    def _units(self) -> SystemEntry:
        expect_quantity(self.power, "power", "power")
        expect_quantity(self.host_overhead, "ratio", "host_overhead")
        expect_quantity(self.host_power_fraction, "ratio", "host_power_fraction")
        if self.rental is not None and self.rental.largest() > self.chips:
            raise ValueError(f"rental unit of {self.rental.largest()} chips is larger than the system's {self.chips}")
        if self.scaleup.size > self.chips:
            # a group of ranks within scaleup.size runs on the scale-up links: a 16-chip domain on an 8-chip
            # server had run TP16 across two servers at NVLink speed
            raise ValueError(
                f"scaleup.size {self.scaleup.size} is larger than the system's {self.chips} chips; a scale-up domain "
                "lies within one system (make the system the whole domain, chips: "
                f"{self.scaleup.size}, or give a size of at most {self.chips})"
            )
        if self.members and sum(self.members.values()) != self.chips:
            raise ValueError(f"members add up to {sum(self.members.values())} chips, not the system's {self.chips}")
        for link in self.links:
            for end in link.between:
                if self.members and end not in self.members:
                    raise ValueError(f"link end '{end}' is not a member chip of the system")
        return self


class PriceEntry(_Strict):
    """A price for renting a system (per system-hour) or a chip (per chip-hour) in one mode, region and date."""

    system: str = ""
    chip: str = ""
    provider: str
    region: str = ""
    mode: PricingMode
    value: float = Field(ge=0, allow_inf_nan=False)
    unit: Literal["USD/h"] = "USD/h"
    date: str = ""
    status: Status
    source: SourceList = Field(default_factory=list)
    note: str = ""
    derivation: str = ""

    @field_validator("date", mode="before")
    @classmethod
    def _date_text(cls, v: Any) -> Any:
        """A date as text (YAML reads an unquoted 2026-01-15 as a date), checked: the newest price wins by comparing
        dates as text, where '2026-7' had sorted after '2026-10' and 'yesterday' after both."""
        text = str(v).strip() if v is not None else ""
        if text and not DATE.match(text):
            raise ValueError(f"date {text!r} is not a date: give YYYY-MM (e.g. '2026-07'), YYYY or YYYY-MM-DD")
        return text

    @model_validator(mode="after")
    def _target(self) -> PriceEntry:
        if bool(self.system) == bool(self.chip):
            raise ValueError("a price names exactly one of 'system' or 'chip'")
        if self.status in ("estimate", "projected") and not self.derivation.strip():
            raise ValueError(f"a price with status '{self.status}' needs a 'derivation'")
        if self.status in ("spec", "measured", "announced") and not self.source:
            raise ValueError(f"a price with status '{self.status}' needs a 'source'")
        return self


class FabricTier(_Strict):
    """One switching tier of a scale-out Clos, from the leaf up: how many chips sit below one switch group of
    the tier, the switch radix, its downlink:uplink oversubscription (1 = non-blocking) and per-hop latency."""

    name: str
    chips: Figure | None = None
    radix: Figure | None = None
    oversubscription: Figure | None = None
    latency: Figure | None = None
    note: str = ""


class FabricEntry(_Strict):
    name: str
    layer: Literal["scaleup", "scaleout"]
    kind: str
    latency: Figure
    bus_efficiency: Figure
    status: Literal["spec", "announced", "projected"] = "spec"
    tiers: list[FabricTier] = Field(default_factory=list)
    note: str = ""
    source: SourceList = Field(default_factory=list)

    @model_validator(mode="after")
    def _units(self) -> FabricEntry:
        expect_quantity(self.latency, "time", "latency")
        expect_quantity(self.bus_efficiency, "ratio", "bus_efficiency")
        if self.bus_efficiency.value == 0:  # every collective divides by it: 0 had crashed with ZeroDivisionError
            raise ValueError("'bus_efficiency' is 0: an efficiency of 0 moves no data; give a positive number")
        return self


class ModelIndexEntry(BaseModel):
    """A model preset: a Hugging Face config.json in the catalog, with where it came from. Only these fields: extras
    had been allowed for the built-in index's params_source and notes, and took a file's `alias:` in silence (and an
    `alias_of`, a field nothing read, is dropped)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    file: str
    source: str
    aliases: list[str] = Field(default_factory=list)
    params_published: float | None = None
    active_params_published: float | None = None
    #: where params_published comes from (a paper, a model card)
    params_source: str = ""
    #: how the config differs from a plain copy of the published one, and what could not be confirmed
    notes: str = ""
