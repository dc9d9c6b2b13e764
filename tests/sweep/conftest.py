"""Sweep files for the sweep tests (tiny chip counts and small models, so a point takes milliseconds), written into
tmp_path by the `write_sweep` fixture, optionally edited: write_sweep(edits=[(old, new)], append="...")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

TEXTS = {
    # 2 models x 3 chip counts x 2 what-ifs = 12 points.
    "small": """\
name: small
base: {kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, precision: bf16, tokens: 1e11, seq_len: 2048}
grid:
  model: [llama-3.1-8b, qwen3-8b]
  chips: [8, 16, 32]
what_if:
  baseline: []
  h100-fast-hbm: ["h100-sxm.hbm_bandwidth=6e12"]
""",
    # Half the points cannot fit (405B on 8 or 16 H100) and must be stored as errors.
    "errors": """\
name: errs
base: {kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, tokens: 1e11, seq_len: 2048}
grid:
  model: [llama-3.1-8b, llama-3.1-405b]
  chips: [8, 16]
""",
}


@pytest.fixture
def write_sweep(tmp_path: Path) -> Callable[..., Path]:
    """Write a sweep file into tmp_path and return its path: one of TEXTS (default 'small') with `edits` (old, new)
    applied and `append` added, or the given `text`."""

    def write(
        text: str | None = None,
        *,
        base: str = "small",
        edits: Sequence[tuple[str, str]] = (),
        append: str = "",
        name: str = "sweep.yaml",
    ) -> Path:
        body = TEXTS[base] if text is None else text
        for old, new in edits:
            assert old in body, f"{old!r} is not in the sweep text"
            body = body.replace(old, new)
        path = tmp_path / name
        path.write_text(body + append, encoding="utf-8")
        return path

    return write
