"""A region named by one cloud, asked of another, is one line (catalog.regions.check_region_provider): us-east-1
with provider gcp had priced GCP's us-central1 and run the energy at us-east-1's grid with Google's PUE. A place any
provider may run in (a US state, a country), and a provider that names no regions (a neocloud), keep their reading."""

from __future__ import annotations

import pytest

from chipwise.catalog.regions import check_region_provider, region_cloud
from cli_run import run_error, scenario_error

KEYS = " (scenario keys: docs/guide.md#scenario-keys)."


@pytest.mark.parametrize(
    ("region", "cloud"),
    [
        ("us-east-1", "aws"),
        ("us-gov-west-1", "aws"),
        ("us-east-1-dfw", "aws"),
        ("us-ashburn-1", "oci"),
        ("us-central1", "gcp"),
        ("northamerica-northeast1", "gcp"),
        ("eastus2", "azure"),
        ("westeurope", "azure"),
        ("us-va", None),
        ("country-usa", None),
        ("us", None),
        ("global", None),
    ],
)
def test_the_cloud_a_region_name_belongs_to(region: str, cloud: str | None) -> None:
    assert region_cloud(region) == cloud


@pytest.mark.parametrize(
    ("region", "provider"),
    [("us-central1", "gcp"), ("us-va", "gcp"), ("country-usa", "aws"), ("us-east-1", "coreweave"), (None, "aws")],
)
def test_a_place_the_provider_may_run_in_stands(region: str | None, provider: str) -> None:
    check_region_provider(region, provider)


def test_a_scenario_asking_one_clouds_region_of_another_is_one_line() -> None:
    text = (
        "{kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, output_tokens: 128, arrival_rate: 2, "
        "requests: 200, region: us-east-1, provider: gcp}"
    )
    assert scenario_error(text) == (
        "inline scenario: us-east-1 is an AWS region; provider is gcp. Fix: give a gcp region such as us-central1, "
        "or drop provider" + KEYS
    )


def test_plan_train_refuses_another_clouds_region(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "train", "--model", "llama-3.1-8b", "--chips", "8", "--hardware", "h100-sxm"]
    err = run_error(capsys, [*argv, "--provider", "aws", "--region", "europe-west4"])
    assert err == (
        "error: europe-west4 is a Google Cloud region; --provider is aws. Fix: give an aws region such as us-east-1, "
        "or drop --provider."
    )
