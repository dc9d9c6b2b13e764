"""Which figures a catalog entry takes, and the range each figure of the free-form sections must lie in.

Chips, systems and fabrics have a schema (catalog.schema); the efficiency, engines and datacenter sections are
trees of figures whose fields are those the model reads: an efficiency family takes the fields of the `default`
family, an engine those of the `default` engine (and per chip family under `chips`), the datacenter section those
of the built-in one, plus new keys in the maps keyed by a region, an operator or a service (a region's electricity
price, an operator's PUE). A field outside them was silently ignored ('hopper.nonsense=5', 'vllm.step_overhed=2ms'),
a fraction above 1 priced a chip at 113% MFU, a PUE below 1 made energy from nothing, a chip's TDP of 0 left its
energy host-only, and a storage bandwidth of 0 wrote a checkpoint in infinite time: all are refused here, for `--set`
and catalog files alike (a chip's and a system's power too).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chipwise.catalog.schema import PRICING_MODES
from chipwise.catalog.units import UNITS

#: datacenter maps keyed by a region, an operator or a service, where `--set` or a catalog file may add a key
OPEN_MAPS: tuple[str, ...] = (
    "pue",
    "electricity_usd_per_kwh",
    "grid_intensity",
    "google_cfe_fraction",
    "managed_service_markup",
)
#: engine fields that are switches: 1 on, 0 off
ENGINE_FLAGS: tuple[str, ...] = (
    "chunked_prefill",
    "mixed_batching",
    "static_batch",
    "quantised_kv",
    "moe_compiled",
    "decode_first",
    "budget_covers_sequence",
    "adp_budget_per_rank",
    "adp_host_loops",
    "prefix_cache",
    "kv_handover",
    "kv_pull",
)


@dataclass(frozen=True)
class Range:
    """The values a figure may take, in SI units: lo..hi, each end open or closed; `flag`: 0 or 1 only."""

    lo: float = 0.0
    hi: float = math.inf
    lo_open: bool = False
    hi_open: bool = False
    what: str = ""
    flag: bool = False
    #: the unit the line gives the value and bounds in (catalog.units), where SI would read poorly: a grid's
    #: 5,000 g CO2e/kWh is 1.39e-06 kg CO2e/J
    unit: str = ""

    def problem(self, value: float) -> str | None:
        """Why `value` (SI) is out of range (None where it is in it)."""
        if self.flag:
            return None if value in (0.0, 1.0) else f"{value:g} is not 0 or 1 ({self.what})"
        below = value <= self.lo if self.lo_open else value < self.lo
        above = value >= self.hi if self.hi_open else value > self.hi
        if not (below or above):
            return None
        scale = UNITS[self.unit][1] if self.unit else 1.0
        left = "(" if self.lo_open else "["
        right = ")" if self.hi_open or math.isinf(self.hi) else "]"
        hi = "inf" if math.isinf(self.hi) else f"{self.hi / scale:g}"
        unit = f" {self.unit}" if self.unit else ""
        return f"{value / scale:g}{unit} is not in {left}{self.lo / scale:g}, {hi}{right}{unit} ({self.what})"


_FRACTION = Range(0.0, 1.0, lo_open=True, what="an achievable fraction of peak: above 0, at most 1")
_SHARE = Range(0.0, 1.0, what="a share: 0 to 1")
_COUNT = Range(1.0, what="a count of at least 1")
#: a power a chip, a system or a network draws: a TDP of 0 had left energy host-only, as a bandwidth of 0 is refused
_POWER = Range(0.0, lo_open=True, what="a power drawn: above 0")
#: an idle share of 0 is a what-if (perfect power gating), kept; a network of 0 W too (no scale-out network)
_IDLE = Range(0.0, 1.0, what="a share of rated power drawn idle: 0 to 1")
#: a storage bandwidth of 0 had written each checkpoint in an infinite time, priced at $inf and inf TWh
_BANDWIDTH = Range(0.0, lo_open=True, what="a bandwidth: above 0")

#: section -> (pattern of the dotted path inside the section, its range); the first pattern that matches applies
RANGES: dict[str, tuple[tuple[str, Range], ...]] = {
    "chips": (("*.tdp", _POWER),),
    "systems": (
        ("*.power", _POWER),
        # 0 is a what-if (a host that draws nothing), as a network of 0 W is
        ("*.host_power_fraction", Range(0.0, what="a host's power over its chips' TDP: 0 or more")),
    ),
    "efficiency": (
        ("*.matmul.*", _FRACTION),
        ("*.memory", _FRACTION),
        ("*.attention", _FRACTION),
        ("*.moe_gemm", _FRACTION),
        ("*.tp_overlap", _SHARE),
        ("*.dp_overlap", _SHARE),
        ("*.ep_overlap", _SHARE),
        ("*.compute_units", _COUNT),
        ("*.tile_m", _COUNT),
        ("*.tile_n", _COUNT),
    ),
    "engines": (
        ("*.memory_fraction", Range(0.0, 1.0, what="a share of memory: 0 to 1")),
        ("*.eager_host_share", _SHARE),
        ("*_scale", Range(0.0, lo_open=True, what="a multiplier of the family's fractions: above 0")),
        *((f"*.{flag}", Range(flag=True, what="a switch: 1 on, 0 off")) for flag in ENGINE_FLAGS),
        ("*.block_tokens", _COUNT),
        ("*.max_batch", _COUNT),
        ("*.max_tokens", _COUNT),
    ),
    "datacenter": (
        ("pue.*", Range(1.0, 3.0, what="a PUE: facility energy over IT energy, 1 to 3")),
        # the dirtiest grids the catalog holds are ~930 g (af-south-1), the world's ~1,100 g (coal alone ~1,000):
        # past 2,000 is a unit slip (kg for g, 379 kgCO2e/kWh for 379 g): 5,000 g/kWh for us-east-1 had been taken
        (
            "grid_intensity.*",
            Range(0.0, 2.0 / 3.6e6, what="a grid's carbon intensity; the dirtiest are ~1,100", unit="gCO2e/kWh"),
        ),
        (
            "pricing_mode_ratio.*",
            Range(0.0, 1.0, lo_open=True, what="a price as a fraction of on-demand: above 0, at most 1"),
        ),
        ("google_cfe_fraction.*", _SHARE),
        ("opex.idle_power_fraction", _IDLE),
        ("opex.host_idle_power_fraction", _IDLE),
        ("opex.network_power_w_per_chip", Range(0.0, what="a power drawn: 0 or more")),
        ("capex.scaleout_reference_bandwidth_per_chip", _BANDWIDTH),
        (
            "opex.utilisation_power_fraction",
            Range(0.0, 1.0, lo_open=True, what="a share of rated power drawn busy: above 0, at most 1"),
        ),
        ("*.tpu_ocs_*_fraction", _SHARE),
        ("depreciation_years", Range(0.0, lo_open=True, what="a life: above 0")),
        ("capex.facility_life_years", Range(0.0, lo_open=True, what="a life: above 0")),
    ),
    "reliability": (("checkpoint.storage_*bandwidth*", _BANDWIDTH),),
}


def range_problem(section: str, path: str, value: float) -> str | None:
    """Why the SI `value` of `section.path` is out of its range, or None (a figure with no range rule: None)."""
    for pattern, rule in RANGES.get(section, ()):
        if fnmatch.fnmatchcase(path, pattern):
            problem = rule.problem(value)
            return f"{section}.{path} = {problem}" if problem else None
    return None


def mode_order_problem(ratios: Mapping[str, float]) -> str | None:
    """A 3-year commitment's price above a 1-year one's (each a fraction of on-demand), or None."""
    one, three = ratios.get("reserved-1y"), ratios.get("reserved-3y")
    if one is not None and three is not None and three > one:
        return (
            f"datacenter.pricing_mode_ratio.reserved-3y = {three:g} is above reserved-1y's {one:g} "
            "(a longer commitment is not dearer)"
        )
    return None


def is_figure(node: Any) -> bool:
    return isinstance(node, dict) and "value" in node and "status" in node


def item_name(item: Any, index: int) -> str:
    """How a list item is named in a figure's path: a hybrid domain's link by its pair of chip types (links.trn4-
    gb300), anything else by its index (tiers.0), as `chipwise catalog show` lists them."""
    between = item.get("between") if isinstance(item, dict) else None
    return "-".join(str(b) for b in between) if isinstance(between, list) and between else str(index)


def bare_values(node: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf of a raw tree section that no figure holds, by dotted path: a bare number where a figure (a mapping
    with a value, a unit and a status) belongs, a figure short of its status (kept whole), or a key given nothing.
    The built-in sections have none."""
    if is_figure(node):
        return {}
    if isinstance(node, dict) and node and "value" not in node:
        return {
            p: v
            for k, child in node.items()
            for p, v in bare_values(child, f"{prefix}.{k}" if prefix else str(k)).items()
        }
    if isinstance(node, list):
        return {
            p: v
            for i, child in enumerate(node)
            for p, v in bare_values(child, f"{prefix}.{i}" if prefix else str(i)).items()
        }
    return {prefix: node}


