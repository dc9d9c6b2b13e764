"""The revision a stored point records covers the files that can reach a stored result, not those that never do
(store.NOT_IN_RESULTS): a refreshed accuracy table (catalog/data/track_record.json) had marked every stored point
outdated, and --resume computed them all again to the same figures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from chipwise.catalog.loader import load_catalog
from chipwise.sweep import store
from chipwise.sweep.columns import COLUMNS, flatten
from chipwise.sweep.worker import predict_point


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A stand-in package with a file in every place the revision reads or leaves out."""
    import chipwise

    pkg = tmp_path / "chipwise"
    files = {
        "__init__.py": "x = 1\n",
        "__main__.py": "main = 1\n",
        "api.py": "predict = 1\n",
        "catalog/data/chips.yaml": "hbm_bandwidth: 820GB/s\n",
        "catalog/data/track_record.json": '{"runs": 1}\n',
        "catalog/track_record.py": "RECORD = 1\n",
        "interfaces/cli/sweep_cmd.py": "top = 10\n",
        "interfaces/web/index.html": "<p>1</p>\n",
        "validation/data/h200_serving_kernels.json": "[]\n",
        "sweep/columns.py": "COLUMNS = ()\n",
    }
    for name, text in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    monkeypatch.setattr(chipwise, "__file__", str(pkg / "__init__.py"))
    yield pkg
    monkeypatch.undo()
    store.revision.cache_clear()


def _digest() -> str:
    store.revision.cache_clear()
    return store.revision()


@pytest.mark.parametrize(
    "name",
    [
        "catalog/data/track_record.json",
        "interfaces/cli/sweep_cmd.py",
        "interfaces/web/index.html",
        "validation/data/h200_serving_kernels.json",
        "validation/new_check.py",
        "api.py",
        "__main__.py",
    ],
)
def test_a_file_no_result_depends_on_leaves_the_revision(package: Path, name: str) -> None:
    first = _digest()
    (package / name).parent.mkdir(parents=True, exist_ok=True)
    (package / name).write_text("edited\n")
    assert _digest() == first


@pytest.mark.parametrize(
    "name", ["catalog/data/chips.yaml", "catalog/track_record.py", "sweep/columns.py", "__init__.py", "apix.py"]
)
def test_a_file_a_result_may_depend_on_moves_the_revision(package: Path, name: str) -> None:
    """The code that reads the accuracy table stays in: it runs in every point, and a failure there is an error."""
    first = _digest()
    (package / name).write_text("edited\n")
    assert _digest() != first


def test_a_stored_row_keeps_nothing_of_the_track_record() -> None:
    """Why the accuracy table is left out: a prediction quotes it as a mapping, which flatten does not keep."""
    result = predict_point(
        load_catalog(),
        {"kind": "train", "model": "llama-3.1-8b", "hardware": "h100-sxm", "chips": 8, "seq_len": 2048},
    )
    record = result["track_record"]
    assert isinstance(record, dict) and record  # quoted: tokens_per_s_per_chip's errors
    other = {metric: {**r, "median_ape_pct": 99.0, "n": 1} for metric, r in record.items()}
    assert flatten({**result, "track_record": other}) == flatten(result)
    assert "track_record" not in {c.path[0] for c in COLUMNS}
    row = dict(zip([c.name for c in COLUMNS], flatten(result), strict=True))
    assert "track_record" not in json.loads(row["other"] or "{}")
