"""A reserved ranking says once how a reservation is paid, and each row's term commitment on one line (CLI and web):
the note had carried its row's dollars and printed once a row, 30 lines differing only in the figure."""

from __future__ import annotations

import json

import pytest

from chipwise.interfaces.cli.app import run
from chipwise.interfaces.web.routes import Settings, plan_train

RESERVED = ["--model", "llama-3.1-8b", "--tokens", "10e9", "--chips", "8", "--pricing", "reserved-1y"]
NOTE = "a reserved-1y reservation is paid every hour of its 8,766 h term"


def test_plan_train_says_the_reservation_once_and_each_commitment_on_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two reserved fleets: the note once, then '1 h100-sxm $255,177; 2 ...' (8 x $3.6387 x 8,766 h for p5's
    reserved-1y rate; --json's term_cost_usd, the second row's its own)."""
    assert run(["plan", "train", *RESERVED, "--hardware", "h100-sxm,h200", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    terms = [r["reservation"]["term_cost_usd"] for r in rows]
    assert [r["hardware"] for r in rows].count("h100-sxm") == 1 and len(rows) == 2
    assert rows[[r["hardware"] for r in rows].index("h100-sxm")]["reservation"]["term_cost_usd"] == pytest.approx(
        8 * 52 * 55.04 / 98.32 / 8 * 8766, abs=1
    )
    assert run(["plan", "train", *RESERVED, "--hardware", "h100-sxm,h200"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.count(NOTE) == 1
    line = "; ".join(f"{i} {r['hardware']} ${t:,.0f}" for i, (r, t) in enumerate(zip(rows, terms, strict=True), 1))
    assert f"the reserved-1y term commits each fleet to: {line}" in out
    assert "$255,177" in line


def test_the_web_page_gets_the_commitments_in_its_notes() -> None:
    body = {"model": "llama-3.1-8b", "chips": 8, "hardware": "h100-sxm", "tokens": "10G", "pricing": "reserved-1y"}
    notes = plan_train(body, Settings())["notes"]
    assert "the reserved-1y term commits each fleet to: 1 h100-sxm $255,177" in notes


def test_predict_says_its_own_commitment(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = "{kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, tokens: 10e9, pricing: reserved-1y}"
    assert run(["predict", scenario]) == 0
    out = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "for every hour of it); the term commits $255,177" in out
