"""The training table's small wordings: a failure rate beside its MTBF, and why a plan leaves chips idle."""

from __future__ import annotations

from chipwise.interfaces.cli.train_views import _idle_reason, _rate


def test_a_failure_rate_under_one_keeps_two_figures() -> None:
    """1,024 Trn2 fail 0.454 times a day, an MTBF of 2.2 days: it had read '0.5' beside it."""
    assert _rate(0.45391872) == "0.45" and _rate(0.0301) == "0.030" and _rate(279.6) == "279.6"


def test_one_replica_is_not_held_back_by_the_batch() -> None:
    """DP1 divides any batch: TP1 PP21 CP4 on 100 MI355X runs on 84 for its degrees, which the reason had put down
    to the batch."""
    plan = {"tp": 1, "pp": 21, "dp": 1, "cp": 4, "microbatch": 1, "vpp": 1}
    assert _idle_reason(plan, 512) == "one replica of PP21 x CP4: its degrees, not the batch, set the chips it runs on"
