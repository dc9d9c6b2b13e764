"""A storage bandwidth of 0 writes no checkpoint: it had passed, numpy warned on stderr, and the run was priced at
$inf, inf TWh and inf Mt with exit 0. Now the catalog refuses it where it is given (catalog.fields.RANGES), in one
line that names the figure, its value, where it was set and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_errors import catalog_error
from chipwise.catalog import load_catalog
from cli_run import run_error

KEY = "reliability.checkpoint."


@pytest.mark.parametrize(
    ("name", "given"),
    [("storage_aggregate_bandwidth", "0"), ("storage_write_bandwidth_per_node", "0GB/s")],
)
def test_a_zero_storage_bandwidth_is_refused_at_the_set(name: str, given: str) -> None:
    assert catalog_error(sets=[f"{KEY}{name}={given}"]) == (
        f"--set {KEY}{name}={given}: {KEY}{name} = 0 is not in (0, inf) (a bandwidth: above 0). "
        "Fix: give a value in that range."
    )


def test_a_small_storage_bandwidth_is_taken() -> None:
    cat = load_catalog(sets=[f"{KEY}storage_write_bandwidth_per_node=1MB/s"])
    assert cat.reliability["checkpoint"]["storage_write_bandwidth_per_node"].si == pytest.approx(1e6)


def test_a_catalog_files_zero_bandwidth_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "store.yaml"
    path.write_text(
        "reliability:\n  checkpoint:\n    storage_aggregate_bandwidth: {value: 0, unit: TB/s, status: estimate, "
        "derivation: x}\n"
    )
    assert catalog_error(files=[path]) == (
        f"{path}: {KEY}storage_aggregate_bandwidth = 0 is not in (0, inf) (a bandwidth: above 0). "
        "Fix: give a value in that range."
    )


def test_plan_train_refuses_it_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "1e12", "--chips", "64", "--hardware", "h100-sxm"]
    err = run_error(capsys, [*args, "--recovery", "checkpoint", "--set", f"{KEY}storage_aggregate_bandwidth=0"])
    assert f"{KEY}storage_aggregate_bandwidth = 0 is not in (0, inf)" in err and "RuntimeWarning" not in err
