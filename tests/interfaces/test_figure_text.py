"""A figure reads as the catalog writes it: 4.9 TB/s x 1.1 is 5.39 TB/s (not
5.390000000000001), a --set given in SI is shown in the catalog figure's own unit (6 TB/s, not 6000000000000 B/s;
the WHAT-IF banner had mixed '6e+12 B/s (catalog 4.9 TB/s)'), tco's inputs as its lines write money ('$27,500',
not '27500.0 USD'); and `catalog engine` says a --set figure is a what-if (it had read as the catalog's fit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import load_catalog
from chipwise.catalog.schema import Figure
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.common import figure_text, whatif_lines
from chipwise.interfaces.format import number_text


def _cells(out: str) -> dict[str, list[str]]:
    """A Rich table's rows by their first cell."""
    rows = (line.split("│") for line in out.splitlines() if line.startswith("│"))
    return {cells[1].strip(): [c.strip() for c in cells[2:-1]] for cells in rows}


def test_numbers_lose_the_floats_noise_and_a_whole_numbers_point() -> None:
    assert [number_text(v) for v in (4.9 * 1.1, 144.0, 0.0862, 27500, 0.1 + 0.2, 6e12)] == [
        "5.39", "144", "0.0862", "27500", "0.3", "6000000000000"
    ]  # fmt: skip
    assert figure_text(Figure(value=6e12, unit="B/s", status="spec", source=["X"]), "TB/s") == "6 TB/s"
    assert figure_text(Figure(value=0.8, unit="1", status="spec", source=["X"])) == "0.8"
    assert figure_text(Figure(value=700, unit="W", status="spec", source=["X"]), "TB/s") == "700 W"  # not a speed


@pytest.mark.parametrize(("given", "shown"), [("x1.1", "5.39 TB/s"), ("6e12", "6 TB/s"), ("6000GB/s", "6 TB/s")])
def test_catalog_show_gives_a_set_figure_in_the_catalogs_unit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], given: str, shown: str
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert run(["catalog", "show", "trn3", "--set", f"trn3.hbm_bandwidth={given}"]) == 0
    rows = _cells(capsys.readouterr().out)
    assert rows["hbm_bandwidth"][:2] == [shown, "estimate"]
    assert rows["unit_price"][0] == "12500 USD" and rows["launch_year"][0] == "2025"


def test_the_banner_gives_a_set_figure_in_the_catalogs_unit() -> None:
    assert whatif_lines(load_catalog([], ["trn3.hbm_bandwidth=6e12"])) == [
        "trn3.hbm_bandwidth = 6 TB/s (catalog 4.9 TB/s), set on the command line"
    ]


def test_tco_inputs_read_as_its_lines(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert run(["tco", "h100-sxm", "--chip-price", "30000.5"]) == 0
    rows = {k: v[0] for k, v in _cells(capsys.readouterr().out).items() if v}
    assert rows["capex.chip"] == "$30,000.50" and rows["capex.server"] == "$6,250"
    assert rows["colocation"] == "$184.06/kW/month" and rows["electricity"] == "$0.0862/kWh"
    assert rows["depreciation_life"] == "5 years" and rows["operations_fraction"] == "0.04"
    assert rows["tdp"] == "700 W" and rows["utilisation"] == "1"


def test_catalog_engine_says_the_what_if(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert run(["catalog", "engine", "trtllm", "--chip", "h100-sxm", "--set", "trtllm.step_overhead=1ms"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "WHAT-IF: trtllm.step_overhead = 1 ms (catalog 0.5 ms), set on the command line"
    assert run(["catalog", "engine", "trtllm", "--chip", "h100-sxm"]) == 0
    assert "WHAT-IF" not in capsys.readouterr().out


def test_predict_sources_reads_a_set_figure_as_the_banner(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The banner read 21.56 TB/s and the --sources row 21.560000000000002 TB/s (19.6 x 1.1)."""
    monkeypatch.setenv("COLUMNS", "200")
    f = tmp_path / "s.yaml"
    f.write_text(
        "{kind: serve, model: llama-3.1-8b, hardware: trn4, chips: 1, input_tokens: 256, output_tokens: 32, "
        "arrival_rate: 1, requests: 5}"
    )
    assert run(["predict", str(f), "--sources", "--set", "trn4.hbm_bandwidth=x1.1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("WHAT-IF: trn4.hbm_bandwidth = 21.56 TB/s (catalog 19.6 TB/s)")
    assert _cells(out)["trn4.hbm_bandwidth"][:2] == ["21.56 TB/s", "estimate"]