def figure_paths(node: Any, prefix: str = "") -> dict[str, dict[str, Any]]:
    """Every figure of a raw catalog node by dotted path (list items named as item_name names them)."""
    out: dict[str, dict[str, Any]] = {}
    if is_figure(node):
        out[prefix] = node
    elif isinstance(node, dict):
        for k, v in node.items():
            out.update(figure_paths(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            name = item_name(v, i)
            out.update(figure_paths(v, f"{prefix}.{name}" if prefix else name))
    return out


@dataclass
class Fields:
    """The figures an entry takes: path -> the figure there now (or the one it falls back to, a family's default,
    a sibling in an open map), which fixes its unit, scale and whether it is text."""

    known: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: maps under which a new key may be added -> a sibling figure (its unit and order of magnitude)
    open: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: chips and systems take a rental price (price, price.MODE)
    prices: bool = False

    def reference(self, path: str) -> dict[str, Any] | None:
        """The figure that `path` sets, or the one it would join (an open map's sibling); None: not a field."""
        if path in self.known:
            return self.known[path]
        head, _, leaf = path.rpartition(".")
        return self.open.get(head) if leaf else None

    def takes(self, path: str) -> bool:
        if self.prices and (path == "price" or path.startswith("price.")):
            return True
        return self.reference(path) is not None


def _top_figures(node: Any) -> dict[str, dict[str, Any]]:
    """An engine node's own figures (not those under `chips`)."""
    return {k: v for k, v in (node or {}).items() if is_figure(v)} if isinstance(node, dict) else {}


#: figures a --set may add to a chip or system that has none
#: (a system with no published power: --set mi300x-8x.power=10.92kW gives it one, over the host_power_fraction rule;
#: --set mi300x-8x.host_power_fraction=0.39 its own host share in place of the datacenter default)
OPTIONAL_FIGURES: Mapping[str, tuple[str, ...]] = {
    "chips": ("unit_price",),
    "systems": ("scaleup.bandwidth", "power", "host_power_fraction"),
}


def fields_of(raw: Mapping[str, Any], builtin: Mapping[str, Any], section: str, key: str) -> Fields:
    """The figures entry `key` of `section` takes (key '' for datacenter and reliability). `raw` is the catalog
    being built, `builtin` the built-in one, whose default efficiency family, default engine and datacenter section
    name the fields those sections have."""
    sec = raw.get(section) or {}
    if section in ("chips", "systems", "fabrics"):
        figures = figure_paths(sec.get(key) or {})
        # a figure some entries lack that a what-if may give (an owned TPU v5e fleet needs a unit price: the
        # '(give one: --set tpu-v5e.unit_price=USD)' advice had been refused; a Trn2 UltraServer's scale-up total),
        # its unit from an entry that has it
        for path in OPTIONAL_FIGURES.get(section, ()):
            sibling = next(
                (c[path] for c in map(figure_paths, (builtin.get(section) or {}).values()) if path in c), None
            )
            if path not in figures and sibling is not None:
                figures[path] = {**sibling, "value": 0}  # its unit only: no value of this entry to compare with
        return Fields(known=figures, prices=section in ("chips", "systems"))
    if section == "efficiency":
        base = {**figure_paths((builtin.get("efficiency") or {}).get("default") or {})}
        base.update(figure_paths(sec.get("default") or {}))
        own = figure_paths(sec.get(key) or {})
        return Fields(known={p: own.get(p, fig) for p, fig in base.items()})
    if section == "engines":
        engines = builtin.get("engines") or {}
        base = {**_top_figures(engines.get("default")), **_top_figures(sec.get("default"))}
        # an engine's own text figures beyond the default's: its vendors, the base family it builds on
        extra = {k: v for node in engines.values() for k, v in _top_figures(node).items() if k not in base}
        entry = sec.get(key) or {}
        own = _top_figures(entry)
        known: dict[str, dict[str, Any]] = {p: own.get(p, fig) for p, fig in {**base, **extra}.items()}
        chips = entry.get("chips") if isinstance(entry, dict) else None
        for family in raw.get("efficiency") or {}:
            node = chips.get(family) if isinstance(chips, dict) else None
            fitted = _top_figures(node)
            for p, fig in base.items():
                known[f"chips.{family}.{p}"] = fitted.get(p, own.get(p, fig))
        return Fields(known=known)
    if section == "datacenter":
        now = figure_paths(sec)
        known = {p: now.get(p, fig) for p, fig in figure_paths(builtin.get("datacenter") or {}).items()}
        opened: dict[str, dict[str, Any]] = {}
        for name in OPEN_MAPS:
            siblings = figure_paths((sec.get(name) or (builtin.get("datacenter") or {}).get(name)) or {})
            if siblings:
                opened[name] = next(iter(siblings.values()))
        ratios = figure_paths(sec.get("pricing_mode_ratio") or {})
        if ratios:
            sibling = next(iter(ratios.values()))
            for mode in PRICING_MODES:
                if mode != "on-demand":
                    known.setdefault(f"pricing_mode_ratio.{mode}", sibling)
        return Fields(known=known, open=opened)
    if section == "reliability":  # the built-in section's figures, as the datacenter's
        now = figure_paths(sec)
        return Fields(known={p: now.get(p, fig) for p, fig in figure_paths(builtin.get(section) or {}).items()})
    return Fields(known=figure_paths(sec))
