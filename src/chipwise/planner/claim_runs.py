"""The training runs `chipwise claims` rests on (planner.claims): the workload they are checked on (ClaimWorkload:
the user's model, sequence length, precision, fleet size, tokens, pricing and region, each claim's own where not
given), each prediction computed once, the model FLOP/s a run achieves, the planner's reason where a run has no plan,
and the price per chip-hour a run is charged."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chipwise.catalog.loader import Catalog
from chipwise.economics.energy import check_region
from chipwise.economics.pricing import PriceQuote, check_mode, price_per_chip_hour
from chipwise.errors import ChipwiseError, InfeasibleError
from chipwise.hardware import hardware
from chipwise.hardware.objects import System
from chipwise.planner.training import attach_economics, default_global_batch, make_job
from chipwise.train.explain import plan_result
from chipwise.train.search import search_plans
from chipwise.workload.presets import load_model
from chipwise.workload.training import training_precision

#: the sequence length every training run of the claims uses unless the workload gives one
SEQ = 8192
#: the tokens a training run of the claims trains on unless the workload gives them
TOKENS = 15e12
#: the model the claims train unless the workload names one, and the one of the claims about models above 100B
CLAIM_MODEL = "llama-3.1-70b"
LARGE_MODEL = "llama-3.1-405b"
#: how the claims' default models are written in their texts (any other model as the user named it)
MODEL_LABELS = {"llama-3.1-70b": "Llama-3.1-70B", "llama-3.1-405b": "Llama-3.1-405B"}


@dataclass(frozen=True)
class ClaimWorkload:
    """The workload the claims are checked on: what the user gives replaces each claim's own (None: the claim's own
    model, fleet size or precision; the defaults are the claims' fixed workloads, so a bare `chipwise claims` reads as
    it did). A claim about one configuration keeps it (an UltraServer's chips, a 1,000,000-chip UltraCluster, the
    owned fleet of 3b, the capacity-block prices of 5e) and its workload line says so."""

    model: str | None = None
    seq_len: int = SEQ
    precision: str | None = None
    chips: int | None = None
    tokens: float = TOKENS
    pricing: str = "on-demand"
    region: str | None = None

    def model_or(self, default: str) -> str:
        return self.model or default

    def chips_or(self, default: int) -> int:
        return self.chips or default

    def precision_or(self, default: str) -> str:
        return self.precision or default

    def label(self, default: str) -> str:
        """The model as the texts name it: 'Llama-3.1-70B' for the claims' own, the user's as written."""
        name = self.model_or(default)
        return MODEL_LABELS.get(name, name)

    @property
    def given(self) -> bool:
        """Whether the user gave anything (the workload lines then say what)."""
        return self != ClaimWorkload()

    def pricing_text(self) -> str:
        """'on-demand prices' or 'reserved-1y prices in us-west-2'."""
        return f"{self.pricing} prices" + (f" in {self.region}" if self.region else "")


def check_workload(catalog: Catalog, workload: ClaimWorkload) -> ClaimWorkload:
    """The workload with its precision as PRECISIONS names it, or one line naming what is wrong with it: an unknown
    model, precision, pricing mode or region, a sequence longer than the model's context, a fleet of no chips; a model
    the user's fleet cannot hold is refused by ClaimRuns.require_fit."""
    if workload.model is not None:
        spec = load_model(catalog, workload.model)
        make_job(spec, workload.seq_len, None, 1, "bf16", None)  # its context and sequence checks
    if workload.chips is not None and workload.chips < 1:
        raise ChipwiseError(f"--chips {workload.chips} is no fleet. Fix: give 1 chip or more, e.g. --chips 4096.")
    if not (math.isfinite(workload.tokens) and workload.tokens > 0):
        raise ChipwiseError(f"--tokens {workload.tokens:g} is no training run. Fix: give a positive count, e.g. 15T.")
    check_mode(workload.pricing)
    if workload.region is not None:
        check_region(catalog, workload.region)
    precision = training_precision(workload.precision) if workload.precision is not None else None
    return ClaimWorkload(
        workload.model,
        workload.seq_len,
        precision,
        workload.chips,
        workload.tokens,
        workload.pricing,
        workload.region,
    )


