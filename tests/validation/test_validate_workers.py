"""`chipwise validate` on a serving file with its rows on several processes (validation.serving.validate_serving's
`workers`): the report is the one a single process gives, row for row and figure for figure."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from chipwise import api
from chipwise.errors import ChipwiseError
from chipwise.pools import fork_available
from cli_run import run_json

#: a row of each source family and engine the shared table prices, and two it skips (I047, TI002)
IDS = [
    "I002",
    "I012",
    "I019",
    "I027",
    "I040",
    "I047",
    "I054",
    "I262",
    "I273",
    "I285",
    "I296",
    "I301",
    "TI002",
    "TI015",
    "TI048",
    "TI158",
    "TI224",
    "TI225",
]


@pytest.fixture(scope="module")
def table(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    with (shared_data / "groundtruth_inference.csv").open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = [r for r in reader if r["id"] in IDS]
        fields = reader.fieldnames
    assert fields is not None and [r["id"] for r in rows] == list(IDS)
    path = tmp_path_factory.mktemp("validate") / "subset.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fields)
        writer.writeheader()
        writer.writerows(rows)
    return path


_SCRIPT = """
import json, os, sys
from pathlib import Path
from chipwise import pools
from chipwise.catalog import load_catalog
from chipwise.validation import serving

table, pids = Path(sys.argv[1]), Path(sys.argv[2])
catalog = load_catalog()
one = serving.validate_serving(catalog, table)
predict = serving.predict_row


def predict_row(catalog, row):  # each row's process noted (a copy inherits this)
    with pids.open("a") as f:
        f.write(f"{os.getpid()}\\n")
    return predict(catalog, row)


serving.predict_row = predict_row
told = []
safe = pools.fork_safe()
two = serving.validate_serving(catalog, table, lambda done, total: told.append([done, total]), workers=2)
same = json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
print(json.dumps({"pid": os.getpid(), "safe": safe, "same": same, "told": told, "rows": [r["id"] for r in one["rows"]],
                  "skipped": [s["id"] for s in one["skipped"]]}))
"""


@pytest.mark.skipif(not fork_available(), reason="the rows run side by side in copies of the process (fork)")
def test_rows_on_two_processes_give_the_one_process_report(table: Path, tmp_path: Path) -> None:
    """In a fresh interpreter (a pytest worker runs threads of its own, which keep a process from forking): the rows
    predicted in two copies of the process, and the report every figure of the one process's."""
    (tmp_path / "rows.py").write_text(_SCRIPT, encoding="utf-8")
    pids = tmp_path / "pids.txt"
    done = subprocess.run(
        [sys.executable, "rows.py", str(table), str(pids)], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["safe"] and seen["same"]
    assert list(dict.fromkeys(seen["rows"]))[:3] == ["I002", "I012", "I019"] and seen["skipped"] == ["I047", "TI002"]
    ran = pids.read_text().split()
    assert len(ran) == len(IDS) and len(set(ran)) == 2 and str(seen["pid"]) not in ran
    # the bar counts rows begun, in the file's order, to the last one done
    counts = [d for d, _ in seen["told"]]
    assert counts == sorted(counts) and set(counts) == set(range(len(IDS) + 1))
    assert {t for _, t in seen["told"]} == {len(IDS)}


def test_the_command_and_the_api_take_workers(capsys: pytest.CaptureFixture[str], table: Path) -> None:
    one = run_json(capsys, ["validate", "--data", str(table), "--json", "--workers", "1"])
    two = run_json(capsys, ["validate", "--data", str(table), "--json", "--workers", "2"])
    assert two == one and one["summary"]["rows_total"] == len(IDS)
    assert api.validate(table, workers=2)["summary"] == one["summary"]
    with pytest.raises(
        ChipwiseError, match=r"^workers 0 is not a positive finite whole number\. Fix: give e\.g\. 2\.$"
    ):
        api.validate(table, workers=0)
