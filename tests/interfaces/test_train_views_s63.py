"""The failure rate beside the MTBF reads as a rate, not zero (review L of stop 63): 64 H100s fail once in 33
days, 0.030 a day, which one decimal had printed as 0.0; and a partial plan's idle chips put down to what idles them."""

from __future__ import annotations

import pytest

from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.train_views import _idle_reason, _rate


@pytest.mark.parametrize(
    ("per_day", "text"), [(1 / 33.0, "0.030"), (0.004567, "0.0046"), (0.0, "0"), (0.4545, "0.5"), (1234.5, "1,234.5")]
)
def test_failures_per_day_keep_two_significant_figures_below_a_tenth(per_day: float, text: str) -> None:
    assert _rate(per_day) == text


def test_predict_prints_the_rate_its_mtbf_gives(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    scenario = '{"kind":"train","model":"llama-3.1-70b","hardware":"h100-sxm","chips":64,"plan":{"tp":8,"pp":2,"dp":4}}'
    assert run(["predict", scenario]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "failures per day / MTBF" in line)
    assert "0.030 / 33.0 d" in row


def test_idle_chips_are_put_down_to_what_leaves_them_idle() -> None:
    """Review K of stop 63: a partial plan fixing dp 32 on 1,024 H100s runs on 256, its dp at micro-batch 16 taking
    the whole 512-sequence batch; that was put down to the batch ("its data parallelism divides the batch")."""
    plan = {"tp": 8, "pp": 1, "dp": 32, "vpp": 1, "microbatch": 16}
    assert _idle_reason(plan, 512) == "dp 32 x 16 sequences each take the whole 512-sequence batch"
    interleaved = {"tp": 8, "pp": 4, "dp": 16, "vpp": 2, "microbatch": 8}  # 16 x 8 x 4 = 512
    assert _idle_reason(interleaved, 512) == "dp 16 x 32 sequences each take the whole 512-sequence batch"
    assert _idle_reason({**plan, "dp": 16, "microbatch": 1}, 512) == (
        "its data parallelism divides the 512-sequence batch"
    )
