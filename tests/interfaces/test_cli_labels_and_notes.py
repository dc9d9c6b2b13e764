"""Labels and notes of the command views: predict's efficiency row is ideal / expected as its cost row is; a model's
notes reach every command that takes it; tco's break-even table folds at 80 columns; plan fleet --no-replay claims no
simulator check; plan serve --engine lists every engine it accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwise.interfaces.cli.app import run
from chipwise.serve.engine import ENGINES

NO_MT = "note: {cfg}: the config.json names no model_type: read as a Llama (gated MLP, full attention)"


def _no_model_type(tmp_path: Path) -> Path:
    from chipwise.catalog.loader import load_catalog

    cfg = load_catalog().model_config("llama-3.1-8b")
    del cfg["model_type"]
    path = tmp_path / "cfg_nomt.json"
    path.write_text(json.dumps(cfg))
    return path


def test_predict_efficiency_is_ideal_and_expected(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """It had printed the ideal $/Mtok (1.07) unlabelled beside plan train's expected 1.09 for the same plan."""
    sc = tmp_path / "t.yaml"
    sc.write_text("kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 64\ntokens: 1e12\n")
    assert run(["predict", str(sc), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert run(["predict", str(sc)]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    ideal, expected = r["usd_per_million_tokens"], r["expected_usd_per_million_tokens"]
    assert expected > ideal
    assert (
        f"efficiency, ideal / expected {r['tokens_per_joule']:.3g} / {r['expected_tokens_per_joule']:.3g} tokens/J, "
        f"{ideal:.2f} / {expected:.2f} $/Mtok; {r['flop_per_joule'] / 1e9:,.0f} GFLOP/J ideal"
    ) in out


@pytest.mark.parametrize("as_json", [[], ["--json"]])
def test_model_notes_reach_plan_train_predict_and_plan_serve(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, as_json: list[str]
) -> None:
    """Only `model show` had said a config with no model_type was read as a Llama."""
    cfg = _no_model_type(tmp_path)
    sc = tmp_path / "nomt.yaml"
    sc.write_text(f"kind: train\nmodel: {cfg}\nhardware: h100-sxm\nchips: 64\ntokens: 1e12\n")
    commands = [
        ["plan", "train", "--model", str(cfg), "--tokens", "1T", "--chips", "64", "--hardware", "h100-sxm"],
        ["predict", str(sc)],
        ["plan", "serve", "--model", str(cfg), "--rate", "5", "--hardware", "h100-sxm"],
    ]
    for argv in commands:
        assert run([*argv, *as_json]) == 0
        assert NO_MT.format(cfg=cfg) in " ".join(capsys.readouterr().err.split())


def test_tco_break_even_is_not_cut_at_80_columns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It had printed 'hyperst…', 'us-east…' and the headers '$/chip-…', 'own when utilisa… >'. AWS's break-even is
    23.4%: u* = (F + E_idle) / (6.88 - E_busy + E_idle) with E_busy = 1.069 kW x PUE 1.42 x $0.0862 = $0.1309 since
    the node-level busy load of 0.76 (1.120 kW, $0.1371 and 23.47% at 0.8), E_idle = 0.32075 x 1.42 x 0.0862 =
    $0.0393 and F + E_idle = $1.5917: 1.5917 / 6.7884 = 23.45%."""
    monkeypatch.setenv("COLUMNS", "80")
    assert run(["tco", "h100-sxm"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("break-even utilisation") :]
    assert "…" not in table and "hyperst" in table and "23.4%" in table


def test_plan_fleet_no_replay_says_it_is_unchecked(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", "examples/chat-mix.yaml"]
    argv += ["--slo", "ttft_p99=2s,tpot_p99=50ms", "--hardware", "h100-sxm", "--no-replay"]
    assert run(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(steady-state MILP, unchecked by the simulator: --no-replay)" in out
    assert "simulator let" not in out and "before the simulator check" not in out


def test_plan_serve_engine_help_lists_every_engine(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """fastertransformer had been accepted but left out of the help."""
    monkeypatch.setenv("COLUMNS", "400")
    assert run(["plan", "serve", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert ", ".join(ENGINES) in out and "fastertransformer" in out


def test_model_notes_reach_plan_hetero_plan_fleet_and_sweep(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """plan hetero, plan fleet and sweep had printed no note for a config with no model_type."""
    cfg = _no_model_type(tmp_path)
    sweep = tmp_path / "nomt-sweep.yaml"
    base = f"{{kind: train, model: {cfg.name}, hardware: h100-sxm, chips: 8, tokens: 1e9}}"
    sweep.write_text(f"name: nomt\nbase: {base}\ngrid: {{chips: [8, 16]}}\n")
    workload = Path(__file__).parents[2] / "examples" / "chat-mix.yaml"
    commands = [
        ["plan", "hetero", "--model", str(cfg), "--fleet", "h100-sxm=64,b200=64", "--tokens", "1T"],
        [
            "plan",
            "fleet",
            "--model",
            str(cfg),
            "--workload",
            str(workload),
            "--hardware",
            "h100-sxm",
            "--no-replay",
            "--slo",
            "ttft_p99=2s,tpot_p99=100ms",
        ],
        ["sweep", str(sweep), "--store", str(tmp_path / "nomt.duckdb")],
    ]
    for argv in commands:
        assert run(argv) == 0, argv
        err = " ".join(capsys.readouterr().err.split())
        assert NO_MT.format(cfg=cfg) in err, argv
