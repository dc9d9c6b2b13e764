"""The web page's notes and refusals name what a page user can give: the API's fields, the endpoint that lists names,
the server's start-up option; never a command-line flag the page has no way to set."""

from __future__ import annotations

import re
from typing import Any

import pytest

from chipwise.errors import UnknownNameError
from chipwise.interfaces import format as fmt
from chipwise.interfaces.web.routes import Settings, plan_serve, plan_train, predict

#: a command-line flag outside a quoted command ('chipwise catalog show ID --sources' is one a user may run), as
#: the notes had named them ('--global-batch-tokens', '--set', '--json')
CLI_FLAG = re.compile(r"--[a-z]")
COMMAND = re.compile(r"'chipwise [^']*'")
SERVER_SET = "give one: 'chipwise web --set trn1.unit_price=USD' when starting the server"


@pytest.fixture(scope="module")
def owned_trainium() -> dict[str, Any]:
    """8 Trn1 (no unit price) and 8 Trn2 (unfitted priors), owned, on 1,000 tokens: under one 1,048,576-token batch."""
    body = {"model": "llama-3.1-8b", "chips": 8, "hardware": "trn1,trn2", "pricing": "owned", "tokens": 1000}
    return plan_train(body, Settings())


def test_plan_train_notes_name_the_api_fields(owned_trainium: dict[str, Any]) -> None:
    """The batch note's fix is the global_batch_tokens field, the † note's pointer the answer's key, the missing
    unit price the server's --set: they had read '--global-batch-tokens', '--json efficiency_unfitted_reason' and
    '(give one: --set trn1.unit_price=USD)'."""
    notes = owned_trainium["notes"]
    assert [n for n in notes if CLI_FLAG.search(COMMAND.sub("", n))] == []
    assert f"no price: trn1: no unit price for trn1 in the catalog: owned cost unknown ({SERVER_SET})" in notes
    (batch,) = [n for n in notes if n.startswith("the 1,000 tokens asked are under one batch")]
    assert batch.endswith("Fix: give the global_batch_tokens field to price a smaller step.")
    (unfitted,) = [n for n in notes if n.startswith("†")]
    assert "(trn2; efficiency_unfitted_reason in /api/plan/train's answer, 'chipwise catalog show" in unfitted


def test_plan_train_rows_word_the_price_fix_for_the_page(owned_trainium: dict[str, Any]) -> None:
    rows = {r["hardware"]: r for r in owned_trainium["results"]}
    assert rows["trn1"]["price_note"] == f"no unit price for trn1 in the catalog: owned cost unknown ({SERVER_SET})"


def test_the_command_line_keeps_its_flags() -> None:
    """The same notes on the command line name its flags."""
    from chipwise.interfaces.cli.train_views import ranking_notes
    from chipwise.planner.training import plan_training

    report = plan_training(Settings().catalog(), "llama-3.1-8b", 8, ["trn1"], tokens=1000, pricing="owned")
    notes = ranking_notes(report)
    assert "no price: trn1: no unit price for trn1 in the catalog: owned cost unknown (give one: --set " in notes[0]
    assert notes[-1].endswith("Fix: give --global-batch-tokens to price a smaller step.")


def test_an_unknown_chip_is_told_the_catalog_endpoint() -> None:
    """As an unknown model is told GET /api/models: 'run chipwise catalog list' is the command line's fix."""
    line = r"^unknown chip or system 'h100x'\. Did you mean 'h100-sxm', .* Fix: GET /api/catalog lists them\.$"
    with pytest.raises(UnknownNameError, match=line):
        plan_train({"model": "llama-3.1-8b", "chips": 8, "hardware": "h100x"}, Settings())
    with pytest.raises(UnknownNameError, match=line):
        plan_serve({"model": "llama-3.1-8b", "rate": 5, "hardware": ["h100-sxm", "h100x"]}, Settings())
    with pytest.raises(UnknownNameError, match=line):
        predict({"kind": "train", "model": "llama-3.1-8b", "chips": 8, "hardware": "h100x"}, Settings())


def test_predict_words_the_price_fix_for_the_page() -> None:
    body = {"kind": "train", "model": "llama-3.1-8b", "chips": 8, "hardware": "trn1", "pricing": "owned"}
    answer = predict(body, Settings())
    assert answer["price_note"] == f"no unit price for trn1 in the catalog: owned cost unknown ({SERVER_SET})"


def test_server_set_words_a_set_fix_once() -> None:
    """Worded twice, it reads as once (the notes and the rows they come from are both worded)."""
    text = "owned cost unknown (give one: --set trn4.unit_price=USD)"
    once = fmt.server_set(text)
    assert once == "owned cost unknown (give one: 'chipwise web --set trn4.unit_price=USD' when starting the server)"
    assert fmt.server_set(once) == once
    assert fmt.server_set("--set it to another size to compare") == "--set it to another size to compare"
