"""`catalog list` marks each figure's status as docs/catalog.md does (an estimate had read as a vendor spec: trn2's
TDP 0.500 kW, every TPU's TDP, tpu-v7-pod's 10,000 kW), under a legend line, gives HBM in GiB as the docs and the
vendors' "144 GB" do (trn3 had read 155 GB), and in a narrow terminal wraps a mark under its figure, not cutting it."""

from __future__ import annotations

import pytest

from cli_run import run

LEGEND = "Status marks: none = vendor spec, (m) measured, (a) announced, (p) projected, (e) estimate."


def _listing(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], width: int) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(width))  # app.run sizes the console from it
    assert run(["catalog", "list"]) == 0
    return capsys.readouterr().out.splitlines()


def _row(lines: list[str], ident: str) -> str:
    return next(line for line in lines if line.split(" ")[0] == ident)


def test_each_figure_carries_its_status_mark(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """trn2: TDP 500 W and scale-up 640 GB/s are estimates, its 25 GB/s scale-out the EFA spec; trn4's FP4 is
    projected (6 x Trainium3's), its BF16 an estimate; MI355X's BF16 is an estimate beside its FP8 spec; the systems'
    kW are marked as their figures are (tpu-v7-pod's 10 MW estimate, dgx-h100's 10.2 kW spec); each table has the
    legend under it."""
    lines = _listing(monkeypatch, capsys, 200)
    trn2 = ["trn2", "spec", "-", "1.30", "0.667", "96.0", "2.90", "0.500", "(e)", "640", "(e)", "25.0", "2024"]
    assert _row(lines, "trn2").split() == trn2
    trn4 = _row(lines, "trn4")
    assert "15.1 (p)" in trn4 and "2.01 (e)" in trn4 and "19.6 (p)" in trn4 and "1,800 (e)" in trn4
    mi355x = _row(lines, "mi355x").split()
    assert mi355x[2:7] == ["10.1", "5.03", "2.52", "(e)", "288"]
    assert _row(lines, "tpu-v7-pod").endswith("10,000 (e)")
    assert _row(lines, "dgx-h100").endswith(" 10.2")
    assert _row(lines, "dgx-rubin-nvl8").endswith("24.0 (a)")
    assert lines.count(LEGEND) == 2


def test_hbm_is_given_in_gib(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The vendors' "144 GB" (trn3), "16 GB" (tpu-v5e), "192 GB" (mi300x) are GiB, as docs/catalog.md lists them;
    the B300's 275,040 MiB (nvidia-smi) is 268.6 GiB, 288 decimal GB."""
    lines = _listing(monkeypatch, capsys, 200)
    assert "GiB" in lines[2] and " GB " not in lines[2]
    hbm = {c: _row(lines, c).split()[5] for c in ("trn3", "tpu-v5e", "mi300x", "b300")}
    assert hbm == {"trn3": "144", "tpu-v5e": "16.0", "mi300x": "192", "b300": "268"}


def test_a_narrow_terminal_wraps_each_mark_under_its_figure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """At 80 columns trn2's row runs to its year on one line, its marks on the next under their figures; nothing is
    cut ('0.250 …', 'ye…' had been) and the tpu-v7-pod's 10,000 kW keeps its mark on the line below."""
    lines = _listing(monkeypatch, capsys, 80)
    assert not any("…" in line for line in lines)
    assert max(len(line) for line in lines) <= 80
    i = lines.index(_row(lines, "trn2"))
    assert lines[i].split() == ["trn2", "spec", "-", "1.30", "0.667", "96.0", "2.90", "0.500", "640", "25.0", "2024"]
    assert lines[i + 1].split() == ["(e)", "(e)"]
    assert lines[i + 1].index("(e)") + 3 == lines[i].index("0.500") + 5  # right-aligned under the TDP
    j = lines.index(_row(lines, "tpu-v7-pod"))
    assert lines[j].endswith("10,000") and lines[j + 1].strip() == "(e)"
