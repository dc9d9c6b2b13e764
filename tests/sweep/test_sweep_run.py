"""Running sweeps: in-process and process pool agree, errors are stored, resume runs only the rest, export."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from chipwise.errors import ChipwiseError
from chipwise.sweep import Store, export_store, load_sweep, run_sweep
from chipwise.sweep.columns import COLUMNS

WriteSweep = Callable[..., Path]


def _results(store: Path, sweep: str = "small") -> dict[str, tuple[Any, ...]]:
    """The stored results of a sweep by point id (every flattened column)."""
    names = ", ".join(f'"{c.name}"' for c in COLUMNS)
    with duckdb.connect(str(store), read_only=True) as con:
        rows = con.execute(f"SELECT id, {names} FROM results WHERE sweep = ? ORDER BY id", [sweep]).fetchall()
    return {r[0]: r[1:] for r in rows}


def _points(store: Path, sweep: str = "small") -> list[tuple[Any, ...]]:
    with duckdb.connect(str(store), read_only=True) as con:
        sql = "SELECT id, what_if, status, error, elapsed_s FROM points WHERE sweep = ? ORDER BY id"
        return con.execute(sql, [sweep]).fetchall()


def test_in_process_and_two_workers_store_identical_results(write_sweep: WriteSweep, tmp_path: Path) -> None:
    spec = load_sweep(write_sweep())
    one = run_sweep(spec, tmp_path / "one.duckdb", workers=1)
    two = run_sweep(spec, tmp_path / "two.duckdb", workers=2)
    assert (one.backend, two.backend, two.workers) == ("in-process", "processes", 2)
    assert one.ran == two.ran == one.ok == two.ok == 12 and one.errors == two.errors == 0
    a, b = _results(tmp_path / "one.duckdb"), _results(tmp_path / "two.duckdb")
    assert a == b and len(a) == 12 and set(a) == {p.id for p in spec.points()}
    row = dict(zip([c.name for c in COLUMNS], next(iter(a.values())), strict=True))
    assert row["kind"] == "train" and row["hardware"] == "h100-sxm" and row["step_time_s"] > 0
    assert row["time_to_train_s"] > 0 and row["cost_usd"] > 0 and row["energy_j"] > 0 and row["co2e_kg"] > 0
    assert 0 < row["mfu"] < 1 and row["memory_per_chip_gib"] > 0 and '"tp"' in row["plan"]
    points = _points(tmp_path / "one.duckdb")
    assert {p[1] for p in points} == {"baseline", "h100-fast-hbm"} and all(p[2] == "ok" and p[4] > 0 for p in points)
    # the what-if changes the answer: faster HBM is never slower
    with Store(tmp_path / "one.duckdb", read_only=True) as store:
        best = {(r["what_if"], r["best_by"]): r for r in store.best_per_what_if("small")}
    assert set(best) == {(w, by) for w in ("baseline", "h100-fast-hbm") for by in ("time", "cost")}
    assert best["h100-fast-hbm", "time"]["time_to_train_s"] <= best["baseline", "time"]["time_to_train_s"]


def test_a_failing_point_is_stored_and_the_sweep_goes_on(write_sweep: WriteSweep, tmp_path: Path) -> None:
    stats = run_sweep(load_sweep(write_sweep(base="errors")), tmp_path / "s.duckdb", workers=1)
    assert (stats.ran, stats.ok, stats.errors) == (4, 2, 2)
    failed = [p for p in _points(tmp_path / "s.duckdb", "errs") if p[2] == "error"]
    assert len(failed) == 2
    for _, _, _, error, _ in failed:
        assert "llama-3.1-405b does not fit" in error and "Fix:" in error and "\n" not in error
    assert len(_results(tmp_path / "s.duckdb", "errs")) == 2


def test_resume_runs_only_the_points_not_stored(write_sweep: WriteSweep, tmp_path: Path) -> None:
    spec, store = load_sweep(write_sweep()), tmp_path / "s.duckdb"

    def interrupt(done: int, total: int, errors: int) -> None:
        if done >= 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec, store, workers=1, progress=interrupt, batch_size=2)
    first = _points(store)
    assert 4 <= len(first) < 12  # what finished before the interrupt is stored
    with pytest.raises(ChipwiseError, match=r"already holds sweep 'small'.*--resume"):
        run_sweep(spec, store, workers=1)  # without --resume: refused, and nothing stored is lost
    assert _points(store) == first
    stats = run_sweep(spec, store, workers=2, resume=True)
    assert (stats.points, stats.skipped, stats.ran) == (12, len(first), 12 - len(first))
    assert [p[:3] for p in _points(store)] == sorted((p.id, p.variant.name, "ok") for p in spec.points())
    again = run_sweep(spec, store, workers=2, resume=True)
    assert (again.ran, again.skipped) == (0, 12)
    run_sweep(spec, tmp_path / "fresh.duckdb", workers=1)
    assert _results(store) == _results(tmp_path / "fresh.duckdb")


def test_resume_retries_failed_points(write_sweep: WriteSweep, tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    run_sweep(load_sweep(write_sweep(base="errors")), store, workers=1)
    stats = run_sweep(load_sweep(write_sweep(base="errors")), store, workers=1, resume=True)
    assert (stats.skipped, stats.ran, stats.errors) == (2, 2, 2)
    assert len(_points(store, "errs")) == 4  # replaced, not duplicated


def test_a_hypothetical_chip_from_a_catalog_file(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """A user's chip (here an H100 with twice the HBM bandwidth, under a new id) runs beside the built-in ones."""
    data = Path(str(resources.files("chipwise.catalog") / "data"))
    chip = yaml.safe_load((data / "chips.yaml").read_text())["chips"]["h100-sxm"]
    system = yaml.safe_load((data / "systems.yaml").read_text())["systems"]["p5.48xlarge"]
    chip.update(name="H100 with HBM4 (hypothetical)", aliases=[], default_system="h100x-box", status="projected")
    chip["hbm_bandwidth"] = {"value": 6.7, "unit": "TB/s", "status": "projected", "derivation": "2x H100"}
    system.update(name="hypothetical box", chip="h100-hbm4", aliases=[])
    mine = {"chips": {"h100-hbm4": chip}, "systems": {"h100x-box": system}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(mine))
    grid = ("  model: [llama-3.1-8b, qwen3-8b]\n", "  hardware: [h100-sxm, h100-hbm4]\n")
    spec = load_sweep(write_sweep(edits=[grid], append="catalog: [mine.yaml]\n"))
    stats = run_sweep(spec, tmp_path / "s.duckdb", workers=1)
    assert stats.errors == 0
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        rows = store.query("SELECT hardware, projected, tokens_per_s FROM results WHERE chips = 8 ORDER BY hardware")
    assert [r["hardware"] for r in rows[::2]] == ["h100-hbm4", "h100-sxm"]
    assert rows[0]["projected"] and rows[0]["tokens_per_s"] >= rows[-1]["tokens_per_s"]


