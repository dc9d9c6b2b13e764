"""One rule for a plan search with no answer (docs/guide.md, Errors): exit code 1 and 'not ranked:', as plan train's
and plan serve's; bad input stays exit code 2 and 'error:'. plan fleet's limits that cannot carry the demand had
exited 2 (a script could not tell them from a typo), and plan hetero's model that fits nothing read 'error:'."""

from __future__ import annotations

import pytest

from cli_run import run, run_error


def _no_answer(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = run(argv)
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1, err
    return err


def test_fleet_limits_that_cannot_carry_the_demand_are_no_answer(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", "examples/chat-mix.yaml", "--slo", "ttft_p99=2s"]
    err = _no_answer(capsys, [*argv, "--hardware", "h100-sxm", "--limits", "h100-sxm=1", "--no-replay"])
    assert err == (
        "not ranked: the limit on h100-sxm (1 chip) cannot carry the demand. Fix: raise a limit, add instance types, "
        "or lower the demand."
    )
    assert run_error(capsys, [*argv, "--hardware", "h100-sxm", "--limits", "h100-sxm=-1"]).startswith("error: ")


def test_a_mixed_fleet_that_fits_nothing_is_not_ranked(capsys: pytest.CaptureFixture[str]) -> None:
    err = _no_answer(capsys, ["plan", "hetero", "--model", "llama-3.1-405b", "--fleet", "trn4=1,gb300=1"])
    assert err == "not ranked: llama-3.1-405b fits neither the mixed fleet nor any of its parts. Fix: add chips."
