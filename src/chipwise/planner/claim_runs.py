"""The training runs `chipwise claims` rests on (planner.claims): each prediction computed once, the model FLOP/s
a run achieves, the planner's reason where a run has no plan, and the price per chip-hour a run is charged."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.economics.pricing import PriceQuote, price_per_chip_hour
from chipwise.errors import InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.planner.training import attach_economics, default_global_batch, make_job
from chipwise.train.explain import plan_result
from chipwise.train.search import search_plans
from chipwise.workload.presets import load_model

#: the sequence length every training run of the claims uses
SEQ = 8192


class ClaimRuns:
    """Training predictions used by the claims, computed once each."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.hw = hardware(catalog)
        self._cache: dict[tuple[Any, ...], dict[str, Any] | str] = {}

    def system(self, name: str) -> System:
        return self.hw.system(name)

    def train(
        self,
        model: str,
        system: str,
        chips: int,
        precision: str,
        tokens: float | None = None,
        pricing: str = "on-demand",
        global_batch: int | None = None,
    ) -> dict[str, Any] | str:
        """The best plan's prediction with economics, or the reason there is none (`global_batch`: sequences a step,
        the planner's default for the fleet where None)."""
        key = (model, system, chips, precision, tokens, pricing, global_batch)
        if key not in self._cache:
            spec = load_model(self.catalog, model)
            sys_ = self.system(system)
            job = make_job(spec, SEQ, None, global_batch, precision, tokens, chips=chips)
            try:
                search = search_plans(spec, job, sys_, chips)
            except InfeasibleError as exc:
                self._cache[key] = str(exc)
            else:
                row = plan_result(search, search.best)
                self._cache[key] = attach_economics(row, self.catalog, sys_, chips, pricing, model=spec)
        return self._cache[key]

    def best(
        self, model: str, system: str, chips: int, tokens: float | None, pricing: str, key: str
    ) -> dict[str, Any] | str:
        """The cheaper (by `key`) of the bf16 and fp8 predictions: each chip runs in the precision that suits it."""
        runs = [self.train(model, system, chips, p, tokens, pricing) for p in ("bf16", "fp8")]
        ok = [r for r in runs if isinstance(r, dict) and _finite(r.get(key))]
        if not ok:
            return runs[0]
        return min(ok, key=lambda r: float(r[key]))


def filling_batch(runs: ClaimRuns, model: str, fleets: Sequence[int]) -> int:
    """One batch in sequences for fleets of `fleets` chips compared whole: the least multiple of every fleet's chips
    at or above the planner's default for the largest, so that each does the same work a step and data parallelism
    can keep every chip busy. Claim 1 had run the planner's 512 sequences on both UltraServers, which left 16 of the
    Trn3 UltraServer's 144 chips idle (the plan's data parallelism divides the batch: DP128 x CP4): 3.53x a Trn2
    UltraServer's FP8 tokens/s, where 576 sequences (lcm(144, 64), DP144 x CP4) give 3.97x."""
    step = math.lcm(*fleets)
    default = default_global_batch(load_model(runs.catalog, model), SEQ, max(fleets))
    return step * max(1, math.ceil(default / step))


def _finite(v: Any) -> bool:
    return v is not None and isinstance(v, int | float) and math.isfinite(v)


def achieved_flops(run: dict[str, Any] | str) -> float:
    """A training run's model FLOP/s per chip (SI: tokens/s x FLOPs per token), NaN where no plan fits; not the
    TFLOP/s display field converted back."""
    return run["tokens_per_s_per_chip"] * run["model_flops_per_token"] if isinstance(run, dict) else math.nan


def charged_price(runs: ClaimRuns, system: str, mode: str) -> PriceQuote | None:
    """The price per chip-hour a run of `system` in `mode` is charged (the figure the ratios and the texts share)."""
    return price_per_chip_hour(runs.catalog, runs.system(system), mode)


def plan_reason(run: dict[str, Any] | str) -> str:
    """The planner's reason a run has no plan, without its fix (the claims' own texts say what to change)."""
    return run.split(". Fix")[0] if isinstance(run, str) else ""


def no_plan_text(runs: Sequence[tuple[str, dict[str, Any] | str]]) -> str:
    """'no plan for Trn3 (REASON)' for each of the runs that found none, or ''."""
    return "; ".join(f"no plan for {name} ({plan_reason(r)})" for name, r in runs if isinstance(r, str))
