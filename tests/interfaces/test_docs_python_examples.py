"""README's Python blocks run as they are, and docs/web.md's Pareto-front lines (its xs and ys had been undefined)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _python_blocks(doc: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", doc, re.S)


def test_the_readme_python_blocks_run(tmp_path: Path) -> None:
    """README's one Python block ranks Llama 3.1 8B on 64 H100s or Trn2s for 1T tokens and prints the first row."""
    blocks = _python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert blocks, "README has no python block"
    for i, code in enumerate(blocks):
        (tmp_path / f"readme{i}.py").write_text(code, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, f"readme{i}.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert re.fullmatch(r"h100-sxm \d+\.\d days, \$[\d,]+\n", done.stdout), done.stdout


def test_the_web_docs_pareto_front_lines_run() -> None:
    """Four fleets (days, $M): 8 d at $9M, 10 at $5M and 12 at $3M are on the front, fastest first; 15 d at $4M is
    beaten by 12 d at $3M."""
    (code,) = [b for b in _python_blocks((ROOT / "docs" / "web.md").read_text(encoding="utf-8")) if "pareto_front" in b]
    lines = [line for line in code.splitlines() if line.startswith(("from chipwise.interfaces", "days, ", "front "))]
    scope: dict[str, object] = {}
    exec("\n".join(lines), scope)  # the doc's own lines
    assert scope["front"] == [2, 0, 1]
