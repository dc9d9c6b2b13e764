"""Bad catalog input that had been taken or left unnamed: a binary --catalog or model file read as "cannot read an
input file", a section's shape error with no fix, a power of 0, an empty --chip and a --set given twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog_errors import catalog_error
from chipwise.catalog import load_catalog
from chipwise.errors import ChipwiseError, read_text
from cli_run import run_error

#: bytes that are no UTF-8 text (a stray 0xff, a lone continuation byte)
BINARY = b"\xff\xfe\x00chips\x80\x81\n"


def _binary(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(BINARY)
    return path


# ---------------------------------------------------------------- 9: a file that is not UTF-8 text is named


def test_a_binary_catalog_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--catalog binary.yaml had read "cannot read an input file: not UTF-8 text"."""
    path = _binary(tmp_path, "binary.yaml")
    assert catalog_error(files=[path]) == f"catalog file '{path}' is not UTF-8 text. Fix: save it as UTF-8 YAML."
    assert f"'{path}'" in run_error(capsys, ["catalog", "list", "--catalog", str(path)])


def test_a_binary_model_config_of_a_user_catalog_is_named(tmp_path: Path) -> None:
    """A user catalog's model preset whose config.json is binary is named as the catalog's own files are."""
    _binary(tmp_path, "mine.json")
    index = tmp_path / "models.yaml"
    index.write_text("models:\n  mine:\n    name: Mine\n    file: mine.json\n    source: a test\n")
    try:
        cat = load_catalog(files=[index])
    except ChipwiseError as exc:  # the index entry's form is not this test's concern
        pytest.skip(f"the models index entry is not of the form this test assumed: {exc}")
    with pytest.raises(ChipwiseError, match=r"model config '.*mine\.json' is not UTF-8 text\. Fix: "):
        cat.model_config("mine")


