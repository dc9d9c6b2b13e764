"""A job whose groups span past the scale-out fabric's top documented tier says the network beyond is extrapolated
(perf.device.beyond_network_note), rather than pricing it non-blocking in silence."""

from __future__ import annotations

from chipwise.hardware import Hardware
from chipwise.perf.device import beyond_network_note


def test_a_job_past_the_top_tier_is_flagged(hw: Hardware) -> None:
    # efa-v2's top tier is UltraCluster 2.0's 20,000 GPUs, all of its tiers 1:1
    note = beyond_network_note(hw.system("h100-sxm"), 524_288)
    assert note == (
        "efa-v2 is documented to 20,000 chips (its top tier); this plan's 524,288 chips span past it, and the network "
        "beyond is priced as that tier (non-blocking) with no further taper: an extrapolation"
    )
    # roce-400g's aggregation tier is 1:7 to 24,576 GPUs
    assert "(7:1)" in beyond_network_note(hw.system("mi300x"), 32_768)


def test_a_job_within_the_top_tier_is_not(hw: Hardware) -> None:
    assert beyond_network_note(hw.system("h100-sxm"), 20_000) == ""
    assert beyond_network_note(hw.system("gb200"), 4_096) == ""  # ib-ndr's 4,096-GPU SuperPOD, exactly
    assert beyond_network_note(hw.system("gb200"), 4_104) != ""
