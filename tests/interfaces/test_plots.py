"""Plots: the Pareto front, files of each type with the expected content, tolerant serving plots, bad paths, latency
axes named by the figures drawn."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

from chipwise.errors import ChipwiseError
from chipwise.interfaces import plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
DAY = 86400.0


def _row(hw: str, days: float, musd: float, projected: bool = False, **extra: Any) -> dict[str, Any]:
    return {
        "hardware": hw,
        "system": f"{hw}-system",
        "plan": {"tp": 4, "pp": 1, "dp": 16, "cp": 1, "ep": 1, "vpp": 1, "microbatch": 1, "zero": 1},
        "plan_rank": 1,
        "time_to_train_s": days * DAY,
        "cost_usd": musd * 1e6,
        "tokens_per_s": 1e12 / (days * DAY),
        "usd_per_million_tokens": musd,
        "mfu": 0.4,
        "projected": projected,
        **extra,
    }


@pytest.fixture
def report() -> dict[str, Any]:
    """Hand-made: fast-a and cheap-b and proj-e on the front; slow-c and pricey-d dominated; nan-f has no price."""
    return {
        "kind": "plan-train",
        "model": "toy-70b",
        "chips": 4096,
        "tokens": 15e12,
        "precision": "bf16",
        "objective": "time",
        "pricing": "on-demand",
        "results": [
            _row("fast-a", 10, 30),
            _row("cheap-b", 40, 8),
            _row("slow-c", 50, 20),
            _row("pricey-d", 12, 40),
            _row("proj-e", 20, 12, projected=True),
            _row("nan-f", 15, math.nan),
        ],
        "skipped": [{"hardware": "tiny-g", "system": "tiny-g", "reason": "does not fit"}],
    }


def _prediction() -> dict[str, Any]:
    return {
        "kind": "train",
        "model": "toy-70b",
        "hardware": "chip-x",
        "system": "chip-x-8",
        "chips": 1024,
        "precision": "bf16",
        "plan": {"tp": 8, "pp": 2, "dp": 64, "cp": 1, "ep": 1, "vpp": 1, "microbatch": 1, "zero": 1},
        "step_time_s": 1.5,
        "breakdown": {"compute": 1.0, "attention": 0.2, "tp_comm": 0.2, "bubble": 0.1, "dp_comm": 0.0},
        "memory_per_chip_gib": 50.0,
        "memory_capacity_gib": 80.0,
        "memory_breakdown_gib": {"weights": 10.0, "optimizer": 15.0, "activations": 25.0, "logits": 0.0},
        "projected": False,
    }


def test_pareto_front_drops_dominated_points() -> None:
    xs = [10, 40, 50, 12, 20, 10, math.nan]
    ys = [30, 8, 20, 40, 12, 30, 1]
    front = plots.pareto_front(xs, ys)
    assert sorted(front) == [0, 1, 4, 5]  # identical points 0 and 5 both stay; NaN never on the front
    assert 2 not in front and 3 not in front
    assert plots.pareto_front([], []) == []
    assert plots.pareto_front([1.0, 1.0], [2.0, 3.0]) == [0]  # same time, dearer: dominated


def test_training_points_and_front_on_a_hand_made_report(report: dict[str, Any]) -> None:
    points, missing = plots.training_points(report)
    assert missing == ["nan-f"]
    front = {points[k].label for k in plots.pareto_front([p.days for p in points], [p.musd for p in points])}
    assert front == {"fast-a", "cheap-b", "proj-e (projected)"}
    by_label = {p.label: p for p in points}
    assert by_label["cheap-b"].days == pytest.approx(40) and by_label["cheap-b"].musd == pytest.approx(8)


def test_without_tokens_the_axes_are_per_trillion_tokens(report: dict[str, Any]) -> None:
    report["tokens"] = None
    points, _ = plots.training_points(report)
    assert points[0].days == pytest.approx(10) and points[0].musd == pytest.approx(30)


def test_expected_figures_are_used_when_present(report: dict[str, Any], tmp_path: Path) -> None:
    report["results"][0].update(expected_time_to_train_s=11 * DAY, expected_cost_usd=33e6, goodput=0.9)
    points, _ = plots.training_points(report)
    assert points[0].days == pytest.approx(11) and points[0].musd == pytest.approx(33)
    assert points[1].days == pytest.approx(40)  # no expected figures: the ideal ones
    svg = plots.pareto_training(report, tmp_path / "e.svg").read_text()
    assert "expected time to train (days)" in svg and "goodput-adjusted" in svg


def test_pareto_png_svg_html(report: dict[str, Any], tmp_path: Path) -> None:
    png = plots.pareto_training(report, tmp_path / "p.png")
    assert png.read_bytes().startswith(PNG_MAGIC) and png.stat().st_size > 10_000
    svg = (plots.pareto_training(report, tmp_path / "p.svg")).read_text()
    assert "<svg" in svg and "fast-a" in svg and "proj-e (projected)" in svg and "toy-70b" in svg
    assert "Not plotted (no price or no finite figure): nan-f" in svg
    html = plots.pareto_training(report, tmp_path / "p.HTML").read_text()
    for name in ("fast-a", "cheap-b", "slow-c", "pricey-d", "proj-e (projected)", "Pareto front"):
        assert name in html
    assert re.search(r"<script[^>]*\bsrc=", html) is None  # plotly.js is inline, no CDN: works offline
    assert "toy-70b on 4,096 chips" in html


def test_breakdown_and_memory_plots(tmp_path: Path) -> None:
    pred = _prediction()
    svg = plots.breakdown_training(pred, tmp_path / "b.svg").read_text()
    assert "matmul compute" in svg and "pipeline bubble" in svg and "HBM capacity 80 GiB" in svg
    assert "DP communication" not in svg  # zero components are left out
    assert plots.breakdown_training(pred, tmp_path / "b.png").read_bytes().startswith(PNG_MAGIC)
    html = plots.memory_training(pred, tmp_path / "m.html").read_text()
    assert "activations" in html and "optimizer" in html
    with pytest.raises(ChipwiseError, match="no step-time breakdown"):
        plots.breakdown_training({**pred, "breakdown": {}}, tmp_path / "x.png")


def _serve_report() -> dict[str, Any]:
    """Serving results side by side, each with its own throughput-latency curve (e.g. several predictions)."""
    return {
        "model": "toy-70b",
        "results": [
            {
                "hardware": "gpu-a",
                "ttft_s": {"p50": 0.3, "p90": 0.5, "p99": 0.9},
                "tpot_s": {"p50": 0.02, "p90": 0.03, "p99": 0.05},
                "output_tokens_per_s_per_chip": 900.0,
                "cost_usd_per_mtok": 1.2,
                "pareto": [
                    {"tpot_s": {"p50": 0.01}, "output_tokens_per_s_per_chip": 300.0, "cost_usd_per_mtok": 3.0},
                    {"tpot_s": {"p50": 0.04}, "output_tokens_per_s_per_chip": 1500.0, "cost_usd_per_mtok": 0.8},
                ],
            },
            # no pareto list, latency as a plain number, throughput for the whole fleet
            {"hardware": "npu-b", "projected": True, "tpot_s": 0.03, "output_tokens_per_s": 4000.0, "chips": 8},
            {"hardware": "broken-c"},  # nothing to plot: skipped
        ],
    }


def test_serving_plots_draw_what_is_there(tmp_path: Path) -> None:
    html = plots.serving_throughput_latency(_serve_report(), tmp_path / "s.html").read_text()
    assert "gpu-a" in html and "npu-b (projected)" in html and "broken-c" not in html
    assert "time to first token" in html  # gpu-a has TTFT, so the second panel is drawn
    svg = plots.serving_cost_latency(_serve_report(), tmp_path / "c.svg", percentile="p99").read_text()
    assert "gpu-a" in svg and "npu-b" not in svg  # npu-b has no $/Mtok
    assert plots.plot(_serve_report(), tmp_path / "d.png").read_bytes().startswith(PNG_MAGIC)
    single = dict(_serve_report()["results"][0], kind="serve")
    assert plots.serving_throughput_latency(single, tmp_path / "one.png").stat().st_size > 0


def _serve_prediction() -> dict[str, Any]:
    """A hand-made `chipwise predict` serving result (the keys the figure reads)."""
    return {
        "kind": "serve",
        "model": "toy-70b",
        "hardware": "gpu-a",
        "engine": "trtllm",
        "chips": 8,
        "precision": "fp8",
        "load": {"label": "20 req/s", "capacity_requests_per_s": 25.0, "utilisation": 0.8},
        "slo": {"ttft_p99": 2.0, "tpot_p99": 0.05},
        "goodput": {"fraction": 0.97},
        "ttft_s": {"p50": 0.2, "p90": 0.6, "p99": 1.5, "mean": 0.3},
        "tpot_s": {"p50": 0.03, "p90": 0.035, "p99": 0.04, "mean": 0.031},
        "kv_cache_utilisation": {
            "mean": 0.3, "peak": 0.5, "series_replica0": {"t_s": [0, 1, 2], "utilisation": [0, 0.5, 0.2]},
        },
        "breakdown": {"gemm": 0.02, "attention": 0.01, "tp_comm": 0.0, "overhead": 0.005},
        "prefill_breakdown": {"gemm": 0.3, "attention": 0.05, "tp_comm": 0.04, "waits": 0.0},
    }  # fmt: skip


def test_serving_prediction_plot(tmp_path: Path) -> None:
    """Latency percentiles against the SLO, the KV cache over the run, and where an iteration goes."""
    svg = plots.plot(_serve_prediction(), tmp_path / "p.svg").read_text()
    for text in ("time to first token", "SLO ttft_p99 2.00 s", "SLO tpot_p99 50.0 ms", "KV cache, replica 0",
                 "weight GEMMs (attention and MLP)", "80.0% of the 25 req/s", "Goodput: 97.0%"):  # fmt: skip
        assert text in svg, text
    assert "prefill, alone: 390.0 ms" in svg
    assert "tensor-parallel all-reduce" in svg  # the prefill's
    assert "waits" not in svg  # zero components are left out
    html = plots.prediction_serving(_serve_prediction(), tmp_path / "p.html").read_text()
    assert "attention (KV-cache reads, prefill)" in html
    # a result without the simulated run's series or an SLO still draws what it has
    drop = ("kv_cache_utilisation", "slo", "ttft_s", "prefill_breakdown")
    bare = {k: v for k, v in _serve_prediction().items() if k not in drop}
    assert plots.prediction_serving(bare, tmp_path / "b.png").read_bytes().startswith(PNG_MAGIC)
    with pytest.raises(ChipwiseError, match="no iteration breakdown"):
        plots.prediction_serving({**bare, "breakdown": {}}, tmp_path / "x.png")


def test_serving_plot_with_nothing_to_draw_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ChipwiseError, match=r"^the serving result has no points .* Fix: ") as err:
        plots.serving_cost_latency({"results": [{"hardware": "x"}]}, tmp_path / "x.png")
    assert "\n" not in str(err.value)


def test_latency_accepts_numbers_and_percentiles() -> None:
    assert plots.latency(0.5) == 0.5
    assert plots.latency({"p50": 1.0, "p99": 3.0}, "p99") == 3.0
    assert plots.latency({"p90": 2.0}, "p99") == 2.0
    assert math.isnan(plots.latency(None))


@pytest.mark.parametrize("name", ["plot.pdf", "plot", "plot.jpeg"])
def test_bad_suffix_is_a_one_line_error(report: dict[str, Any], tmp_path: Path, name: str) -> None:
    with pytest.raises(ChipwiseError, match=r"Fix: use \.png, \.svg or \.html\.$") as err:
        plots.pareto_training(report, tmp_path / name)
    assert "\n" not in str(err.value)
    assert not (tmp_path / name).exists()


def test_missing_folder_and_unknown_kind(report: dict[str, Any], tmp_path: Path) -> None:
    with pytest.raises(ChipwiseError, match="does not exist"):
        plots.pareto_training(report, tmp_path / "nope" / "p.png")
    with pytest.raises(ChipwiseError, match="no plot for a result of kind 'weird'"):
        plots.plot({"kind": "weird"}, tmp_path / "p.png")
    for none in (None, [report]):  # not a result dictionary: had been an AttributeError
        with pytest.raises(ChipwiseError, match=r"^no plot for (NoneType|list): plot draws a result dictionary"):
            plots.plot(none, tmp_path / "p.png")  # type: ignore[arg-type]
    report["results"] = [_row("nan-f", 15, math.nan)]
    with pytest.raises(ChipwiseError, match="no priced result"):
        plots.pareto_training(report, tmp_path / "p.png")


def test_cli_plan_train_and_predict_write_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from chipwise.__main__ import _register
    from chipwise.interfaces.cli.app import run

    _register()
    small = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "64", "--hardware", "h100-sxm,trn2"]
    out = tmp_path / "pareto.html"
    assert run([*small, "--tokens", "1T", "--json", "--plot", str(out)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["kind"] == "plan-train"  # stdout stays pure JSON
    assert f"plot: wrote {out}" in captured.err
    assert "h100-sxm" in out.read_text() and "trn2" in out.read_text()

    scenario = '{"kind": "train", "model": "llama-2-7b", "hardware": "h100-sxm", "chips": 8}'
    png = tmp_path / "breakdown.png"
    assert run(["predict", scenario, "--plot", str(png)]) == 0
    assert png.read_bytes().startswith(PNG_MAGIC)
    capsys.readouterr()

    serve = (
        '{"kind": "serve", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 1, "arrival_rate": 5, '
        '"input_tokens": 256, "output_tokens": 64}'
    )
    svg = tmp_path / "serve.svg"
    assert run(["predict", serve, "--plot", str(svg)]) == 0
    assert "time per output token" in svg.read_text() and f"plot: wrote {svg}" in capsys.readouterr().err
    assert run(["predict", serve, "--plot", str(tmp_path / "none" / "serve.png")]) == 2  # checked before simulating
    capsys.readouterr()

    assert run([*small, "--plot", str(tmp_path / "pareto.pdf")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Fix: use .png, .svg or .html" in err[0]
    # every command checks the path as it reads its options, before its search (plan serve's on all chips: ~3 s)
    with patch("chipwise.planner.serving_plan.plan_serving", side_effect=AssertionError("searched")):
        bad = str(tmp_path / "no" / "x.png")
        assert run(["plan", "serve", "--model", "llama-3.1-8b", "--rate", "5", "--plot", bad]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_serving_plan_plot_draws_fronts_and_the_simulated_check(tmp_path: Path) -> None:
    report = {
        "kind": "plan-serve",
        "model": "llama-3.1-8b",
        "results": [{"hardware": "gpu-a", "projected": False}, {"hardware": "npu-b", "projected": True}],
        "pareto": {
            "gpu-a": [
                {"tpot_s": 0.01, "output_tokens_per_s_per_chip": 500.0},
                {"tpot_s": 0.03, "output_tokens_per_s_per_chip": 1500.0},
            ],
            "npu-b": [{"tpot_s": 0.02, "output_tokens_per_s_per_chip": 900.0}],
        },
        "verified": [
            {
                "hardware": "gpu-a",
                "chips": 4,
                "slo_met": True,
                "tpot_s": {"p50": 0.02},
                "output_tokens_per_s_per_chip": 800.0,
                "plan": {"both": {"tp": 1}},
            },
        ],
    }
    html = plots.plot(report, tmp_path / "p.html").read_text()
    assert "gpu-a" in html and "npu-b (projected)" in html and "gpu-a: 4 chips, SLO met" in html
    assert "Projected" in html


def test_many_chip_curves_stay_apart_and_projected_ones_are_open_diamonds(tmp_path: Path) -> None:
    """All 27 catalog chips' fronts: no two curves share colour and look (the palette used to repeat near-equal
    blues), a projected chip's curve has open diamonds as its caption says, and labels that crowd a point move
    away from each other rather than print over one another."""
    from chipwise.interfaces.chart import curve_style

    looks = {(curve_style(i)["color"], curve_style(i)["look"]) for i in range(40)}
    assert len(looks) == 40
    chips = [f"chip-{i}" for i in range(27)]
    report = {
        "kind": "plan-serve",
        "model": "llama-3.1-70b",
        "results": [{"hardware": c, "projected": c == "chip-4"} for c in chips],
        "pareto": {c: [{"tpot_s": 0.01 * (1 + i % 5), "output_tokens_per_s_per_chip": 100.0 + i}] for i, c in
                   enumerate(chips)},
        "verified": [{"hardware": c, "chips": 4, "slo_met": True, "tpot_s": {"p50": 0.02},
                      "output_tokens_per_s_per_chip": 300.0 + i, "plan": {}} for i, c in enumerate(chips[:3])],
    }  # fmt: skip
    drawn: list[Any] = []
    with patch("chipwise.interfaces.chart._mpl_panel", side_effect=lambda ax, panel: drawn.append(panel)):
        plots.plot(report, tmp_path / "p.png")
    curves = [s for s in drawn[0].series if s.style == "curve"]
    assert len({(s.color, s.look) for s in curves}) == 27
    assert [s.name for s in curves if s.open_markers] == ["chip-4 (projected)"]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chipwise.interfaces.chart import _mpl_panel, _place_labels

    fig, ax = plt.subplots()
    _mpl_panel(ax, drawn[0])
    fig.canvas.draw()
    _place_labels(ax, drawn[0].series)
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in ax.texts]
    assert len(boxes) == 3 and not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])
    plt.close(fig)


def test_cli_plan_serve_writes_a_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from chipwise.__main__ import _register
    from chipwise.interfaces.cli.app import run

    _register()
    png = tmp_path / "serve.png"
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "5", "--slo", "ttft_p99=2s", "--hardware", "h100-sxm"]
    assert run([*argv, "--no-disaggregated", "--plot", str(png)]) == 0
    assert png.read_bytes().startswith(PNG_MAGIC) and f"plot: wrote {png}" in capsys.readouterr().err


def test_serving_plots_read_a_plan_serve_report(tmp_path: Path) -> None:
    """A `plan serve` report keeps each option's figures under `estimate` and each chip's front in the report's
    `pareto`: the side-by-side plots read them there (a split deployment draws its point, with no curve)."""
    report = {
        "kind": "plan_serve",
        "model": "toy-70b",
        "pareto": {"gpu-a": [{"tpot_s": 0.02, "output_tokens_per_s_per_chip": 300.0},
                             {"tpot_s": 0.05, "output_tokens_per_s_per_chip": 900.0}]},
        "results": [
            {"hardware": "gpu-a", "chips": 4, "cost_usd_per_mtok": 0.9, "disaggregated": False,
             "estimate": {"tpot_s": 0.04, "ttft_p99_s": 0.3, "output_tokens_per_s": 3000.0}},
            {"hardware": "gpu-a>npu-b", "chips": 6, "cost_usd_per_mtok": 1.2, "disaggregated": True,
             "estimate": {"tpot_s": 0.03, "ttft_p99_s": 0.5, "output_tokens_per_s": 3000.0}},
        ],
    }  # fmt: skip
    rows = plots.serving_rows(report)
    assert rows[0]["output_tokens_per_s"] == 3000.0 and len(rows[0]["pareto"]) == 2 and rows[1]["pareto"] == []
    html = plots.serving_throughput_latency(report, tmp_path / "t.html", percentile="p99").read_text()
    assert "npu-b" in html and "time to first token" in html
    assert plots.serving_cost_latency(report, tmp_path / "c.png").read_bytes().startswith(PNG_MAGIC)


def test_the_plan_serve_plot_reads_fronts_on_a_log_axis_against_the_tpot_target(tmp_path: Path) -> None:
    """The fronts span milliseconds to seconds: TPOT on a log axis, the SLO's TPOT target drawn as a line."""
    report = {
        "model": "toy-70b",
        "slo": {"ttft_p99": 2.0, "tpot_p99": 0.05},
        "pareto": {"gpu-a": [{"tpot_s": 0.01, "output_tokens_per_s_per_chip": 100.0},
                             {"tpot_s": 0.5, "output_tokens_per_s_per_chip": 900.0}]},
        "results": [{"hardware": "gpu-a"}],
        "verified": [{"hardware": "gpu-a", "chips": 4, "slo_met": True, "tpot_s": {"p50": 0.04},
                      "output_tokens_per_s_per_chip": 400.0}],
    }  # fmt: skip
    svg = plots.pareto_serving_plan(report, tmp_path / "p.svg").read_text()
    assert "SLO tpot_p99 50 ms" in svg and "log scale" in svg and "gpu-a: 4 chips, SLO met" in svg
    html = plots.pareto_serving_plan(report, tmp_path / "p.html").read_text()
    assert "SLO tpot_p99 50 ms" in html and '"type":"log"' in html.replace(" ", "")


