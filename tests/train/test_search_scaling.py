"""More chips at a fixed global batch are never slower: the search at N chips holds the pipeline depths a smaller
fleet's best plan used (balanced_depths), so it finds that plan or a faster one."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.hardware import Hardware
from chipwise.train.plans import balanced_depths
from chipwise.train.search import search_plans
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob


@pytest.mark.parametrize(
    ("model", "chip", "batch", "chips"),
    [
        # 1,408 H100 ran TP4 PP11 DP16 CP2 in 73.30 s a step; 1,416-1,520 found only TP4 PP21 DP8 CP2, 76.59 s
        ("llama-3.1-405b", "h100-sxm", 2048, range(1264, 1544, 8)),
        # GPT-3 175B: 1,408 H100 ran TP3 PP7 DP64 in 28.92 s; 1,424-1,520 took 29.32 s
        ("gpt3-175b", "h100-sxm", 8192, range(1376, 1536, 16)),
        ("llama-3.1-405b", "trn2", 2048, range(3296, 3584, 32)),
        ("llama-3.1-70b", "h100-sxm", 512, range(64, 1088, 64)),
    ],
)
def test_more_chips_are_never_slower_at_a_fixed_batch(
    catalog: Catalog, hw: Hardware, model: str, chip: str, batch: int, chips: range
) -> None:
    spec = load_model(catalog, model)
    system = hw.system(chip)
    job = TrainingJob(spec, 8192 if model != "gpt3-175b" else 2048, batch)
    best_n, best = 0, float("inf")
    slower = []
    for n in chips:
        search = search_plans(spec, job, system, n)
        step = float(search.result.step_time[search.best])
        if step > best * (1 + 1e-9):
            p = search.result.plans.plan(search.best)
            slower.append(f"{n}: {step:.2f} s (TP{p['tp']} PP{p['pp']} DP{p['dp']}) > {best_n}: {best:.2f} s")
        if step < best:
            best_n, best = n, step
    assert not slower, "; ".join(slower)


def test_balanced_depths() -> None:
    # the fewest stages for each number of layers a stage: 126 layers at 12 a stage take 11 stages
    assert sorted(balanced_depths(126, (1,))) == [*range(1, 15), 16, 18, 21, 26, 32, 42, 63, 126]
    assert sorted(balanced_depths(80, (1,))) == [*range(1, 11), 12, 14, 16, 20, 27, 40, 80]
    # interleaved: the balanced depths of ceil(layers / vpp) layers
    assert balanced_depths(80, (4,)) == balanced_depths(20, (1,))
