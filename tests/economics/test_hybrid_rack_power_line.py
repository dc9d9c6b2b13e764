"""A hybrid rack's power below its chips' TDP is one line naming the rack and its whole minimum, not the member system
hardware.build builds for each chip type (RACK:CHIP), which no --set names, and its share of the minimum."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from chipwise.catalog import Catalog
from chipwise.economics.power import host_power
from chipwise.hardware import Hardware
from cli_run import run_error

RACK = "trn4-gb300-fusion-rack"


class _LowRack:
    """The hardware view with the rack's power at 100 kW: a rack built where no catalog check on load has run."""

    def __init__(self, hw: Hardware) -> None:
        self.hw = hw

    def system(self, sid: str) -> Any:
        built = self.hw.system(sid)
        return replace(built, power=100e3) if sid == RACK else built

    def chip(self, cid: str) -> Any:
        return self.hw.chip(cid)


def test_a_rack_member_within_its_power_passes(catalog: Catalog, hw: Hardware) -> None:
    """The catalog's 157.9 kW: the Trainium4 member's 36 chips take 157,900 x 72,000 / 122,400 = 92,882 W, a host of
    92,882 / 36 - 2,000 = 580 W a chip."""
    member = hw.member_system(hw.system(RACK), "trn4")
    host, _ = host_power(catalog, member)
    assert host.value == pytest.approx(157_900 * 72_000 / 122_400 / 36 - 2_000, rel=1e-6)


def test_plan_hetero_names_the_rack(capsys: pytest.CaptureFixture[str]) -> None:
    """The reported command: the line names the rack the user set and its whole 122.4 kW, not RACK:trn4 at 72 kW."""
    err = run_error(
        capsys,
        ["plan", "hetero", "--model", "llama-3.1-8b", "--fleet", "trn4=36,gb300=36", "--hybrid", RACK, "--tokens",
         "1T", "--set", f"{RACK}.power=100kW"],
    )  # fmt: skip
    assert f"{RACK} power 100,000 W" in err and "122,400 W" in err
    assert f"--set {RACK}.power=122.4kW" in err and f"{RACK}:trn4" not in err
