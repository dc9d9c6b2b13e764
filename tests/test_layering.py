"""Data flows one way through the layers of DESIGN.md: a module imports only the layers before its own; and inside a
layer, a module split out of another takes its data one way: the `--set` machinery (catalog.overrides) knows nothing
of the loader that hands it the raw catalog, and plan fleet's workload reading (planner.fleet_workload) and simulator
replay (planner.fleet_replay) nothing of the planner that runs them, directly or through another module (an import
back had been a cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "chipwise"
LAYERS: dict[str, int] = {
    "errors": 0,
    "types": 0,  # the NumPy array aliases: every layer may import them, as it may errors
    "pools": 0,  # spawned process pools (the planner's and the sweep's), and what an unguarded script is told
    "catalog": 1,
    "hardware": 2,
    "workload": 3,
    "perf": 4,
    "train": 5,
    "serve": 5,
    "economics": 6,
    "reliability": 6,
    "planner": 7,
    "sweep": 8,
    "interfaces": 9,
    "validation": 10,
    "api": 11,  # the Python facade over every command, validation included
}
COMPOSITION_ROOTS = {"__main__", "__init__"}
IMPORT_CALLS = {"import_module", "__import__"}  # importlib.import_module("chipwise.x"), import_module(...), __import__


def _module_name(path: Path) -> str:
    """The dotted name a file under src/chipwise imports as: sweep/check.py -> chipwise.sweep.check."""
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(("chipwise", *parts))


def _is_module(name: str) -> bool:
    """Whether a dotted chipwise name is a module or package on disk (not a name defined in one)."""
    where = PACKAGE.joinpath(*name.split(".")[1:])
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def _from(module: str, names: list[ast.alias]) -> list[str]:
    """`from M import a, b`: M.a where a is a submodule (`from chipwise import planner`), else M itself
    (`from chipwise import __version__` is the package root)."""
    return [f"{module}.{a.name}" if _is_module(f"{module}.{a.name}") else module for a in names]


def _imported_by_name(node: ast.AST) -> str | None:
    """The module `importlib.import_module("chipwise.x")` (or `import_module`, `__import__`) names, if a literal."""
    if not (isinstance(node, ast.Call) and node.args):
        return None
    func, arg = node.func, node.args[0]
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return (
        arg.value if called in IMPORT_CALLS and isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None
    )


def _imports_of(source: str, module: str) -> list[str]:
    """Every chipwise module `source` (the text of `module`, a dotted name) imports, in any form: `import
    chipwise.x`, bare `import chipwise`, `from chipwise import x`, relative imports (resolved against the file's
    package), and a string literal passed to importlib.import_module; at the top, in a function or under
    TYPE_CHECKING. A dependency a module hides in one of these forms is still one the layer order governs."""
    package = module.split(".")[:-1]  # chipwise.sweep for chipwise.sweep.check and chipwise.sweep.__init__ alike
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = len(package) - (node.level - 1)
                assert up >= 1, f"{module}: a relative import above the chipwise package"
                base = ".".join([*package[:up], *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            names.extend(_from(base, node.names) if base.split(".")[0] == "chipwise" else [base])
        elif (name := _imported_by_name(node)) is not None:
            names.append(name)
    return [n for n in names if n.split(".")[0] == "chipwise"]


def _imports(path: Path) -> list[str]:
    return _imports_of(path.read_text(encoding="utf-8"), _module_name(path))


def _violations(top: str, names: list[str]) -> list[str]:
    """The imported names a module of top-level package `top` may not import: those of its own layer or later."""
    own = LAYERS[top]
    out = []
    for name in names:
        parts = name.split(".")
        if len(parts) == 1:
            continue  # the package root (chipwise.__version__), which every layer may import
        target = parts[1]
        if target == top or target in COMPOSITION_ROOTS or target == "errors":
            continue
        if LAYERS[target] >= own:
            out.append(f"{name} (layer {LAYERS[target]})")
    return out


def test_every_package_has_a_layer() -> None:
    for child in PACKAGE.iterdir():
        if child.name.startswith(("_", ".")) or child.name == "py.typed":
            continue
        assert child.stem in LAYERS, f"{child.name} has no layer in DESIGN.md's order"


def test_imports_follow_the_layer_order() -> None:
    problems = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        top = rel.parts[0].removesuffix(".py")
        if top in COMPOSITION_ROOTS:
            continue
        problems += [f"{rel} (layer {LAYERS[top]}) imports {v}" for v in _violations(top, _imports(path))]
    assert not problems, "\n".join(problems)


# Each import form, as written in chipwise/sweep/check.py, and the modules the collector must see in it.
FORMS = {
    "import chipwise.planner.fleet as f": ["chipwise.planner.fleet"],
    "import chipwise": ["chipwise"],
    "from chipwise.planner.fleet import plan_fleet": ["chipwise.planner.fleet"],
    "from chipwise import planner": ["chipwise.planner"],
    "from chipwise import __version__": ["chipwise"],
    "from chipwise import planner, __version__": ["chipwise.planner", "chipwise"],
    "from chipwise.planner import fleet": ["chipwise.planner.fleet"],
    "from ..planner import fleet": ["chipwise.planner.fleet"],
    "from ..planner.fleet import plan_fleet": ["chipwise.planner.fleet"],
    "from . import spec": ["chipwise.sweep.spec"],
    "from .spec import SweepSpec": ["chipwise.sweep.spec"],
    "from .. import __version__": ["chipwise"],
    "import importlib\nm = importlib.import_module('chipwise.planner.fleet')": ["chipwise.planner.fleet"],
    "from importlib import import_module\nm = import_module('chipwise.planner')": ["chipwise.planner"],
    "def f():\n    from chipwise.planner import fleet": ["chipwise.planner.fleet"],
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from chipwise import planner": ["chipwise.planner"],
    "from pathlib import Path": [],
    "importlib.import_module(name)": [],  # not a literal: nothing to resolve
}


@pytest.mark.parametrize("source", FORMS)
def test_the_collector_sees_every_import_form(source: str) -> None:
    assert _imports_of(source, "chipwise.sweep.check") == FORMS[source]


def test_relative_imports_resolve_against_a_package_init() -> None:
    # in sweep/__init__.py '.' is the sweep package itself, in sweep/check.py the folder check.py is in
    assert _imports_of("from .store import Store\nfrom . import check", "chipwise.sweep.__init__") == [
        "chipwise.sweep.store",
        "chipwise.sweep.check",
    ]


@pytest.mark.parametrize("source", [s for s, names in FORMS.items() if "chipwise.planner" in str(names)])
def test_a_hidden_upward_import_is_a_violation(source: str) -> None:
    # the same text in a catalog module (layer 1) imports planner (layer 7): caught in each form
    assert _violations("catalog", _imports_of(source, "chipwise.catalog.loader"))


def test_no_module_imports_chipwise_by_name_at_run_time() -> None:
    # importlib.import_module("chipwise.x") hides a dependency from readers and mypy (its result is Any) and had
    # guarded a fallback for an install without serving that cannot exist; a lazy import is a function-local one
    hidden = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = _imported_by_name(node)
            if name is not None and name.split(".")[0] == "chipwise":
                hidden.append(f"{path.relative_to(PACKAGE)}:{getattr(node, 'lineno', 0)} imports {name!r} by name")
    assert not hidden, "\n".join(hidden)


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
