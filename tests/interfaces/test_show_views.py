"""What `model show|list`, `catalog show|engine` and `validate --explain` print: each figure with its unit, whole
where it is whole, and nothing cut inside a word; a figure a system inherits from its chip with where it comes from,
and a rental line that ends at its status when it has no note."""

from __future__ import annotations

import io
import json
import re
import signal
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.interfaces import format as fmt
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.catalog_cmd import system_json
from cli_run import run_error, run_json
from inference_rows import write_rows

LLAMA_3_8B = {
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256, "max_position_embeddings": 8192,
}  # fmt: skip


#: Llama-3.1-8B on one H100 at 8 users, with measured latencies (tests/validation/test_explain.py)
CLOSED = {
    "id": "X2", "scenario": "online", "batch_or_concurrency": "concurrency=8", "ttft_ms": "60", "tpot_ms": "9",
}  # fmt: skip


def _rows(out: str) -> dict[str, str]:
    """A two-column table's cells, figure -> value (rows of '│ figure │ value │')."""
    cells = (line.split("│") for line in out.splitlines() if line.count("│") >= 3)
    return {c[1].strip(): c[2].strip() for c in cells}


def _config(tmp_path: Path, **sizes: Any) -> str:
    path = tmp_path / "custom.json"
    path.write_text(json.dumps({**LLAMA_3_8B, **sizes}), encoding="utf-8")
    return str(path)


