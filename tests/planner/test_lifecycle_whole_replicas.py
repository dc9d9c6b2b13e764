"""plan lifecycle's serving side on whole replicas only (`--no-disaggregated`, the API's disaggregated=False), as
plan serve offers: by default its search tries prefill/decode splits too."""

from __future__ import annotations

from typing import Any

import pytest

import chipwise.api as cw
from cli_run import run_json


def test_whole_replicas_only_leave_the_splits_out() -> None:
    kw: dict[str, Any] = {"train_tokens": 1e11, "serve_rate": 5, "hardware": ["h100-sxm"], "train_chips": 64}
    split = cw.plan_lifecycle("llama-3.1-8b", **kw)
    whole = cw.plan_lifecycle("llama-3.1-8b", disaggregated=False, **kw)
    assert any(">" in t["serve"]["hardware"] for t in split["top"])
    assert [t["serve"]["hardware"] for t in whole["top"]] == ["h100-sxm"]
    assert whole["serve_searches"] == [{"hardware": ["h100-sxm"], "checked": 1}]


def test_the_command_takes_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "100G", "--serve-rate", "5",
            "--hardware", "h100-sxm", "--train-chips", "64", "--no-disaggregated", "--json"]  # fmt: skip
    report = run_json(capsys, argv)
    assert all(">" not in t["serve"]["hardware"] for t in report["top"])
