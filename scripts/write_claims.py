"""Rewrite docs/claims.md below its introduction, and the verdict table in README.md, from `chipwise claims` on the
built-in catalog (rerun after any catalog or model change: .venv/bin/python scripts/write_claims.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from write_accuracy import between  # scripts/, beside this one

from chipwise.catalog import load_catalog
from chipwise.planner.claims import check_claims

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "claims.md"
README = ROOT / "README.md"
MARKER = "## Summary"
README_START, README_END = "<!-- claims:start -->", "<!-- claims:end -->"


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def summary(report: dict[str, Any]) -> list[str]:
    lines = ["| check | claim | verdict |", "|---|---|---|"]
    for c in report["claims"]:
        lines += [f"| {k['id']} | {_cell(k['claim'])} | {k['verdict']} |" for k in c["checks"]]
    return lines


def render(report: dict[str, Any]) -> str:
    lines = [MARKER, "", *summary(report)]
    for c in report["claims"]:
        lines += [
            "",
            f"## Claim {c['claim']}: {c['text']}",
            "",
            f"- **made**: {'; '.join(c['made'])}",
            f"- **workload**: {c['workload']}",
            f"- **verdict (headline)**: {c['verdict']}",
            "",
            "| # | claim | chipwise computes | verdict | why |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {k['id']} | {_cell(k['claim'])} | {_cell(k['computed'])} | **{k['verdict']}** | {_cell(k['why'])} |"
            for k in c["checks"]
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    report = check_claims(load_catalog())
    head = DOC.read_text(encoding="utf-8").split(MARKER)[0]
    DOC.write_text(head + render(report), encoding="utf-8")
    table = "\n".join(summary(report))
    README.write_text(between(README.read_text(encoding="utf-8"), README_START, README_END, f"\n{table}\n"), "utf-8")
    print(f"wrote {DOC} and the verdict table in {README}")


if __name__ == "__main__":
    main()
