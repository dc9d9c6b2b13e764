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


def table_rows(lines: list[str]) -> dict[str, list[str]]:
    """Each row of the list under its header line (`lines[0]`) by its id, with its alias's lines: a row's first line
    names its architecture, and the lines below it without one continue its id, name and alias (both break after
    their separators where they must)."""
    arch, start, ident_end = (lines[0].index(col) for col in ("arch", "alias", lines[0].split()[1]))
    rows: list[tuple[str, list[str]]] = []
    for line in lines[2:]:
        if not line.strip() or line.startswith("names left out"):
            break
        if line[arch] != " ":
            rows.append(("", []))
        ident, alias = rows[-1]
        rows[-1] = (ident + line[:ident_end].strip(), [*alias, line[start:].strip()] if line[start:].strip() else alias)
    return dict(rows)


@pytest.mark.parametrize("columns", [60, 70, 80, 200])
def test_each_alias_is_whole_in_its_column(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert run(["model", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("id "))
    assert {ident: "".join(alias) for ident, alias in table_rows(lines[header:]).items()} == _aliases()
    assert max(map(len, lines)) <= columns
    hidden = " name " not in lines[header]
    assert hidden == (columns < 80)
    assert any(line.startswith(f"names left out at {columns} columns") for line in lines) == hidden


def test_an_alias_breaks_only_after_a_separator_at_60_columns(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """At 60 columns the ids had kept their 21 characters and the aliases 5: 'llama3-8b' read 'llama3', '-' and '8b'
    on three lines, 'deepseek-r1' 'deepse', 'ek-' and 'r1'. The id column gives the alias the 9 of its widest piece
    ('deepseek-'): 'llama3-8b' is one line, 'deepseek-' and 'r1' two; a long id breaks after its own separators."""
    monkeypatch.setenv("COLUMNS", "60")
    assert run(["model", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("id "))
    rows = table_rows(lines[header:])
    assert rows["llama-3-8b"] == ["llama3-8b"] and rows["deepseek-v3"] == ["deepseek-", "r1"]
    assert rows["mistral-7b-v0.3"] == ["Mistral-", "7B-", "Instruct-", "v0.3"]
    assert all(piece.endswith(("-", "/", "_", ",")) for alias in rows.values() for piece in alias[:-1])
    assert "qwen3-coder-480b-a35b" in rows and any(line.startswith("qwen3-coder-480b- ") for line in lines)
