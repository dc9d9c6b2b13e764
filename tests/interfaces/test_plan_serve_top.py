"""`plan serve --top N --json` and `api.plan_serve(top=N)`: every simulated check's `rank` indexes `results`."""

from __future__ import annotations

from typing import Any

import pytest

import chipwise.api as cw
from chipwise.interfaces.format import first_rows
from cli_run import run_json

ARGV = ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "5", "--input-tokens", "512", "--output-tokens", "128"]


def _report(rows: int, ranks: list[int]) -> dict[str, Any]:
    checks = [{"rank": r} for r in ranks]
    return {"results": [{"row": i} for i in range(1, rows + 1)], "verified": checks, "best": checks[0]}


@pytest.mark.parametrize(
    ("top", "ranks", "kept"),
    [
        (2, [2, 4, 5, 1, 3], 5),  # --top 2 had left the checks of rows 3-5 pointing past the list
        (2, [1, 2], 2),
        (6, [2, 4], 6),
        (None, [2], 8),
    ],
)
def test_top_keeps_the_rows_the_checks_refer_to(top: int | None, ranks: list[int], kept: int) -> None:
    report = first_rows(_report(8, ranks), top)
    assert [r["row"] for r in report["results"]] == list(range(1, kept + 1))
    assert all(report["results"][v["rank"] - 1]["row"] == v["rank"] for v in report["verified"])


def test_a_ranking_without_checks_is_cut_at_top() -> None:
    """A training ranking has no simulated checks: --top alone cuts it."""
    report = {"results": [{"row": i} for i in range(1, 9)]}
    assert len(first_rows(report, 3)["results"]) == 3


def test_the_json_joins_each_check_to_its_row(capsys: pytest.CaptureFixture[str]) -> None:
    """Llama 3.1 8B at 5 req/s on H100: the two checks are of rows 1 and 2, so --top 1 keeps both rows (it kept one,
    and the second check's rank 2 pointed past the list), the same rows the API gives for top=1."""
    data = run_json(capsys, [*ARGV, "--hardware", "h100-sxm", "--top", "1", "--json"])
    ranks = [v["rank"] for v in data["verified"]]
    assert ranks == [1, 2] and data["best"]["rank"] == 1
    assert len(data["results"]) == 2
    for v in data["verified"]:
        row = data["results"][v["rank"] - 1]
        assert (row["hardware"], row["disaggregated"]) == (v["hardware"], v["disaggregated"])
    api = cw.plan_serve("llama-3.1-8b", rate=5, input_tokens=512, output_tokens=128, hardware="h100-sxm", top=1)
    assert [r["chips"] for r in api["results"]] == [r["chips"] for r in data["results"]]
