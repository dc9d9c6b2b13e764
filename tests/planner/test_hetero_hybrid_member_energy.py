"""plan hetero --hybrid: each part alone in the rack draws its own chips' share of the rack's power. Split evenly, a
GB300 drew 2,381 W like a Trainium4 (2,800 W and 1,960 W by the rack's derivation): 405B on 1T tokens read 1.46 GWh
for Trainium4 alone and 1.02 GWh for GB300 alone, where per-type power gives 1.72 GWh and 833 MWh (the review's own
patch, taking each type's TDP x 1.4, got the same); the mix, which uses both halves, stays at 1.32 GWh. Since the
chips a plan leaves out stand in for its spares (32 of 36 used: 4 idle cover 0.64 spares, where 0.72 more had idled
on top), GB300 alone is 830 MWh and the mix 1.31 GWh. With the node-level busy load of 0.76 (0.8 before), Trainium4
alone drew 32 busy x 0.76 x 2,800.65 W + 4 idle x 420.16 W = 69,793 W (73,377 W at 0.8), x PUE 1.15 over its
73.24 Ms: 1.63 GWh; GB300 alone 789 MWh and the mix 1.25 GWh. With the rack's overhead at its sibling racks' 1.29
(157.9 kW, where x 1.4 had made 171.4 kW), a Trainium4 takes 2,580.07 W: 1.50 GWh alone, GB300 726 MWh and the mix
1.15 GWh. With the rack's Trn4-Trn4 link at its NVLink 5 switch's 900 GB/s (not Trainium4's 1.8 TB/s port), Trainium4
alone runs longer: 1.61 GWh, and the mix 1.17 GWh."""

from __future__ import annotations

from chipwise.catalog import Catalog
from chipwise.planner.hetero import plan_hetero_training


def test_each_part_alone_in_the_rack_draws_its_own_power(catalog: Catalog) -> None:
    r = plan_hetero_training(
        catalog, "llama-3.1-405b", {"trn4": 36, "gb300": 36}, tokens=1e12, hybrid="trn4-gb300-fusion-rack"
    )
    alone = {row["hardware"]: row for row in r["alone"]}
    assert (
        round(alone["trn4"]["expected_energy_j"] / 3.6e12, 2) == 1.61
    )  # GWh (1.49 at the 1.8 TB/s link; 1.50 before TP4 ran through a chip's own memory); 1.63 at x 1.4, 1.72 at 0.8
    assert round(alone["gb300"]["expected_energy_j"] / 3.6e9) == 726  # MWh; 789 at x 1.4, 830 at 0.8
    assert round(r["mixed"]["expected_energy_j"] / 3.6e12, 2) == 1.17  # 1.15 at 1.8 TB/s, 1.25 at x 1.4, 1.31 at 0.8
