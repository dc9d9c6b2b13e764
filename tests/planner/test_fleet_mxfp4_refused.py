"""mxfp4 refused on every chip asked for: plan fleet exits 1 as plan serve does (nothing ranks) with the refusals'
own fix, and that fix names what every entry point takes (the values bf16 and auto, not the scenario key
'precision: bf16') and the chips that keep MXFP4 experts (trn3, or a GPU), not 'a chip with FP8 units'."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import Catalog
from chipwise.errors import ChipwiseError
from chipwise.planner.fleet import NoFleetError, plan_fleet
from chipwise.planner.lifecycle import plan_lifecycle
from cli_run import run

SLO = {"ttft_p99": 2.0, "tpot_p99": 0.1}
REFUSED = (
    "neuron cannot serve mxfp4 weights on {}: the chip has no FP4 units, and the engine dequantises MXFP4 experts "
    "to bf16 as it loads them"
)
FIX = (
    "Fix: give the precision bf16 or auto (the checkpoint as the engine loads it), or pick a chip whose engine keeps "
    "MXFP4 experts (trn3, or a GPU)."
)


@pytest.fixture
def mix(tmp_path: Path) -> str:
    path = tmp_path / "mix.yaml"
    path.write_text("buckets: [{name: chat, input_tokens: 512, output_tokens: 128, rate: 2}]\n", encoding="utf-8")
    return str(path)


def test_a_fleet_refused_mxfp4_on_every_chip_ranks_nothing_with_the_refusals_fix(catalog: Catalog, mix: str) -> None:
    """It had exited 2 with 'Fix: pass --precision bf16, or add a chip with FP8 units to --hardware', where trn2 has
    FP8 units."""
    with pytest.raises(NoFleetError) as err:
        plan_fleet(catalog, "gpt-oss-20b", mix, SLO, ["trn2", "trn1"], precision="mxfp4", replay=False)
    assert err.value.exit_code == 1
    assert str(err.value) == (
        f"none of the hardware asked for can serve mxfp4: {REFUSED.format('trn2')}; {REFUSED.format('trn1')}. {FIX}"
    )


def test_plan_fleet_on_the_command_line_exits_1_as_plan_serve_does(
    mix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--model", "gpt-oss-20b", "--slo", "ttft_p99=2s,tpot_p99=100ms", "--hardware", "trn2,trn1"]
    assert run(["plan", "serve", *common, "--rate", "2", "--precision", "mxfp4"]) == 1
    capsys.readouterr()
    assert run(["plan", "fleet", *common, "--workload", mix, "--precision", "mxfp4", "--no-replay"]) == 1
    err = capsys.readouterr().err
    assert err.strip().endswith(FIX) and "Traceback" not in err


def test_lifecycles_mxfp4_refusal_names_no_scenario_key(catalog: Catalog) -> None:
    """plan lifecycle's --serve-precision had been told 'precision: bf16'."""
    with pytest.raises(ChipwiseError) as err:
        plan_lifecycle(
            catalog,
            "gpt-oss-20b",
            train_tokens=1e11,
            serve_rate=2.0,
            serve_months=12,
            hardware_ids=["trn2", "trn1"],
            serve_precision="mxfp4",
            train_chips=64,
        )
    assert str(err.value).endswith(FIX)
    assert "precision: bf16" not in str(err.value)
