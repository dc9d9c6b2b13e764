"""A serving row checked against itself: throughput against what its own load and latencies imply."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.validation.consistency import SELF_CONSISTENCY_TOLERANCE, self_check
from chipwise.validation.report import RowResult, summarise
from chipwise.workload.load import Load
from cli_run import run, run_json
from inference_rows import inference_row, write_rows

EIGHT_USERS = Load("closed", concurrency=8)
#: 4 chips, 101 output tokens, TTFT 1 s, TPOT 10 ms
REQUEST = {"num_chips": "4", "output_len": "101", "ttft_ms": "1000", "tpot_ms": "10"}


def test_a_closed_loop_delivers_users_times_output_over_end_to_end_latency() -> None:
    # 8 users, TTFT 1 s + 100 x 10 ms = 2 s a request: 8 x 101 / 2 s = 404 tokens/s on 4 chips = 101 per chip
    row = inference_row(**REQUEST, output_tokens_per_s_per_chip="101")
    check = self_check(row, EIGHT_USERS)
    assert check is not None
    assert check.implied == pytest.approx(101.0)
    assert check.ratio == pytest.approx(1.0)
    assert check.consistent


def test_a_row_whose_throughput_its_latencies_contradict_is_flagged() -> None:
    row = inference_row(**REQUEST, output_tokens_per_s_per_chip="40")
    check = self_check(row, EIGHT_USERS)
    assert check is not None
    assert check.ratio == pytest.approx(40 / 101)
    assert not check.consistent
    assert "0.40x the 101" in check.note()
    # just inside the tolerance is agreement
    edge = inference_row(**REQUEST, output_tokens_per_s_per_chip=str(101 / SELF_CONSISTENCY_TOLERANCE * 1.001))
    assert self_check(edge, EIGHT_USERS).consistent  # type: ignore[union-attr]


def test_the_rows_own_end_to_end_latency_comes_first() -> None:
    # a 4 s end-to-end latency (time before the first request, detokenisation) over the 2 s TTFT + TPOT give
    row = inference_row(**REQUEST, e2e_latency_s="4", output_tokens_per_s_per_chip="50.5")
    check = self_check(row, EIGHT_USERS)
    assert check is not None
    assert check.implied == pytest.approx(50.5)
    assert "end-to-end latency" in check.basis


def test_means_come_first_because_littles_law_holds_for_means() -> None:
    # 10 users; mean TTFT 1 s + 100 x 20 ms = 3 s a request: 10 x 101 / 3 = 336.7 tokens/s; the medians (0.5 s and
    # 10 ms, 1.5 s a request) of a skewed run would imply twice that
    row = inference_row(
        output_len="101", ttft_ms="mean 1000; median 500", tpot_ms="mean 20; median 10",
        output_tokens_per_s_per_chip="336.7",
    )  # fmt: skip
    check = self_check(row, Load("closed", concurrency=10))
    assert check is not None and check.consistent
    assert check.ratio == pytest.approx(1.0, rel=1e-3)
    assert "mean TTFT and TPOT" in check.basis


def test_an_open_loop_delivers_its_rate_times_the_output() -> None:
    row = inference_row(num_chips="2", output_len="100", output_tokens_per_s_per_chip="100")
    check = self_check(row, Load("rate", rate=2.0))
    assert check is not None
    assert check.implied == pytest.approx(100.0)


def test_rows_without_the_figures_are_not_judged() -> None:
    assert self_check(inference_row(), Load("offline")) is None  # an offline run has no latency
    mixed = inference_row(output_len="101", ttft_ms="p50 1000", tpot_ms="mean 10")  # two statistics
    assert self_check(mixed, EIGHT_USERS) is None
    no_throughput = inference_row(output_tokens_per_s_per_chip="", ttft_ms="1000", tpot_ms="10")
    assert self_check(no_throughput, EIGHT_USERS) is None


def test_the_summary_gives_the_errors_with_and_without_contradicted_rows() -> None:
    def result(row_id: str, error: float, consistent: bool | None) -> RowResult:
        return RowResult(row_id, "h100-sxm", "ttft_s", 1.0, 1.0 + error, "stated", "test", "", consistent)

    rows = [result("A", 0.1, True), result("B", 1.0, False), result("C", -0.3, None)]
    summary = summarise("serve", rows, [])["summary"]
    assert summary["by_metric"]["ttft_s"]["mape_pct"] == pytest.approx(140 / 3)  # every row stays in
    assert summary["self_inconsistent_rows"] == ["B"]
    assert summary["by_metric_self_consistent"]["ttft_s"]["mape_pct"] == pytest.approx(20.0)
    assert "self_inconsistent_rows" not in summarise("serve", [rows[0]], [])["summary"]


def test_chipwise_validate_names_the_rows_that_contradict_themselves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one user, TTFT 100 ms + 100 x 10 ms: 101 tokens in 1.1 s = 91.8 tokens/s; the second row claims 30
    user = {"scenario": "single stream", "batch_or_concurrency": "concurrency=1", "output_len": "101"}
    latencies = {"ttft_ms": "100", "tpot_ms": "10"}
    data = write_rows(
        tmp_path / "rows.csv",
        {"id": "OK1", **user, **latencies, "output_tokens_per_s_per_chip": "91.8"},
        {"id": "BAD1", **user, **latencies, "output_tokens_per_s_per_chip": "30"},
    )
    assert run(["validate", "--data", str(data)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1 row contradicts itself" in out and "By metric, without those rows" in out
    named = out.split("1 row contradicts itself")[1].split("By metric, without those rows")[0]
    assert "BAD1" in named and "OK1" not in named
    rows = run_json(capsys, ["validate", "--data", str(data), "--json"])["rows"]
    assert {r["id"]: r["self_consistent"] for r in rows} == {"OK1": True, "BAD1": False}
