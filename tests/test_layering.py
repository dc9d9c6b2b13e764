"""Data flows one way through the layers of DESIGN.md: a module imports only the layers before its own."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "chipwise"
LAYERS: dict[str, int] = {
    "errors": 0,
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


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return [n for n in names if n.startswith("chipwise.")]


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
        own = LAYERS[top]
        for name in _imports(path):
            target = name.split(".")[1]
            if target == top or target in COMPOSITION_ROOTS:
                continue
            if LAYERS[target] >= own and target != "errors":
                problems.append(f"{rel} (layer {own}) imports {name} (layer {LAYERS[target]})")
    assert not problems, "\n".join(problems)
