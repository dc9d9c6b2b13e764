"""Shared fixtures: the built-in catalog, the typed hardware view, and the ground-truth data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.hardware import Hardware, hardware

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="session")
def hw(catalog: Catalog) -> Hardware:
    return hardware(catalog)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip("the shared ground-truth data folder is not present")
    return SHARED_DATA
