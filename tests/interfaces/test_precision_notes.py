"""Where a chip computes the precision asked for at a wider one's rate, the note says whether it lists the format (its
own units at no speed-up: Gaudi 3's FP8) or has none (an A100's FP8): plan hetero and plan train had read 'gaudi3
has no fp8 units'; and a mistyped precision gets the near matches a name's look-up offers."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.train_views import _precision_note
from chipwise.planner.training import plan_training
from cli_run import run_error


def test_plan_hetero_says_gaudi3_runs_fp8_at_its_bf16_rate(capsys: pytest.CaptureFixture[str]) -> None:
    fleet = ["--fleet", "gaudi3=64,a100-80gb=64", "--tokens", "1e11", "--precision", "fp8"]
    assert run(["plan", "hetero", "--model", "llama-3.1-8b", *fleet]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "gaudi3: computes in bf16: fp8 runs at the bf16 rate on gaudi3 (no speed-up)" in out
    assert "a100-80gb: computes in bf16: a100-80gb has no fp8 units" in out


def test_a_precision_typo_names_the_near_match(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "8", "--hardware", "h100-sxm", "--precision", "bf61"]
    assert "unknown precision 'bf61'. Did you mean 'bf16', 'fp16'?" in run_error(capsys, argv)


def test_a_precision_listed_at_a_wider_rate_says_so(catalog: Catalog) -> None:
    """Gaudi 3 lists FP8 at its BF16 rate: an fp8 run is no faster, on FP8 units it has (the note had read 'gaudi3
    has no fp8 units', as for an A100, which has none)."""
    rows = plan_training(catalog, "llama-3.1-8b", 8, ["gaudi3", "a100-80gb"], precision="fp8")["results"]
    assert {r["hardware"]: r["precision_listed"] for r in rows} == {"gaudi3": True, "a100-80gb": False}
    row = {"hardware": "gaudi3", "precision": "fp8", "compute_precision": "bf16", "precision_listed": True}
    assert (
        _precision_note(row)
        == "bf16: fp8 runs at the bf16 rate on gaudi3 (no speed-up), so this run is no faster than at bf16"
    )
    row = {"hardware": "a100-80gb", "precision": "fp8", "compute_precision": "bf16", "precision_listed": False}
    assert _precision_note(row) == "bf16: a100-80gb has no fp8 units, so this run is no faster than at bf16"
    assert _precision_note(row | {"compute_precision": "fp8", "precision": "fp8"}) is None
