"""The command line's bad-input contract: an empty --host refused (and a wildcard bind said), the --scenario target
checked before the search, counts read alike in every command, near matches for closed-set options and plan keys,
an empty --figures or 'all' among ids explained, and one fix a line."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from chipwise.errors import ChipwiseError
from chipwise.interfaces.cli import plan_serve_cmd
from chipwise.interfaces.cli.app import run
from chipwise.planner.hetero import parse_fleet
from cli_run import run_error

Capture = pytest.CaptureFixture[str]
SERVE = ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "5"]
TRAIN = ["plan", "train", "--model", "llama-3.1-8b", "--hardware", "h100-sxm"]
LIFECYCLE = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--train-tokens", "1e12"]
LIFECYCLE += ["--serve-rate", "5"]


def _never(*_: Any, **__: Any) -> Any:
    raise AssertionError("the work ran before the bad input was refused")


# --- web --host -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["", "  "])
def test_an_empty_host_is_refused(capsys: Capture, monkeypatch: pytest.MonkeyPatch, host: str) -> None:
    """'--host "$HOST"' with HOST unset had bound every interface, skipped the Host check and shown 127.0.0.1."""
    monkeypatch.setattr("chipwise.interfaces.web.server.make_server", _never)
    err = run_error(capsys, ["web", "--no-open", "--host", host])
    assert err == (
        "error: --host is empty. Fix: give an address, e.g. 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)."
    )


class _Server:
    url = "http://127.0.0.1:1/"

    def serve_forever(self) -> None:
        raise KeyboardInterrupt

    def server_close(self) -> None:
        pass


@pytest.mark.parametrize(("host", "told"), [("0.0.0.0", True), ("::", True), ("127.0.0.1", False)])
def test_a_wildcard_bind_says_it_listens_on_every_interface(
    capsys: Capture, monkeypatch: pytest.MonkeyPatch, host: str, told: bool
) -> None:
    """The URL shown is this machine's; a bind to every interface says so beside it."""
    monkeypatch.setattr("chipwise.interfaces.web.server.make_server", lambda *_: _Server())
    assert run(["web", "--no-open", "--host", host]) == 0
    out = capsys.readouterr().out
    assert ("listening on every interface (no login: trusted networks only)" in out) is told


# --- plan serve --scenario ------------------------------------------------------------------------------------------


def test_an_unwritable_scenario_folder_is_refused_before_the_search(
    capsys: Capture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """As --plot's is (root can write anywhere: os.access stands in for an ordinary user's read-only folder)."""
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == tmp_path else real(p, mode, **kw))
    monkeypatch.setattr("chipwise.planner.serving_plan.plan_serving", _never)
    target = tmp_path / "plan.yaml"
    err = run_error(capsys, [*SERVE, "--scenario", str(target)])
    assert err == f"error: cannot write '{target}': folder '{tmp_path}' is not writable. Fix: choose another path."


def test_a_scenario_file_that_cannot_be_created_is_refused_before_the_search(
    capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/proc reads as a writable folder to os.access, as an immutable file's folder does: the scenario had failed
    only after the search; the file itself is now tried, as --plot's is (chart.check_writable)."""
    monkeypatch.setattr("chipwise.planner.serving_plan.plan_serving", _never)
    err = run_error(capsys, [*SERVE, "--scenario", "/proc/chipwise-plan.yaml"])
    assert err == (
        "error: cannot create '/proc/chipwise-plan.yaml': No such file or directory. Fix: choose another path."
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "/nonexistent/x.yaml",
            "folder '/nonexistent' for the scenario does not exist. Fix: create it, or write the scenario elsewhere.",
        ),
        ("x.txt", "cannot write a scenario to 'x.txt'. Fix: name it .yaml, .yml or .json."),
    ],
)
def test_a_scenario_path_error_has_one_fix(capsys: Capture, name: str, message: str) -> None:
    """Typer's BadParameter had been given a second fix: '... elsewhere. Fix: run 'chipwise plan serve --help'.'"""
    assert run_error(capsys, [*SERVE, "--scenario", name]) == f"error: {message}"


