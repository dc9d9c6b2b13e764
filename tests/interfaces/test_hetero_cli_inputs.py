"""plan hetero reads its options as plan train does and names the rack it projects by its id."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.planner.hetero import NoMixError, plan_hetero_training
from cli_run import run_error, run_json


def test_the_projected_rack_is_named_by_its_id_not_the_alias_typed(catalog: Catalog) -> None:
    """'--hybrid fusion-rack' had headed the PROJECTED banner with 'fusion-rack' beside the title's rack id."""
    r = plan_hetero_training(catalog, "llama-3.1-8b", {"trn4": 36, "gb300": 36}, tokens=1e11, hybrid="fusion-rack")
    assert r["projected_items"] == ["trn4-gb300-fusion-rack"]


def test_seq_len_takes_numeric_text(capsys: pytest.CaptureFixture[str]) -> None:
    """As plan train's --seq-len: '4k' is 4,000 tokens (Typer had refused it as no integer)."""
    argv = ["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", "h100-sxm=8,h200=8", "--seq-len", "4k"]
    assert run_json(capsys, [*argv, "--tokens", "1e10", "--json"])["seq_len"] == 4000
    assert "--seq-len 'abc' is not a positive finite whole number" in run_error(capsys, [*argv[:-1], "abc"])


def test_a_fleet_that_fits_nothing_is_a_search_with_no_answer(catalog: Catalog) -> None:
    with pytest.raises(NoMixError, match="fits neither the mixed fleet nor any of its parts") as info:
        plan_hetero_training(catalog, "llama-3.1-405b", {"h100-sxm": 8, "trn2": 8})
    assert info.value.exit_code == 1
