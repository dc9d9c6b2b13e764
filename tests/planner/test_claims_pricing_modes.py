"""`chipwise claims` prices each comparison in one mode on both sides and shows the prices the runs are charged: a
user's on-demand price leaves a published capacity block as it is (5d, 5e), 7a sets Trainium2 at its capacity-block
rate against the H100's, 5c names a price set on the command line, and 3a says when Trn3 saves against no GPU."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.planner.claims import check_claims


def _checks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k["id"]: k for c in report["claims"] for k in c["checks"]}


@pytest.fixture(scope="module")
def checks(catalog: Catalog) -> dict[str, dict[str, Any]]:
    return _checks(check_claims(catalog, only=(5, 7)))


def test_a_users_on_demand_price_leaves_trn2s_published_capacity_block(catalog: Catalog) -> None:
    """`--set trn2.price=4.8` had replaced Trainium2's published capacity block ($35.7608 / 16 = $2.235) by 4.8 x
    2.235 / 2.7257 = $3.93 'set on the command line', flipping 5e; it stays at $2.24 [spec], 5e as without the set."""
    base = _checks(check_claims(catalog, only=(5,)))
    users = _checks(check_claims(load_catalog(sets=["trn2.price=4.8"]), only=(5,)))
    d, e = users["5d"], users["5e"]
    assert (
        "capacity block $2.24 [spec]" in d["computed"] and "on-demand $4.80 [set on the command line]" in d["computed"]
    )
    assert d["numbers"]["trn2_capacity_block_per_chip"] == pytest.approx(35.7608 / 16)
    assert e["numbers"]["price_ratio_cb"] == pytest.approx(base["5e"]["numbers"]["price_ratio_cb"])
    assert e["numbers"]["per_token_ratio"] == pytest.approx(base["5e"]["numbers"]["per_token_ratio"])
    assert e["verdict"] == base["5e"]["verdict"] and "which AWS publishes for both" in e["why"]
    assert e["numbers"]["price_ratio_od"] == pytest.approx(4.8 / 6.88)


def test_claim7_sets_trn2_at_capacity_block_against_the_h100_at_its_own(checks: dict[str, dict[str, Any]]) -> None:
    """7a had set Trainium2's $2.235 capacity block against the H100 on demand ($6.88): 1.52x the H100's $/Mtok. At
    both capacity-block rates (the H100's p5 $41.53 / 8 = $5.191) it is the on-demand ratio x (2.235 / 2.73) /
    (5.191 / 6.88): 2.02x."""
    a = checks["7a"]
    n = a["numbers"]
    on_demand = n["trn2"]["usd_per_mtok"] / n["h100-sxm"]["usd_per_mtok"]
    at_cb = on_demand * (35.7608 / 16 / 2.73) / (5.191 / 6.88)
    assert at_cb == pytest.approx(2.02, abs=0.01)
    assert (
        f"at capacity-block rates for both (its published $2.235 a chip-hour, the H100's $5.191) it is {at_cb:.2f}x "
        "the H100's $/Mtok" in a["why"]
    )
    assert "1.52x" not in a["why"]


def test_claim5c_names_the_users_h100_price() -> None:
    """`--set h100-sxm.price=2.0`: 3a and 7a charged $2.00 while 5c listed the catalog's quotes alone, and held."""
    c = _checks(check_claims(load_catalog(sets=["h100-sxm.price=2.0"]), only=(5,)))["5c"]
    assert c["computed"].startswith("set on the command line $2.00 (the price the runs are charged); catalog on-demand")
    assert c["why"].endswith(
        "the price set on the command line, $2.00, is below the range: the verdict is on the catalog's quotes, the "
        "market the claim is about"
    )
    assert c["numbers"]["set_on_command_line"] == 2.0 and c["numbers"]["inside"] == 2


def test_claim5c_without_a_users_price_lists_the_catalog(checks: dict[str, dict[str, Any]]) -> None:
    c = checks["5c"]
    assert c["computed"].startswith("catalog on-demand per GPU-hour: hyperstack $3.20 [spec], lambda $3.99 [spec]")
    # each price with its status, as 5d and 5e give theirs: OCI's $10.00 is the catalog's estimate
    assert "oci $10.00 [estimate]" in c["computed"]
    assert "set_on_command_line" not in c["numbers"] and "command line" not in c["why"]


def test_claim3a_says_when_trn3_saves_against_no_gpu() -> None:
    """With Trn3 at $20 a chip-hour it costs more than every GPU: 3a had read 'largest saving vs b200 (-80%)'."""
    a = _checks(check_claims(load_catalog(sets=["trn3.price=20"]), only=(3,)))["3a"]
    savings = a["numbers"]["saving_vs"]
    assert max(savings.values()) < 0
    closest = max(savings, key=lambda g: savings[g])
    least = f"{-100 * savings[closest]:.0f}%"
    assert f"saves against no GPU: costs at least {least} more ({closest}, the closest)" in a["why"]
    assert "largest saving" not in a["why"]