def test_a_serve_sweep_records_its_points(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """Serving goes through the same path: each point is stored, ok or with its one-line error (when this install
    has no serving model), and the sweep does not crash."""
    text = (
        "name: serve\n"
        "base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, precision: fp8, input_tokens: 1024,\n"
        "       output_tokens: 256, arrival_rate: 5, requests: 200}\n"
        "grid: {chips: [1, 8]}\n"
    )
    stats = run_sweep(load_sweep(write_sweep(text)), tmp_path / "s.duckdb", workers=1)
    assert stats.ran == 2 and stats.ok + stats.errors == 2
    for _, _, status, error, _ in _points(tmp_path / "s.duckdb", "serve"):
        assert status == "ok" or ("Fix:" in error and "\n" not in error)


def test_export_parquet_and_csv_read_back(write_sweep: WriteSweep, tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    run_sweep(load_sweep(write_sweep(base="errors")), store, workers=1)
    run_sweep(load_sweep(write_sweep()), store, workers=1)
    out, csv = tmp_path / "out.parquet", tmp_path / "out.csv"
    assert export_store(store, parquet=out, csv=csv) == 16
    assert export_store(store, parquet=tmp_path / "errs.parquet", sweep="errs") == 4
    with duckdb.connect() as con:
        rows = con.execute(f"SELECT sweep, status, step_time_s, plan FROM '{out}' ORDER BY sweep, status").fetchall()
        assert len(rows) == 16 and {r[0] for r in rows} == {"errs", "small"}
        assert all((r[2] is None) == (r[1] == "error") for r in rows)
        assert con.execute(f"SELECT count(*) FROM read_csv_auto('{csv}')").fetchall()[0][0] == 16
        assert con.execute(f"SELECT count(*) FROM '{tmp_path / 'errs.parquet'}'").fetchall()[0][0] == 4
    with pytest.raises(ChipwiseError, match="no sweep 'nope'"):
        export_store(store, parquet=out, sweep="nope")
    with pytest.raises(ChipwiseError, match="does not exist"):
        export_store(tmp_path / "missing.duckdb", parquet=out)


def _serving_sweep_by_cost(write_sweep: WriteSweep, tmp_path: Path, slo: str = "") -> list[dict[str, Any]]:
    """Llama-3.1-8B on one H100 offered 2 and 60 req/s (`slo`: a YAML entry with its comma), ranked by cost."""
    text = (
        "name: serve\n"
        "base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, precision: fp8, input_tokens: 1024,\n"
        f"       output_tokens: 128, requests: 400, {slo}plan: {{tp: 1, max_batch: 64}}}}\n"
        "grid: {arrival_rate: [2, 60]}\n"
    )
    run_sweep(load_sweep(write_sweep(text)), tmp_path / "s.duckdb", workers=1)
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        return store.ranked("serve", "cost", 10)


def test_a_serving_sweep_ranks_missed_slos_last_and_keeps_its_economics(
    write_sweep: WriteSweep, tmp_path: Path
) -> None:
    """The cheapest serving point by $/M output tokens used to be an overloaded one that met no target; points
    that miss their SLO now rank after those that meet it, and each keeps its $/h, energy and carbon per million
    output tokens (they were NULL in the store)."""
    ranked = _serving_sweep_by_cost(write_sweep, tmp_path, "slo: {ttft_p99_s: 1.0, tpot_p99_s: 0.03}, ")
    assert [r["slo_met"] for r in ranked] == [True, False]
    assert ranked[1]["cost_usd_per_mtok"] < ranked[0]["cost_usd_per_mtok"]  # cheaper per token, and missed
    for r in ranked:
        assert r["cost_usd_per_hour"] > 0 and r["energy_j_per_mtok"] > 0 and r["co2e_kg_per_mtok"] > 0


def test_ctrl_c_during_a_store_write_is_the_runs_interrupt(
    write_sweep: WriteSweep, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB turns a Ctrl+C that lands in a write into its InterruptException, which ended the sweep in 'internal
    error'; it is the interrupt the command answers with 'rerun with --resume', and what finished is kept."""

    class Interrupted:
        """The store's connection, its second batch of inserts interrupted."""

        def __init__(self, con: Any) -> None:
            self.con, self.inserts = con, 0

        def executemany(self, *args: Any) -> Any:
            self.inserts += 1
            if self.inserts == 3:  # the second batch's points
                raise duckdb.InterruptException("Query interrupted")
            return self.con.executemany(*args)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.con, name)

    opened = Store.__init__

    def open_interrupted(self: Store, *args: Any, **kwargs: Any) -> None:
        opened(self, *args, **kwargs)
        self.con = Interrupted(self.con)  # type: ignore[assignment]

    monkeypatch.setattr(Store, "__init__", open_interrupted)
    spec, store = load_sweep(write_sweep()), tmp_path / "s.duckdb"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(spec, store, workers=1, batch_size=2)
    monkeypatch.setattr(Store, "__init__", opened)
    assert len(_points(store)) >= 2  # the first batch, and the interrupted one written again on the way out


def test_a_serving_sweep_ranks_an_overloaded_point_last(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """Without an SLO, the point offered 60 req/s on one H100 reads cheaper per token than the one offered 2 (its
    batch is full) while its queue grows for as long as it runs: it ranks after the point that carries its load."""
    ranked = _serving_sweep_by_cost(write_sweep, tmp_path)
    loads = [json.loads(r["other"])["load.utilisation"] for r in ranked]
    assert loads[0] < 1.0 <= loads[1]
    assert ranked[1]["cost_usd_per_mtok"] < ranked[0]["cost_usd_per_mtok"]


EDITED = """\
name: edit
base: {kind: train, model: llama-3.1-8b, hardware: h100-sxm, chips: 8, precision: bf16, tokens: 1e11, seq_len: 2048}
grid: {chips: [8, 16]}
what_if:
  cheap: ["h100-sxm.price=0.5"]
"""


def _prices(store: Path) -> list[float]:
    with duckdb.connect(str(store), read_only=True) as con:
        rows = con.execute("SELECT price_usd_per_chip_hour FROM results WHERE sweep = 'edit' ORDER BY chips")
        return [r[0] for r in rows.fetchall()]


def test_editing_a_sweep_and_resuming_drops_the_points_it_no_longer_has(
    write_sweep: WriteSweep, tmp_path: Path
) -> None:
    """A what-if's figure (price 0.5 -> 5) or a grid value edited, then --resume: the points the sweep no longer
    has had stayed in the store ('4 points stored of 2'), the old price-0.5 point ranked best by cost and export
    wrote all four under one what-if name. They are dropped as the sweep is registered again."""
    store = tmp_path / "e.duckdb"
    first = run_sweep(load_sweep(write_sweep(EDITED)), store, workers=1)
    assert (first.ran, first.dropped) == (2, 0)
    cheap = _prices(store)
    spec = load_sweep(write_sweep(EDITED, edits=[("price=0.5", "price=5")]))
    again = run_sweep(spec, store, workers=1, resume=True)
    assert (again.points, again.skipped, again.ran, again.dropped) == (2, 0, 2, 2)
    dear = _prices(store)
    assert len(dear) == 2 and all(d > c for d, c in zip(dear, cheap, strict=True))
    with Store(store, read_only=True) as db:
        counts = db.counts("edit")
        assert (counts["points"], counts["declared_points"]) == (2, 2)
        best = db.best_per_what_if("edit")
        assert {r["id"] for r in best} <= {p.id for p in spec.points()}
        assert {r["id"] for r in db.ranked("edit", "cost", 10)} == {p.id for p in spec.points()}
    assert export_store(store, parquet=tmp_path / "e.parquet") == 2
    # a grid value edited: the point it made goes, the one still in the grid is kept
    spec = load_sweep(write_sweep(EDITED, edits=[("price=0.5", "price=5"), ("[8, 16]", "[8, 32]")]))
    third = run_sweep(spec, store, workers=1, resume=True)
    assert (third.points, third.skipped, third.ran, third.dropped) == (2, 1, 1, 1)
    assert [p[0] for p in _points(store, "edit")] == sorted(p.id for p in spec.points())
    assert len(_results(store, "edit")) == 2


def test_a_value_listed_twice_is_one_declared_point(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """chips: [8, 8.0, '8'] runs one point; the store declared 3 ('1 points stored ... of 3')."""
    spec = load_sweep(write_sweep(edits=[("chips: [8, 16, 32]", "chips: [8, 8.0, '8']")]))
    stats = run_sweep(spec, tmp_path / "s.duckdb", workers=1)
    assert (stats.points, stats.ran) == (4, 4)  # 2 models x 1 chip count x 2 what-ifs
    with Store(tmp_path / "s.duckdb", read_only=True) as db:
        counts = db.counts("small")
    assert (counts["points"], counts["declared_points"]) == (4, 4)


def test_resume_keeps_when_the_sweep_was_created(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """--resume had overwritten sweeps.created_at with its own start."""
    store = tmp_path / "s.duckdb"

    def created() -> Any:
        with duckdb.connect(str(store), read_only=True) as con:
            return con.execute("SELECT created_at FROM sweeps WHERE name = 'errs'").fetchall()[0][0]

    run_sweep(load_sweep(write_sweep(base="errors")), store, workers=1)
    when = created()
    run_sweep(load_sweep(write_sweep(base="errors")), store, workers=1, resume=True)
    assert created() == when


def test_a_sweep_of_the_same_name_from_another_file_is_refused(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """Two grid.yaml in different folders share the name 'grid': the second, run with --resume, had deleted every
    point of the first as 'no longer in the sweep'."""
    store = tmp_path / "same.duckdb"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = write_sweep(name="a/grid.yaml", edits=[("name: small\n", "")])
    b = write_sweep(name="b/grid.yaml", edits=[("name: small\n", ""), ("hardware: h100-sxm", "hardware: b200")])
    run_sweep(load_sweep(a), store, workers=1)
    for resume in (False, True):
        with pytest.raises(ChipwiseError) as exc:
            run_sweep(load_sweep(b), store, workers=1, resume=resume)
        assert str(exc.value) == (
            f"store '{store}' holds a sweep 'grid' from another file, {a}, not {b}. Fix: give this sweep another "
            "name (--name, or name: in its file), or another --store."
        )
    assert len(_points(store, "grid")) == 12  # a's points all kept


def test_a_sweep_over_the_point_limit_is_refused_before_anything_runs(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """A 10M-point grid (one axis too many) had run silently for minutes before its first progress."""
    spec, store = load_sweep(write_sweep()), tmp_path / "s.duckdb"
    with pytest.raises(ChipwiseError) as exc:
        run_sweep(spec, store, workers=1, max_points=10)
    assert str(exc.value) == (
        f"{spec.source}: the sweep lists 12 points, more than 10 (at some 50 ms a training point, 0 CPU-hours). "
        "Fix: narrow its axes, or run it anyway with --yes (max_points=None from Python)."
    )
    assert not store.exists()
    calls: list[tuple[int, int, int]] = []
    run_sweep(spec, store, workers=1, max_points=None, progress=lambda *a: calls.append(a))
    assert calls[:2] == [(0, 12, 0), (0, 12, 0)] and calls[-1] == (12, 12, 0)


def test_a_script_without_the_main_guard_stops_with_one_line(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """A script without `if __name__ == "__main__":` is re-run by each spawned worker as it imports it; the check had
    asked parent_process(), still None at that point, so each worker failed on the locked store with a traceback and
    the run said 'a sweep worker process died ... rerun with --resume'."""
    import subprocess
    import sys

    sweep = write_sweep(edits=[("  model: [llama-3.1-8b, qwen3-8b]\n  chips: [8, 16, 32]\n", "  chips: [8, 16]\n")])
    sweep.write_text(sweep.read_text().split("what_if:")[0])  # 2 points, one what-if
    script = tmp_path / "noguard.py"
    script.write_text(
        "from chipwise.sweep import load_sweep, run_sweep\n"
        f"run_sweep(load_sweep({str(sweep)!r}), {str(tmp_path / 's.duckdb')!r}, workers=2)\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert lines[-1] == (
        "chipwise.errors.ChipwiseError: run_sweep was called again inside the worker processes it started, which "
        "re-ran the script that called it as they imported it. Fix: put the script's calls under if __name__ == "
        '"__main__":, or pass workers=1.'
    )
    assert done.stderr.count("Traceback") == 1 and "died" not in done.stderr and "lock" not in done.stderr
    with Store(tmp_path / "s.duckdb", read_only=True) as store:
        assert store.query("SELECT count(*) AS n FROM points")[0]["n"] == 0


def test_ctrl_c_in_process_stores_every_point_whose_prediction_returned(
    write_sweep: WriteSweep, tmp_path: Path
) -> None:
    """A real SIGINT part way through a point: in-process tasks of 8 points had lost the points of the task that
    finished before it (5 finished, 0 stored)."""
    import subprocess
    import sys

    from chipwise.sweep.store import revision

    script = tmp_path / "interrupt.py"
    script.write_text(
        f"""import os, signal
# Ctrl-C as a terminal's: a test runner's worker may ignore SIGINT, which its children inherit (the kill below had
# then done nothing and the sweep had run to its end)
signal.signal(signal.SIGINT, signal.default_int_handler)
import chipwise.sweep.worker as w
from chipwise.sweep import load_sweep, run_sweep
returned = []
predict = w.predict_point
def counted(cat, scenario):
    if len(returned) == 5:
        os.kill(os.getpid(), signal.SIGINT)  # the interrupt lands inside the sixth point
    out = predict(cat, scenario)
    returned.append(1)
    return out
w.predict_point = counted
try:
    run_sweep(load_sweep({str(write_sweep())!r}), {str(tmp_path / "s.duckdb")!r}, workers=1)
except KeyboardInterrupt:
    print("interrupted", len(returned))
""",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.strip() == "interrupted 5", done.stderr[-2000:]
    points = _points(tmp_path / "s.duckdb")
    assert len(points) == 5 and all(p[2] == "ok" for p in points)
    revision.cache_clear()  # as the script saw the package (this process's may predate an edit made since)
    stats = run_sweep(load_sweep(write_sweep()), tmp_path / "s.duckdb", workers=1, resume=True)
    assert (stats.skipped, stats.ran) == (5, 7)


def test_resume_recomputes_points_stored_by_another_chipwise_revision(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """A point's id covers the sweep file, not chipwise's code or built-in catalog: rows computed before a catalog
    figure changed (trn1's HBM bandwidth) had been kept by --resume and the store labelled with the new version."""
    from chipwise.sweep.store import revision

    spec, store = load_sweep(write_sweep()), tmp_path / "s.duckdb"
    run_sweep(spec, store, workers=1)
    fresh = _results(store)
    with duckdb.connect(str(store)) as con:  # 4 points by another revision (their figures doubled), 2 by one unknown
        ids = sorted(fresh)
        con.execute("UPDATE points SET revision = 'an-older-one' WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids[:4]])
        con.execute("UPDATE points SET revision = NULL WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids[4:6]])
        con.execute("UPDATE results SET step_time_s = 2 * step_time_s WHERE id IN (SELECT unnest(?::VARCHAR[]))", [ids])
    stats = run_sweep(spec, store, workers=1, resume=True)
    assert (stats.points, stats.skipped, stats.outdated, stats.ran, stats.ok) == (12, 6, 6, 6, 6)
    stored = _results(store)
    step = [c.name for c in COLUMNS].index("step_time_s")
    assert all(stored[i][step] == fresh[i][step] for i in ids[:6])  # recomputed
    assert all(stored[i][step] == 2 * fresh[i][step] for i in ids[6:])  # this revision's own rows are kept
    with duckdb.connect(str(store), read_only=True) as con:
        assert con.execute("SELECT DISTINCT revision FROM points").fetchall() == [(revision(),)]


def test_the_revision_covers_the_packages_code_and_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A digest of every file of the package (a catalog figure, a line of code) and the version; not __pycache__."""
    import chipwise
    from chipwise.sweep import store

    pkg = tmp_path / "chipwise"
    (pkg / "catalog" / "data").mkdir(parents=True)
    (pkg / "__pycache__").mkdir()
    (pkg / "__init__.py").write_text("x = 1\n")
    chips = pkg / "catalog" / "data" / "chips.yaml"
    chips.write_text("hbm_bandwidth: 820GiB/s\n")
    monkeypatch.setattr(chipwise, "__file__", str(pkg / "__init__.py"))

    def digest() -> str:
        store.revision.cache_clear()
        return store.revision()

    first = digest()
    assert len(first) == 16 and digest() == first
    (pkg / "__pycache__" / "x.pyc").write_bytes(b"\0")
    assert digest() == first
    chips.write_text("hbm_bandwidth: 820GB/s\n")
    second = digest()
    assert second != first
    monkeypatch.setattr(store, "__version__", "9.9.9")
    assert digest() != second
    monkeypatch.undo()
    store.revision.cache_clear()


def test_the_docs_python_example_runs_as_a_script(tmp_path: Path) -> None:
    """docs/sweep.md's Python example, saved as a script with a pool of workers, runs (it had failed in every worker
    without the __main__ guard)."""
    import re
    import subprocess
    import sys

    doc = (Path(__file__).resolve().parents[2] / "docs" / "sweep.md").read_text(encoding="utf-8")
    code = re.search(r"## Python\n\n```python\n(.*?)```", doc, re.S)
    assert code is not None
    example = Path(__file__).resolve().parents[2] / "examples" / "trn-vs-gpu.yaml"
    script = code.group(1).replace('"trn-vs-gpu.yaml"', repr(str(example))).replace("workers=8", "workers=2")
    (tmp_path / "docpy.py").write_text(script, encoding="utf-8")
    argv = [sys.executable, "docpy.py"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "fleet.parquet").is_file()


def test_a_moved_sweep_file_resumes_its_stored_sweep(write_sweep: WriteSweep, tmp_path: Path) -> None:
    """A sweep file moved (a repository moved or cloned) had been refused as 'another file', both fixes offered
    throwing every stored point away: where the recorded file is gone, or reads the same, it resumes there."""
    store = tmp_path / "moved.duckdb"
    first = write_sweep()
    run_sweep(load_sweep(first), store, workers=1)
    (tmp_path / "moved").mkdir()
    moved = first.rename(tmp_path / "moved" / first.name)
    stats = run_sweep(load_sweep(moved), store, workers=1, resume=True)
    assert (stats.points, stats.skipped, stats.ran) == (12, 12, 0)
    with Store(store) as s:
        assert s.source("small") == str(moved)
    copy = tmp_path / "copy.yaml"  # the recorded file still there and the same: resumes too
    copy.write_text(moved.read_text())
    assert run_sweep(load_sweep(copy), store, workers=1, resume=True).skipped == 12
    copy.write_text(copy.read_text().replace("chips: [8, 16, 32]", "chips: [8, 16]"))  # recorded file differs: refused
    with pytest.raises(ChipwiseError, match=f"from another file, {copy}, not {moved}"):
        run_sweep(load_sweep(moved), store, workers=1, resume=True)
