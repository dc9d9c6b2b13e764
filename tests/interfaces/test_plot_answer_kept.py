"""`--plot` never costs the answer: a result with nothing to draw prints as without --plot, after one 'plot: nothing
drawn' line; serving `predict` writes its figure before its output, as the other commands do; a folder that is a
file, or cannot be written to, is refused before the work."""

from __future__ import annotations

import json
import os
from pathlib import Path
from unittest.mock import patch

import pytest

from chipwise.errors import ChipwiseError
from chipwise.interfaces.chart import check_path
from chipwise.interfaces.cli.app import run
from cli_run import run_error

UNPRICED = ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "1T", "--chips", "64", "--hardware", "trn2"]
SERVE = (
    '{"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "arrival_rate": 5, '
    '"input_tokens": 256, "output_tokens": 64}'
)


def test_a_ranking_with_no_price_prints_and_says_nothing_was_drawn(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """trn2 has no GCP price: the ranking had been lost to 'error: the ranking has no priced result', exit 2."""
    path = tmp_path / "np.png"
    assert run([*UNPRICED, "--provider", "gcp", "--json", "--plot", str(path)]) == 0
    captured = capsys.readouterr()
    assert [r["hardware"] for r in json.loads(captured.out)["results"]] == ["trn2"]
    assert captured.err.strip() == (
        f"plot: nothing drawn to {path}: the ranking has no priced result to plot. Fix: choose hardware with a price "
        "in the catalog (see 'chipwise catalog list') or another --pricing."
    )
    assert not path.exists()


def test_a_sensitivity_that_moves_nothing_prints_and_says_nothing_was_drawn(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """PUE moves no step time: the sensitivity tables had been lost to 'error: no figure moves step time', exit 2."""
    path = tmp_path / "s.png"
    argv = ["sensitivity", "examples/train-llama70b-trn2.yaml", "--figures", "pue", "--json", "--plot", str(path)]
    assert run(argv) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert [r["figure"] for r in result["figures"]] == ["datacenter.pue.aws"]
    assert result["figures"][0]["elasticity"]["energy"] == pytest.approx(1.0)
    assert captured.err.strip() == (
        f"plot: nothing drawn to {path}: no figure moves step time: nothing to plot. Fix: rank by another metric "
        "(--metric)."
    )
    assert not path.exists()


def test_serving_predict_writes_its_plot_before_the_output(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`predict serve.yaml --plot x.png | head -1` had left no plot: the tables were printed first."""
    from chipwise.interfaces.cli import predict_cmd, serve_views
    from chipwise.planner import serving_predict

    done: list[str] = []
    # no simulation: the order of the plot and the tables only
    monkeypatch.setattr(serving_predict, "predict_serving", lambda cat, sc: {"kind": "serve"})
    monkeypatch.setattr(predict_cmd, "write_plot", lambda result, path: done.append(f"plot {path.name}"))
    monkeypatch.setattr(serve_views, "print_serving", lambda result, sources=False: done.append("print"))
    assert run(["predict", SERVE, "--plot", str(tmp_path / "serve.png")]) == 0
    assert done == ["plot serve.png", "print"]


def test_a_plot_under_a_file_is_refused_before_the_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """It had passed the check (the file exists) and failed after the prediction: 'Not a directory'."""
    afile = tmp_path / "afile"
    afile.write_text("hi")
    with patch("chipwise.planner.training.predict_training", side_effect=AssertionError("predicted")):
        err = run_error(capsys, ["predict", "examples/train-llama70b-trn2.yaml", "--plot", str(afile / "x.png")])
    target = afile / "x.png"
    assert err == f"error: cannot write '{target}': '{afile}' is a file, not a folder. Fix: choose another path."


def test_an_unwritable_folder_is_refused_up_front(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == tmp_path else real(p, mode))
    with pytest.raises(ChipwiseError) as exc:
        check_path(tmp_path / "x.svg")
    assert str(exc.value) == (
        f"cannot write '{tmp_path / 'x.svg'}': folder '{tmp_path}' is not writable. Fix: choose another path."
    )
