"""plan fleet's and plan lifecycle's lines on what they price and what they leave out. An owned fleet had read
'no region chosen (each offer at its own region): p5.48xlarge at its owned cost at country-usa' (an owned price has
no offer), its § footnote sent the reader to 'chipwise tco' for a chip-hour that reads higher there with no word
why, and lifecycle had left a chip with no price out of every row and note."""

from __future__ import annotations

import pytest

from cli_run import run, run_json

FLEET = ["plan", "fleet", "--model", "llama-3.1-8b", "--workload", "examples/chat-mix.yaml", "--hardware", "h100-sxm"]
FLEET += ["--slo", "ttft_p99=2s,tpot_p99=50ms", "--no-replay", "--precision", "bf16", "--pricing", "owned"]
LIFECYCLE = ["plan", "lifecycle", "--model", "llama-3.1-8b", "--train-tokens", "100G", "--serve-rate", "5"]
LIFECYCLE += ["--hardware", "h100-sxm,tpu-v6e", "--train-chips", "64", "--serve-months", "6"]
LIFECYCLE += ["--pricing", "capacity-block", "--region", "us-east-1"]
#: the catalog's scale-out network capex a chip ($6,600 a 400G port), which chipwise tco counts for a p5 chip
SCALEOUT_USD_PER_CHIP = 6600.0


def _out(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert run(argv) == 0
    return " ".join(capsys.readouterr().out.split())  # the notes wrap at the terminal's width


def test_an_owned_fleet_is_costed_at_the_owners_site_not_an_offers(capsys: pytest.CaptureFixture[str]) -> None:
    out = _out(capsys, FLEET)
    assert "owned prices, no region chosen: each instance type's owned cost at the owner's default site " in out
    assert "(country-usa)" in out
    assert "each offer at its own region" not in out


def test_an_owned_fleet_in_a_region_is_costed_there(capsys: pytest.CaptureFixture[str]) -> None:
    out = _out(capsys, [*FLEET, "--region", "us-west-2"])
    assert "owned prices, in us-west-2: p5.48xlarge at its owned cost at us-west-2" in out


def test_the_owned_footnote_says_why_tco_reads_higher(capsys: pytest.CaptureFixture[str]) -> None:
    """Each 8B replica stays inside one p5: the fleet buys no scale-out network ($0 a chip), where tco's fleet of
    many systems pays $6,600 a chip for it; the § footnote says so."""
    data = run_json(capsys, [*FLEET, "--json"])
    assert {f["price_source"]["tco"]["capex_usd_per_chip_by_part"]["scaleout_network"] for f in data["fleet"]} == {0.0}
    tco = run_json(capsys, ["tco", "h100-sxm", "--json"])
    assert tco["capex_usd_per_chip_by_part"]["scaleout_network"] == pytest.approx(SCALEOUT_USD_PER_CHIP)
    out = _out(capsys, FLEET)
    assert (
        "§ the owned cost of h100-sxm rests on estimated inputs ('chipwise tco CHIP' lists each with its source); "
        "h100-sxm: a replica inside one system pays no scale-out network, which 'chipwise tco' includes (its "
        "chip-hour reads higher)"
    ) in out


def test_lifecycle_names_a_chip_with_no_price_in_the_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    out = _out(capsys, LIFECYCLE)
    line = "train and serve: no price: tpu-v6e: capacity-block is sold by aws only, not by gcp, which rents tpu-v6e-256"
    assert line in out
    data = run_json(capsys, [*LIFECYCLE, "--json"])
    assert [(e["hardware"], e["sides"]) for e in data["no_price"]] == [("tpu-v6e", ["train", "serve"])]


def test_lifecycle_passes_on_no_engine_fix(capsys: pytest.CaptureFixture[str]) -> None:
    """On demand, trn1's and inf2's engines make no split: the line says lifecycle serves each chip on its default
    engine, where it had read 'Fix: --engine vllm-neuron to price such splits' ('No such option: --engine')."""
    argv = [*LIFECYCLE[:9], "trn1,inf2,h100-sxm", *LIFECYCLE[10:14]]
    out = _out(capsys, argv)
    assert "(engines.ENGINE.kv_handover); plan lifecycle serves each chip on its default engine" in out
    assert "--engine" not in out
