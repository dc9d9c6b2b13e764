"""`--plot` and `--scenario`: a search that ranks nothing exits 1 as without --plot; folders are refused before the
work; `plots.plot` names the kinds it draws; the plot's § footnote says what the table's does; the command a written
scenario is run with is printed on one line."""

from __future__ import annotations

import errno
import io
from pathlib import Path

import pytest
from rich.console import Console

import chipwise.api as cw
from chipwise.errors import ChipwiseError
from chipwise.interfaces import plots
from chipwise.interfaces.cli import plan_serve_cmd
from chipwise.interfaces.cli.app import run
from cli_run import run_error

NOFIT = ["plan", "train", "--model", "llama-3.1-405b", "--tokens", "1T", "--chips", "8", "--hardware", "h100-sxm"]


def test_plan_train_plot_with_nothing_ranked_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """It had exited 2 blaming pricing ('the ranking has no priced result to plot') where memory was the cause."""
    path = tmp_path / "nofit.png"
    assert run([*NOFIT, "--plot", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"plot: nothing drawn to {path}: no option was ranked" in err and "error" not in err
    assert not path.exists()


def test_plan_serve_scenario_folder_is_refused_up_front(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A folder named x.yaml had run the whole search, then read 'cannot read ... give a readable text file'."""
    folder = tmp_path / "x.yaml"
    folder.mkdir()
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--rate", "5"]
    assert run_error(capsys, [*argv, "--scenario", str(folder)]) == (
        f"error: cannot write '{folder}': it is a folder. Fix: name a file, e.g. '{folder / 'plan.yaml'}'."
    )


def test_plot_folder_is_refused_up_front(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "d.png"
    folder.mkdir()
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "1T", "--chips", "64", "--hardware", "h100-sxm"]
    assert run_error(capsys, [*argv, "--plot", str(folder)]) == (
        f"error: cannot write '{folder}': it is a folder. Fix: name a file, e.g. '{folder / 'plot.png'}'."
    )


def test_write_scenario_error_is_a_write_error(tmp_path: Path) -> None:
    from chipwise.interfaces.cli.plan_serve_cmd import write_scenario

    folder = tmp_path / "s.yaml"
    folder.mkdir()
    report = {"verified": [{"keeps_up": True, "slo_met": True, "scenario": {"kind": "serve"}}]}
    with pytest.raises(ChipwiseError, match=r"^cannot write the scenario to '.*s\.yaml': Is a directory\. Fix: check"):
        write_scenario(report, folder)


@pytest.mark.parametrize(
    ("result", "named"),
    [
        (lambda: cw.tco("h100-sxm"), "a result of kind 'tco'"),
        (cw.claims, "a result of kind 'claims'"),
        (lambda: cw.model("llama-3.1-8b"), "a result with no kind"),
    ],
)
def test_plot_names_the_kinds_it_draws(result: object, named: str, tmp_path: Path) -> None:
    """tco had got 'the serving result has no points with latency ...' (it has a hardware key)."""
    with pytest.raises(ChipwiseError) as exc:
        plots.plot(result(), tmp_path / "x.png")  # type: ignore[operator]
    assert str(exc.value) == (
        f"no plot for {named}: plot draws predict (train or serve), plan_train, plan_serve and sensitivity results. "
        "Fix: plot one of those."
    )


def test_owned_plot_footnote_is_the_tables(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """With --pricing owned the plot had said 'priced by an estimate, not a published rental price'."""
    path = tmp_path / "owned.svg"
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "1T", "--chips", "64"]
    assert run([*argv, "--hardware", "h100-sxm,trn2", "--pricing", "owned", "--plot", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    note = (
        "§ the owned cost of h100-sxm, trn2 rests on estimated inputs ('chipwise tco CHIP' lists each with its source)"
    )
    assert note in out
    assert note in path.read_text() and "rental" not in path.read_text()


def test_plot_is_written_before_the_output(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A reader that stopped early (`| head`) had left no plot: it is drawn before the table is printed."""
    from chipwise.interfaces.cli import app, train_views

    monkeypatch.setattr(app, "close_stdout", lambda: None)  # the real one points this process's stdout at /dev/null
    path = tmp_path / "p.png"

    def stopped(report: object, hidden: int = 0) -> None:
        assert path.exists()
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")  # a real one, which Click's main had turned into exit 1

    monkeypatch.setattr(train_views, "print_ranking", stopped)
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "1T", "--chips", "64", "--hardware", "h100-sxm"]
    assert run([*argv, "--plot", str(path)]) == 141  # quietly, 128 + SIGPIPE: not 1 (nothing ranked)


def test_the_scenario_command_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The `chipwise predict` command plan serve --scenario prints is one line to copy, however narrow stderr is:
    Rich had broken it at 80 columns where stderr is a file or a pipe."""
    err = io.StringIO()
    monkeypatch.setattr(plan_serve_cmd, "err_console", Console(file=err, width=80))  # a file: 80 columns
    path = tmp_path / "a-rather-long-folder-name-for-the-scenario" / "[s5].yaml"
    path.parent.mkdir()
    report = {"verified": [{"keeps_up": True, "slo_met": True, "hardware": "h100-sxm", "scenario": {"kind": "serve"}}]}
    plan_serve_cmd.write_scenario(report, path, sets=["h100-sxm.price=2.5"])
    assert err.getvalue() == (
        f"h100-sxm written to {path}: chipwise predict '{path}' --set h100-sxm.price=2.5\n"  # the path not markup
    )
    assert path.read_text() == "kind: serve\n"
