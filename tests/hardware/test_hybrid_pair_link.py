"""A hybrid rack's pair link (Trainium4 <-> GB300 over NVLink Fusion) caps what crosses between its chip types: each
chip of the larger end exchanges with one of the other over a path of the pair link's rate at most, beside each
end's own ports. The built-in link (900 GB/s, the GB300's own port) caps nothing beyond the ends' ports (a
Trainium4 in this NVLink 5 rack runs at the switch's 900 GB/s port too, not its own 1.8 TB/s NVLink 6 one); a
narrower one set with --set now moves the pipeline hand-off and the KV transfer (it had been read for its latency
only: 10 GB/s and 900 GB/s gave the same 197 us hand-off)."""

from __future__ import annotations

import numpy as np
import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.hardware import Hardware, hardware
from chipwise.hardware.objects import System
from chipwise.planner.hetero import _parts
from chipwise.train.hetero import HeteroPlans, hetero_step
from chipwise.workload import load_model
from chipwise.workload.training import TrainingJob

RACK = "trn4-gb300-fusion-rack"
NARROW = f"{RACK}.links.trn4-gb300.bandwidth=10GB/s"
EFF = 0.77  # nvlink-fusion's achievable fraction


@pytest.fixture(scope="module")
def narrow() -> Catalog:
    return load_catalog(sets=[NARROW])


def _rack(hw: Hardware) -> System:
    return hw.system(RACK)


def test_the_built_in_pair_link_caps_nothing(hw: Hardware) -> None:
    """2 Trainium4 (TP8, four cores a chip) -> 8 GB300: min(2 x 0.9, 8 x 0.9, 8 x 0.9) TB/s x 0.77 = 1.386 TB/s (each
    Trainium4 at the NVLink 5 switch's port); one GB300 -> half a Trainium4 (TP2): min(0.9, 0.5 x 0.9, 1 x 0.9) TB/s
    x 0.77 = 346.5 GB/s."""
    rack = _rack(hw)
    assert rack.path_bandwidth("trn4", "gb300") == pytest.approx(900e9 * EFF)
    assert rack.cross_bandwidth("trn4", 2, "gb300", 8) == pytest.approx(2 * 900e9 * EFF) == pytest.approx(1.386e12)
    assert rack.cross_bandwidth("gb300", 1, "trn4", 0.5) == pytest.approx(346.5e9)
    assert rack.cross_bandwidth("trn4", 0.5, "gb300", 2) == pytest.approx(346.5e9)


def test_a_narrower_pair_link_caps_each_path(narrow: Catalog) -> None:
    """At 10 GB/s a path: 2 Trainium4 -> 8 GB300 cross over 8 paths, 8 x 10 GB/s x 0.77 = 61.6 GB/s (1.386 TB/s
    built in); one GB300 -> half a Trainium4 over one, 7.7 GB/s (346.5 GB/s built in)."""
    rack = _rack(hardware(narrow))
    pair = rack.link("trn4", "gb300")
    assert pair is not None and pair[0] == 10e9
    assert rack.cross_bandwidth("trn4", 2, "gb300", 8) == pytest.approx(8 * 10e9 * EFF) == pytest.approx(61.6e9)
    assert rack.cross_bandwidth("gb300", 1, "trn4", 0.5) == pytest.approx(7.7e9)


@pytest.mark.parametrize(("which", "per_s"), [("built-in", 1.386e12), ("narrow", 61.6e9)])
def test_the_pipeline_hand_off_crosses_at_the_pair_link(
    catalog: Catalog, narrow: Catalog, which: str, per_s: float
) -> None:
    """docs/hybrid.md's Llama-3.1-405B boundary, a TP8 Trainium4 stage (2 chips) handing to a TP8 GB300 stage (8): a
    micro-batch's 1 x 8,192 x 16,384 x 2 B = 268.4 MB each way, plus the pair link's 1.5 us. Built in 2 x (193.7 +
    1.5) us = 390.4 us (the two Trainium4 send at the NVLink 5 port, 2 x 0.9 TB/s x 0.77); at 10 GB/s a path
    2 x (4,357.7 + 1.5) us = 8.718 ms (the hand-off had ignored the link's bandwidth)."""
    cat = catalog if which == "built-in" else narrow
    (trn4, gb300), link, _, _ = _parts(cat, {"trn4": 36, "gb300": 36}, RACK)
    assert link.per_path == pytest.approx(per_s / 8 if which == "narrow" else 900e9 * EFF)
    model = load_model(cat, "llama-3.1-405b")
    job = TrainingJob(model, 8192, 256, "bf16")
    one = np.ones(1, dtype=np.int64)  # TP8 PP8 on trn4, TP8 PP2 on gb300, DP2, one-sequence micro-batches
    hp = HeteroPlans(8 * one, 8 * one, 8 * one, 2 * one, 2 * one, one, one)
    rates = (link.per_chip["trn4"], link.per_chip["gb300"])
    res = hetero_step(model, job, trn4, gb300, hp, rates, link.latency_s, link.per_path)
    activation = 8192 * 16384 * 2
    assert float(res.hand_off[0]) == pytest.approx(2 * (activation / per_s + 1.5e-6))
    assert float(res.hand_off[0]) == pytest.approx(390.4e-6 if which == "built-in" else 8.718e-3, rel=1e-3)
