"""`catalog show`'s title says what the entry's status says of the product: the Trainium4 + GB300
NVLink Fusion rack, which no vendor has announced, had been titled 'announced, not shipping'."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.interfaces.cli.app import run


def _title(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert run(["catalog", "show", *args]) == 0
    lines = capsys.readouterr().out.splitlines()
    return next(line for line in lines if not line.startswith("WHAT-IF:")).strip()  # a --catalog's banner first


@pytest.mark.parametrize(
    ("ident", "banner"),
    [
        ("trn4-gb300-fusion-rack", "(PROJECTED hybrid)  (figures projected, not shipping)"),
        ("trn4-ultraserver", "(PROJECTED; NVLink Fusion, NVIDIA MGX)  (figures projected, not shipping)"),
        ("trn4", "(announced targets)  (PROJECTED: figures projected, not shipping)"),
    ],
)
def test_a_projected_entry_is_not_called_announced(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, ident: str, banner: str
) -> None:
    monkeypatch.setenv("COLUMNS", "240")
    assert _title(capsys, ident).endswith(banner)


def test_an_announced_entry_says_announced(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An `announced` entry (a vendor's product, not yet shipping) keeps the words; a shipping system of a projected
    chip names the chip whose status it is."""
    monkeypatch.setenv("COLUMNS", "240")
    (tmp_path / "c.yaml").write_text(
        "chips:\n  trn4:\n    status: announced\n"
        "systems:\n  trn4-box:\n    name: A Trainium4 box\n    kind: instance\n    provider: aws\n    chip: trn4\n"
        "    chips: 4\n    status: spec\n    scaleup: {kind: switched, fabric: nvlink-fusion, size: 4}\n"
        "    scaleout:\n      fabric: efa-v4\n"
        "      bandwidth: {value: 800, unit: Gb/s, status: estimate, derivation: 4 x 200 Gb/s}\n"
        "    power: {value: 10, unit: kW, status: estimate, derivation: 4 x 2 kW x 1.3}\n"
    )
    cat = str(tmp_path / "c.yaml")
    assert _title(capsys, "trn4", "--catalog", cat).endswith("(PROJECTED: announced, not shipping)")
    assert _title(capsys, "trn4-box", "--catalog", cat).endswith("(PROJECTED: chip trn4: announced, not shipping)")
