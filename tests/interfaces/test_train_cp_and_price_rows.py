"""plan train and predict say what held a plan's context parallelism (a seq_len no 2 x cp divides had turned it off
with no word, and its idle chips were put down to the batch), and a training price's row names the region the price
was quoted in (DigitalOcean's worldwide MI300X price had read 'price (on-demand, country-usa)', the grid's region)."""

from __future__ import annotations

import json

import pytest

from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.train_views import _idle_reason, _price_where

PLAN = {"tp": 2, "pp": 10, "dp": 32, "cp": 1, "vpp": 1, "microbatch": 1}


def _out(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> str:
    monkeypatch.setenv("COLUMNS", "400")
    assert run(argv) == 0
    return " ".join(capsys.readouterr().out.replace("│", " ").split())


def test_idle_chips_name_the_sequence_that_held_cp() -> None:
    """dp 32 of a 32-sequence batch leaves 384 of 1,024 H100 idle; seq_len 131,070 allowed no cp to use them."""
    assert _idle_reason(PLAN, 32, seq_len=131070, ranks=1024) == (
        "dp 32 x 1 sequences each take the whole 32-sequence batch, and seq_len 131,070 allows no cp above 1"
    )
    # 131,072 allows cp 256: the batch, not the sequence, held this plan
    assert _idle_reason(PLAN, 32, seq_len=131072, ranks=1024) == (
        "dp 32 x 1 sequences each take the whole 32-sequence batch"
    )
    assert _idle_reason({**PLAN, "cp": 16}, 32, seq_len=100000, ranks=1024).endswith(
        ", and seq_len 100,000 allows no cp above 16"
    )
    assert _idle_reason(PLAN, 32, dp_given=True, seq_len=131070, ranks=1024) == "the plan given uses 640 ranks"


def test_plan_train_says_the_seq_len_turned_cp_off(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Llama-3.1-70B on 1,024 H100 at seq_len 131,070 ranked TP2 PP40 DP8 at 6.5 min a step with no word of context
    parallelism; 131,072 runs TP1 DP32 CP32 at 16.4 s."""
    argv = ["plan", "train", "--model", "llama-3.1-70b", "--chips", "1024", "--hardware", "h100-sxm"]
    out = _out(capsys, monkeypatch, [*argv, "--seq-len", "131070", "--tokens", "1e10"])
    assert (
        "1 h100-sxm: context parallelism needs seq_len a multiple of 2 x cp, and seq_len 131,070 allows no cp above 1 "
        "of the 128 its length and the 1,024 ranks would take. Fix: give a seq_len that is a multiple of 256, e.g. "
        "130,816 or 131,072, to split sequences over context parallelism." in out
    )
    assert "context parallelism needs" not in _out(capsys, monkeypatch, [*argv, "--seq-len", "131072"])


def test_predict_says_the_seq_len_turned_cp_off_only_where_it_searched_cp(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = {"kind": "train", "model": "llama-3.1-70b", "hardware": "h100-sxm", "chips": 1024, "seq_len": 131070}
    out = _out(capsys, monkeypatch, ["predict", json.dumps(scenario)])
    assert "seq_len context parallelism needs seq_len a multiple of 2 x cp, and seq_len 131,070 allows no cp" in out
    given = {**scenario, "plan": {"tp": 2, "pp": 40, "dp": 8}}  # cp 1 is the plan's own
    assert "context parallelism needs" not in _out(capsys, monkeypatch, ["predict", json.dumps(given)])


def test_the_price_row_names_the_region_the_price_was_quoted_in() -> None:
    row = {"region": "country-usa", "pricing": "on-demand"}
    assert _price_where(row, {"provider": "digitalocean", "region": "global"}) == (
        ", digitalocean global: a provider's one worldwide list price"
    )
    assert _price_where(row, {"provider": "lambda", "region": "us"}) == (
        ", lambda us: a provider's one price across its US data centres"
    )
    east = {"region": "us-east-1", "pricing": "on-demand"}
    assert _price_where(east, {"provider": "aws", "region": "us-east-1"}) == ", us-east-1"
    assert _price_where(east, {}) == ", us-east-1"  # an owned fleet's price has no quote region
    eu = {"region": "eu-north-1", "pricing": "on-demand"}
    note = {"provider": "aws", "region": "us-east-1", "region_note": "no price in the region asked for"}
    assert _price_where(eu, note) == ", us-east-1, none listed in eu-north-1"


def test_predict_labels_a_worldwide_price_as_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """70B on 1,024 MI300X is priced at DigitalOcean's global list price ($2.590 a chip-hour)."""
    scenario = {"kind": "train", "model": "llama-3.1-70b", "hardware": "mi300x", "chips": 1024, "tokens": 1e12}
    out = _out(capsys, monkeypatch, ["predict", json.dumps(scenario)])
    assert "price (on-demand, digitalocean global: a provider's one worldwide list price) $2.590 per chip-hour" in out
    assert "price (on-demand, country-usa)" not in out
