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
