"""A mixed pipeline's software faults are charged for each part's own ranks (planner.hetero._mixed_economics): a
Trainium2 chip runs four processes, an H100 one, so the mix's interruption rate is neither part's ranks a chip
applied to all of its chips, whichever part --fleet names first."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.planner.hetero import plan_hetero_training

#: reliability.yaml, per hour: a chip's accelerator faults, its network's, one rank's software, one host's
R_CHIP, R_LINK, R_SOFTWARE, R_HOST = 1.26e-5, 1.65e-6, 2.97e-6, 2.0e-5


@pytest.mark.parametrize("fleet", [{"trn2": 16, "h100-sxm": 8}, {"h100-sxm": 8, "trn2": 16}])
def test_each_part_pays_for_its_own_ranks_software_faults(catalog: Catalog, fleet: dict[str, int]) -> None:
    """16 Trainium2 (one trn2.48xlarge, 4 ranks a chip) beside 8 H100 (one p5.48xlarge, 1 rank a chip), Llama 3.1 8B:
    per hour 16 x (1.26e-5 + 1.65e-6 + 4 x 2.97e-6) = 4.1808e-4, 8 x (1.26e-5 + 1.65e-6 + 2.97e-6) = 1.3776e-4 and
    2 hosts x 2e-5 = 4e-5, 5.9584e-4 in all: 0.0143002 failures a day. One part's ranks for every chip would read
    24 x (24 x 1.722e-5 + 4e-5) = 0.0108787 (all at 1) or 24 x (24 x 2.613e-5 + 4e-5) = 0.0160109 (all at 4)."""
    m = plan_hetero_training(catalog, "llama-3.1-8b", fleet, tokens=1e10)["mixed"]
    assert m["chips_used"] == {"trn2": 16, "h100-sxm": 8}
    trn2 = 16 * (R_CHIP + R_LINK + 4 * R_SOFTWARE)
    h100 = 8 * (R_CHIP + R_LINK + 1 * R_SOFTWARE)
    hosts = 2 * R_HOST
    assert m["failures_per_day"] == pytest.approx((trn2 + h100 + hosts) * 24, rel=1e-9)
    assert m["failures_per_day"] == pytest.approx(0.01430016, rel=1e-9)
