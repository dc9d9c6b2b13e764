"""Under 80 columns `model list` kept every character of each alias (Rich had cropped a piece wider
than the column: 'llama2-7b' read 'llama' and '7b', 'deepseek-r1' 'deeps' and 'r1'), and says where it leaves the
name column out (it had vanished without a word)."""

from __future__ import annotations

import pytest

from chipwise.catalog import load_catalog
from chipwise.interfaces.cli.app import run
from chipwise.workload.presets import preset_summaries


def _aliases() -> dict[str, str]:
    """Each preset's alias as the list shows it: its shortest that is not its id."""
    return {
        r["id"]: min((a for a in r["aliases"] if a.lower() != r["id"].lower()), key=len, default="")
        for r in preset_summaries(load_catalog())
    }


@pytest.mark.parametrize("columns", [60, 70, 80, 200])
def test_each_alias_is_whole_in_its_column(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert run(["model", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("id "))
    start = lines[header].index("alias")
    shown: dict[str, str] = {}
    row = ""
    for line in lines[header + 2 :]:
        if not line.strip() or line.startswith("names left out"):
            break
        row = line.split()[0] if not line.startswith(" ") else row  # a folded line continues the row above
        shown[row] = shown.get(row, "") + line[start:].strip()
    assert shown == _aliases()
    assert max(map(len, lines)) <= columns
    hidden = " name " not in lines[header]
    assert hidden == (columns < 80)
    assert any(line.startswith(f"names left out at {columns} columns") for line in lines) == hidden
