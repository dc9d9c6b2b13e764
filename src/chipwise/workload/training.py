"""A training job: the model, the batch, the precision, and how many tokens to train on."""

from __future__ import annotations

import math
from dataclasses import dataclass

from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.workload.bounds import Bound
from chipwise.workload.model import ModelSpec

#: The largest batch of a published frontier pre-training run: Llama 3 405B's final 16M tokens (Llama 3 Herd of
#: Models, 2024, section 3.4.1). Past it a default batch is marked: beyond the critical batch size a run needs more
#: tokens for the same loss, which a time to train for a fixed token count leaves out.
LARGEST_PUBLISHED_BATCH_TOKENS = 16 * 2**20

#: Sequence length of a training run that gives none: Llama 3's pre-training length (Llama 3 Herd of Models, section
#: 3.4.1: 8K tokens before the long-context stage), or the model's context where shorter
DEFAULT_TRAIN_SEQ_LEN = 8192
#: The largest batch a job may have: a thousand times that (some 16.8B tokens a step, 16,000 tokens on each of a
#: million chips, the largest fleet planned). 1e308 tokens had hung the plan search in finding its divisors.
MAX_BATCH_TOKENS = 1000 * LARGEST_PUBLISHED_BATCH_TOKENS


BATCH = Bound(
    MAX_BATCH_TOKENS,
    "tokens",
    "past a thousand times the largest published batch (Llama 3 405B's 16M tokens)",
    "give a batch of at most that many tokens, e.g. 4M",
)


PRECISIONS: tuple[str, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")
RECOMPUTE_MODES: tuple[str, ...] = ("none", "selective", "full")


def training_precision(text: str) -> str:
    """A training precision as PRECISIONS names it, in any case ('FP8' is fp8, as plan serve reads it); else one
    line naming those there are."""
    precision = str(text).strip().lower()
    if precision not in PRECISIONS:
        raise UnknownNameError("precision", str(text), PRECISIONS, hint=f"use one of {', '.join(PRECISIONS)}")
    return precision


@dataclass(frozen=True)
class TrainingJob:
    """One pre-training (or fine-tuning) run.

    global_batch: sequences per optimizer step; seq_len: tokens per sequence; tokens: total tokens to train on
    (None when only the step is asked for). lora: only adapters are trained (weights frozen: no weight gradients,
    no optimizer state for them).
    """

    model: ModelSpec
    seq_len: int
    global_batch: int
    precision: str = "bf16"
    tokens: float | None = None
    lora: bool = False

    def __post_init__(self) -> None:
        if self.seq_len <= 0:
            raise ChipwiseError(f"seq_len must be positive, got {self.seq_len}. Fix: give a positive sequence length.")
        if self.global_batch <= 0:
            raise ChipwiseError(
                f"global batch must be at least one sequence, got {self.global_batch}. Fix: raise the batch."
            )
        BATCH.require(self.global_batch * self.seq_len, "a global batch of")
        object.__setattr__(self, "precision", training_precision(self.precision))
        if self.tokens is not None and self.tokens <= 0:
            raise ChipwiseError(
                f"tokens must be positive, got {self.tokens:g}. Fix: give the number of tokens to train on."
            )

    @property
    def global_batch_tokens(self) -> int:
        return self.global_batch * self.seq_len

    @property
    def steps(self) -> int | None:
        """Optimizer steps to see `tokens`: whole steps, at least one (1,000 tokens on a 524,288-token batch is
        one step, not 0.002 of one). The ratio is rounded down within a part in 10^9 first, so that float noise
        in an exact multiple does not add a step."""
        if self.tokens is None:
            return None
        return max(1, math.ceil(self.tokens / self.global_batch_tokens * (1 - 1e-9)))

    @classmethod
    def from_tokens(
        cls,
        model: ModelSpec,
        seq_len: int,
        global_batch_tokens: float,
        precision: str = "bf16",
        tokens: float | None = None,
        lora: bool = False,
    ) -> TrainingJob:
        if global_batch_tokens <= 0:
            raise ChipwiseError(
                f"global batch tokens must be positive, got {global_batch_tokens:g}. Fix: give a positive batch."
            )
        BATCH.require(global_batch_tokens, "a global batch of")  # before rounding: round(inf) raised OverflowError
        if global_batch_tokens < seq_len:
            # the batch is whole sequences: 100 tokens had silently become one sequence of 8,192
            raise ChipwiseError(
                f"global batch of {global_batch_tokens:,.0f} tokens is less than one {seq_len:,}-token sequence. Fix: "
                f"give at least {seq_len:,} tokens, or a shorter seq_len."
            )
        batch = max(1, round(global_batch_tokens / seq_len))
        return cls(model=model, seq_len=seq_len, global_batch=batch, precision=precision, tokens=tokens, lora=lora)


def default_global_batch_tokens(model: ModelSpec, chips: int = 0) -> int:
    """A conventional batch when none is given: 1M tokens for models under 10B parameters, 4M above (GPT-3:
    3.2M; Llama 3: 4M rising to 16M), and at least 1,024 tokens per chip on large fleets (Llama 3 405B trained
    with 16M tokens on 16,384 GPUs), so that data parallelism can use a big fleet."""
    base = 4 * 2**20 if model.params_total >= 10e9 else 2**20
    return max(base, 1024 * chips)
