"""`chipwise catalog prices`: the catalog's rental prices, each per chip-hour with its mode, region, date and status
(`catalog --help` named prices, but `catalog show prices` had been 'unknown chip, system or fabric'), filtered by
chip, provider or region, with one line for a filter the catalog does not know."""

from __future__ import annotations

import pytest

from cli_run import run, run_error, run_json


def test_a_chips_prices_are_its_own_and_its_systems_per_chip_hour(capsys: pytest.CaptureFixture[str]) -> None:
    """trn2: the trn2.48xlarge capacity block, 35.7608 USD per 16-chip system-hour = 2.235 a chip-hour (spec), and the
    ranking fallback of 2.73 a chip-hour (an estimate, with its derivation)."""
    rows = run_json(capsys, ["catalog", "prices", "--chip", "Trainium2", "--json"])["prices"]
    got = {(r.get("system") or r["chip"], r["mode"]): r for r in rows}
    assert set(got) == {("trn2.48xlarge", "capacity-block"), ("trn2", "on-demand")}
    block, fallback = got["trn2.48xlarge", "capacity-block"], got["trn2", "on-demand"]
    assert (block["basis"], block["status"], block["region"]) == ("system-hour", "spec", "us-east-2")
    assert block["usd_per_chip_hour"] == pytest.approx(35.7608 / 16)
    assert (fallback["basis"], fallback["status"], fallback["usd_per_chip_hour"]) == ("chip-hour", "estimate", 2.73)
    assert fallback["derivation"].startswith("ESTIMATE (ranking fallback)")


def test_provider_and_region_filter_and_a_regionless_price_holds_in_every_region(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--provider aws --region us-east-1: AWS's prices there only; p5.48xlarge's on-demand 55.04 USD an 8-GPU hour
    is 6.88 a chip-hour, and the 98.32 it replaced says so."""
    data = run_json(capsys, ["catalog", "prices", "--provider", "aws", "--region", "us-east-1", "--json"])
    assert data["filters"] == {"chip": None, "provider": "aws", "region": "us-east-1"}
    assert {r["provider"] for r in data["prices"]} == {"aws"}
    assert {r.get("region", "") for r in data["prices"]} <= {"us-east-1", ""}
    p5 = [r for r in data["prices"] if r.get("system") == "p5.48xlarge" and r["mode"] == "on-demand"]
    assert sorted(r["usd_per_chip_hour"] for r in p5) == pytest.approx([55.04 / 8, 98.32 / 8])
    assert next(r for r in p5 if r["value"] == 98.32)["superseded_by"] == {"value": 55.04, "date": "2026-07"}


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--chip", "trn9"], "unknown chip 'trn9'. Did you mean 'trn4', 'trn3', 'trn2'?"),
        (["--chip", "p5.48xlarge"], "unknown chip 'p5.48xlarge'."),
        (["--provider", "amazon"], "unknown provider 'amazon'."),
        (["--region", "us-eas-1"], "unknown region 'us-eas-1'. Did you mean 'us-east-1'"),
    ],
)
def test_an_unknown_filter_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], said: str) -> None:
    err = run_error(capsys, ["catalog", "prices", *argv])
    assert err.startswith(f"error: {said}") and "Fix:" in err


def test_the_table_gives_status_and_with_sources_the_derivation(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """gb300's one price, AWS's derived 15.25 a chip-hour: its row and, with --sources, how it was derived."""
    monkeypatch.setenv("COLUMNS", "250")
    assert run(["catalog", "prices", "--chip", "gb300", "--sources"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("gb300 "))
    assert row.split()[:8] == ["gb300", "on-demand", "aws", "us-east-1", "15.25", "15.25", "2026-08", "estimate"]
    assert "gb200 estimate 12.20 x (p6-b300 / p6-b200 on-demand" in row


def test_the_catalog_help_and_show_prices_point_to_the_listing(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["catalog", "--help"]) == 0
    assert "prices " in capsys.readouterr().out
    assert run_error(capsys, ["catalog", "show", "prices"]).endswith("Fix: 'chipwise catalog prices' lists the prices.")