class ClaimRuns:
    """Training predictions used by the claims, computed once each, on `workload` (the claims' own by default);
    `progress` is told the runs made so far after each (training predictions and serving simulations: counted)."""

    def __init__(
        self, catalog: Catalog, workload: ClaimWorkload | None = None, progress: Callable[[int], None] | None = None
    ) -> None:
        self.catalog = catalog
        self.workload = workload or ClaimWorkload()
        self.hw = hardware(catalog)
        self._cache: dict[tuple[Any, ...], dict[str, Any] | str] = {}
        self.ran = 0
        self._progress = progress

    def counted(self) -> None:
        """One more run made (a training prediction, or a serving simulation: claim_serving.serve), told to
        `progress`."""
        self.ran += 1
        if self._progress is not None:
            self._progress(self.ran)

    def require_fit(self, model: str, system: str, chips: int, precision: str) -> None:
        """One line where the user's model finds no plan on the user's fleet of `system` (the claims' Trainium3): every
        check of it would read 'cannot be checked'."""
        run = self.train(model, system, chips, precision)
        if isinstance(run, str):
            raise ChipwiseError(
                f"{model} has no {precision} training plan on {chips:,} {self.system(system).chip.id} chips "
                f"({plan_reason(run)}). Fix: give more --chips or a smaller --model."
            )

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
        return self.train_on(self.system(system), model, chips, precision, tokens, pricing, global_batch)

    def train_on(
        self,
        sys_: System,
        model: str,
        chips: int,
        precision: str,
        tokens: float | None = None,
        pricing: str = "on-demand",
        global_batch: int | None = None,
        tag: str = "",
    ) -> dict[str, Any] | str:
        """As train, on a System object (`tag` names how it differs from the catalog's, for the cache: a what-if of
        its efficiencies, planner.claim_priors)."""
        key = (model, sys_.id, chips, precision, tokens, pricing, global_batch, tag)
        if key not in self._cache:
            spec = load_model(self.catalog, model)
            seq = self.workload.seq_len
            job = make_job(spec, seq, None, global_batch, precision, tokens, chips=chips)
            try:
                search = search_plans(spec, job, sys_, chips)
            except InfeasibleError as exc:
                self._cache[key] = str(exc)
            else:
                row = plan_result(search, search.best)
                region = self.workload.region
                self._cache[key] = attach_economics(row, self.catalog, sys_, chips, pricing, region, model=spec)
            self.counted()
        return self._cache[key]

    def best(
        self, model: str, system: str, chips: int, tokens: float | None, pricing: str, key: str
    ) -> dict[str, Any] | str:
        """The cheaper (by `key`) of the bf16 and fp8 predictions: each chip runs in the precision that suits it (the
        workload's precision alone where it gives one)."""
        given = self.workload.precision
        runs = [self.train(model, system, chips, p, tokens, pricing) for p in ((given,) if given else ("bf16", "fp8"))]
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
    default = default_global_batch(load_model(runs.catalog, model), runs.workload.seq_len, max(fleets))
    return step * max(1, math.ceil(default / step))


def _finite(v: Any) -> bool:
    return v is not None and isinstance(v, int | float) and math.isfinite(v)


def achieved_flops(run: dict[str, Any] | str) -> float:
    """A training run's model FLOP/s per chip (SI: tokens/s x FLOPs per token), NaN where no plan fits; not the
    TFLOP/s display field converted back."""
    return run["tokens_per_s_per_chip"] * run["model_flops_per_token"] if isinstance(run, dict) else math.nan


def charged_price(runs: ClaimRuns, system: str, mode: str) -> PriceQuote | None:
    """The price per chip-hour a run of `system` in `mode` is charged (the figure the ratios and the texts share)."""
    return price_per_chip_hour(runs.catalog, runs.system(system), mode, runs.workload.region)


def plan_reason(run: dict[str, Any] | str) -> str:
    """The planner's reason a run has no plan, without its fix (the claims' own texts say what to change)."""
    return run.split(". Fix")[0] if isinstance(run, str) else ""


def no_plan_text(runs: Sequence[tuple[str, dict[str, Any] | str]]) -> str:
    """'no plan for Trn3 (REASON)' for each of the runs that found none, or ''."""
    return "; ".join(f"no plan for {name} ({plan_reason(r)})" for name, r in runs if isinstance(r, str))
