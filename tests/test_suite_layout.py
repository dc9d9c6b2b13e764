"""The test suite's own layout: tests/ mirrors src/chipwise by layer, and a test file is named by what it tests,
never by the review or working stop that wrote it (stops 64 and 71 renamed 63 files such as test_review68_m6.py,
test_closed_loop_cycles_s69.py and test_cross_link67.py that had crept in)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "src" / "chipwise"
#: a review or stop tag in a file name: 'review', 'stop7', '_s69', '_m6', or a stop number stuck to a word
#: ('link67'); a precision such as 'bf16' or a chip such as 'h100' does not read as one
TAG = re.compile(r"review|stop_?\d|_[sm]\d+(?:_|$)|[a-z]{3,}[4-9]\d$")


@pytest.mark.parametrize(
    ("stem", "tagged"),
    [
        ("test_review68_m6", True),
        ("test_closed_loop_cycles_s69", True),
        ("test_cross_link67", True),
        ("test_user_price_mark_review67", True),
        ("test_bf16_fallback", False),
        ("test_h100_pricing", False),
        ("test_kv_exact_fit", False),
        ("test_llama3_70b", False),
    ],
)
def test_the_tag_pattern_tells_tags_from_names(stem: str, tagged: bool) -> None:
    assert bool(TAG.search(stem)) is tagged


def test_no_test_file_is_named_after_a_review_or_stop() -> None:
    tagged = sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py") if TAG.search(p.stem))
    assert not tagged, f"name these test files by what they test: {tagged}"


def test_test_folders_mirror_the_package_layers() -> None:
    layers = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__" and any(p.glob("test_*.py"))}
    assert folders <= layers, f"test folders with no package layer: {sorted(folders - layers)}"
