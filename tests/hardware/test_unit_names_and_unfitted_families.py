"""What the typed hardware says of a system's rental units and a family's efficiencies: the instance that holds each
unit size where the catalog names one (Inf2's 6-chip unit is an inf2.24xlarge, not the 12-chip inf2.48xlarge it had
been called), and whether a family's training efficiencies are unfitted priors (no figure fitted to a published run
by scripts/calibrate.py, nor carried from a family whose figures are)."""

from __future__ import annotations

import pytest

from chipwise.hardware import Hardware
from chipwise.hardware.objects import fitted_figure


@pytest.mark.parametrize(
    ("system", "chips", "name"),
    [
        ("inf2.48xlarge", 6, "inf2.24xlarge"),
        ("inf2.48xlarge", 12, "inf2.48xlarge"),
        ("inf2.48xlarge", 1, "inf2.xlarge or inf2.8xlarge"),
        ("trn1.32xlarge", 1, "trn1.2xlarge"),
        ("trn2-ultraserver", 16, "trn2u.48xlarge"),
        ("p5.48xlarge", 8, "p5.48xlarge"),
        ("trn3-ultraserver-gen1", 16, None),  # 'whole servers of 16 Trainium3': no instance named
    ],
)
def test_a_unit_is_named_by_the_instance_that_holds_it(hw: Hardware, system: str, chips: int, name: str) -> None:
    assert hw.system(system).unit_name(chips) == name


@pytest.mark.parametrize(
    ("chip", "unfitted"),
    [
        ("gaudi2", True),
        ("gaudi3", True),
        ("tpu-v7", True),
        ("h100-sxm", False),
        ("rubin", False),  # carried from blackwell-ultra, which is fitted
        ("mi300x", False),  # its bf16 matmul is a prior, its fp8 matmul, attention and overheads fitted
    ],
)
def test_a_family_is_unfitted_where_no_figure_is_fitted(hw: Hardware, chip: str, unfitted: bool) -> None:
    assert hw.chip(chip).efficiency.unfitted is unfitted


def test_unfitted_priors_charge_no_framework_time(hw: Hardware) -> None:
    """Gaudi 2's prior: 0 s a layer, a micro-batch and a step; Hopper's fit charges 0.141 s a step."""
    assert hw.chip("gaudi2").efficiency.overhead_free
    assert not hw.chip("h100-sxm").efficiency.overhead_free


def test_a_figure_carried_from_an_unfitted_family_is_not_fitted() -> None:
    fitted = "fitted by scripts/calibrate.py (2026-11-29) to 20 published training runs on b300, gb300"
    assert fitted_figure(fitted)
    assert fitted_figure(f"taken from blackwell-ultra (efficiency.blackwell-ultra: {fitted}): no Rubin run")
    assert not fitted_figure("taken from cdna4 (efficiency.cdna4: prior from the measured large-GEMM fraction)")
    assert not fitted_figure("framework time per layer and micro-batch beyond kernel costs; fitted by scripts/...")
