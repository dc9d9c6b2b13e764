"""The README's accuracy passage, written by scripts/write_accuracy.py from the reports docs/accuracy.md's tables are
written from (the README's figures had drifted from them twice: the held-out files' and then the opening figures)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("write_accuracy", ROOT / "scripts" / "write_accuracy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("write_accuracy", module)
    spec.loader.exec_module(module)
    return module


wa = _script()
TPUT, TPOT, TTFT = "output_tokens_per_s_per_chip", "tpot_s", "ttft_s"


def _report(rows: int, **by: tuple[float, int]) -> dict[str, Any]:
    metrics = {m: {"mape_pct": mape, "n": n} for m, (mape, n) in by.items()}
    return {"summary": {"rows_total": rows, "rows_predicted": rows, "by_metric": metrics}}


def _reports() -> dict[str, dict[str, Any]]:
    """Made-up reports for the 17 files: every file 10 rows at 10% on each metric, but for the ones checked."""
    out = {name: _report(10, **{TPUT: (10.0, 10), TPOT: (10.0, 10), TTFT: (10.0, 10)}) for name in wa.HELDOUT}
    out["heldout_inferencex_api.csv"] = _report(300, **{TPUT: (20.0, 300), TPOT: (10.0, 300), TTFT: (30.0, 300)})
    out["heldout_inferencex_api_mtp.csv"] = _report(100, **{TPUT: (40.0, 100), TPOT: (50.0, 50), TTFT: (30.0, 100)})
    out["heldout_nim_genaiperf.csv"] = _report(10, **{TPUT: (18.84, 10), TPOT: (12.0, 10), TTFT: (40.66, 10)})
    out["heldout_dense_sweeps.csv"] = _report(10, **{TPUT: (11.66, 10), TPOT: (21.3, 8), TTFT: (23.2, 8)})
    out["heldout_trt_engine_ttft.csv"] = _report(42, **{TTFT: (13.04, 42)})
    out["heldout_aic_silicon.csv"] = _report(1578, **{TPOT: (22.2, 1578), TTFT: (35.8, 1578)})
    return out


def test_pooled_figures_weigh_each_file_by_its_rows_with_the_metric() -> None:
    """The README had quoted the two InferenceX API files together as a figure neither the table nor a pooling of
    it gives. By hand: throughput (300 x 20 + 100 x 40) / 400 = 25.0; TPOT (300 x 10 + 50 x 50) / 350 = 15.71;
    TTFT 30.0. A mean of the two files' MAPEs would read 30.0 / 30.0 / 30.0."""
    text = wa.readme_heldout(_reports())
    assert "400 DeepSeek-R1 sweep points of the InferenceX API" in text
    assert "(25.0% / 15.7% / 30.0% on throughput / TPOT / TTFT, and 40.0% on throughput for its 100 MTP points)" in text


def test_counts_spans_and_single_files_come_from_the_reports() -> None:
    text = wa.readme_heldout(_reports())
    # 13 files of 10 rows, 300 + 100, 42 and 1,578: 130 + 400 + 42 + 1,578 = 2,150
    assert text.startswith("Another 17 files hold 2,150 published serving points")
    # the four sweep files: throughput 10.0 (two files), 18.84 and 11.66; TPOT 10, 12, 21.3; TTFT 10, 40.66, 23.2
    assert "40 points of concurrency sweeps in 4 files" in text
    assert "(throughput 10.0-18.8%, TPOT 10.0-21.3%, TTFT 10.0-40.7% per file)" in text
    assert "1,578 TTFT and TPOT sweep points" in text and "(TPOT 22.2%, TTFT 35.8%)" in text
    assert "batch-1 first-token latencies (13.0%)" in text


def test_the_headline_quotes_the_bounds_tables_figures() -> None:
    """By hand from made-up reports: counts as given, MAPEs to one decimal."""
    train = {"summary": {"rows_total": 40, "rows_predicted": 36, "mape_pct": 9.86, "median_ape_pct": 6.25}}
    serve = _report(30, **{TPUT: (20.77, 30), TPOT: (14.96, 12), TTFT: (29.04, 12)})
    assert wa.readme_headline(train, serve).startswith(
        "checked against published runs: 36 of 40 training runs predicted (MAPE 9.9%, median 6.2%), 30 of 30 serving "
        "runs (throughput MAPE 20.8%, TPOT 15.0%, TTFT 29.0%) with `chipwise validate`"
    )


