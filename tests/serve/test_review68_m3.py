"""Review 68: fp8 serving on TPUs whose FP8 is only listed at the BF16 rate (H2), and a vLLM token budget below
its batch (D4)."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import InfeasibleError
from chipwise.hardware import Hardware
from chipwise.serve.build import setup_replica
from chipwise.serve.plan import ReplicaPlan
from chipwise.serve.quant import PrecisionUnsupportedError, float8_fallback, has_units
from chipwise.workload.model import ModelSpec


@pytest.mark.parametrize("chip", ["tpu-v5e", "tpu-v5p", "tpu-v6e"])
def test_tpus_before_ironwood_have_no_fp8_units(hw: Hardware, chip: str) -> None:
    """v5p and v6e list FP8 at their BF16 rate (Google's comparison table), v5e not at all: one rule for the three,
    as training's compute precision (bf16) says. v6e and v5p had served 1-byte weights at a speed-up in silence."""
    assert not has_units(hw.chip(chip), "fp8")
    with pytest.raises(PrecisionUnsupportedError, match=f"vllm cannot run fp8 weights on {chip}: the chip has no FP8"):
        float8_fallback("vllm", hw.chip(chip), "fp8", "bf16")


@pytest.mark.parametrize(
    ("chip", "precision"), [("tpu-v7", "fp8"), ("gaudi3", "fp8"), ("trn1", "fp8"), ("trn3", "fp4")]
)
def test_units_at_the_wider_rate_are_units(hw: Hardware, chip: str, precision: str) -> None:
    """Gaudi 3's FP8 and Trainium1's cFP8 run at the BF16 rate and Trainium3's MXFP4 at its FP8 rate, on units of
    their own (the Gaudi 3 fp8 serving rows are priced with 1-byte weights); Ironwood has FP8 at twice BF16."""
    assert has_units(hw.chip(chip), precision)
    assert float8_fallback("vllm", hw.chip(chip), precision, "bf16") is None


def _plan(max_batch: int, max_tokens: int) -> ReplicaPlan:
    return ReplicaPlan(tp=1, max_batch=max_batch, max_tokens=max_tokens)


def test_vllm_refuses_a_token_budget_below_its_batch(catalog: Catalog, hw: Hardware, llama8b: ModelSpec) -> None:
    model = llama8b
    with pytest.raises(InfeasibleError) as err:
        setup_replica(catalog, model, hw.system("h100-sxm"), "vllm", _plan(16, 8), 1024, 256)
    assert str(err.value) == (
        "max_tokens 8 is below max_batch 16: vllm schedules one token a running sequence a step, and refuses a token "
        "budget smaller than its batch. Fix: raise max_tokens to at least 16 or lower max_batch to 8."
    )
    # equal is what vLLM accepts (max_num_batched_tokens >= max_num_seqs)
    assert setup_replica(catalog, model, hw.system("h100-sxm"), "vllm", _plan(16, 16), 1024, 256).plan.max_tokens == 16
