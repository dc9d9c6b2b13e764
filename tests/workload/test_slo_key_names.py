"""SLO keys by either name: the scenario contract's 'ttft_p99_s' is the same target as --slo's 'ttft_p99' on the
command line, in the Python API's and web page's mapping and in a scenario; a key that is neither is one line naming
the near keys (workload.slo.slo_key)."""

from __future__ import annotations

import pytest

from chipwise.errors import ChipwiseError
from chipwise.workload.slo import parse_slo, read_slo
from cli_run import run_error


def test_command_line_takes_the_scenario_names() -> None:
    # 2 s to the first token; 50 ms per token; a bare number under a _s name is seconds, as a scenario reads it
    assert parse_slo("ttft_p99_s=2s,tpot_p99_s=50ms") == {"ttft_p99": 2.0, "tpot_p99": 0.05}
    assert parse_slo("TTFT_P90_S=2") == {"ttft_p90": 2.0}


def test_mapping_takes_the_scenario_names() -> None:
    assert read_slo({"ttft_p99_s": 2, "e2e_p50_s": "1.5"}) == {"ttft_p99": 2.0, "e2e_p50": 1.5}


def test_one_target_by_both_names_is_given_twice() -> None:
    with pytest.raises(ChipwiseError, match=r"^SLO key 'ttft_p99' is given twice\. Fix: give each key once\.$"):
        parse_slo("ttft_p99=2s,ttft_p99_s=3s")
    with pytest.raises(ChipwiseError, match=r"^SLO key 'ttft_p99' is given twice \(as ttft_p99 and ttft_p99_s\)"):
        read_slo({"ttft_p99": 2.0, "ttft_p99_s": 3.0})


def test_an_unknown_key_names_the_near_ones(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "5", "--slo", "ttft_p95=2s"]
    err = run_error(capsys, argv)
    assert err.startswith("error: unknown SLO key 'ttft_p95'. Did you mean 'ttft_p99', 'ttft_p90', 'ttft_p50'? Fix:"), (
        err
    )
    with pytest.raises(ChipwiseError, match=r"^unknown SLO key 'tpot_p95_s'\. Did you mean 'tpot_p99', "):
        read_slo({"tpot_p95_s": 0.05})
