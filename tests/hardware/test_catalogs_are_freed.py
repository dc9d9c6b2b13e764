"""A catalog built from --sets (or files) is freed once no one holds it: the hardware view and the model presets built
from it are kept on it, not in caches keyed on it that had held every one alive (the web server grew some 200 MB a
/api/sensitivity request; cw.predict with a --set in a loop, 626 MB after 201 calls)."""

from __future__ import annotations

import gc
import weakref

from chipwise.catalog import Catalog, load_catalog
from chipwise.hardware.build import hardware
from chipwise.workload import load_model


def test_catalogs_of_sets_are_freed_once_dropped() -> None:
    refs = []
    for watts in (600, 610, 620):
        cat = load_catalog(sets=[f"trn2.tdp={watts}W"])
        view = hardware(cat)
        assert view.chip("trn2").tdp == watts and view.system("trn2") is view.system("trn2")
        assert hardware(cat) is view and load_model(cat, "llama-3.1-8b") is load_model(cat, "llama-3.1-8b")
        assert view.fabric("efa-v3") is view.fabric("efa-v3")
        refs.append(weakref.ref(cat))
        del cat, view
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


def test_the_built_in_catalogs_views_are_built_once(catalog: Catalog) -> None:
    assert hardware(catalog) is hardware(load_catalog())
    assert hardware(catalog).chip("h100") is hardware(catalog).chip("h100")
    assert load_model(catalog, "llama-3.1-70b") is load_model(load_catalog(), "llama-3.1-70b")
