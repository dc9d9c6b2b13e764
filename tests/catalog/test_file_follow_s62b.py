"""A chip figure a --catalog file changes reaches the built-in systems of that chip as the same --set does (one
what-if had given two answers: the file left trn2.48xlarge at its own 512 GB/s, the --set moved it to 256 GB/s);
a system figure the file (or a --set) gives itself stands, and a system the file defines has the file's figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.api import predict
from chipwise.catalog import load_catalog

#: trn2's default system, trn2.48xlarge, gives its own scale-up figure (512 GB/s), which the model reads over the
#: chip's 640 GB/s; a TP16 step within it
TP16 = {
    "kind": "train",
    "model": "llama-3.1-8b",
    "hardware": "trn2",
    "chips": 16,
    "precision": "bf16",
    "seq_len": 8192,
    "global_batch_tokens": 1048576,
    "tokens": 1e10,
    "plan": {"tp": 16, "pp": 1, "dp": 4, "microbatch": 1},
}
CHIP_320 = "chips:\n  trn2:\n    scaleup_bandwidth: {value: 320, unit: GB/s, status: estimate, derivation: what-if}\n"


def _file(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "what_if.yaml"
    f.write_text(text)
    return f


def test_a_files_chip_scaleup_moves_its_systems_as_the_set_does(tmp_path: Path) -> None:
    """512 GB/s x 320/640 = 256 GB/s either way, and the same step (33.24 s; 23.18 s at the catalog's 512 GB/s, where
    the file had left it)."""
    f = _file(tmp_path, CHIP_320)
    by_file, by_set = load_catalog(files=[f]), load_catalog(sets=["trn2.scaleup_bandwidth=320GB/s"])
    for cat in (by_file, by_set):
        bandwidth = cat.systems["trn2.48xlarge"].scaleup.bandwidth
        assert bandwidth is not None and bandwidth.si == pytest.approx(256e9)
    assert by_file.systems["trn2.48xlarge"].scaleup.bandwidth.note.startswith(  # type: ignore[union-attr]
        f"what-if: follows {f}'s trn2.scaleup_bandwidth; catalog value was 512 GB/s"
    )
    file_step = predict(TP16, files=[f])["step_time_s"]
    assert file_step == pytest.approx(predict(TP16, sets=["trn2.scaleup_bandwidth=320GB/s"])["step_time_s"])
    assert file_step == pytest.approx(33.24, abs=0.01)
    assert predict(TP16)["step_time_s"] == pytest.approx(23.18, abs=0.01)


def test_a_system_figure_the_file_gives_stands(tmp_path: Path) -> None:
    """The file's own 400 GB/s for trn2.48xlarge is kept (not 400 x 320/640); a system the file defines of trn2 keeps
    its 300 GB/s; the UltraServer, with no figure of its own, takes the chip's 320 GB/s."""
    f = _file(
        tmp_path,
        CHIP_320 + "systems:\n"
        "  trn2.48xlarge:\n"
        "    scaleup: {bandwidth: {value: 400, unit: GB/s, status: estimate, derivation: measured}}\n"
        "  my-trn2:\n"
        "    name: my trn2 box\n    kind: instance\n    provider: aws\n    status: spec\n"
        "    chip: trn2\n    chips: 16\n"
        "    scaleup: {kind: torus, size: 16, dims: [4, 4], fabric: neuronlink-v3,\n"
        "              bandwidth: {value: 300, unit: GB/s, status: estimate, derivation: measured}}\n"
        "    scaleout: {fabric: efa-v3, bandwidth: {value: 3200, unit: Gb/s, status: estimate, derivation: as AWS}}\n",
    )
    cat = load_catalog(files=[f])
    assert cat.systems["trn2.48xlarge"].scaleup.bandwidth.si == pytest.approx(400e9)  # type: ignore[union-attr]
    assert cat.systems["my-trn2"].scaleup.bandwidth.si == pytest.approx(300e9)  # type: ignore[union-attr]
    assert cat.systems["trn2-ultraserver"].scaleup.bandwidth is None
    assert cat.chips["trn2"].scaleup_bandwidth.si == pytest.approx(320e9)


def test_a_files_tdp_and_a_set_on_it_compose(tmp_path: Path) -> None:
    """The file's 350 W H100 moves p5's 10.2 kW by 8 x (350 - 700) W to 7,400 W, as --set h100-sxm.tdp=350W; a
    --set over the file's chip figure moves on from the file's: 320 then 160 GB/s is 512 x 160/640 = 128 GB/s."""
    f = _file(tmp_path, "chips:\n  h100-sxm:\n    tdp: {value: 350, unit: W, status: estimate, derivation: capped}\n")
    for cat in (load_catalog(files=[f]), load_catalog(sets=["h100-sxm.tdp=350W"])):
        power = cat.systems["p5.48xlarge"].power
        assert power is not None and power.si == pytest.approx(10.2e3 - 8 * 350)
    both = load_catalog(files=[_file(tmp_path, CHIP_320)], sets=["trn2.scaleup_bandwidth=160GB/s"])
    assert both.systems["trn2.48xlarge"].scaleup.bandwidth.si == pytest.approx(128e9)  # type: ignore[union-attr]


def test_the_builtin_catalog_does_not_move() -> None:
    cat = load_catalog()
    assert cat.systems["trn2.48xlarge"].scaleup.bandwidth.si == pytest.approx(512e9)  # type: ignore[union-attr]
    assert cat.systems["p5.48xlarge"].power.si == pytest.approx(10.2e3)  # type: ignore[union-attr]
