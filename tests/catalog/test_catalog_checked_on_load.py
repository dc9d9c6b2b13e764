"""A catalog that is invalid is refused as it loads, not where a figure is used: a system's power below its chips'
TDP (a hybrid rack's: the sum over its members) after --set, and a catalog file's model `file` that is not there or
a folder with no config.json. `chipwise web`, which loads its catalog once at start, then exits 2 before serving."""

from __future__ import annotations

from pathlib import Path

import pytest

from chipwise.catalog import Catalog, load_catalog
from chipwise.errors import ChipwiseError
from cli_run import run_error

P5_LINE = (
    "--set: p5.48xlarge power 1,000 W is below its 8 h100-sxm chips' TDP, 8 x 700 W = 5,600 W, leaving no host share. "
    "Fix: give the system's whole power, at least 5,600 W (e.g. --set p5.48xlarge.power=5.6kW or more), or lower "
    "h100-sxm.tdp."
)


def _refused(files: list[str] | None = None, sets: list[str] | None = None) -> str:
    with pytest.raises(ChipwiseError) as err:
        load_catalog(files or (), sets or ())
    assert err.value.exit_code == 2
    return str(err.value)


def test_a_set_power_below_the_chips_tdp_is_refused_on_load() -> None:
    """--set p5.48xlarge.power=1kW had loaded, and `catalog show` shown 1 kW."""
    assert _refused(sets=["p5.48xlarge.power=1kW"]) == P5_LINE


def test_a_power_of_exactly_the_chips_tdp_loads() -> None:
    """5.6 kW = 8 x 700 W: a host that draws nothing, a what-if kept."""
    assert load_catalog(sets=["p5.48xlarge.power=5.6kW"]).systems["p5.48xlarge"].power.si == 5600  # type: ignore[union-attr]


def test_a_hybrid_racks_power_covers_the_sum_over_its_members() -> None:
    """36 x 2,000 W Trainium4 + 36 x 1,400 W GB300 = 122,400 W, which the rack's members share by their TDP."""
    assert _refused(sets=["trn4-gb300-fusion-rack.power=100kW"]) == (
        "--set: trn4-gb300-fusion-rack power 100,000 W is below its members' TDP, 36 x 2,000 W (trn4) + 36 x 1,400 W "
        "(gb300) = 122,400 W, leaving no host share. Fix: give the system's whole power, at least 122,400 W (e.g. "
        "--set trn4-gb300-fusion-rack.power=122.4kW or more), or lower trn4.tdp or gb300.tdp."
    )
    load_catalog(sets=["trn4-gb300-fusion-rack.power=122.4kW"])


def test_a_tdp_raised_past_a_power_set_with_it_is_refused() -> None:
    """8 x 2,000 W = 16,000 W against a 10 kW system, whatever the order of the two --sets."""
    for sets in (["h100-sxm.tdp=2kW", "p5.48xlarge.power=10kW"], ["p5.48xlarge.power=10kW", "h100-sxm.tdp=2kW"]):
        assert "8 x 2,000 W = 16,000 W" in _refused(sets=sets)


def test_a_catalog_files_system_power_is_checked_and_blamed_on_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "systems:\n  p5.48xlarge:\n    power: {value: 4, unit: kW, status: estimate, derivation: a what-if}\n",
        encoding="utf-8",
    )
    assert _refused(files=[str(path)]).startswith(f"{path}: p5.48xlarge power 4,000 W is below its 8 h100-sxm")


def test_every_built_in_system_power_covers_its_chips(catalog: Catalog) -> None:
    """The built-in catalog passes the check it is loaded with (tpu-v7-pod's is the nearest, 1.21 x its chips')."""
    for sid, s in catalog.systems.items():
        counts = s.members or {s.chip: s.chips}
        if s.power is not None:
            assert s.power.si >= sum(n * catalog.chips[c].tdp.si for c, n in counts.items()), sid


def _model_file(tmp_path: Path, file: str) -> str:
    path = tmp_path / "cat_folder.yaml"
    path.write_text(f"models: {{my-model: {{name: My Model, file: {file}}}}}\n", encoding="utf-8")
    return str(path)


def test_a_model_file_naming_an_empty_folder_is_refused_on_load(tmp_path: Path) -> None:
    """It had loaded: predict of another model passed, and `chipwise web` answered 400 to GET /api/models."""
    (tmp_path / "emptyfolder").mkdir()
    cat = _model_file(tmp_path, "emptyfolder")
    assert _refused(files=[cat]) == (
        f"model config '{tmp_path / 'emptyfolder'}' is a folder with no config.json in it. Fix: give "
        f"models.my-model.file as a config.json, or a checkpoint folder holding one, beside {cat}."
    )


def test_a_model_file_that_is_not_there_is_refused_on_load(tmp_path: Path) -> None:
    cat = _model_file(tmp_path, "nope.json")
    assert _refused(files=[cat]).startswith(f"model config '{tmp_path / 'nope.json'}' does not exist. Fix: give")


def test_a_model_file_is_found_on_load_and_read_where_the_model_is(tmp_path: Path) -> None:
    """A folder holding a config.json loads; the config is not parsed on load (the model reader's job)."""
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "config.json").write_text("{not json", encoding="utf-8")
    catalog = load_catalog([_model_file(tmp_path, "ck")])
    with pytest.raises(ChipwiseError, match="is not valid JSON"):
        catalog.model_config("my-model")


TRAIN = "kind: train\nmodel: llama-3.1-8b\nhardware: h100-sxm\nchips: 8\ntokens: 1e9\n"


def test_the_command_line_refuses_such_a_catalog_whatever_it_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`catalog show` had shown 1 kW (exit 0), and predict of another model had passed (exit 0)."""
    assert run_error(capsys, ["catalog", "show", "p5.48xlarge", "--set", "p5.48xlarge.power=1kW"]) == (
        f"error: {P5_LINE}"
    )
    (tmp_path / "emptyfolder").mkdir()
    err = run_error(capsys, ["predict", TRAIN, "--catalog", _model_file(tmp_path, "emptyfolder"), "--json"])
    assert "is a folder with no config.json in it" in err


class _Server:
    """A server that was never to be made: the catalog is refused before it binds."""

    url = "http://127.0.0.1:0/"

    def serve_forever(self) -> None:
        raise KeyboardInterrupt

    def server_close(self) -> None:
        pass


def test_web_exits_2_before_serving(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It had started, then answered 400 to GET /api/models and to every h100 request."""
    made: list[object] = []

    def make_server(*args: object) -> _Server:
        made.append(args)
        return _Server()

    monkeypatch.setattr("chipwise.interfaces.web.server.make_server", make_server)
    (tmp_path / "emptyfolder").mkdir()
    cat = _model_file(tmp_path, "emptyfolder")
    assert run_error(capsys, ["web", "--no-open", "--port", "0", "--set", "p5.48xlarge.power=1kW"]) == (
        f"error: {P5_LINE}"
    )
    assert "no config.json in it" in run_error(capsys, ["web", "--no-open", "--port", "0", "--catalog", cat])
    assert made == []
