"""A serving pool whose replicas, packed one after another, leave one across two scale-up domains says so."""

from __future__ import annotations

import chipwise.api as cw

SCENARIO = (
    "{kind: serve, model: llama-3.1-70b, hardware: gb200-nvl72, chips: CHIPS, input_tokens: 1024, output_tokens: 256, "
    "arrival_rate: 5, requests: 100, plan: {tp: 16}}"
)


def test_nine_tp16_replicas_on_two_nvl72_racks_name_the_one_across() -> None:
    """Ranks 64-79 are 8 + 8 over two racks: the fifth replica's collectives cross the network, priced as the others
    (it had been said nowhere); four replicas in one rack leave none across."""
    r = cw.predict(SCENARIO.replace("CHIPS", "144"))
    assert r["plan"]["replicas"] == 9
    assert r["placement_note"].startswith("9 replicas of 16 ranks on gb200-nvl72 domains of 72: packed one after")
    assert (
        "replica 5 spans two domains" in r["placement_note"]
        and "holds 4 whole replicas, 8 ranks" in r["placement_note"]
    )
    assert "placement_note" not in cw.predict(SCENARIO.replace("CHIPS", "64"))
