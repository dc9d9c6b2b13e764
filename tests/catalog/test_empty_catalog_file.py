"""An empty `--catalog` file is refused: a truncated or unsaved override had silently changed nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import run_error


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_an_empty_catalog_file_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text(text)
    assert run_error(capsys, ["catalog", "list", "--catalog", str(path)]) == (
        f"error: catalog file '{path}' is empty. Fix: give it sections (sources, chips, systems, prices, fabrics, "
        "efficiency, engines, datacenter, reliability, models); see docs/catalog-format.md."
    )
