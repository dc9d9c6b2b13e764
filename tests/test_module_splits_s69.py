"""The modules split out of the catalog loader and of plan fleet (review s69, D3) take their data one way: the
`--set` machinery (catalog.overrides) knows nothing of the loader that hands it the raw catalog, and plan fleet's
workload reading (planner.fleet_workload) and simulator replay (planner.fleet_replay) nothing of the planner that
runs them, directly or through another module (an import back had been a cycle)."""

from __future__ import annotations

import pytest

from test_layering import PACKAGE, _imports

#: each split module, and the modules it must not reach
SPLITS: dict[str, set[str]] = {
    "chipwise.catalog.overrides": {"chipwise.catalog.loader"},
    "chipwise.planner.fleet_workload": {"chipwise.planner.fleet", "chipwise.planner.fleet_replay"},
    "chipwise.planner.fleet_replay": {"chipwise.planner.fleet"},
}


def _reached(module: str) -> set[str]:
    """Every chipwise module `module` imports, directly or through the modules it imports."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        path = PACKAGE.joinpath(*name.split(".")[1:])
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        for imported in _imports(path):
            if imported not in seen and imported != "chipwise":
                seen.add(imported)
                todo.append(imported)
    return seen


@pytest.mark.parametrize("module", sorted(SPLITS))
def test_a_split_module_does_not_reach_the_module_it_left(module: str) -> None:
    assert not _reached(module) & SPLITS[module]


def test_the_modules_left_import_the_split_ones() -> None:
    assert "chipwise.catalog.overrides" in _reached("chipwise.catalog.loader")
    assert {"chipwise.planner.fleet_workload", "chipwise.planner.fleet_replay"} <= _reached("chipwise.planner.fleet")
