"""Which two systems one network joins under owned pricing: every chip with a unit price is bought and priced as
owned, so it stands in the owner's data centre beside any other such chip (providers.network_gap's owned rule);
the rental modes keep theirs (some provider rents both, or both chips can be bought). Owned, plan serve had refused
Llama 3.1 70B's b200>tpu-v6e split as chips that 'cannot both be bought' while it priced owned TPU v6e fleets."""

from __future__ import annotations

from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.providers import network_gap
from chipwise.hardware import Hardware
from chipwise.planner import serving_plan
from chipwise.planner.serving_split import disaggregated_rows
from chipwise.workload.load import Load

HARDWARE = ["h100-sxm", "trn2", "tpu-v6e", "mi300x", "b200"]
TARGETS = {"ttft_p99": 2.0, "tpot_p99": 0.05}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("p5.48xlarge", "tpu-v6e-256"),  # only AWS rents one, only GCP the other, and no one buys a TPU to rent it
        ("tpu-v6e-256", "trn2.48xlarge"),  # neither 'can be bought' by the rentals' rule
    ],
)
def test_owned_chips_with_a_unit_price_share_the_owners_network(catalog: Catalog, hw: Hardware, a: str, b: str) -> None:
    assert network_gap(catalog, hw.system(a), hw.system(b), pricing="owned") is None
    assert "can be bought: no network joins them" in str(network_gap(catalog, hw.system(a), hw.system(b)))


def test_an_owned_chip_with_no_unit_price_is_named_with_its_fix(catalog: Catalog, hw: Hardware) -> None:
    """TPU v5e has no unit price in the catalog: an owned fleet cannot buy it, so nothing joins it to a p5."""
    assert hw.chip("tpu-v5e").unit_price is None
    gap = network_gap(catalog, hw.system("p5.48xlarge"), hw.system("tpu-v5e-256"), pricing="owned")
    assert gap == (
        "tpu-v5e has no unit price, so an owned fleet cannot buy it: no network joins them. Fix: give it one "
        "(--set tpu-v5e.unit_price=USD)."
    )


@pytest.fixture(scope="module")
def owned_options(catalog: Catalog) -> tuple[Any, ...]:
    """The arguments plan serve gives disaggregated_rows for the report's repro (owned, eu-west-1): its options."""
    seen: list[tuple[Any, ...]] = []
    real = getattr(serving_plan, "disaggregated_rows")  # noqa: B009 (the name plan_serving calls, imported there)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        seen.append(args[:6])
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(serving_plan, "disaggregated_rows", recorded)
        serving_plan.plan_serving(
            catalog, "llama-3.1-70b", HARDWARE, Load("rate", rate=10.0), 1024, 256, TARGETS,
            pricing="owned", region="eu-west-1", verify=0,
        )  # fmt: skip
    return seen[0]


def test_owned_splits_pair_a_tpu_with_a_gpu_and_pay_the_owners_network(owned_options: tuple[Any, ...]) -> None:
    """Two B200 prefill replicas (TP1) beside one TPU v6e decode replica (TP8), each chip at its owned chip-hour with
    its share of the scale-out network: 2 x ($2.2135 + $0.2451) + 8 x ($0.7090 + $0.0613) = $11.08 an hour."""
    cat, model, job, targets, prefills, decodes = owned_options
    rows, notes = disaggregated_rows(cat, model, job, targets, prefills, decodes, pricing="owned")
    pair = next(r for r in rows if r["hardware"] == "b200>tpu-v6e")
    assert pair["system"] == "p6-b200.48xlarge>tpu-v6e-256"
    assert (pair["plan"]["prefill"]["replicas"], pair["plan"]["decode"]["tp"], pair["chips"]) == (2, 8, 10)
    b200, v6e = pair["_split"].prefill.price, pair["_split"].decode.price
    assert pair["cost_usd_per_hour"] == pytest.approx(2 * b200.per_chip_hour(True) + 8 * v6e.per_chip_hour(True))
    assert pair["cost_usd_per_hour"] == pytest.approx(11.08, abs=0.005)
    assert not any("cannot both be bought" in n["reason"] for n in notes)


def test_rental_pricing_still_refuses_a_tpu_beside_a_gpu(catalog: Catalog) -> None:
    report = serving_plan.plan_serving(
        catalog, "llama-3.1-70b", HARDWARE, Load("rate", rate=10.0), 1024, 256, TARGETS, verify=0
    )
    assert not any("tpu-v6e" in r["hardware"] and ">" in r["hardware"] for r in report["results"])
    (note,) = [s["reason"] for s in report["skipped"] if s["hardware"] == "splits"]
    assert note.startswith("8 prefill>decode pairs (b200>tpu-v6e, h100-sxm>tpu-v6e, mi300x>tpu-v6e, ...) were not")
    assert "cannot both be bought" in note