def test_the_readme_quotes_the_accuracy_pages_figures() -> None:
    """What README.md's passage says against docs/accuracy.md as written (both from one run of the script): the
    training MAPE and median, rows predicted, and the serving metrics' MAPEs from the bounds table."""
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split(wa.README_START)[1].split())
    page = (ROOT / "docs" / "accuracy.md").read_text(encoding="utf-8")
    bound = dict(re.findall(r"^\| (training: MAPE over all|serving: \w+)[^|]*\|[^|]*\| ([\d.]+)%", page, re.M))
    counts = re.findall(
        r"^(\d+) of (\d+) rows predicted .*?\*\*MAPE [\d.]+%\*\*, median absolute error ([\d.]+)%", page, re.M
    )
    (train_n, train_of, train_median), (serve_n, serve_of, _) = counts
    assert (
        f"{train_n} of {train_of} training runs predicted (MAPE {bound['training: MAPE over all']}%, median "
        f"{train_median}%), {serve_n} of {serve_of} serving runs (throughput MAPE {bound['serving: output']}%, TPOT "
        f"{bound['serving: TPOT']}%, TTFT {bound['serving: TTFT']}%)"
    ) in readme


def test_the_passage_is_written_between_the_markers_only() -> None:
    text = f"- **Right**: a\n  engine. {wa.README_START}\n  old passage{wa.README_END}\n  The device model\n"
    new = wa.between(text, wa.README_START, wa.README_END, wa.readme_passage("new " * 40))
    before, rest = new.split(wa.README_START)
    assert before == "- **Right**: a\n  engine. " and rest.endswith(f"new{wa.README_END}\n  The device model\n")
    lines = rest.split(wa.README_END)[0].splitlines()[1:]
    # wrapped under the bullet: no line starts a new block (an HTML comment at a line's start would split it)
    assert all(line.startswith("  new") and len(line) <= 120 for line in lines)
    with pytest.raises(SystemExit, match=r"README\.md needs one"):
        wa.between("no markers", wa.README_START, wa.README_END, "x")


def test_the_readme_holds_the_markers_once_in_order() -> None:
    """write_accuracy.py writes between them; README.md's own passage was typed to accuracy.md's table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count(wa.README_START) == 1 and text.count(wa.README_END) == 1
    assert text.index(wa.README_START) < text.index(wa.README_END)


def test_the_held_out_record_keeps_each_entry_and_writes_a_note_once() -> None:
    """docs/research/heldout_record.json (read by test_heldout.py): each file's skipped rows and entries (their
    errors left to be worked out from the measured and predicted values), floats to 10 significant digits, a note
    shared by entries written once and pointed to by its index."""
    entry = {"id": "A1", "chip": "h100-sxm", "metric": "tpot_s", "measured": 0.1, "predicted": 0.11}
    rows = [
        {**entry, "predicted": 0.11000000000004, "error_pct": 10.00000000004, "self_consistent": None},
        {**entry, "metric": "ttft_s", "error_pct": 10.0, "self_consistent": False},
        {**entry, "id": "A2", "error_pct": 10.0, "self_consistent": True, "notes": "other"},  # no engine named
    ]
    for r in rows[:2]:
        r |= {"engine": "vllm", "notes": "a burst"}
    skipped = [{"id": "A3", "reason": "no chip count"}]
    record = json.loads(
        wa.heldout_record({"a.csv": {"rows": rows, "skipped": skipped}, "b.csv": {"rows": [], "skipped": []}})
    )
    assert record["notes"] == ["a burst", "other"] and record["fields"][-1] == "notes"
    assert record["files"]["a.csv"]["skipped"] == skipped and record["files"]["b.csv"]["rows"] == []
    back = [dict(zip(record["fields"], row, strict=True)) for row in record["files"]["a.csv"]["rows"]]
    assert [b.pop("notes") for b in back] == [0, 0, 1]
    assert back[0]["predicted"] == 0.11 and "error_pct" not in back[0]
    rows[0]["predicted"] = 0.11
    assert back == [{f: r.get(f) for f in wa.RECORD_FIELDS} for r in rows]
