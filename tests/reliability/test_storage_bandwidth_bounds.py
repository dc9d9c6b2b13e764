"""A storage bandwidth of 0 writes no checkpoint: it had passed, numpy warned on stderr, and the run was priced at
$inf, inf TWh and inf Mt with exit 0. Now one line names the figure, where it was set, and a fix with a unit."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import load_catalog
from chipwise.errors import ChipwiseError
from chipwise.hardware import hardware
from chipwise.reliability.goodput import reliability_inputs

KEY = "reliability.checkpoint."


@pytest.mark.parametrize(
    ("name", "given", "fix"),
    [
        ("storage_aggregate_bandwidth", "0", "2TB/s"),  # a bare 0 reads as B/s: the fix is not '2B/s'
        ("storage_write_bandwidth_per_node", "0GB/s", "3.4GB/s"),
    ],
)
def test_a_zero_storage_bandwidth_is_refused_with_the_set_to_give(name: str, given: str, fix: str) -> None:
    cat = load_catalog(sets=[f"{KEY}{name}={given}"])
    with pytest.raises(ChipwiseError) as err:
        reliability_inputs(cat, hardware(cat).system("h100-sxm"))
    msg = str(err.value)
    assert msg.startswith("a storage bandwidth must be finite and > 0 to write a checkpoint")
    assert f"Fix: give e.g. --set {KEY}{name}={fix}." in msg and "\n" not in msg


def test_a_catalog_files_zero_bandwidth_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "store.yaml"
    path.write_text("reliability:\n  checkpoint:\n    storage_aggregate_bandwidth: {value: 0, unit: TB/s}\n")
    cat = load_catalog([path])
    with pytest.raises(ChipwiseError, match=r"Fix: give e\.g\. 2TB/s in .*store\.yaml\."):
        reliability_inputs(cat, hardware(cat).system("h100-sxm"))


def test_plan_train_refuses_it_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from chipwise.interfaces.cli.app import run

    args = ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "1e12", "--chips", "64", "--hardware", "h100-sxm"]
    assert run([*args, "--recovery", "checkpoint", "--set", f"{KEY}storage_aggregate_bandwidth=0"]) != 0
    err = capsys.readouterr().err
    assert "storage bandwidth must be finite and > 0" in err and "RuntimeWarning" not in err
