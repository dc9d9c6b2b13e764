"""A --catalog file's WHAT-IF line counts the figures the file gives, not those a --set gave beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import run_json

B2X = """\
chips:
  b2x:
    name: Hypothetical B200 with 2x FLOPs
    vendor: nvidia
    family: blackwell
    status: projected
    default_system: b2x-server
    cores_per_chip: 1
    flops:
      fp8: {value: 9000, unit: TFLOP/s, status: projected, derivation: "2x b200"}
      bf16: {value: 4500, unit: TFLOP/s, status: projected, derivation: "2x b200"}
    hbm_capacity: {value: 183359, unit: MiB, status: projected, derivation: "as b200"}
    hbm_bandwidth: {value: 7.7, unit: TB/s, status: projected, derivation: "as b200"}
    tdp: {value: 1000, unit: W, status: projected, derivation: "as b200"}
    scaleup_bandwidth: {value: 900, unit: GB/s, status: projected, derivation: "as b200"}
    scaleout_bandwidth: {value: 50, unit: GB/s, status: projected, derivation: "as b200"}
systems:
  b2x-server:
    name: hypothetical 8x b2x
    kind: server
    provider: oem
    chip: b2x
    chips: 8
    status: projected
    scaleup: {kind: switched, fabric: nvlink5, size: 8}
    scaleout:
      fabric: efa-v4
      bandwidth: {value: 3200, unit: Gb/s, status: projected, derivation: "as p6-b200"}
    source: ["my what-if"]
"""


def test_a_set_beside_a_file_is_its_own_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A --set on the file's new system had been counted as a ninth figure the file changed."""
    path = tmp_path / "b2x.yaml"
    path.write_text(B2X)
    scenario = "{kind: train, model: llama-3.1-8b, hardware: b2x, chips: 8, tokens: 1e9}"
    plain = run_json(capsys, ["predict", scenario, "--catalog", str(path), "--json"])["what_if"]
    sets = ["--set", "b2x-server.host_power_fraction=0.5"]
    both = run_json(capsys, ["predict", scenario, "--catalog", str(path), *sets, "--json"])["what_if"]
    assert both[0] == plain[0] and both[0].endswith(": 8 figures differ from the built-in catalog's")
    assert both[1] == "b2x-server.host_power_fraction = 0.5, set on the command line"


def test_a_projected_chips_track_record_says_none_of_its_runs_are_of_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A user's hypothetical blackwell-family chip had quoted blackwell's published runs as if measured on it."""
    from chipwise.interfaces.cli.app import run

    path = tmp_path / "b2x.yaml"
    path.write_text(B2X)
    scenario = "{kind: train, model: llama-3.1-8b, hardware: b2x, chips: 8, tokens: 1e9}"
    assert run(["predict", scenario, "--catalog", str(path)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Track record: chipwise against published runs (blackwell; none of them of b2x, which is projected;" in text