def test_model_show_refuses_a_trillion_layers_at_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError("model show took longer than 10 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(10)
    try:
        err = run_error(capsys, ["model", "show", _config(tmp_path, num_hidden_layers=1e12)])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert "'num_hidden_layers' is 1,000,000,000,000, past the 10,000 layers chipwise reads" in err


def test_model_show_scales_each_figure_to_its_unit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A large custom model: its KV cache in GiB (not '10,240,000.0 KiB'), its parameters named (not a bare
    '2.86e+15'), its sequence length with separators."""
    wide = {"hidden_size": 262144, "num_attention_heads": 2048, "num_key_value_heads": 2048, "num_hidden_layers": 10000}
    assert run(["model", "show", _config(tmp_path, **wide), "--seq-len", "8192"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["KV cache per token (bf16)"] == "9.77 GiB"
    assert rows["parameters (total)"] == "2.86 quadrillion"
    assert "forward FLOPs per token @ 8,192" in rows
    assert run(["model", "show", "llama-3-8b"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["KV cache per token (bf16)"] == "128 KiB" and rows["parameters (total)"] == "8.03 B"


def test_model_show_refuses_a_sequence_past_the_context(capsys: pytest.CaptureFixture[str]) -> None:
    err = run_error(capsys, ["model", "show", "llama-3-8b", "--seq-len", "10000000"])
    assert err.endswith(
        "--seq-len 10,000,000 is longer than llama-3-8b's context of 8,192 tokens. Fix: give at most 8,192, or a "
        "model with a longer context."
    )
    # without --seq-len, a model of a shorter context than the default is shown at its context
    assert run_json(capsys, ["model", "show", "gpt3-175b", "--json"])["seq_len"] == 2048


def test_model_list_breaks_an_alias_only_after_a_separator(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an 80-column terminal the aliases that do not fit break after a '-' or '/' ('Qwen/Qwen2.5-' then
    '14B-Instruct'), never inside a word ('Qwen/Qwen2.5-14B-I' then 'nstruct'); on a wide one they keep one line."""
    monkeypatch.setenv("COLUMNS", "80")
    assert run(["model", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80
    at = next(line for line in lines if line.startswith("id ")).index("alias")
    body = lines[lines.index(next(line for line in lines if line.startswith("──"))) + 1 :]
    aliases: list[list[str]] = []
    for line in body:
        if not line[:1].isspace():
            aliases.append([])
        if line[at:].strip():
            aliases[-1].append(line[at:].strip())
    assert any(len(pieces) > 1 for pieces in aliases)  # some do break at 80 columns
    for pieces in aliases:
        assert all(p[-1] in "-/_," for p in pieces[:-1]), pieces
    assert ["Qwen/Qwen2.5-", "14B-Instruct"] in aliases
    monkeypatch.setenv("COLUMNS", "200")
    assert run(["model", "list"]) == 0
    assert any(line.rstrip().endswith(" Qwen/Qwen2.5-14B-Instruct") for line in capsys.readouterr().out.splitlines())


def test_catalog_show_system_names_its_chips_and_fabrics(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "240")
    assert run(["catalog", "show", "p5.48xlarge"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["chips"] == "8 x h100-sxm" and rows["scale-out"] == "efa-v2"
    assert rows["scale-up"] == "switched domain of 8 chips over nvlink4"
    assert run(["catalog", "show", "trn2.48xlarge"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert rows["chips"] == "16 x trn2" and rows["scale-up"] == "torus 4x4 domain of 16 chips over neuronlink-v3"


def test_catalog_show_hybrid_rack_lists_its_members_and_says_projected_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "240")
    data = run_json(capsys, ["catalog", "show", "trn4-gb300-fusion-rack", "--json"])
    assert data["members"] == {"trn4": 36, "gb300": 36}
    assert run(["catalog", "show", "trn4-gb300-fusion-rack"]) == 0
    out = capsys.readouterr().out
    assert _rows(out)["chips"] == "72: 36 x trn4 + 36 x gb300"
    assert out.count("PROJECTED") == 1 and "figures projected, not shipping" in out and "announced" not in out


def test_catalog_show_hybrid_rack_prices_each_member(capsys: pytest.CaptureFixture[str]) -> None:
    """A hybrid rack is rented by its members' chip-hours: each member's price, named, not the first member's alone
    (Trainium4's AWS estimate beside Rubin's neocloud one)."""
    data = run_json(capsys, ["catalog", "show", "trn4-rubin-fusion-rack", "--json"])
    assert {p["chip"] for p in data["prices"]} == {"trn4", "rubin"}
    assert run(["catalog", "show", "trn4-rubin-fusion-rack"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("price:")]
    assert any("/chip-hour of trn4 " in x for x in lines) and any("$9.94/chip-hour of rubin " in x for x in lines)
    assert run(["catalog", "show", "trn2"]) == 0  # a chip's own prices do not name it
    assert "/chip-hour (" in capsys.readouterr().out


def test_a_hybrid_rack_is_projected_when_any_member_is(catalog: Catalog) -> None:
    """A rack led by a shipping chip (GB300, status spec) beside a projected one (Trainium4) is still projected."""
    rack = catalog.systems["trn4-gb300-fusion-rack"].model_copy(update={"chip": "gb300", "status": "spec"})
    led_by_gb300 = replace(catalog, systems={**catalog.systems, "gb300-led-rack": rack})
    assert system_json(led_by_gb300, "gb300-led-rack")["projected"] is True
    alone = rack.model_copy(update={"members": {}, "chips": 72})
    shipping = replace(catalog, systems={**catalog.systems, "gb300-only": alone})
    assert system_json(shipping, "gb300-only")["projected"] is False


def test_catalog_show_a_launch_year_bare(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "240")
    assert run(["catalog", "show", "trn2"]) == 0
    assert _rows(capsys.readouterr().out)["launch_year"] == "2024"
    assert run(["catalog", "list", "--sources"]) == 0
    out = capsys.readouterr().out
    assert "launch_year" in out and not re.search(r"\d year\b", out)


def test_catalog_engine_shows_flags_and_counts_as_such(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """chunked_prefill 'yes', not 1.0; block_tokens 16, not 16.0; JSON keeps the catalog's numbers."""
    monkeypatch.setenv("COLUMNS", "240")
    assert run(["catalog", "engine", "vllm", "--chip", "h100"]) == 0
    rows = {c[1].strip(): c[2].strip() for c in (line.split("│") for line in capsys.readouterr().out.splitlines())
            if len(c) > 4}  # fmt: skip
    assert (rows["chunked_prefill"], rows["quantised_kv"], rows["decode_first"]) == ("yes", "no", "no")
    assert (rows["block_tokens"], rows["max_batch"], rows["graph_max_batch"]) == ("16", "1024", "0")
    assert rows["memory_fraction"] == "0.9" and rows["admission"] == "on_demand"
    assert rows["adp_budget_per_rank"] == "yes" and rows["adp_balance_timeout_iters"] == "0"
    data = run_json(capsys, ["catalog", "engine", "vllm", "--chip", "h100", "--json"])
    assert data["figures"]["chunked_prefill"]["value"] == 1.0


def test_validate_explain_names_the_latencies_unit(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("COLUMNS", "240")
    table = write_rows(tmp_path / "rows.csv", CLOSED)
    assert run(["validate", "--data", str(table), "--explain", "X2"]) == 0
    rows = {c[1].strip(): c[2:5] for c in (line.split("│") for line in capsys.readouterr().out.splitlines())
            if len(c) == 7}  # fmt: skip
    stat, measured, predicted = (v.strip() for v in rows["TTFT"])
    assert stat == "value"  # the fixture's bare "60"
    assert measured == "60.0 ms" and re.fullmatch(r"[\d.,]+ (us|ms|s)", predicted)
    assert rows["TPOT"][1].strip() == "9.00 ms"


def test_the_added_formatters() -> None:
    assert (fmt.bytes_binary(128 * 1024), fmt.bytes_binary(1.5 * 2**40)) == ("128 KiB", "1.50 TiB")
    assert (fmt.parameters(70.6e9), fmt.parameters(8.19e18)) == ("70.6 B", "8.19 quintillion")
    assert (fmt.yes_no(1.0), fmt.yes_no(0.0), fmt.yes_no(True)) == ("yes", "no", "yes")
    assert fmt.break_at_separators("Mistral-7B-Instruct-v0.3", 12) == "Mistral-7B-\nInstruct-\nv0.3"
    assert fmt.break_at_separators("Qwen/Qwen3-0.6B", 13) == "Qwen/Qwen3-\n0.6B"  # never inside '0.6B'
    assert fmt.break_at_separators("llama3-8b", 80) == "llama3-8b"


def _table_rows(out: str) -> dict[str, list[str]]:
    """A `catalog show` table's rows by figure name, their cells stripped (a continuation line has no name)."""
    table = [x.split("│") for x in out.splitlines()]
    return {row[1].strip(): [c.strip() for c in row[2:-1]] for row in table if len(row) >= 5 and row[1].strip()}


def test_catalog_show_names_the_inherited_scaleup_bandwidth(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A system with no scale-up bandwidth of its own shows the chip's, its status and where it comes from; every
    figure name stays whole on an 80-column terminal ('scaleup.dim_bandwidt' / 'h.0' had split)."""
    monkeypatch.setenv("COLUMNS", "80")
    assert run(["catalog", "show", "trn3-ultraserver"]) == 0
    rows = _table_rows(capsys.readouterr().out)
    value, status, note = rows["scaleup.bandwidth"]
    assert (value, status) == ("1280 GB/s", "estimate") and note.startswith("from chip trn3")
    assert run(["catalog", "show", "trn2-ultraserver"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert {"scaleup.dim_bandwidth.0", "scaleup.dim_bandwidth.2", "scaleout.bandwidth"} <= set(_table_rows(out))
    assert "scaleup.bandwidth" not in _table_rows(out)  # its torus dimensions are its own, not the chip's total


def test_rental_line_without_a_note_ends_at_its_status(capsys: pytest.CaptureFixture[str]) -> None:
    """tpu-v6e-256's rental has a derivation and no note: without --sources the line ends '(estimate)', where it had
    ended '(estimate): ' with nothing after; with --sources it gives the derivation."""
    assert run(["catalog", "show", "tpu-v6e-256"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("rented in units"))
    assert line == "rented in units of 1, 4, 8, 16, 32, 64, 128, 256 chips (estimate)"
    assert run(["catalog", "show", "tpu-v6e-256", "--sources"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("rented in units"))
    assert line.startswith("rented in units of 1, 4, 8, 16, 32, 64, 128, 256 chips (estimate): v6e-1")


def test_a_systems_make_up_names_its_sources_and_cited_keys_are_spelt_out(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """trn2.48xlarge's chips, scale-up, scale-out and host rows read 'spec' with an empty source cell, and its host
    note's 'see EFA_NOTE' (or tpu-v6e's price's '(BOM_NOTE)') named a key no command spelt out."""
    monkeypatch.setenv("COLUMNS", "250")
    assert run(["catalog", "show", "trn2.48xlarge", "--sources"]) == 0
    out = capsys.readouterr().out
    rows = {c[1].strip(): c[4].strip() for c in (line.split("│") for line in out.splitlines()) if len(c) == 7}
    assert rows["chips"].startswith("github aws-neuron/aws-neuron-sdk") and rows["host"] == rows["chips"]
    assert any(line.startswith("EFA_NOTE: public GitHub research note") for line in out.splitlines())
    assert run(["catalog", "show", "tpu-v6e", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "(BOM_NOTE)" in data["figures"]["unit_price"]["derivation"]
    assert data["cited"]["BOM_NOTE"].startswith("public GitHub research note 'ACCELERATOR + SERVER BOM")
    assert run(["catalog", "show", "trn2.48xlarge", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"][0].startswith("github aws-neuron/aws-neuron-sdk")


def test_a_narrow_terminal_wraps_the_figure_names_not_only_their_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 60 columns a figure's name wraps at two fifths of the width (24 columns): "TTFT's wait to start p50 / p90 /
    p99" had kept 36 columns and left the values 12 a line; from 80 columns names stay whole."""
    from rich.console import Console

    from chipwise.interfaces.cli import common

    name = "TTFT's wait to start p50 / p90 / p99"
    for width, widest in ((60, 24), (80, len(name))):
        monkeypatch.setattr(common.console, "width", width)
        table = common.figure_table("t")
        table.add_row(name, "3.46 / 10.9 / 32.0 ms (to the prompt's first iteration)")
        out = Console(width=width, record=True, file=io.StringIO())
        out.print(table)
        names = [line.split("│")[1].strip() for line in out.export_text().splitlines() if line.count("│") == 3]
        assert max(len(n) for n in names) == widest
