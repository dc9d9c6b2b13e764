"""Rewrite docs/claims.md below its introduction from `chipwise claims` on the built-in catalog (rerun after any
catalog or model change: .venv/bin/python scripts/write_claims.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chipwise.catalog import load_catalog
from chipwise.planner.claims import check_claims

DOC = Path(__file__).resolve().parents[1] / "docs" / "claims.md"
MARKER = "## Summary"


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def render(report: dict[str, Any]) -> str:
    lines = [MARKER, "", "| check | claim | verdict |", "|---|---|---|"]
    for c in report["claims"]:
        lines += [f"| {k['id']} | {_cell(k['claim'])} | {k['verdict']} |" for k in c["checks"]]
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
    head = DOC.read_text(encoding="utf-8").split(MARKER)[0]
    DOC.write_text(head + render(check_claims(load_catalog())), encoding="utf-8")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