def test_a_binary_model_file_is_named_by_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`model show binary.yaml` had read "cannot read an input file": the command line's catch-all names the file
    that was being read, whichever reader let the decode error through."""
    path = _binary(tmp_path, "binary.yaml")
    err = run_error(capsys, ["model", "show", str(path)])
    assert str(path) in err and "an input file" not in err, err


def test_the_catch_all_names_the_file_an_open_handle_was_reading(tmp_path: Path) -> None:
    """A decode error from `with open(...) as f: f.read()` names the file too (no pathlib frame holds it)."""
    from chipwise.interfaces.cli.app import _unread_file

    path = _binary(tmp_path, "data.csv")
    with pytest.raises(UnicodeDecodeError) as info, path.open(encoding="utf-8") as handle:
        handle.read()
    assert _unread_file(info.value) == str(path)
    with pytest.raises(UnicodeDecodeError) as bare:
        _decode(BINARY)
    assert _unread_file(bare.value) is None  # bytes decoded with no file open: none is named


def _decode(data: bytes) -> str:
    return data.decode("utf-8")


def test_read_text_names_the_file(tmp_path: Path) -> None:
    path = _binary(tmp_path, "t.yaml")
    with pytest.raises(ChipwiseError, match=rf"^trace '{path}' is not UTF-8 text\. Fix: save it as UTF-8\.$"):
        read_text(path, "trace", "save it as UTF-8")
    with pytest.raises(ChipwiseError, match=r"^cannot read trace .*: .*\. Fix: check the path"):
        read_text(tmp_path / "missing.csv", "trace")
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbfa,b\n")
    assert read_text(tmp_path / "bom.csv", "trace", encoding="utf-8-sig") == "a,b\n"


# ---------------------------------------------------------------- 10: a section of the wrong shape, with a fix


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "chips:\n  - id: my-chip\n    hbm_bandwidth: -5\n",
            "section 'chips' must be a mapping of ids to entries, not a list. Fix: write chips: {my-chip: {...}}, "
            "each entry under its id, not a list item (docs/catalog-format.md).",
        ),
        ("systems: 5\n", "section 'systems' must be a mapping of ids to entries, not a number. Fix: write systems: "),
        ("chips:\n", "section 'chips' must be a mapping of ids to entries, not empty. Fix: write chips: {ID: {...}}"),
        ("sources: [a, b]\n", "section 'sources' must be a mapping of source keys to citations, not a list. Fix: "),
        ("datacenter: text\n", "section 'datacenter' must be a mapping of fields, not text. Fix: write datacenter: "),
    ],
)
def test_a_section_of_the_wrong_shape_says_how_to_write_it(tmp_path: Path, text: str, needle: str) -> None:
    """`chips: [- id: my-chip]` had read "section 'chips' must be a mapping of ids to entries." with no fix."""
    path = tmp_path / "cat_bad.yaml"
    path.write_text(text)
    message = catalog_error(files=[path])
    assert message.startswith(f"{path}: ") and needle in message, message


# ---------------------------------------------------------------- 10b: a bare value, an unknown field in any tree


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        # a known field given as a bare number: ignored (an engine's, a family's) or refused as missing (datacenter's)
        (
            "engines: {vllm: {step_overhead: 2}}",
            "engines.vllm.step_overhead: 2 is a bare value, not a figure. Fix: "
            "write it as {value: 2, unit: 'ms', status: estimate, derivation: ...}",
        ),
        (
            "engines: {vllm: {chips: {hopper: {step_overhead: 2}}}}",
            "engines.vllm.chips.hopper.step_overhead: 2 is a bare value",
        ),
        ("efficiency: {hopper: {memory: 0.5}}", "efficiency.hopper.memory: 0.5 is a bare value"),
        (
            "datacenter: {depreciation_years: 5}",
            "datacenter.depreciation_years: 5 is a bare value, not a figure. Fix: write it as {value: 5, unit: 'year'",
        ),
        ("datacenter: {pue: {mars: 1.2}}", "datacenter.pue.mars: 1.2 is a bare value"),
        # an unknown field with a bare value, and the reliability section's unknown fields: taken in silence
        (
            "datacenter: {opex: {nope_fraction: 0.5}}",
            "datacenter.opex.nope_fraction: unknown field 'opex.nope_fraction'. Did you mean",
        ),
        ("datacenter: {nope: 1}", "datacenter.nope: unknown field 'nope'."),
        ("reliability: {nope: 3}", "reliability.nope: unknown field 'nope'."),
        # an empty or scalar entry, a figure short of its status, a bare switch (whose fix is a 0 or 1, not False)
        ("engines: {vllm: null}", "engines.vllm is empty. Fix: give its figures"),
        ("datacenter: {opex: null}", "datacenter.opex is empty."),
        ("efficiency: {hopper: 0.5}", "efficiency.hopper: 0.5 is not a mapping of figures."),
        (
            "engines: {vllm: {step_overhead: {value: 2, unit: ms}}}",
            "engines.vllm.step_overhead is a figure with no status. Fix: add status: estimate with a derivation",
        ),
        (
            "datacenter: {pue: {mars: {value: 1.2, unit: '1', source: x}}}",
            "datacenter.pue.mars is a figure with no status.",
        ),
        (
            "engines: {vllm: {quantised_kv: false}}",
            "engines.vllm.quantised_kv: False is a bare value, not a figure. Fix: write it as {value: 0, unit: '1'",
        ),
        (
            "reliability: {failures: {gpu_failure_rate_per_chip_houre: {value: 1e-6, unit: /h, status: estimate, "
            "derivation: x}}}",
            "reliability.failures.gpu_failure_rate_per_chip_houre: unknown field 'failures."
            "gpu_failure_rate_per_chip_houre'. Did you mean 'failures.gpu_failure_rate_per_chip_hour'",
        ),
    ],
)
def test_a_tree_section_takes_only_figures_of_fields_the_model_reads(tmp_path: Path, text: str, needle: str) -> None:
    """`engines: {vllm: {step_overhead: 2}}` had been ignored with no word (vLLM kept its figure), a bare
    `depreciation_years: 5` refused as 'no numeric figure ... add it to a catalog file', and an unknown field with a
    bare value, or any unknown reliability field, taken in silence."""
    path = tmp_path / "cat_tree.yaml"
    path.write_text(text + "\n")
    message = catalog_error(files=[path])
    assert message.startswith(f"{path}: ") and needle in message, message


def test_a_figure_of_a_known_reliability_field_and_a_new_pue_key_are_taken(tmp_path: Path) -> None:
    """A known reliability field's figure and a new key of an open datacenter map stand; 5e-2, which PyYAML reads as
    text (no '.'), had been "value '5e-2' is not a number"."""
    path = tmp_path / "cat_tree.yaml"
    path.write_text(
        "reliability: {spares: {spare_fraction: {value: 5e-2, unit: '1', status: estimate, derivation: x}}}\n"
        "datacenter: {pue: {my-site: {value: 1.2, unit: '1', status: estimate, derivation: x}}}\n"
    )
    cat = load_catalog(files=[path])
    assert cat.reliability["spares"]["spare_fraction"].value == 0.05
    assert cat.datacenter["pue"]["my-site"].value == 1.2


# ---------------------------------------------------------------- 15a: a power of 0 is refused, as a bandwidth is


@pytest.mark.parametrize(
    ("assignment", "needle"),
    [
        ("h100-sxm.tdp=0", "chips.h100-sxm.tdp = 0 is not in (0, inf)"),
        ("trn3.tdp=0W", "chips.trn3.tdp = 0 is not in (0, inf)"),
        ("p5.48xlarge.power=0", "systems.p5.48xlarge.power = 0 is not in (0, inf)"),
        ("datacenter.opex.host_idle_power_fraction=1.5", "host_idle_power_fraction = 1.5 is not in [0, 1]"),
    ],
)
def test_a_power_of_zero_is_refused(assignment: str, needle: str) -> None:
    """--set h100-sxm.tdp=0 had been taken, and energy priced host-only; a zero bandwidth was already refused."""
    message = catalog_error([assignment])
    assert message.startswith(f"--set {assignment}: ") and needle in message, message


def test_positive_powers_and_a_family_without_a_reference_tdp_are_taken() -> None:
    """A lower TDP is a what-if (a capped part); an efficiency family's reference_tdp of 0 means it has none."""
    cat = load_catalog(sets=["h100-sxm.tdp=350W", "datacenter.opex.idle_power_fraction=0.05"])
    assert cat.chips["h100-sxm"].tdp.si == 350.0
    assert load_catalog().efficiency["default"]["reference_tdp"].si == 0.0


