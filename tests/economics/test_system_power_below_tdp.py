"""A system power below its chips' TDP total is refused in one line as the catalog loads, not clamped to a host of
0 W where it is read (economics.power.host_power)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog.loader import load_catalog
from chipwise.economics.power import power_model
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from cli_run import run_error

TRAIN = "kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 64\ntokens: 100e9\n"


def test_a_power_below_the_chips_tdp_is_refused() -> None:
    """1 kW for a p5.48xlarge's 8 x 700 W H100s had read 'host_power_per_chip 0 W' and priced a 5,600 W board: the
    catalog is refused as it loads (catalog.loader), before any power is read."""
    with pytest.raises(ChipwiseError) as caught:
        load_catalog(sets=["p5.48xlarge.power=1kW"])
    assert caught.value.exit_code == 2
    assert str(caught.value).startswith(
        "--set: p5.48xlarge power 1,000 W is below its 8 h100-sxm chips' TDP, 8 x 700 W = 5,600 W, leaving no host "
        "share. Fix: give the system's whole power, at least 5,600 W (e.g. --set p5.48xlarge.power=5.6kW or more)"
    )


def test_a_power_equal_to_the_chips_tdp_leaves_a_host_of_0_w() -> None:
    """5.6 kW is 8 x 700 W exactly: a what-if host that draws nothing, kept."""
    catalog = load_catalog(sets=["p5.48xlarge.power=5.6kW"])
    power = power_model(catalog, hardware(catalog).system("p5.48xlarge"), scaleout=False)
    assert power.host_w == pytest.approx(0.0, abs=1e-9)
    assert power.busy_w == pytest.approx(0.76 * 700)


def test_predict_exits_2_with_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "t.yaml"
    scenario.write_text(TRAIN)
    err = run_error(capsys, ["predict", str(scenario), "--set", "p5.48xlarge.power=1kW", "--json"])
    assert "p5.48xlarge power 1,000 W is below its 8 h100-sxm chips' TDP" in err