# Serving figures label their latency axes with the figures drawn, not the percentile asked for: a plan serve report's
# points are its estimate, a mean TPOT and a p99 TTFT, which had been drawn under 'p50'; and $/Mtok is per million
# output tokens.


def _plan_serve_report() -> dict[str, Any]:
    """The keys of a `plan_serve` report these figures read: trn2's estimate is the review's (TPOT mean step 32.2 ms,
    TTFT p99 310 ms), its chip's front the estimate's (a plain mean TPOT a point)."""
    return {
        "kind": "plan-serve",
        "model": "llama-3.1-8b",
        "results": [
            {
                "hardware": "trn2",
                "chips": 2,
                "plan": {"tp": 4, "max_batch": 64, "replicas": 2},
                "estimate": {"tpot_s": 0.0322, "ttft_p99_s": 0.3103, "output_tokens_per_s": 1280.0},
                "cost_usd_per_mtok": 1.1849,
            }
        ],
        "pareto": {"trn2": [{"tpot_s": 0.0098, "output_tokens_per_s_per_chip": 12.7},
                            {"tpot_s": 0.0483, "output_tokens_per_s_per_chip": 1340.0}]},
    }  # fmt: skip


def _texts(svg: str) -> list[str]:
    return re.findall(r"(time (?:per output token|to first token)[^<]*|\$ per million[^<]*)", svg)