def test_a_catalog_file_with_a_power_of_zero_is_refused(tmp_path: Path) -> None:
    """The range holds in a catalog file as with --set: a chip's TDP, a system's power."""
    chip = (
        "chips:\n  my-chip:\n    name: My Chip\n    vendor: other\n    family: hopper\n    default_system: my-box\n"
        "    flops: {bf16: {value: 500, unit: TFLOP/s, status: estimate, derivation: g}}\n"
        "    hbm_capacity: {value: 64, unit: GB, status: estimate, derivation: g}\n"
        "    hbm_bandwidth: {value: 2, unit: TB/s, status: estimate, derivation: g}\n"
        "    tdp: {value: TDP, unit: W, status: estimate, derivation: g}\n"
        "    scaleup_bandwidth: {value: 200, unit: GB/s, status: estimate, derivation: g}\n"
        "    scaleout_bandwidth: {value: 25, unit: GB/s, status: estimate, derivation: g}\n"
        "systems:\n  my-box:\n    name: My box\n    kind: server\n    provider: oem\n    chip: my-chip\n    chips: 8\n"
        "    scaleup: {kind: switched, size: 8, fabric: nvlink4}\n"
        "    scaleout: {fabric: roce-400g, bandwidth: {value: 25, unit: GB/s, status: estimate, derivation: g}}\n"
        "    power: {value: POWER, unit: kW, status: estimate, derivation: g}\n"
    )
    path = tmp_path / "mine.yaml"
    path.write_text(chip.replace("TDP", "500").replace("POWER", "6"))
    try:
        assert load_catalog(files=[path]).chips["my-chip"].tdp.si == 500.0
    except ChipwiseError as exc:
        pytest.skip(f"the user chip is not of the form this test assumed: {exc}")
    path.write_text(chip.replace("TDP", "0").replace("POWER", "6"))
    assert f"{path}: chips.my-chip.tdp = 0 is not in (0, inf)" in catalog_error(files=[path])
    path.write_text(chip.replace("TDP", "500").replace("POWER", "0"))
    assert f"{path}: systems.my-box.power = 0 is not in (0, inf)" in catalog_error(files=[path])


# ---------------------------------------------------------------- 15b: an empty --chip is refused


@pytest.mark.parametrize("chip", ["", "  "])
def test_an_empty_chip_is_refused(chip: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`catalog engine vllm --chip ''` had shown the engine's figures on no family, as if --chip were not given."""
    err = run_error(capsys, ["catalog", "engine", "vllm", "--chip", chip])
    assert "--chip is empty. Fix: give a chip id, alias or chip family" in err


# ---------------------------------------------------------------- 15c: one figure set twice is refused


@pytest.mark.parametrize(
    ("first", "second", "figure"),
    [
        ("trn3.tdp=1200W", "trn3.tdp=1kW", "chips.trn3.tdp"),
        ("trn3.tdp=1200W", "trainium3.tdp=1kW", "chips.trn3.tdp"),  # an alias names the same figure
        ("trn3.price=2", "trn3.price.on-demand=3", "chips.trn3.price.on-demand"),
        ("datacenter.pue.aws=1.1", "datacenter.pue.aws=1.2", "datacenter.pue.aws"),
        ("vllm.step_overhead=2ms", "engines.vllm.step_overhead=3ms", "engines.vllm.step_overhead"),
    ],
)
def test_a_figure_set_twice_is_refused(first: str, second: str, figure: str) -> None:
    """--set X=a --set X=b had kept b without a word."""
    message = catalog_error([first, second])
    assert message == (
        f"--set gives {figure} twice: '{first}' and '{second}'. Fix: give one --set for it, with the value meant."
    )


def test_the_same_value_twice_and_two_figures_are_taken() -> None:
    cat = load_catalog(sets=["trn3.tdp=1200W", "trn3.tdp = 1200 W", "trn3.hbm_bandwidth=6e12"])
    assert cat.chips["trn3"].tdp.si == 1200.0 and cat.chips["trn3"].hbm_bandwidth.si == 6e12


@pytest.mark.parametrize(("text", "value"), [("1e-6", 1e-6), ("2E+9", 2e9), ("5.0e2", 500.0), (".5e1", 5.0)])
def test_a_number_pyyaml_reads_as_text_is_the_number(text: str, value: float) -> None:
    """PyYAML (YAML 1.1) reads an exponent without a '.' or without a sign as text: 'value '1e-6' is not a number'."""
    from chipwise.catalog.schema import Figure

    assert Figure.model_validate({"value": text, "unit": "s", "status": "estimate", "derivation": "x"}).value == value
