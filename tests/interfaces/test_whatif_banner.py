"""A --set or --catalog what-if is said in every table output that reads the catalog (it had been
recorded in --json only): one WHAT-IF line a --set, with the built-in figure it replaced, one a --catalog file."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import load_catalog
from chipwise.interfaces.cli.app import run
from chipwise.interfaces.cli.common import whatif_lines


def test_no_what_if_no_line() -> None:
    assert whatif_lines(load_catalog()) == []


def test_each_set_is_one_line_with_the_catalogs_figure() -> None:
    """H100's dense bf16 is 989.4 TFLOP/s in the catalog; a scale of trn2's 2.9 TB/s by 1.1 is 3.19 TB/s; trtllm
    takes the default engine's 5 us a layer (x2: 10 us); a price has no single catalog figure to quote."""
    cat = load_catalog(
        [],
        [
            "h100-sxm.flops.bf16=2000TFLOP/s",
            "trn2.hbm_bandwidth=x1.1",
            "trtllm.layer_overhead=x2",
            "datacenter.pue.aws=1.3",
            "h100-sxm.price=2.5",
        ],
    )
    assert whatif_lines(cat) == [
        "h100-sxm.flops.bf16 = 2000 TFLOP/s (catalog 989.4 TFLOP/s), set on the command line",
        "trn2.hbm_bandwidth = 3.19 TB/s (catalog 2.9 TB/s), set on the command line",
        "trtllm.layer_overhead = 10 us (catalog 5 us), set on the command line",
        "datacenter.pue.aws = 1.3 (catalog 1.15), set on the command line",
        "h100-sxm.price = $2.50/h (over the catalog's prices), set on the command line",
    ]


def test_a_catalog_file_is_counted(tmp_path: Path) -> None:
    """Two figures the file changes (80 GB is not the catalog's 81,559 MiB) and one it gives as the catalog does,
    in other units (0.7 kW is H100's 700 W: not a change)."""
    f = tmp_path / "mine.yaml"
    f.write_text(
        "chips:\n  h100-sxm:\n"
        "    hbm_bandwidth: {value: 4.0, unit: TB/s, status: estimate, derivation: a what-if}\n"
        "    hbm_capacity: {value: 80, unit: GB, status: estimate, derivation: a what-if}\n"
        "    tdp: {value: 0.7, unit: kW, status: estimate, derivation: as the catalog}\n",
        encoding="utf-8",
    )
    assert whatif_lines(load_catalog([f])) == [f"--catalog {f}: 2 figures differ from the built-in catalog's"]


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "train", "--model", "llama-3.1-8b", "--tokens", "1T", "--chips", "256", "--hardware", "h100-sxm"],
        ["tco", "h100-sxm"],
    ],
)
def test_table_outputs_say_the_what_if_and_json_does_not(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """plan train had printed an MFU of 25.0% against the hypothetical 2,000 TFLOP/s peak with no word of it."""
    what_if = ["--set", "h100-sxm.flops.bf16=2000TFLOP/s"]
    assert run([*argv, *what_if]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the banner wraps at the terminal's width
    line = "WHAT-IF: h100-sxm.flops.bf16 = 2000 TFLOP/s (catalog 989.4 TFLOP/s), set on the command line"
    assert out.startswith(line)
    assert run([*argv, *what_if, "--json"]) == 0
    assert "WHAT-IF" not in capsys.readouterr().out
    assert run(argv) == 0
    assert "WHAT-IF" not in capsys.readouterr().out
