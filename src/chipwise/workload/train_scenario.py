"""The training scenario (`kind: train` of DESIGN.md's scenario contract), validated strictly: the model, hardware
and chips, the batch, the tokens to train on, the parallel plan, how the fleet is priced and how a failed run
recovers."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from chipwise.workload.counts import Count, IntCount, training_tokens_problem
from chipwise.workload.strict_model import StrictModel

#: the least utilisation of an owned fleet a scenario and the TCO (economics.tco.PLAUSIBLE) take: under 1% a used
#: hour costs over 100x its full-use cost
MIN_UTILISATION = 0.01
#: an owned fleet's share of calendar hours in paid work, as a train and a serve scenario take it ('greater than 0'
#: had been refused again at 0.005 by the TCO)
OwnedUtilisation = Annotated[float, Field(ge=MIN_UTILISATION, le=1, allow_inf_nan=False)]


def _train_tokens(value: float) -> float:
    """A pydantic after-validator: the tokens a run trains on, within MAX_TRAIN_TOKENS."""
    problem = training_tokens_problem(value)
    if problem is not None:
        raise ValueError(f"{problem}: give the tokens of one run, e.g. 15T")
    return value


TrainTokens = Annotated[Count, AfterValidator(_train_tokens)]


class TrainScenario(StrictModel):
    """A training run: DESIGN.md's scenario contract (kind: train)."""

    kind: Literal["train"] = "train"
    model: str
    hardware: str
    chips: IntCount
    precision: str = "bf16"
    seq_len: IntCount | None = None
    global_batch_tokens: Count | None = None
    global_batch: IntCount | None = None
    tokens: TrainTokens | None = None
    plan: dict[str, Any] | None = None
    pricing: str = "on-demand"
    region: str | None = None
    provider: str | None = None
    utilisation: OwnedUtilisation | None = None
    lora: bool = False
    # how a failed run recovers (reliability.goodput.RECOVERIES, which this layer cannot import): 'best' keeps the
    # one with the higher goodput, as plan train's --recovery does; the key had been refused ('unknown key. Fix: use
    # 'provider''), and predict always took 'best'
    recovery: Literal["checkpoint", "in-memory", "best"] = "best"

    @model_validator(mode="after")
    def _batch(self) -> TrainScenario:
        if self.global_batch is not None and self.global_batch_tokens is not None:
            raise ValueError("give global_batch (sequences) or global_batch_tokens, not both")
        return self
