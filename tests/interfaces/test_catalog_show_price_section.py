"""`catalog show CHIP|SYSTEM`'s prices: a heading that names the `--set` target (ID.price[.MODE], which the figure
table has no row for: the fix of 'h100-sxm.price' misspelt had pointed to a list without it) and the `catalog prices`
command that tables them, and each system-hour price per chip-hour too."""

from __future__ import annotations

import pytest

from cli_run import run, run_json


def _shown(capsys: pytest.CaptureFixture[str], ident: str) -> str:
    """`catalog show IDENT`'s output as one line (the console wraps at its width)."""
    assert run(["catalog", "show", ident]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_a_chips_prices_are_headed_by_the_set_target_and_the_prices_command(capsys: pytest.CaptureFixture[str]) -> None:
    """h100 (an alias of h100-sxm): 12 prices; p5.48xlarge's on-demand $55.04 an 8-GPU hour is $6.88 a chip-hour."""
    out = _shown(capsys, "h100")
    assert (
        "price (12; as a table: 'chipwise catalog prices --chip h100-sxm'; a what-if one: --set "
        "h100-sxm.price[.MODE]=USD/h):" in out
    )
    assert "price: on-demand aws us-east-1 $55.04/system-hour of p5.48xlarge = $6.88/chip-hour (2026-07, spec)" in out
    assert "price: on-demand lambda us $3.99/chip-hour (2026-09, spec)" in out


def test_a_systems_heading_names_its_own_set_target(capsys: pytest.CaptureFixture[str]) -> None:
    """p5's prices are priced per system-hour by --set p5.48xlarge.price; its chip's prices are tabled by --chip."""
    out = _shown(capsys, "p5")
    assert "as a table: 'chipwise catalog prices --chip h100-sxm'; a what-if one: --set p5.48xlarge.price[.MODE]" in out


def test_a_hybrid_points_to_each_members_prices(capsys: pytest.CaptureFixture[str]) -> None:
    """A Trainium4 + GB300 rack rents two chip types: each one's prices are tabled by its own --chip."""
    out = _shown(capsys, "trn4-gb300-fusion-rack")
    assert "as a table: 'chipwise catalog prices --chip trn4', 'chipwise catalog prices --chip gb300';" in out


def test_a_fabric_has_no_price_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert "price (" not in _shown(capsys, "efa-v3")


def test_show_json_gives_each_price_per_chip_hour(capsys: pytest.CaptureFixture[str]) -> None:
    """The show's prices as `catalog prices` gives them: a system's over its chips (55.04 / 8), a chip's as is."""
    rows = run_json(capsys, ["catalog", "show", "p5", "--json"])["prices"]
    by = {(r.get("system") or r["chip"], r["provider"], r["value"]): r["usd_per_chip_hour"] for r in rows}
    assert by["p5.48xlarge", "aws", 55.04] == pytest.approx(6.88)
    assert by["h100-sxm", "lambda", 3.99] == pytest.approx(3.99)
