"""plan serve's 'not ranked' line for splits no network joins: the pairs by system where a chip is searched in
several systems, and no fix offered that was searched already (a system whose splits are priced)."""

from __future__ import annotations

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.providers import network_gap
from chipwise.hardware import Hardware
from cli_run import run_json

PAIRED = "Nothing to fix: the same chips are paired as {}, searched too."
TPU_BESIDE_P5 = (
    "no provider rents both ({} from {} and {} from {}), and only one can be bought: no network joins them. "
)


def test_a_searched_system_that_pairs_the_chips_is_not_offered_as_the_fix(catalog: Catalog, hw: Hardware) -> None:
    """GCP rents the TPU and gcp-a3-megagpu-8g's H100s: searched beside p5.48xlarge (AWS), it pairs the chips
    already, in the order of the pair asked about; it had been offered as the fix."""
    p5, tpu = hw.system("p5.48xlarge"), hw.system("tpu-v6e-256")
    searched = {"p5.48xlarge", "gcp-a3-megagpu-8g", "tpu-v6e-256"}
    assert network_gap(catalog, p5, tpu, searched) == (
        TPU_BESIDE_P5.format("p5.48xlarge", "aws", "tpu-v6e-256", "gcp")
        + PAIRED.format("gcp-a3-megagpu-8g>tpu-v6e-256")
    )
    assert network_gap(catalog, tpu, p5, searched) == (
        TPU_BESIDE_P5.format("tpu-v6e-256", "gcp", "p5.48xlarge", "aws")
        + PAIRED.format("tpu-v6e-256>gcp-a3-megagpu-8g")
    )
    # unsearched, both of GCP's H100 systems are the fix, as before
    gap = network_gap(catalog, p5, tpu)
    assert gap is not None and gap.endswith(
        "Fix: name systems one provider rents (gcp-a3-highgpu-8g for p5.48xlarge, gcp-a3-megagpu-8g for p5.48xlarge)."
    )


def test_plan_serve_names_the_pairs_it_skips_by_system(capsys: pytest.CaptureFixture[str]) -> None:
    """Llama 3.1 8B at 20 req/s on p5.48xlarge, gcp-a3-megagpu-8g and tpu-v6e: the splits of the GCP H100s and the
    TPU are priced; those of the p5's H100s and the TPU are not. The line had read '2 prefill>decode pairs
    (h100-sxm>tpu-v6e, tpu-v6e>h100-sxm) ... Fix (h100-sxm>tpu-v6e): name systems one provider rents
    (gcp-a3-highgpu-8g for p5.48xlarge, gcp-a3-megagpu-8g for p5.48xlarge)', naming ranked chip pairs and offering the
    system already searched."""
    argv = ["plan", "serve", "--model", "llama-3.1-8b", "--rate", "20", "--hardware",
            "p5.48xlarge,gcp-a3-megagpu-8g,tpu-v6e", "--slo", "ttft_p99=2s,tpot_p99=50ms", "--json"]  # fmt: skip
    data = run_json(capsys, argv)
    notes = [s["reason"] for s in data["skipped"] if s["hardware"] == "splits" and "no network" in s["reason"]]
    assert notes == [
        "2 prefill>decode pairs (p5.48xlarge>tpu-v6e-256, tpu-v6e-256>p5.48xlarge) were not paired: no provider rents "
        "both and they cannot both be bought, so no network carries their KV cache. Nothing to fix "
        "(p5.48xlarge>tpu-v6e-256): the same chips are paired as gcp-a3-megagpu-8g>tpu-v6e-256, searched too."
    ]
    # the pair it names as paired is ranked, and no split of the p5 with the TPU is
    systems = {r["system"] for r in data["results"]}
    assert "gcp-a3-megagpu-8g>tpu-v6e-256" in systems or "tpu-v6e-256>gcp-a3-megagpu-8g" in systems
    assert not systems & {"p5.48xlarge>tpu-v6e-256", "tpu-v6e-256>p5.48xlarge"}
