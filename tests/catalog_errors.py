"""Loading the catalog in tests with bad input: the one-line error it raises."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import load_catalog
from chipwise.errors import ChipwiseError


def catalog_error(sets: list[str] | None = None, files: list[Path] | None = None) -> str:
    """Load the catalog with `sets` (--set assignments) and `files` (--catalog files), expect a ChipwiseError of one
    line that names its fix, and return its message."""
    with pytest.raises(ChipwiseError) as info:
        load_catalog(files=files or [], sets=sets or [])
    message = str(info.value)
    assert "\n" not in message and "Fix:" in message, message
    return message