def test_a_plan_serve_reports_axes_name_its_mean_tpot_and_p99_ttft(tmp_path: Path) -> None:
    report = _plan_serve_report()
    for percentile in ("p50", "p99"):  # whatever is asked for, what is drawn is the estimate's mean and p99
        svg = plots.serving_throughput_latency(report, tmp_path / "t.svg", percentile=percentile).read_text()
        assert _texts(svg) == ["time per output token, mean (ms)", "time to first token, p99 (s)"]
        assert "Points: each option's steady-state estimate from the search" in svg
    svg = plots.serving_cost_latency(report, tmp_path / "c.svg").read_text()
    assert set(_texts(svg)) == {"time per output token, mean (ms)", "$ per million output tokens",
                                "$ per million output tokens vs TPOT"}  # fmt: skip
    row = plots.serving_rows(report)[0]
    assert plots.latency_at(row["tpot_s"]) == (0.0322, "mean")
    assert plots.latency_at(row["ttft_s"], "p50") == (0.3103, "p99")


def test_axes_name_each_figure_drawn(tmp_path: Path) -> None:
    """Predictions side by side at p99: gpu-a's point has it, its curve only p50, so the axis says both; a plain
    number names no figure; a statistic of a point not drawn (no throughput) is not named."""
    point = {
        "hardware": "gpu-a",
        "tpot_s": {"p50": 0.02, "p99": 0.05},
        "output_tokens_per_s_per_chip": 900.0,
        "ttft_s": {"p90": 0.4},
        "cost_usd_per_mtok": 1.2,
        "pareto": [{"tpot_s": {"p50": 0.01}, "output_tokens_per_s_per_chip": 300.0, "cost_usd_per_mtok": 3.0}],
    }
    undrawn = {"hardware": "gpu-b", "tpot_s": {"mean": 0.03}, "ttft_s": {"mean": 0.2}}
    plain = {"hardware": "npu-c", "tpot_s": 0.03, "ttft_s": 0.5, "output_tokens_per_s": 4000.0, "chips": 8}
    svg = plots.serving_throughput_latency({"results": [point, undrawn]}, tmp_path / "a.svg", "p99").read_text()
    assert _texts(svg) == ["time per output token, p99 / p50 (ms)", "time to first token, p90 (s)"]
    svg = plots.serving_throughput_latency({"results": [plain]}, tmp_path / "b.svg", "p99").read_text()
    assert _texts(svg) == ["time per output token (ms)", "time to first token (s)"]
    svg = plots.serving_cost_latency({"results": [point]}, tmp_path / "c.svg").read_text()
    assert "time per output token, p50 (ms)" in _texts(svg)


@pytest.mark.parametrize(("value", "want"), [(0.5, (0.5, "")), ({"p90": 2.0}, (2.0, "p90")), (None, None)])
def test_latency_at_says_which_figure_it_read(value: Any, want: tuple[float, str] | None) -> None:
    got = plots.latency_at(value, "p99")
    assert got == want if want else got[1] == "" and got[0] != got[0]  # NaN
