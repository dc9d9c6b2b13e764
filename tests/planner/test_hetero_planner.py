"""Mixed-fleet training: a case where the mix wins, one where it loses, and clear errors."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.planner.hetero import parse_fleet, plan_hetero_training


def test_fusion_rack_mix_beats_its_fastest_part(catalog: Catalog) -> None:
    r = plan_hetero_training(
        catalog, "llama-3.1-70b", {"trn4": 36, "gb300": 36}, tokens=1e12, hybrid="trn4-gb300-fusion-rack"
    )
    assert r["projected"] and "trn4-gb300-fusion-rack" in r["projected_items"]
    assert r["link"]["between"].endswith("scale-up fabric")
    assert r["mixed"]["tokens_per_s"] > r["fastest_part"]["tokens_per_s"]
    assert r["verdict"].startswith("mixed fleet beats")
    assert r["mixed"]["link_share"] < 0.05


def test_mix_with_a_slow_old_part_loses(catalog: Catalog) -> None:
    r = plan_hetero_training(catalog, "llama-3.1-70b", {"gb200": 512, "a100-80gb": 512}, tokens=1e12)
    assert r["fastest_part"]["hardware"] == "gb200"
    assert r["verdict"].startswith("fastest part alone")
    assert r["mixed"]["usd_per_million_tokens"] > r["fastest_part"]["usd_per_million_tokens"]


@pytest.mark.parametrize(
    ("spec", "needle"),
    [("trn4=36", "exactly two"), ("trn4=x,gb300=3", "TYPE=COUNT"), ("trn4=0,gb300=3", "non-positive")],
)
def test_bad_fleet(spec: str, needle: str) -> None:
    with pytest.raises(ChipwiseError, match=needle):
        parse_fleet(spec)


def test_hybrid_domain_must_hold_both_types(catalog: Catalog) -> None:
    with pytest.raises(ChipwiseError, match="holds"):
        plan_hetero_training(catalog, "llama-3.1-8b", {"h100-sxm": 8, "gb300": 8}, hybrid="trn4-gb300-fusion-rack")


def test_each_part_says_where_its_price_comes_from(catalog: Catalog) -> None:
    """Each part's price carries its source: Trainium4 (announced) and the rack's GB300 have no rental offer, so
    theirs are catalog estimates, and the mix's sources name both (the table marks them §)."""
    r = plan_hetero_training(
        catalog, "llama-3.1-70b", {"trn4": 36, "gb300": 36}, tokens=1e12, hybrid="trn4-gb300-fusion-rack"
    )
    assert set(r["mixed"]["price_sources"]) == {"trn4", "gb300"}
    for part in r["alone"]:
        assert part["price_source"]["status"] == "estimate" and part["price_source"]["derivation"]
    mixed = plan_hetero_training(catalog, "llama-3.1-70b", {"gb200": 512, "a100-80gb": 512}, tokens=1e12)
    sources = mixed["mixed"]["price_sources"]
    # an A100 is rented on demand; a GB200 is sold as capacity blocks, its on-demand price derived from them
    assert sources["a100-80gb"]["status"] != "estimate" and sources["gb200"]["status"] == "estimate"


def test_a_system_that_is_not_hybrid_is_named_as_such(catalog: Catalog) -> None:
    """--hybrid p5.48xlarge (one chip type) read 'holds , not h100-sxm, trn2': its empty list of members."""
    with pytest.raises(ChipwiseError) as err:
        plan_hetero_training(catalog, "llama-3.1-8b", {"h100-sxm": 8, "trn2": 16}, hybrid="p5.48xlarge")
    message = str(err.value)
    assert message.startswith("'p5.48xlarge' is not a hybrid system: it holds one chip type, h100-sxm")
    assert "trn4-gb300-fusion-rack" in message and "Fix: " in message and "holds ," not in message
