"""Sweep files: expansion to points (grid, dotted keys, zip, what-ifs), stable ids, and strict validation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from chipwise.errors import ChipwiseError
from chipwise.sweep import load_sweep
from chipwise.sweep.check import check_sweep

WriteSweep = Callable[..., Path]
GRID = "  model: [llama-3.1-8b, qwen3-8b]\n  chips: [8, 16, 32]\n"
FAST_HBM = '["h100-sxm.hbm_bandwidth=6e12"]'


def _ids(path: Path) -> list[str]:
    return [p.id for p in load_sweep(path).points()]


def test_grid_times_what_ifs(write_sweep: WriteSweep) -> None:
    spec = load_sweep(write_sweep())
    points = list(spec.points())
    assert len(spec) == len(points) == 2 * 3 * 2
    assert [v.name for v in spec.variants] == ["baseline", "h100-fast-hbm"]
    assert spec.variants[1].sets == ("h100-sxm.hbm_bandwidth=6e12",)
    # what-ifs outermost, then the grid in file order (last axis fastest)
    assert [p.variant.name for p in points[:6]] == ["baseline"] * 6
    assert [(p.scenario["model"], p.scenario["chips"]) for p in points[:3]] == [
        ("llama-3.1-8b", 8),
        ("llama-3.1-8b", 16),
        ("llama-3.1-8b", 32),
    ]
    assert points[0].scenario["tokens"] == "1e11" and points[0].axes == {"model": "llama-3.1-8b", "chips": 8}
    assert len({p.id for p in points}) == len(points)


def test_dotted_keys_and_zip(write_sweep: WriteSweep) -> None:
    path = write_sweep(
        "base: {model: llama-3.1-8b, hardware: h100-sxm, chips: 16, plan: {pp: 1}}\n"
        "grid: {plan.tp: [1, 2, 4]}\n"
        "zip: {chips: [8, 16], seq_len: [2048, 4096]}\n"
    )
    spec = load_sweep(path)
    points = list(spec.points())
    assert spec.name == "sweep" and len(spec) == len(points) == 3 * 2
    assert [p.scenario["plan"] for p in points[:2]] == [{"pp": 1, "tp": 1}, {"pp": 1, "tp": 1}]
    assert [(p.scenario["chips"], p.scenario["seq_len"]) for p in points[:2]] == [(8, 2048), (16, 4096)]
    assert points[-1].scenario["plan"]["tp"] == 4
    assert [v.name for v in spec.variants] == ["baseline"]


def test_several_zip_groups_multiply(write_sweep: WriteSweep) -> None:
    path = write_sweep(
        "base: {model: llama-3.1-8b, hardware: h100-sxm, chips: 8}\n"
        "zip: [{chips: [8, 16], seq_len: [2048, 4096]}, {precision: [bf16, fp8], tokens: [1e11, 2e11]}]\n"
    )
    assert len(list(load_sweep(path).points())) == 4


def test_ids_are_stable_and_canonical(write_sweep: WriteSweep) -> None:
    first = _ids(write_sweep())
    assert first == _ids(write_sweep())  # same file, same ids
    # the same numbers written differently: the same points
    same = [("tokens: 1e11", "tokens: 100000000000"), ("chips: [8, 16, 32]", "chips: [8.0, 16, 32]")]
    assert _ids(write_sweep(edits=same, name="other.yaml")) == first
    # another value, or another what-if override, is another point
    changed = _ids(write_sweep(edits=[("tokens: 1e11", "tokens: 2e11")], name="changed.yaml"))
    assert not set(changed) & set(first)
    what_if = _ids(write_sweep(edits=[("=6e12", "=7e12")], name="what_if.yaml"))
    assert what_if[:6] == first[:6] and not set(what_if[6:]) & set(first[6:])


def test_catalog_file_contents_are_part_of_the_id(write_sweep: WriteSweep, tmp_path: Path) -> None:
    chips = tmp_path / "mine.yaml"
    chips.write_text("chips: {}\n")
    before = _ids(write_sweep(append="catalog: [mine.yaml]\n"))
    chips.write_text("chips: {}\n# edited\n")
    assert not set(_ids(write_sweep(append="catalog: [mine.yaml]\n"))) & set(before)
    spec = load_sweep(write_sweep(append="catalog: [mine.yaml]\n"))
    assert all(v.files == (str(chips.resolve()),) for v in spec.variants)  # relative to the sweep file


@pytest.mark.parametrize(
    ("how", "needle"),
    [
        ({"append": "grdi: {}\n"}, "unknown key 'grdi' (did you mean 'grid'?)"),
        ({"edits": [(GRID, "  {}\n")]}, "grid is empty"),
        ({"text": "base: {model: llama-3.1-8b}\ngrid: {}\n"}, "grid is empty"),
        ({"edits": [("chips: [8, 16, 32]", "chips: []")]}, "grid axis 'chips' is empty"),
        ({"edits": [("chips: [8, 16, 32]", "chips: 8")]}, "grid axis 'chips' must be a list"),
        # the hint had ended 'Did you mean 'chips'?. Fix:'
        (
            {"edits": [("chips: [8, 16, 32]", "chipz: [8]")]},
            "grid axis 'chipz' is not a scenario key (did you mean 'chips'?). Fix: use a scenario key (docs/guide.md)",
        ),
        ({"edits": [("chips: [8, 16, 32]", "kind: [train]")]}, "axis 'kind' cannot vary"),
        ({"append": "zip: {seq_len: [1, 2], tokens: [1]}\n"}, "zip axes must have equal lengths"),
        # each axis named by its section: it had read "axes 'chips' and 'chips' set the same field"
        ({"append": "zip: {chips: [1, 2]}\n"}, "grid axis 'chips' and zip axis 'chips' set the same field"),
        (
            {"append": "zip: [{seq_len: [1]}, {plan.tp: [2]}, {plan: [{tp: 1}]}]\n"},
            "zip group 2 axis 'plan.tp' and zip group 3 axis 'plan' set the same field",
        ),
        ({"text": "name: x\nbase: {model: a\ngrid: {chips: [1]}\n"}, "not valid YAML at line"),
        ({"text": "- a list\n"}, "must be a mapping"),
        ({"append": "name: again\n"}, "found duplicate key 'name'"),
        ({"edits": [("base:", "bsae:")]}, "unknown key 'bsae'"),
        ({"append": "catalog: [missing.yaml]\n"}, "catalog file 'missing.yaml' does not exist"),
        ({"edits": [(FAST_HBM, "[nope.yaml]")]}, "what_if 'h100-fast-hbm' file 'nope.yaml'"),
        # empty as an empty grid axis is, and a what-if with no name (each had run: a blank what-if column)
        ({"append": "zip: []\n"}, "'zip' is empty"),
        ({"append": "zip: [{}]\n"}, "zip group 1 is empty"),
        ({"edits": [("h100-fast-hbm:", "'':")]}, "a what_if has no name"),
    ],
)
def test_bad_sweep_files_are_one_line_errors(write_sweep: WriteSweep, how: dict[str, Any], needle: str) -> None:
    with pytest.raises(ChipwiseError) as info:
        load_sweep(write_sweep(**how))
    message = str(info.value)
    assert needle in message and "Fix:" in message and "\n" not in message


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (("h100-sxm.hbm_bandwidth", "h900.hbm_bandwidth"), "what_if 'h100-fast-hbm': unknown catalog id"),
        (("h100-sxm.hbm_bandwidth", "h100-sxm.hbm_bandwith"), "figure of h100-sxm"),
        (("chips: [8, 16, 32]", "chips: [8, -1]"), "chips=-1 is not a valid scenario"),
        (("model: [llama-3.1-8b, qwen3-8b]", "model: [llama-3.1-8b, lama-3]"), "model 'lama-3'"),
        (("hardware: h100-sxm", "hardware: h100-sx"), "hardware 'h100-sx'"),
        (("chips: 8, precision", "chipz: 8, precision"), "base is not a valid scenario: chipz: unknown key"),
        # a plan knob is checked as predict checks it: 'plan.tq' had run and stored every point as failed
        (
            ("chips: [8, 16, 32]", "plan.tq: [4]"),
            "the point model=llama-3.1-8b, plan.tq=4 is not a valid scenario: unknown plan key 'tq'. Did you mean "
            "'tp'? Fix: use tp, pp",
        ),
        (("chips: 8, precision", "chips: 8, plan: {tpp: 2}, precision"), "base is not a valid scenario: unknown plan"),
        (("chips: [8, 16, 32]", "plan.zero: [1, 5]"), "plan.zero=5 is not a valid scenario: plan.zero must be 0, 1"),
        # true for a number names its key in the error's context, not its location: it had been blamed on base
        (("chips: [8, 16, 32]", "chips: [8, true]"), "chips: true is not a number. Fix: correct it in grid or zip"),
        (
            ("seq_len: 2048", "seq_len: true"),
            "base is not a valid scenario: seq_len: true is not a number. Fix: correct it in base",
        ),
    ],
)
def test_catalog_and_scenario_checks_fail_before_running(
    write_sweep: WriteSweep, edit: tuple[str, str], needle: str
) -> None:
    with pytest.raises(ChipwiseError) as info:
        check_sweep(load_sweep(write_sweep(edits=[edit])))
    message = str(info.value)
    assert needle in message and "Fix:" in message and "\n" not in message


def test_a_hypothetical_chip_from_a_catalog_file_passes_the_checks(write_sweep: WriteSweep, tmp_path: Path) -> None:
    (tmp_path / "fast.yaml").write_text(
        "chips:\n  h100-sxm:\n    hbm_bandwidth: {value: 6.0, unit: TB/s, status: estimate, derivation: a what-if}\n"
    )
    catalogs = check_sweep(load_sweep(write_sweep(edits=[(FAST_HBM, "[fast.yaml]")])))
    assert len(catalogs) == 2


def test_example_sweep_is_valid() -> None:
    """examples/trn-vs-gpu.yaml (the README's sweep): 2 what-ifs x 4 chips x 2 sizes, checked against the catalog."""
    spec = load_sweep(Path(__file__).resolve().parents[2] / "examples" / "trn-vs-gpu.yaml")
    assert len(list(spec.points())) == 16
    assert len(check_sweep(spec)) == 2


def test_a_trace_in_a_sweep_is_read_from_the_sweep_files_folder(tmp_path: Path) -> None:
    """As a scenario file's trace is: run from another folder, every point failed with 'does not exist'."""
    sweep = tmp_path / "s.yaml"
    (tmp_path / "bursty.csv").write_text(TRACE)
    sweep.write_text(
        "base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, trace: bursty.csv}\n"
        "grid: {prefix_hit_rate: [0, 0.5]}\n"
    )
    assert load_sweep(sweep).base["trace"] == str(tmp_path / "bursty.csv")


TRACE = "arrival_s,input_tokens,output_tokens\n0,512,64\n0.5,1024,32\n"
TRACES = "base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1}\n"


def _trace_sweep(folder: Path, body: str) -> Path:
    (folder / "tr").mkdir(exist_ok=True)
    for i in (1, 2):
        (folder / "tr" / f"t{i}.csv").write_text(TRACE * i)
    path = folder / "tr" / "s.yaml"
    path.write_text(TRACES + body)
    return path


def test_zip_traces_are_read_from_the_sweep_files_folder(tmp_path: Path) -> None:
    """grid and base traces were; a zip's were left relative to the current directory (every point failed)."""
    spec = load_sweep(_trace_sweep(tmp_path, "zip: {trace: [t1.csv, t2.csv], chips: [1, 2]}\n"))
    assert [p.scenario["trace"] for p in spec.points()] == [str(tmp_path / "tr" / f"t{i}.csv") for i in (1, 2)]


def test_ids_do_not_depend_on_how_the_sweep_path_was_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """'tr/s.yaml', 's.yaml' from tr/ and the absolute path had stored three scenarios (and ids) for each point, so
    every --resume dropped and reran them all."""
    path = _trace_sweep(tmp_path, "grid: {trace: [t1.csv, t2.csv]}\n")
    monkeypatch.chdir(tmp_path)
    typed = _ids(Path("tr/s.yaml"))
    monkeypatch.chdir(tmp_path / "tr")
    assert _ids(Path("s.yaml")) == typed == _ids(path) and len(set(typed)) == 2


def test_a_traces_contents_are_part_of_the_id(tmp_path: Path) -> None:
    """As catalog files' are: an edited trace had kept its old results through --resume."""
    path = _trace_sweep(tmp_path, "grid: {trace: [t1.csv, t2.csv]}\n")
    before = _ids(path)
    (tmp_path / "tr" / "t2.csv").write_text(TRACE + "1.0,256,16\n")
    after = _ids(path)
    assert after[0] == before[0] and after[1] != before[1]


def test_a_missing_trace_fails_before_running(tmp_path: Path) -> None:
    """Predict refuses it (exit 2); a sweep had stored it as each point's error and exited 0."""
    path = _trace_sweep(tmp_path, "grid: {trace: [t1.csv, t3.csv]}\n")
    with pytest.raises(ChipwiseError) as exc:
        load_sweep(path)
    assert str(exc.value) == (
        f"{path}: trace file '{tmp_path / 'tr' / 't3.csv'}' does not exist. Fix: check the path (a relative one is "
        "from the sweep file's folder)."
    )


def test_a_model_config_is_read_from_the_sweep_files_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As a scenario file's is (model_from); its contents are part of the id, its path is not."""
    (tmp_path / "cfg").mkdir()
    config = Path(__file__).resolve().parents[2] / "src" / "chipwise" / "catalog" / "data" / "models"
    text = next(config.rglob("config.json"), None)
    body = text.read_text() if text else '{"model_type": "llama"}'
    (tmp_path / "cfg" / "config.json").write_text(body)
    sweep = tmp_path / "cfg" / "s.yaml"
    sweep.write_text(
        "base: {kind: train, model: config.json, hardware: h100-sxm, chips: 8, seq_len: 2048}\ngrid: {chips: [8]}\n"
    )
    monkeypatch.chdir(tmp_path)
    spec = load_sweep(Path("cfg/s.yaml"))
    assert spec.base["model"] == str(tmp_path / "cfg" / "config.json")
    first = _ids(Path("cfg/s.yaml"))
    (tmp_path / "cfg" / "config.json").write_text(body + "\n ")
    assert _ids(sweep) != first


SERVE = (
    "name: serve\n"
    "base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, precision: fp8, input_tokens: 1024,\n"
    "       output_tokens: 128, arrival_rate: 2, requests: 50}\n"
    "grid: {chips: [1, 2]}\n"
)


@pytest.mark.parametrize(
    ("text", "edit", "needle"),
    [
        # a bad precision had run every point and stored each as failed (exit 0), where predict exits 2
        (None, ("precision: bf16", "precision: bf-16"), "base is not a valid scenario: unknown precision 'bf-16'"),
        (None, ("chips: [8, 16, 32]", "precision: [bf16, bf17]"), "precision=bf17 is not a valid scenario"),
        (None, ("precision: bf16", "precision: bf16, pricing: spto"), "unknown pricing mode 'spto'"),
        (None, ("chips: [8, 16, 32]", "region: [us-east-1, mars-1]"), "region 'mars-1'"),
        (None, ("precision: bf16", "precision: bf16, provider: awz"), "provider 'awz'"),
        (SERVE, ("precision: fp8", "precision: fp9"), "base is not a valid scenario: unknown weight precision 'fp9'"),
        (SERVE, ("grid: {chips: [1, 2]}", "grid: {kv_precision: [fp8, fp7]}"), "unknown KV-cache precision 'fp7'"),
        (SERVE, ("grid: {chips: [1, 2]}", "grid: {engine: [vllm, vllmx]}"), "engine=vllmx is not a valid scenario"),
        (SERVE, ("grid: {chips: [1, 2]}", "grid: {speculative: [mtp:2, foo:2]}"), "unknown speculative method 'foo'"),
        (SERVE, ("precision: fp8", "precision: fp8, pricing: spto"), "unknown pricing mode 'spto'"),
        (SERVE, ("model: llama-3.1-8b", "model: lama-3"), "model 'lama-3'"),
        (SERVE, ("precision: fp8", "precision: fp8, region: mars-1"), "region 'mars-1'"),
    ],
)
def test_what_predict_refuses_by_name_fails_before_running(
    write_sweep: WriteSweep, text: str | None, edit: tuple[str, str], needle: str
) -> None:
    """Each scenario field predict checks before it runs (precision, pricing, region, provider; a serving model,
    engine, KV-cache precision, speculative decoding) is checked for every axis value before the store is opened."""
    with pytest.raises(ChipwiseError) as info:
        check_sweep(load_sweep(write_sweep(text, edits=[edit])))
    message = str(info.value)
    assert needle in message and "Fix:" in message and "\n" not in message


def test_the_names_predict_accepts_pass_the_checks(write_sweep: WriteSweep) -> None:
    """Case and aliases as predict reads them: FP8 is fp8, VLLM is vllm, bfloat16 is bf16; 'none' drafts nothing."""
    check_sweep(load_sweep(write_sweep(edits=[("chips: [8, 16, 32]", "precision: [FP8, bf16]")])))
    serve = SERVE.replace("grid: {chips: [1, 2]}", "grid: {engine: [VLLM, sglang], speculative: [none, mtp:2]}")
    check_sweep(load_sweep(write_sweep(serve.replace("precision: fp8", "precision: bfloat16, region: us-east-1"))))


def test_true_in_a_zip_is_blamed_on_the_zip(write_sweep: WriteSweep) -> None:
    """A zip row's true for a number names the point and sends the fix to grid or zip, as its null or 1.5 does."""
    path = write_sweep(append="zip: {seq_len: [2048, true], tokens: [1e11, 2e11]}\n")
    with pytest.raises(ChipwiseError) as info:
        check_sweep(load_sweep(path))
    message = str(info.value)
    assert "the point model=llama-3.1-8b, chips=8, seq_len=True, tokens=2e11 is not a valid scenario" in message
    assert message.endswith("Fix: correct it in grid or zip (scenario keys: docs/guide.md#scenario-keys).")


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        (
            [("chips: 8, precision", "chips: 8, plan: 5, precision"), ("chips: [8, 16, 32]", "plan.tp: [8]")],
            "base 'plan' is 5, not a mapping, yet axis plan.tp sets a field in it. Fix: make base 'plan' a mapping "
            "(e.g. plan: {}) or drop it from base.",
        ),
        (
            [("chips: 8, precision", "chips: 8, plan: [2], precision"), ("chips: [8, 16, 32]", "")],
            "base 'plan' is [2], not a mapping, yet axis plan.tp sets a field in it. Fix: make base 'plan' a "
            "mapping (e.g. plan: {}) or drop it from base.",
        ),
    ],
)
def test_a_base_value_under_a_dotted_axis_must_be_a_mapping(
    write_sweep: WriteSweep, edits: list[tuple[str, str]], message: str
) -> None:
    """base plan: 5 with an axis plan.tp had run, the 5 replaced by {tp: 8} without a word (predict refuses it)."""
    path = write_sweep(edits=edits, append="zip: {plan.tp: [4]}\n" if "[2]" in str(edits) else "")
    with pytest.raises(ChipwiseError) as info:
        load_sweep(path)
    assert str(info.value) == f"{path}: {message}"


def test_a_null_base_value_under_a_dotted_axis_is_started_by_it(write_sweep: WriteSweep) -> None:
    spec = load_sweep(
        write_sweep(
            edits=[("chips: 8, precision", "chips: 8, plan: null, precision"), ("chips: [8, 16, 32]", "plan.tp: [2]")]
        )
    )
    assert {p.scenario["plan"]["tp"] for p in spec.points()} == {2}


def test_grid_axes_that_conflict_are_not_blamed_on_base(tmp_path: Path) -> None:
    """A whole-scenario check names no key: a grid's arrival_rate beside its concurrency had been told to 'correct
    it in base', which held neither."""
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "base: {kind: serve, model: llama-3.1-8b, hardware: h100-sxm, chips: 1, output_tokens: 64, requests: 100}\n"
        "grid:\n  arrival_rate: [1, 2]\n  concurrency: [4]\n"
    )
    with pytest.raises(ChipwiseError) as info:
        check_sweep(load_sweep(spec))
    message = str(info.value)
    assert "the point arrival_rate=1, concurrency=4 is not a valid scenario" in message
    assert "Fix: correct it in base, grid or zip" in message
