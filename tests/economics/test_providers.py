"""Which systems can share one datacenter network: some provider rents both, or both chips can be bought (one
operator can rack them together, whichever providers' prices they are read at)."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.providers import network_gap, one_operator_note
from chipwise.hardware import Hardware


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("trn2.48xlarge", "p5.48xlarge"),  # AWS rents both
        ("tpu-v6e-256", "gcp-a3-highgpu-8g"),  # GCP rents both
        # both chips can be bought (H200: more than one cloud rents it; MI300X: AMD's server), so one operator can
        # rack them together; the pair is priced at AWS's p5en rental, and says so (one_operator_note)
        ("p5en.48xlarge", "mi300x-8x"),
        ("dgx-b200", "mi355x-8x"),  # two vendors' servers
    ],
)
def test_systems_one_provider_rents_or_that_can_be_bought_share_a_network(
    catalog: Catalog, hw: Hardware, a: str, b: str
) -> None:
    assert network_gap(catalog, hw.system(a), hw.system(b)) is None


def test_a_tpu_pod_beside_an_ec2_instance_shares_none(catalog: Catalog, hw: Hardware) -> None:
    """Only GCP rents a TPU and only AWS a p5; a TPU cannot be bought: the fix names GCP's H100 systems."""
    gap = network_gap(catalog, hw.system("tpu-v5p-pod"), hw.system("p5.48xlarge"))
    assert gap == (
        "no provider rents both (tpu-v5p-pod from gcp and p5.48xlarge from aws), and only one can be bought: no "
        "network joins them. Fix: name systems one provider rents (gcp-a3-highgpu-8g for p5.48xlarge, "
        "gcp-a3-megagpu-8g for p5.48xlarge)."
    )
    assert "neither can be bought" in str(network_gap(catalog, hw.system("tpu-v6e-256"), hw.system("trn2.48xlarge")))


def test_a_pair_priced_at_two_providers_says_one_operator_is_assumed() -> None:
    assert one_operator_note(["digitalocean", "aws", "aws"], "pools") == (
        " (pools priced at aws and digitalocean: one operator running both is assumed)"
    )
    assert one_operator_note(["aws", "aws"], "parts") == ""
