"""The ground-truth tables' records: a training run, a serving run and its measured metrics, and the reasons a
row cannot be predicted (``skip_reason``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

KNOWN_CHIPS: Final[frozenset[str]] = frozenset(
    {
        "trn1", "inf2", "trn2", "trn3", "trn4",
        "a100-40gb", "a100-80gb", "h100-sxm", "h100-96gb", "h800", "h200", "gh200", "gh200-96gb",
        "b200", "b300", "gb200", "gb300", "rtx-pro-6000d",
        "mi300x", "mi325x", "mi355x",
        "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-v7",
        "gaudi2", "gaudi3",
    }
)  # fmt: skip


SKIP_NO_THROUGHPUT: Final[str] = "no throughput or step time"
SKIP_MFU_ONLY: Final[str] = "MFU only (peak FLOP/s denominator not given)"
SKIP_UNIT_AMBIGUOUS: Final[str] = "throughput unit ambiguous (per chip or total)"
SKIP_NO_CHIPS: Final[str] = "no chip count"
SKIP_MIXED: Final[str] = "mixed hardware"
SKIP_NO_METRIC: Final[str] = "no measured metric"
SKIP_DISAGGREGATED: Final[str] = "prefill/decode disaggregated serving whose pools the row does not state"


def unknown_chip(chip: str, known: Iterable[str]) -> str:
    """The skip reason of a row whose chip the catalog does not hold, with the id it was likely meant to be
    ('chip not in catalog: h100-sxz; did you mean h100-sxm?')."""
    close = difflib.get_close_matches(chip.lower(), sorted(known), n=1, cutoff=0.6) if chip else []
    return f"chip not in catalog: {chip or '<empty>'}" + (f"; did you mean {close[0]}?" if close else "")


@dataclass(frozen=True)
class ModelDims:
    """Model shape as the row gives it; ``None`` where the row leaves a field blank."""

    name: str
    arch: str
    params_total: float | None
    params_active: float | None
    layers: int | None
    hidden: int | None
    ffn_hidden: int | None
    heads: int | None
    kv_heads: int | None
    vocab: int | None
    experts: int | None = None
    top_k: int | None = None


@dataclass(frozen=True)
class Measured:
    """One measured figure in SI units, with the statistic the source reports."""

    metric: str
    value: float
    stat: str


@dataclass(frozen=True)
class TrainingRow:
    id: str
    source_family: str
    model: ModelDims
    chip: str
    num_chips: int | None
    precision: str
    seq_len: int | None
    global_batch_tokens: float | None
    micro_batch: int | None
    plan: dict[str, int | str | bool]
    plan_counts_cores: bool
    measured: Measured | None
    skip_reason: str | None
    lora: bool
    notes: str
    raw: dict[str, str] = field(repr=False)


@dataclass(frozen=True)
class InferenceRow:
    id: str
    source_family: str
    model_name: str
    arch: str
    params_total: float | None
    params_active: float | None
    chip: str
    num_chips: int | None
    weight_precision: str
    kv_precision: str
    engine: str
    tp: int
    pp: int
    ep: int
    dp: int
    attention_dp: bool
    plan_counts_cores: bool
    plan_given: bool
    scenario: str
    concurrency: int | None
    max_batch: int | None
    request_rate: float | None
    input_len: float | None
    output_len: float | None
    ttft_limit_s: float | None
    tpot_limit_s: float | None
    speculative: bool
    measured: list[Measured]
    skip_reason: str | None
    notes: str
    raw: dict[str, str] = field(repr=False)
    num_requests: int | None = None
    #: the SGLang scheduler's polling interval the row states (--scheduler-recv-interval N), in decode iterations
    recv_interval: int | None = None
    #: the sequence length a static-shape (Neuron) deployment was compiled for, where stated: its last bucket
    compiled_length: int | None = None
    #: the run captures its prompt iterations in piecewise CUDA graphs (enable_piecewise_cuda_graph)
    piecewise_graphs: bool = False
    #: prefill/decode disaggregation with stated pools: the prefill pool's (tp, pp, ep, attention_dp, replicas);
    #: tp ... dp above are then the decode pool's
    prefill_pool: tuple[int, int, int, bool, int] | None = None
    #: the precision the row ran at as read: its column, or where that is silent its checkpoint's name or the
    #: publication's own statement (SOURCE_PRECISIONS)
    precision_text: str = ""