def test_the_scenario_is_written_before_the_answer(
    capsys: Capture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A write that fails (exit 2) had come after the whole answer on stdout, --json's included."""
    report = {"results": [{"x": 1}], "skipped": [], "verified": []}
    monkeypatch.setattr("chipwise.planner.serving_plan.plan_serving", lambda *_, **__: report)
    monkeypatch.setattr("chipwise.interfaces.format.explain_plan_serve", lambda r: r)

    def fail(*_: Any) -> None:
        raise ChipwiseError("cannot write the scenario. Fix: check the path and permissions.")

    monkeypatch.setattr(plan_serve_cmd, "write_scenario", fail)
    assert run([*SERVE, "--json", "--scenario", str(tmp_path / "plan.yaml")]) == 2
    out, err = capsys.readouterr()
    assert "cannot write the scenario" in err
    assert out == ""  # nothing printed: no answer for a script to take with exit 2


# --- counts ---------------------------------------------------------------------------------------------------------


def test_fleet_counts_read_as_chips_do() -> None:
    """'trn4=5k' had been 'not TYPE=COUNT'; 1e9 reaches the fleet-size check rather than that message."""
    assert parse_fleet("trn4=5k,gb300=0.5k") == {"trn4": 5000, "gb300": 500}
    assert parse_fleet(" trn4 = 1e9 , gb300=512") == {"trn4": 1_000_000_000, "gb300": 512}


def test_lifecycle_reads_token_counts_as_plan_serve(capsys: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    """--input-tokens 4k had been Pydantic's 'Input should be a valid integer'."""
    seen: list[Any] = []

    def fake(*args: Any, **_: Any) -> Any:
        seen.extend(args[7:9])  # prompt and generated tokens, after the training chips
        raise ChipwiseError("stop. Fix: none.")

    monkeypatch.setattr("chipwise.planner.lifecycle.plan_lifecycle", fake)
    run_error(capsys, [*LIFECYCLE, "--input-tokens", "4k", "--output-tokens", "1.5k"])
    assert seen == [4000, 1500]
    run_error(capsys, LIFECYCLE)
    assert seen[2:] == [1024, 256]  # the defaults, as plan serve's
    err = run_error(capsys, [*LIFECYCLE, "--input-tokens", "4X"])
    assert err == "error: --input-tokens '4X' is not a positive finite whole number. Fix: give e.g. 1024 or 4k."


@pytest.mark.parametrize("command", [TRAIN, ["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", "trn4=8,gb300=8"]])
def test_the_batch_example_is_one_step(capsys: Capture, command: list[str]) -> None:
    """The fix had offered 15e12 or '15T' tokens a step: a whole training run."""
    err = run_error(capsys, [*command, "--global-batch-tokens", "4X"])
    assert err == "error: --global-batch-tokens '4X' is not a positive finite number. Fix: give e.g. 4M or 4194304."


# --- near matches ---------------------------------------------------------------------------------------------------


def test_catalog_engine_chip_suggests_families(capsys: Capture) -> None:
    err = run_error(capsys, ["catalog", "engine", "vllm", "--chip", "hoper"])
    assert err.startswith("error: unknown chip, system or chip family 'hoper'. Did you mean 'hopper'")
    assert "Fix: give a chip family (ampere, blackwell, " in err and ", hopper, " in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            [*TRAIN, "--pricing", "spott"],
            "unknown pricing mode 'spott'. Did you mean 'spot'? Fix: use one of on-demand, capacity-block, "
            "reserved-1y, reserved-3y, spot, owned.",
        ),
        (
            [*SERVE, "--pricing", "spott"],
            "unknown pricing mode 'spott'. Did you mean 'spot'? Fix: use one of on-demand, capacity-block, "
            "reserved-1y, reserved-3y, spot, owned.",
        ),
        (
            [*TRAIN, "--objective", "tim"],
            "unknown objective 'tim'. Did you mean 'time'? Fix: use one of time, cost, energy, carbon.",
        ),
        (
            [*TRAIN, "--recovery", "in_memory"],
            "unknown recovery 'in_memory'. Did you mean 'in-memory'? Fix: use one of checkpoint, in-memory, best.",
        ),
        (
            [*SERVE, "--router", "round-robin"],
            "unknown router 'round-robin'. Did you mean 'round_robin'? Fix: use one of round_robin, least_loaded, "
            "power_of_two.",
        ),
        (
            [*LIFECYCLE, "--objective", "cots"],
            "unknown objective 'cots'. Did you mean 'cost'? Fix: use one of cost, energy, carbon.",
        ),
    ],
)
def test_closed_set_options_suggest_the_near_match(
    capsys: Capture, monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str
) -> None:
    monkeypatch.setattr("chipwise.planner.training.plan_training", _never)
    monkeypatch.setattr("chipwise.planner.lifecycle.plan_lifecycle", _never)
    monkeypatch.setattr("chipwise.planner.serving_plan.plan_serving", _never)
    assert run_error(capsys, argv) == f"error: {message}"


def test_a_plan_key_suggests_the_near_match(capsys: Capture, tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text("model: llama-3.1-8b\nhardware: h100-sxm\nchips: 8\nplan: {tpp: 2}\n")
    err = run_error(capsys, ["predict", str(scenario)])
    assert "unknown plan key 'tpp'. Did you mean 'tp', 'pp', 'vpp'? Fix: use tp, pp, dp, cp, ep" in err


# --- empty and 'all' ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("figures", ["", " , "])
def test_empty_figures_are_refused(capsys: Capture, figures: str) -> None:
    """--figures "" had moved every figure, exit 0."""
    err = run_error(capsys, ["sensitivity", "no-such.yaml", "--figures", figures])
    assert err == (
        "error: --figures names no figure. Fix: give texts of figure names, e.g. hbm,flops, or leave --figures out "
        "for every figure."
    )


def test_all_among_ids_is_explained(capsys: Capture) -> None:
    """'all,h100-sxm' had read "unknown chip or system 'all'", though the option's help names 'all'."""
    err = run_error(capsys, ["plan", "train", "--model", "llama-3.1-8b", "--hardware", "all,h100-sxm"])
    assert err == (
        "error: hardware 'all,h100-sxm' lists 'all' among ids: 'all' stands alone. Fix: give 'all' for every chip, "
        "or a list of ids (h100-sxm,trn2)."
    )


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm", "--hardware", "h200"],
         "--hardware"),
        ([*SERVE, "--rate", "3"], "--rate"),
        (["tco", "h100-sxm", "--utilisation", "0.5", "--utilisation=0.6"], "--utilisation"),
    ],
)  # fmt: skip
def test_an_option_of_one_value_given_twice_is_refused(capsys: Capture, argv: list[str], option: str) -> None:
    """Click keeps the last of a repeated option: `--hardware h100-sxm --hardware h200` had ranked the h200 alone,
    `--rate 5 --rate 3` planned for 3 req/s, without a word. Options that add up (--slo, --set) still do."""
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert f"{option} is given 2 times; it takes one value" in err and "Traceback" not in err
    if option == "--rate":
        assert run([*SERVE, "--slo", "ttft_p99=2s", "--slo", "tpot_p99=50ms", "--json"]) == 0
    if option == "--utilisation":  # a flag given twice says the same twice
        assert run(["tco", "h100-sxm", "--json", "--json"]) == 0
