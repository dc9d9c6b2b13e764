"""`validate` under --set or --catalog says the what-if its errors were measured against, in the table
(the WHAT-IF banner) and in --json ("what_if"): MAPE 45.4% under h200.hbm_bandwidth=x0.5 (18.6% without) had read
as the catalog's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.interfaces.cli.app import run
from cli_run import run_json
from inference_rows import write_rows

KERNELS = Path(__file__).resolve().parents[2] / "src" / "chipwise" / "validation" / "data" / "h200_serving_kernels.json"
#: H200's 4.8 TB/s halved
HALVED = "WHAT-IF: h200.hbm_bandwidth = 2.4 TB/s (catalog 4.8 TB/s), set on the command line"


def test_the_table_says_the_what_if(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["validate", "--data", str(KERNELS), "--set", "h200.hbm_bandwidth=x0.5"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the banner wraps at the terminal's width
    assert out.startswith(f"{HALVED} kernels validation on h200_serving_kernels.json")
    assert run(["validate", "--data", str(KERNELS)]) == 0
    assert "WHAT-IF" not in capsys.readouterr().out


def test_the_json_carries_the_what_if(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, ["validate", "--data", str(KERNELS), "--set", "h200.hbm_bandwidth=x0.5", "--json"])
    assert data["what_if"] == [HALVED.removeprefix("WHAT-IF: ")]
    assert run_json(capsys, ["validate", "--data", str(KERNELS), "--json"])["what_if"] == []


def test_explain_says_the_what_if(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    table = write_rows(tmp_path / "rows.csv", {})
    argv = ["validate", "--data", str(table), "--explain", "X1", "--set", "h100-sxm.hbm_bandwidth=x2"]
    line = "h100-sxm.hbm_bandwidth = 6.7 TB/s (catalog 3.35 TB/s), set on the command line"
    assert run_json(capsys, [*argv, "--json"])["what_if"] == [line]
    assert run(argv) == 0
    assert " ".join(capsys.readouterr().out.split()).startswith(f"WHAT-IF: {line} ")
