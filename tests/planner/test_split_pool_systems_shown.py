"""plan serve's table names each pool of a split by its own system: keyed by chip, a split between two systems of
one chip (azure-nd-h100-v5>p5.48xlarge: 18 prefill chips at $12.29 an hour, 6 decode chips at $6.88) had shown
p5.48xlarge for both pools."""

from __future__ import annotations

from chipwise.interfaces.cli.plan_serve_views import _pools

PLAN = {"tp": 2, "pp": 1, "ep": 1, "attention_dp": False, "max_batch": 58, "replicas": 9}


def test_each_pool_of_a_split_is_named_by_its_own_system() -> None:
    hardware, _ = _pools("h100-sxm>h100-sxm", {"prefill": PLAN, "decode": PLAN}, systems="azure-nd-h100-v5>p5.48xlarge")
    assert hardware == "P: h100-sxm (azure-nd-h100-v5)\nD: h100-sxm (p5.48xlarge)"


def test_a_split_between_two_chips_keeps_each_chips_mark_and_system() -> None:
    """The marks stay the chip's: gaudi3 on engine defaults (†), h100-sxm fitted."""
    hardware, _ = _pools(
        "gaudi3>h100-sxm", {"prefill": PLAN, "decode": PLAN}, defaults=["gaudi3"], systems="gaudi3-8x>p5.48xlarge"
    )
    assert hardware == "P: gaudi3 (gaudi3-8x) †\nD: h100-sxm (p5.48xlarge)"
    one, plan = _pools("h100-sxm", {"": PLAN}, systems="p5.48xlarge")
    assert one == "h100-sxm (p5.48xlarge)" and plan.startswith("TP2 b58 x9")
