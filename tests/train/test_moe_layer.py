"""A MoE layer's GEMMs on one rank: the router priced as the memory-bound skinny GEMM it is, on the tokens the rank
routes; the local experts GEMM by GEMM, as the catalog's moe_gemm fractions were fitted."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.perf import collectives as coll
from chipwise.perf.compute import gemm_time
from chipwise.perf.device import device_of, topology_of
from chipwise.perf.serving import streamed_gemm_time
from chipwise.train.plans import from_dicts
from chipwise.train.step import _Groups, _Layer
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


def _matmul_fwd(catalog: Catalog, hw: Hardware, plans: list[dict[str, object]]) -> np.ndarray:
    """Mixtral 8x22B's layer forward GEMMs (seconds) on an MI300X, one 4,096-token sequence a micro-batch."""
    spec = load_model(catalog, "mixtral-8x22b")
    system = hw.system("mi300x-8x")
    dev, topo = device_of(system), topology_of(system)
    p = from_dicts(plans)
    groups = _Groups(tp=coll.group(p.tp, 1, topo), ep=coll.group(p.ep, 1, topo))
    (g,) = spec.groups
    return np.asarray(_Layer(spec, g, TrainingJob(spec, 4096, 64, "bf16"), dev, topo, p, groups).matmul_fwd)


def test_the_router_reads_its_tokens_once_on_the_tokens_a_rank_routes(catalog: Catalog, hw: Hardware) -> None:
    """Mixtral 8x22B (h 6,144, 8 experts, top 2, expert ffn 16,384) at TP8 EP8 with sequence parallelism on an
    MI300X: a rank routes 4,096 / 8 = 512 tokens, a 512 x 6,144 x 8 GEMM bound by reading its 6.3 MB of tokens:
    5.9 us, as serving prices it. It had been a training GEMM of all 4,096 tokens, padded to a 256-wide tile (x32),
    one 16-tile wave of 304 CUs (x19) and an 8-column ramp (x17): 5,782 us, 15.19 s of a 16.63 s step's compute."""
    dev = device_of(hw.system("mi300x-8x"))
    (fwd,) = _matmul_fwd(catalog, hw, [{"tp": 8, "ep": 8, "dp": 8, "recompute": "full"}])
    h, ffn = 6144.0, 16384.0
    proj = gemm_time(4096, 48 * 128 / 8 + 2 * 128, h, dev, "bf16") + gemm_time(4096, h, 48 * 128 / 8, dev, "bf16")
    router = float(streamed_gemm_time(512, 8, h, dev, "bf16", 2.0))
    # EP8 over 8 experts: one expert a rank, its 4,096 x 2 top-k x 8 ranks / 8 experts / 8 (tp) = 1,024 token copies
    experts = gemm_time(1024, 2 * ffn, h, dev, "bf16") + gemm_time(1024, h, ffn, dev, "bf16")
    assert fwd == pytest.approx(float(proj + router + experts / dev.eff.moe_gemm), rel=1e-12)
    assert router * 1e6 == pytest.approx(5.9, abs=0.05)
    assert float(gemm_time(4096, 8, h, dev, "bf16")) * 1e6 == pytest.approx(5782, abs=1)  # the old pricing
    # without sequence parallelism (TP8, no experts split) every rank routes all 4,096: 19.1 us
    off, on = _matmul_fwd(catalog, hw, [{"tp": 8, "ep": 1, "dp": 8, "sp": s} for s in (False, True)])
    full = float(streamed_gemm_time(4096, 8, h, dev, "bf16", 2.0))
    assert off - on == pytest.approx(full - router, rel=1e-9)
    assert full * 1e6 == pytest.approx(19.1, abs=0.05)


def test_the_local_experts_are_priced_gemm_by_gemm_as_the_fit_saw_them(catalog: Catalog, hw: Hardware) -> None:
    """Mixtral 8x22B at TP1 on an MI300X, EP1: all 8 experts a rank, 1,024 token copies each (4,096 x 2 / 8), each
    GEMM with its own last wave and launch, divided by the fitted moe_gemm fraction: 17.59 ms a layer's experts
    forward, beside the router's streamed GEMM of 4,096 tokens and the attention projections. Pricing them as one
    grouped GEMM (10.40 ms) without refitting moe_gemm had raised the training table's error from 9.83% to 10.63%."""
    dev = device_of(hw.system("mi300x-8x"))
    (ep1,) = _matmul_fwd(catalog, hw, [{"tp": 1, "ep": 1, "dp": 64}])
    h, ffn = 6144.0, 16384.0
    experts = gemm_time(1024, 2 * ffn, h, dev, "bf16", count=8) + gemm_time(1024, h, ffn, dev, "bf16", count=8)
    assert float(experts) / dev.eff.moe_gemm * 1e3 == pytest.approx(17.59, abs=0.01)
    proj = gemm_time(4096, 48 * 128 + 2 * 8 * 128, h, dev, "bf16") + gemm_time(4096, h, 48 * 128, dev, "bf16")
    router = streamed_gemm_time(4096, 8, h, dev, "bf16", 2.0)
    assert ep1 == pytest.approx(float(proj + router + experts / dev.eff.moe_gemm), rel=1e-12)
