"""The Python API: the same answers as the CLI, as plain dictionaries, JSON-ready as `--json` prints them: NaN and
infinities are None, NumPy numbers plain ones, tuples lists. An answer's own figures are in SI units (seconds, bytes,
FLOP/s, joules, US dollars) unless the key names another (memory_per_chip_gib, tflops_per_chip,
price_usd_per_chip_hour); a catalog figure it rests on (a prediction's `figures` and `economics_figures`, catalog_show's
`figures`) is as the catalog states it, `value` in its `unit` (trn2.flops.bf16: 667.0 'TFLOP/s'), each number with
`si`, its SI value.
Every function takes `files` (catalog YAML files of your own) and `sets` (`ID.FIELD=VALUE` what-ifs); an answer says
of a figure `sets` gave 'given in sets=' where the CLI's says 'set on the command line'. Bad input is a
ChipwiseError of one line that names the keyword argument and the fix. A training answer given no `tokens` has no
run to price: its cost_usd, energy_j and co2e_kg are then of one hour of training, and its economics_basis says so
('one hour'; 'whole run' where tokens are given).

import chipwise.api as cw
cw.predict({"kind": "train", "model": "llama-3.1-70b", "hardware": "h100-sxm", "chips": 1024, "tokens": 15e12})
cw.plan_train("llama-3.1-405b", tokens=15e12, chips=16384, hardware=["h100-sxm", "trn2", "gb200"])
cw.plan_serve("llama-3.1-70b", rate=20, input_tokens=1024, output_tokens=256, slo={"ttft_p99": 2.0, "tpot_p99": 0.05})
cw.plan_hetero("llama-3.1-405b", {"trn4": 36, "gb300": 36}, tokens=1e12, hybrid="trn4-gb300-fusion-rack")
cw.plan_fleet("llama-3.1-70b", "examples/chat-mix.yaml", slo={"ttft_p99": 2.0, "tpot_p99": 0.05})
cw.plan_lifecycle("llama-3.1-70b", train_tokens=15e12, serve_rate=100, serve_months=12)
cw.tco("h100-sxm", utilisation=0.8)
cw.claims()
cw.catalog_list()
cw.sensitivity("examples/train-llama70b-trn2.yaml")
cw.validate("../shared/data/groundtruth_training.csv")
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import math
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ParamSpec

import numpy as np
from pydantic import TypeAdapter, ValidationError

# every answer loads a catalog, and these name the hints and defaults below; each function imports the layers it
# answers with (planner, economics, validation, the CLI's views) when called, as the CLI's commands do: importing
# them all here had taken 0.44-0.59 s against 0.195 s for the whole CLI (planner.claims 190 ms, planner.fleet 106 ms
# of which scipy.optimize 88 ms, needed only by plan_fleet; interfaces.cli.catalog_cmd 62 ms)
from chipwise.catalog.loader import Catalog, load_catalog
from chipwise.catalog.overrides import SET_ON_COMMAND_LINE
from chipwise.errors import ChipwiseError, UnknownNameError
from chipwise.planner.sensitivity import DEFAULT_STEP, check_step
from chipwise.workload.counts import count_value, read_count


def catalog(files: Sequence[str | Path] = (), sets: Sequence[str] = ()) -> Catalog:
    """The built-in catalog with users' YAML files and `ID.FIELD=VALUE` overrides applied."""
    try:
        return load_catalog(files, sets)
    except ChipwiseError as exc:  # its errors name the keyword arguments, as _answers' do ('--set' is sets=[...])
        exc.args = (_keyword_names(str(exc), {"files", "sets"}, _given_sets(sets)), *exc.args[1:])
        raise


Params = ParamSpec("Params")
#: a count and a number as the functions read them: NumPy's scalars too (np.int64(64) chips from an array), and text
#: as on the command line ('1k'); the hints had refused np.int64 where the functions now take it
WholeIn = int | str | np.integer[Any]
#: a request length: a whole count, or a distribution (text as the command line takes it, or a scenario's mapping)
LengthIn = WholeIn | Mapping[str, Any]
NumberIn = float | str | np.integer[Any] | np.floating[Any]
#: a command-line flag in a message (`--serve-rate`), and a command to run quoted in one ('chipwise plan hetero ...')
_CLI_FLAG = re.compile(r"--([a-z][a-z0-9-]*)")
_CLI_COMMAND = re.compile(r"('chipwise [^']*')")
#: a --set with its assignment, quoted or not ('--set trn2.hbm_bandwith:', "--set 'trn2.hbm' has no '='"): an
#: assignment names an ID.FIELD, so it holds a '.' or an '=', or (a bare id) ends before a colon; '--set gives' no.
#: A '.' that ends the sentence (before a space or the end) is not the assignment's: "or --set
#: datacenter.electricity_usd_per_kwh.eu-north-1=0.1USD/kWh." had read sets=['...=0.1USD/kWh.'], which passed back
#: is "unknown unit 'USD/kWh.'"; it now reads sets=['...=0.1USD/kWh'] (the 0.1's '.' kept)
_IN_SET = r"(?:[^\s:,'.]|\.(?!\s|$))"
_CLI_SET = re.compile(rf"--set (?:'([^']*)'|({_IN_SET}*(?:=|\.(?!\s|$)){_IN_SET}*|[^\s:,']+(?=:)))")
#: `chipwise tco`'s option for each input tco's `overrides` takes (tco_cmd.tco): a line naming the flag names the
#: key here ('drop --colocation' had told an API caller of a flag the API has not; it now reads 'drop
#: overrides['colocation_usd_per_kw_month']')
_TCO_FLAGS = {
    "chip-price": "chip_price_usd",
    "server": "server_usd_per_chip",
    "scaleup-network": "scaleup_network_usd_per_chip",
    "scaleout-network": "scaleout_network_usd_per_chip",
    "storage": "storage_usd_per_chip",
    "depreciation-years": "depreciation_years",
    "operations": "operations_fraction",
    "colocation": "colocation_usd_per_kw_month",
    "electricity": "electricity_usd_per_kwh",
}


#: where an assignment quoted after --set ends: the message goes on with a space, a colon, a comma, a semicolon, a
#: quote, a bracket or a sentence's '.'
_SET_END = r"(?=$|[\s:,;')]|\.(?:\s|$))"
#: the API's words for a figure its `sets` gave, where the CLI's (catalog.overrides) say the command line gave it
GIVEN_IN_SETS = "given in sets="


def _given_sets(sets: Any) -> dict[str, str]:
    """The assignments of `sets`, each under the forms a message quotes it in after --set (as written, and as the
    overrides quote `--set LHS=RHS`, stripped about its '='), to the text the user wrote; {} for no list of texts
    (load_catalog refuses that)."""
    if isinstance(sets, str) or not isinstance(sets, Sequence):
        return {}
    given: dict[str, str] = {}
    for written in (a for a in sets if isinstance(a, str) and a.strip()):
        lhs, equals, rhs = written.partition("=")
        given.setdefault(written, written)
        given.setdefault(f"{lhs.strip()}{equals}{rhs.strip()}", written)
    return given


def _set_quotes(given: Mapping[str, str]) -> re.Pattern[str] | None:
    """`--set A` (with 'set on the command line: ' before it, the derivation of a figure it gave) for each form of an
    assignment the user gave (_given_sets), the longest first; None where none was given."""
    if not given:
        return None
    forms = "|".join(re.escape(form) for form in sorted(given, key=len, reverse=True))
    return re.compile(rf"({re.escape(SET_ON_COMMAND_LINE)}: )?--set (?:'({forms})'|({forms})){_SET_END}")


def _set_quoted(match: re.Match[str], given: Mapping[str, str]) -> str:
    """A --set a _set_quotes pattern matched as the API names it: "sets=['trn2.tdp=800W']", and "given in
    sets=['trn2.tdp=800W']" for the derivation of a figure it gave."""
    written = given[match.group(2) or match.group(3)]
    return f"{GIVEN_IN_SETS if match.group(1) else 'sets='}[{written!r}]"


def _written_for(lhs: str, given: Mapping[str, str], message: str) -> str:
    """The assignment of `given` (_given_sets), as the user wrote it, whose left-hand side a message quotes after
    --set alone ('--set gb200.tdp: 'abc' is not a number'): of several to one figure, the one whose value the message
    names, else the first (the overrides apply them in order); `lhs` itself where none is of it. sets=['gb200.tdp=abc']
    had read "sets=['gb200.tdp']: 'abc' is not a number", an entry never given; it now reads
    "sets=['gb200.tdp=abc']: 'abc' is not a number"."""
    written = [w for w in dict.fromkeys(given.values()) if "=" in w and w.partition("=")[0].strip() == lhs]
    named = [w for w in written if w.partition("=")[2].strip() and w.partition("=")[2].strip() in message]
    return (named or written or [lhs])[0]


def _keyword_names(message: str, keywords: set[str], given: Mapping[str, str] = {}) -> str:
    """`message` with the command-line flags it names as the keyword arguments they are here ('--serve-rate' ->
    'serve_rate', '--set trn2.tdp=5' -> "sets=['trn2.tdp=5']", a bare '--set' -> 'sets', tco's '--colocation' ->
    "overrides['colocation_usd_per_kw_month']"); a flag with no such keyword, and a quoted command to run, stay as
    they are. An assignment of `given` (_given_sets) is quoted whole, as the user wrote it: sets=['trn2.tdp=800 TB']
    had read "sets=['trn2.tdp=800'] TB: tdp is a power" (a --set's text ends at a space); it now reads
    "sets=['trn2.tdp=800 TB']: tdp is a power"."""
    quotes = _set_quotes(given) if "sets" in keywords else None

    def keyword(match: re.Match[str]) -> str:
        if match.group(1) in _TCO_FLAGS and "overrides" in keywords:
            return f"overrides['{_TCO_FLAGS[match.group(1)]}']"
        name = match.group(1).replace("-", "_")
        name = "sets" if name == "set" else name  # the API's keyword for the repeatable --set
        return name if name in keywords else match.group(0)

    def assignment(match: re.Match[str]) -> str:
        quoted = match.group(1) or match.group(2)
        return f"sets=[{_written_for(quoted, given, message)!r}]" if "sets" in keywords else match.group(0)

    def known(part: str) -> str:
        return quotes.sub(lambda m: _set_quoted(m, given), part) if quotes else part

    parts = _CLI_COMMAND.split(message)
    return "".join(
        part if _CLI_COMMAND.fullmatch(part) else _CLI_FLAG.sub(keyword, _CLI_SET.sub(assignment, known(part)))
        for part in parts
    )


def _sets_words(answer: Any, quotes: re.Pattern[str], given: Mapping[str, str]) -> Any:
    """`answer` (plain JSON) with the CLI's words for a figure `sets` gave as the API's: a price's derivation 'set
    on the command line: --set gb200.price.on-demand=12.2' now reads "given in sets=['gb200.price.on-demand=12.2']",
    a what-if line '... (catalog 700 W), set on the command line' '... (catalog 700 W), given in sets='."""
    if isinstance(answer, dict):
        return {k: _sets_words(v, quotes, given) for k, v in answer.items()}
    if isinstance(answer, list):
        return [_sets_words(v, quotes, given) for v in answer]
    if not isinstance(answer, str) or ("--set " not in answer and SET_ON_COMMAND_LINE not in answer):
        return answer
    return quotes.sub(lambda m: _set_quoted(m, given), answer).replace(SET_ON_COMMAND_LINE, GIVEN_IN_SETS)


def _call_sets(function: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, str]:
    """The assignments (_given_sets) of the `sets` a call of `function` gave; {} where its arguments do not bind
    (the call itself says why)."""
    try:
        bound = inspect.signature(function).bind(*args, **kwargs)
    except TypeError:
        return {}
    return _given_sets(bound.arguments.get("sets", ()))


def _imported(path: str) -> Callable[..., Any]:
    """The function 'module:name' names, its module imported on first use."""
    module, name = path.split(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found


def _answers(
    *takes: str,
) -> Callable[[Callable[Params, dict[str, Any]]], Callable[Params, dict[str, Any]]]:
    """A public function's answer as the CLI's --json gives it (NaN and infinities None: format.jsonable, as the
    web page answers), and its errors naming its keyword arguments, and those of the functions it `takes` options
    for ('module:function', imported when an error names them), where the planners name command-line flags."""

    def wrap(function: Callable[Params, dict[str, Any]]) -> Callable[Params, dict[str, Any]]:
        @functools.wraps(function)
        def answer(*args: Params.args, **kwargs: Params.kwargs) -> dict[str, Any]:
            from chipwise.interfaces.format import jsonable

            given = _call_sets(function, args, kwargs)
            try:
                result: dict[str, Any] = jsonable(function(*args, **kwargs))
            except ChipwiseError as exc:
                options = (function, *(_imported(t) for t in takes))
                keywords = {name for f in options for name in inspect.signature(f).parameters}
                exc.args = (_keyword_names(str(exc), keywords, given), *exc.args[1:])
                raise
            quotes = _set_quotes(given)
            return result if quotes is None else _sets_words(result, quotes, given)

        return answer

    return wrap


def _check_options(options: Mapping[str, Any], takes: Callable[..., Any], *extra: str) -> None:
    """One line for an option the function answering a call does not take (`extra`: those the API reads itself);
    Python raised a TypeError naming an internal function."""
    known = [n for n, p in inspect.signature(takes).parameters.items() if p.default is not p.empty]
    known += [e for e in extra if e not in known]
    for name in options:
        if name not in known:
            raise UnknownNameError("option", name, known, hint=f"use one of {', '.join(known)}")


def _hardware(cat: Catalog, hardware: Any) -> list[str]:
    """The ids `hardware` names: 'all', a comma-separated string or a sequence of ids (another type is one line,
    not a TypeError)."""
    from chipwise.hardware import hardware_ids

    ids = isinstance(hardware, str) or (isinstance(hardware, Sequence) and all(isinstance(h, str) for h in hardware))
    if not ids:
        raise ChipwiseError(
            f"hardware {hardware!r} is not chip or system ids. Fix: give e.g. 'h100-sxm,trn2', ['h100-sxm', 'trn2'] "
            "or 'all'."
        )
    return hardware_ids(cat, hardware)


_FLAG = TypeAdapter(bool)


def _plain(value: Any) -> Any:
    """A NumPy scalar (np.int64(1024) chips) as the Python number it holds, for the scenario's JSON."""
    if hasattr(value, "dtype") and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        return value.item()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


#: what each number _number reads looks like, for the line that refuses one (every keyword had been offered 0.8,
#: a PUE, which is at least 1, too)
_NUMBER_EXAMPLES = {"utilisation": "0.8", "pue": "1.2"}


def _number(value: Any, name: str) -> Any:
    """A finite number (a fraction or a PUE, checked for its range by the planner), None kept, else one line. A
    NumPy scalar or numeric text reads as its number (count_value), as the web page reads them: utilisation
    np.float32(0.8) had been refused as 'not a number'."""
    read = count_value(value)
    if read is None or (isinstance(read, int | float) and not isinstance(read, bool) and math.isfinite(read)):
        return read
    example = _NUMBER_EXAMPLES.get(name, "0.8")
    if isinstance(read, bool) or not isinstance(read, int | float | str):
        kind = type(read).__name__
        raise ChipwiseError(f"{name} {value!r} is a {kind}, not a number or numeric text. Fix: give e.g. {example}.")
    raise ChipwiseError(f"{name} {value!r} is not a number. Fix: give e.g. {example}.")


def _name(value: Any, what: str) -> str:
    """A model, chip or system name (a model's config.json may be a Path), else one line (None had raised an
    AttributeError; a Path to a config, 'not a name')."""
    if what == "model" and isinstance(value, Path):
        value = str(value)
    if isinstance(value, str) and value:
        return value
    example = "'llama-3.1-70b'" if what == "model" else "'h100-sxm'"  # a model had been offered as hardware
    raise ChipwiseError(f"{what} {value!r} is not a name. Fix: give e.g. {example}.")


def _required(value: Any, name: str, whole: bool = False, example: str = "") -> Any:
    """A positive finite count that must be given (read_count keeps None, which the planners multiplied); the fix
    gives `example` where the count is no chip or token count (months)."""
    return read_count(_given(value, name, whole, example), name, whole, example)


def _given(value: Any, name: str, whole: bool = True, example: str = "") -> Any:
    """`value`, or where it is None one line asking for a positive number (of the kind `whole` says)."""
    if value is None:
        example = example or ("64" if whole else "15e12 or '15T'")
        raise ChipwiseError(f"{name} is None. Fix: give a positive {'whole ' if whole else ''}number, e.g. {example}.")
    return value


def _path(value: Any, what: str, example: str) -> str:
    """A file's path as text, else one line (Path(None) raised a TypeError)."""
    if isinstance(value, str | Path):
        return str(value)
    raise ChipwiseError(f"{what} {value!r} is not a path. Fix: give the file's path, e.g. '{example}'.")


def _top(value: Any) -> int | None:
    """The rows of a ranking to keep (`--top`), None for all."""
    if value is None:
        return None
    try:
        top: int = read_count(value, "top", whole=True)
    except ChipwiseError:  # top=0 had read 'is not a whole number of rows', which 0 is
        raise ChipwiseError(
            f"top {value!r} is not a whole number of rows of at least 1. Fix: give e.g. 20, or None for every row."
        ) from None
    return top


#: what a text option looks like, for the one line that refuses another type
_TEXT_EXAMPLES = {
    "region": "'us-east-1'",
    "engine": "'vllm'",
    "provider": "'aws'",
    "managed": "'sagemaker'",
    "objective": "'cost'",
    "pricing": "'on-demand'",
    "speculative": "'eagle:3'",
    "router": "'least_loaded'",
    "recovery": "'best'",
    "facility": "'colocation'",
    "hybrid": "'trn4-gb300-fusion-rack'",
    "ident": "'trn3' or 'efficiency.trainium2'",
    "chip": "'gb200'",
    "compare": "'reserved-1y'",
    "only": "'hbm'",
}


@functools.cache
def _option_types(takes: Callable[..., Any]) -> dict[str, tuple[Any, ...]]:
    """The types each option of `takes` is annotated with ('str | None' -> (str, NoneType))."""
    hints = typing.get_type_hints(takes)
    return {name: typing.get_args(hint) or (hint,) for name, hint in hints.items() if name != "return"}


def _text(value: Any, name: str, optional: bool = True) -> None:
    """One line for a text option of another type (region=5 raised an AttributeError, engine=5 too)."""
    if isinstance(value, str) or (value is None and optional):
        return
    example = _TEXT_EXAMPLES.get(name, "'bf16'" if "precision" in name else "a name")
    raise ChipwiseError(f"{name} {value!r} is not text. Fix: give e.g. {example}.")


def _read_options(
    options: dict[str, Any],
    takes: Callable[..., Any],
    counts: Mapping[str, bool] = {},
    numbers: Sequence[str] = (),
) -> None:
    """Each option read as the planner `takes` it, in place: `counts` (whole or not) and `numbers` as the API reads
    them, text options text, flags true or false; another type is one line."""
    types = _option_types(takes)
    for name, value in options.items():
        kinds = set(types.get(name, ()))
        if name in counts:
            options[name] = read_count(value, name, counts[name], _COUNT_EXAMPLES.get(name, ""))
        elif name in numbers:
            options[name] = _number(value, name)
        elif kinds and kinds <= {str, type(None)}:
            _text(value, name, optional=type(None) in kinds)
        elif kinds == {bool}:
            options[name] = _flag(value, name)


#: what a count option looks like, for the line that refuses one (read_count's default offers a chip count or a
#: run's tokens: global_batch_tokens=-1 had been told "e.g. 15e12 or '15T'", a whole run; as plan_cmd's examples)
_COUNT_EXAMPLES = {
    "global_batch_tokens": "'4M' or 4194304",
    "seq_len": "8192 or '8k'",
    "top_plans": "3",
    "input_tokens": "1024 or '4k'",
    "output_tokens": "256 or '1k'",
}
#: plan_train's options that are counts (whole or not) and numbers
_TRAIN_COUNTS = {"seq_len": True, "global_batch_tokens": False, "top_plans": True}
_TRAIN_NUMBERS = ("utilisation", "pue")


def _slo(slo: Any) -> Any:
    """`slo` as given, or one line for a target of None, True or False in a mapping, named as Python writes it: the
    scenario's reader names them as YAML and JSON do, and slo={'ttft_p99': None} had read 'SLO ttft_p99 = null', a
    word the caller never wrote; it now reads "slo['ttft_p99'] None is not a time"."""
    if not isinstance(slo, Mapping):
        return slo
    from chipwise.workload.slo import SLOValueError, slo_key

    for key, target in slo.items():
        try:  # either name of a target ('ttft_p99', or the scenario's 'ttft_p99_s'): a None under the _s one had
            name = slo_key(key)  # passed to the reader, which named it 'null: not a time'
        except ChipwiseError:
            break  # the reader's line, in the order it reads the keys
        if target is None or isinstance(target, bool):
            fix = SLOValueError("", name).fix()
            raise ChipwiseError(f"slo[{key!r}] {target!r} is not a time. Fix: {fix}, or leave the key out.")
    return slo


def _flag(value: Any, name: str) -> bool:
    """A true/false option read as the web page reads it (True, False, 'yes', 'no', 1, 0), else one line: 'no'
    was truthy, and asked for what it meant to refuse."""
    try:
        return _FLAG.validate_python(value)
    except ValidationError:
        raise ChipwiseError(f"{name} {value!r} is not true or false. Fix: give True or False.") from None


@_answers()
def predict(
    scenario: str | Path | Mapping[str, Any], files: Sequence[str | Path] = (), sets: Sequence[str] = ()
) -> dict[str, Any]:
    """Predict a scenario given as a path, inline YAML/JSON text, or a mapping (DESIGN.md's scenario contract)."""
    from chipwise.interfaces.cli.train_views import with_batch_note
    from chipwise.planner.scenario import predict_scenario
    from chipwise.workload.scenario import load_scenario

    cat = load_catalog(files, sets)
    return _with_what_if(with_batch_note(predict_scenario(cat, load_scenario(_scenario_text(scenario), cat))), cat)


def _with_what_if(report: dict[str, Any], cat: Catalog) -> dict[str, Any]:
    """`report` with what `files` and `sets` changed in the catalog it read (`what_if`, one line each, [] for none),
    as the command's --json carries it: only claims and validate --json had, and none of the API's answers."""
    from chipwise.interfaces.cli.common import whatif_lines

    return {**report, "what_if": whatif_lines(cat)}


def _scenario_text(scenario: Any) -> str:
    """A scenario given as a path, YAML/JSON text or a mapping, as the text (or path) load_scenario reads."""
    if isinstance(scenario, Path):
        scenario = str(scenario)
    if not isinstance(scenario, str | Mapping):
        raise ChipwiseError(
            f"scenario {scenario!r} is not a path, YAML/JSON text or a mapping. Fix: give e.g. {{'kind': 'train', "
            "'model': 'llama-3.1-70b', 'hardware': 'h100-sxm', 'chips': 1024}."
        )
    _text_keys(scenario)
    try:
        text = json.dumps(dict(scenario), default=_plain) if isinstance(scenario, Mapping) else scenario
    except (TypeError, ValueError) as exc:  # a NumPy number, an integer of thousands of digits
        raise ChipwiseError(
            f"the scenario holds a value JSON cannot carry ({exc}). Fix: give numbers, text, true/false, lists and "
            "mappings."
        ) from None
    return text


def _text_keys(value: Any, where: str = "") -> None:
    """One line for a scenario key that is not text ({None: 1} in plan): JSON writes such a key as text, and the
    error named a key 'null' the user never wrote."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if not isinstance(key, str):
                at = f" in {where}" if where else ""
                raise ChipwiseError(f"scenario key {key!r}{at} is not text. Fix: write the key as text, e.g. 'tp'.")
            _text_keys(inner, f"{where}.{key}" if where else key)
    elif isinstance(value, list | tuple):
        for item in value:
            _text_keys(item, where)


@_answers()
def sensitivity(
    scenario: str | Path | Mapping[str, Any],
    step: NumberIn = DEFAULT_STEP,
    metric: str | None = None,
    replan: bool = False,
    workers: int | None = None,
    only: Sequence[str] | str | None = (),
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
) -> dict[str, Any]:
    """Which catalog figure matters most for a scenario (as `chipwise sensitivity --json`): each figure the
    prediction rests on (or those whose names hold a text of `only`, one text or a list) moved by -step and +step
    (`x0.9` and `x1.1`), the plan held (or searched again, `replan`), and each metric's elasticity; the figures ranked
    by `metric`'s.
    `step` may be numeric text ('0.1'), as the web page takes it, and is refused with the CLI's line (step nan had
    read 'is not a number. Fix: give e.g. 0.8.', and 0.8 is no step; it now reads 'is not a fraction in (0, 0.5).
    Fix: give e.g. 0.1 for +/-10%.')."""
    from chipwise.planner.sensitivity import sensitivity as planner_sensitivity
    from chipwise.workload.scenario import load_scenario

    step = check_step(count_value(step))
    cat = load_catalog(files, sets)
    sc = load_scenario(_scenario_text(scenario), cat)
    _text(metric, "metric")
    workers = None if workers is None else _required(workers, "workers", whole=True, example="2")
    texts = _only(only)
    for text in texts:
        _text(text, "only", optional=False)
    result = planner_sensitivity(
        sc, files, sets, step, metric, _flag(replan, "replan"), workers, only=texts, catalog=cat
    )
    return _with_what_if(result, cat)


def _only(only: Any) -> list[str]:
    """The texts of sensitivity's `only`: one text, or a list of them; None none, as the default (only=5 had raised
    a TypeError, 'int' object is not iterable)."""
    if only is None:
        return []
    if isinstance(only, str):
        return [only]
    if not isinstance(only, Sequence | set | frozenset):
        raise ChipwiseError(f"only {only!r} is not text or a list of texts. Fix: give e.g. ['hbm', 'flops'].")
    return list(only)


@_answers("chipwise.planner.training:plan_training")
def plan_train(
    model: str,
    chips: WholeIn,
    hardware: Sequence[str] | str = "all",
    tokens: NumberIn | None = None,
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """Rank hardware for a training run (see `chipwise plan train --help` for the options; `top` keeps the first
    rows of the ranking, as --top does, all of them when left out)."""
    from chipwise.interfaces.format import first_rows
    from chipwise.planner.training import plan_training

    _check_options(options, plan_training, "top")
    top = _top(options.pop("top", None))
    _read_options(options, plan_training, _TRAIN_COUNTS, _TRAIN_NUMBERS)
    _check_utilisation(options)
    cat = load_catalog(files, sets)
    report = plan_training(
        cat,
        _name(model, "model"),
        _required(chips, "chips", whole=True),
        _hardware(cat, hardware),
        tokens=read_count(tokens, "tokens"),
        **options,
    )
    return _with_what_if(first_rows(report, top), cat)


def _check_utilisation(options: Mapping[str, Any]) -> None:
    """A utilisation given for rented chips, named as the API names it (the planners' line names the CLI's flags,
    'add --pricing owned'), after the mode, as plan_train checks it."""
    from chipwise.economics.pricing import check_mode
    from chipwise.planner.training import check_utilisation

    pricing = check_mode(options.get("pricing", "on-demand"))
    check_utilisation(options.get("utilisation"), pricing, "utilisation", "pricing='owned'")


@_answers("chipwise.planner.serving_plan:plan_serving")
def plan_serve(
    model: str,
    rate: NumberIn | None = None,
    concurrency: WholeIn | None = None,
    offline: bool = False,
    input_tokens: LengthIn = 1024,
    output_tokens: LengthIn = 256,
    slo: str | Mapping[str, float | str] | None = None,
    hardware: Sequence[str] | str = "all",
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """The cheapest fleet per chip that serves a load (one of rate, concurrency, offline) within the SLO (keys like
    ttft_p99, tpot_p99, e2e_p50, to seconds or times with units, {'ttft_p99': 2.0, 'tpot_p99': '50ms'}, or text as
    --slo takes it), simulated; options as `chipwise plan serve --help`. The lengths may be text as on the command
    line ('1k', 'lognormal:mean=2k,std=1.5k,max=16k') or a distribution as a scenario's input_tokens takes it
    ({'dist': 'lognormal', 'mean': 2000, 'std': 1500, 'max': 16000})."""
    from chipwise.interfaces.format import explain_plan_serve, first_rows
    from chipwise.planner.serving_inputs import plan_serve_inputs
    from chipwise.planner.serving_plan import check_split_load, plan_serving
    from chipwise.planner.serving_split import worded_for
    from chipwise.workload.lengths import read_length
    from chipwise.workload.load import load_of
    from chipwise.workload.serve_scenario import name_value

    _check_options(options, plan_serving, "top")
    top = _top(options.pop("top", None))
    disaggregated = options.pop("disaggregated", None)  # None: splits under a rate, as on the CLI; true: closed too
    _read_options(options, plan_serving, numbers=("utilisation",))
    _check_utilisation(options)
    if "verify" in options:  # 0 simulated no option, and the verdict blamed the hardware and the load
        options["verify"] = _required(options["verify"], "verify", whole=True, example="3")
    if options.get("engine") is not None:
        options["engine"] = name_value(options["engine"])  # any case, as on the command line
    model = _name(model, "model")
    # as --input-tokens and plan_lifecycle read them: '1k' had been refused as 'input tokens '1k' is not a whole
    # number of at least 1', a line naming no keyword
    prompt = read_length(_given(input_tokens, "input_tokens", example="1024 or '4k'"), "input_tokens", "1024 or '4k'")
    answer = read_length(_given(output_tokens, "output_tokens", example="256 or '1k'"), "output_tokens", "256 or '1k'")
    cat = load_catalog(files, sets)
    # text read as a count first ('20', '2k'), as load_of itself does (its hints name the numbers it reads)
    load = load_of(count_value(rate), count_value(concurrency), _flag(offline, "offline"), flag="")
    if disaggregated is not None:
        disaggregated = _flag(disaggregated, "disaggregated")
    check_split_load(disaggregated, load, "disaggregated", "rate")
    ids, unrunnable = plan_serve_inputs(
        cat,
        model,
        _hardware(cat, hardware),
        prompt,
        answer,
        options.get("engine"),
        options.get("region"),
    )
    report = plan_serving(cat, model, ids, load, prompt, answer, _slo(slo), disaggregated=disaggregated, **options)
    # the split note's fix names the engine as this interface's keyword does, not the command line's --engine
    report["skipped"] = [*worded_for(report["skipped"], "api"), *unrunnable]
    return _with_what_if(explain_plan_serve(first_rows(report, top)), cat)  # as `chipwise plan serve --json` gives it


@_answers("chipwise.planner.hetero:plan_hetero_training")
def plan_hetero(
    model: str,
    fleet: Mapping[str, int | str] | str,
    tokens: float | str | None = None,
    hybrid: str | None = None,
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """Train on a mixed fleet ({chip: count}, or text as --fleet takes it: 'trn4=36,gb300=36'): pipelines with
    stages on two chip types against each part alone; `pricing`, `region`, `provider`, `utilisation` and `pue` as
    plan_train takes them."""
    from chipwise.planner.hetero import parse_fleet, plan_hetero_training

    _check_options(options, plan_hetero_training)
    _read_options(options, plan_hetero_training, {"seq_len": True, "global_batch_tokens": False}, _TRAIN_NUMBERS)
    _check_utilisation(options)
    _text(hybrid, "hybrid")
    if isinstance(fleet, str):
        fleet = parse_fleet(fleet)
    if not isinstance(fleet, Mapping):
        raise ChipwiseError(f"fleet {fleet!r} is not a mapping of chips to counts. Fix: give e.g. {{'trn4': 36}}.")
    counts = {_name(chip, "chip"): read_count(n, f"fleet['{chip}']", whole=True) for chip, n in fleet.items()}
    cat = load_catalog(files, sets)
    report = plan_hetero_training(
        cat, _name(model, "model"), counts, read_count(tokens, "tokens"), hybrid=hybrid, **options
    )
    return _with_what_if(report, cat)


def _limits(limits: Any) -> Mapping[str, int] | None:
    """Chips available per type: a mapping, or text as --limits takes it ('h100-sxm=64,trn2=128')."""
    if limits is None or isinstance(limits, Mapping):
        return limits
    if isinstance(limits, str):
        from chipwise.planner.fleet_workload import parse_limits

        return parse_limits(limits)
    raise ChipwiseError(
        f"limits {limits!r} is not a mapping of chips to counts. Fix: give e.g. {{'h100-sxm': 64}} or 'h100-sxm=64'."
    )


@_answers("chipwise.planner.fleet:plan_fleet")
def plan_fleet(
    model: str,
    workload: str | Path,
    slo: str | Mapping[str, float | str],
    hardware: Sequence[str] | str = "all",
    limits: Mapping[str, int] | str | None = None,
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """The cheapest mix of instance types for a workload (a YAML bucket mix or a CSV/JSONL trace), replayed in the
    simulator; `limits`: chips available per type, {'h100-sxm': 64} or text as --limits takes it; `pricing` and
    `region` as plan_serve takes them."""
    from chipwise.planner.fleet import plan_fleet as planner_fleet
    from chipwise.planner.serving_inputs import check_slo
    from chipwise.serve.quant import RELEASED

    _check_options(options, planner_fleet)
    _read_options(options, planner_fleet)
    options.setdefault("precision", RELEASED)  # the checkpoint's own, as `chipwise plan fleet` takes it
    if not slo:
        raise ChipwiseError(
            "plan_fleet needs an SLO. Fix: give slo={'ttft_p99': 2.0, 'tpot_p99': 0.05} or 'ttft_p99=2s,tpot_p99=50ms'."
        )
    targets = check_slo(_slo(slo))
    cat = load_catalog(files, sets)
    ids = _hardware(cat, hardware)
    report = planner_fleet(
        cat,
        _name(model, "model"),
        _path(workload, "workload", "examples/chat-mix.yaml"),
        targets,
        ids,
        _limits(limits),
        **options,
    )
    return _with_what_if(report, cat)


@_answers("chipwise.planner.lifecycle:plan_lifecycle")
def plan_lifecycle(
    model: str,
    train_tokens: float | str,
    serve_rate: float | str,
    serve_months: float | str = 12.0,
    hardware: Sequence[str] | str = "all",
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """Train on X, serve on Y: the best (train, serve) pair by cost, energy or carbon against one vendor for both,
    both sides priced in `pricing` and `region` as plan_train and plan_serve take them. Counts may be text as on the
    command line ('15T' tokens)."""
    from chipwise.planner.lifecycle import plan_lifecycle as planner_lifecycle
    from chipwise.planner.serving_inputs import LIFECYCLE_SLO, check_slo
    from chipwise.serve.quant import RELEASED
    from chipwise.workload.load import load_of

    _check_options(options, planner_lifecycle)
    counts = {"train_chips": True, "input_tokens": True, "output_tokens": True}
    _read_options(options, planner_lifecycle, counts, ("utilisation",))
    _check_utilisation(options)
    options.setdefault("serve_precision", RELEASED)  # as `chipwise plan lifecycle` takes it
    # text as --slo takes it, or times with units, as plan_serve; the command's targets where none are given
    options["slo"] = check_slo(LIFECYCLE_SLO if options.get("slo") is None else _slo(options["slo"]))
    tokens = float(_required(train_tokens, "train_tokens"))
    if serve_rate is None:
        raise ChipwiseError("serve_rate is None. Fix: give the serving load in requests/s, e.g. 100.")
    rate = load_of(count_value(serve_rate), None, False, flag="serve_").rate  # '5' as plan serve reads a rate
    months = float(_required(serve_months, "serve_months", example="12"))
    cat = load_catalog(files, sets)
    report = planner_lifecycle(cat, _name(model, "model"), tokens, rate, months, _hardware(cat, hardware), **options)
    return _with_what_if(report, cat)


def _overrides(overrides: Any) -> dict[str, float] | None:
    """tco's `overrides`, {name: figure}, each figure a number or text as a count reads ('20k' dollars); owned_tco
    checks its range. A name or figure of another type is one line ('x' and a mapping given as 5 had raised a
    ValueError and a TypeError)."""
    from chipwise.economics.tco import OVERRIDES, PLAUSIBLE

    if overrides is None:
        return None
    if not isinstance(overrides, Mapping):
        raise ChipwiseError(
            f"overrides {overrides!r} is not a mapping of TCO inputs to figures. Fix: give e.g. "
            "{'chip_price_usd': 20000}."
        )
    read: dict[str, float] = {}
    for name, value in overrides.items():
        if not isinstance(name, str) or name not in OVERRIDES:
            raise UnknownNameError(
                "overrides key", str(name), list(OVERRIDES), hint=f"use one of {', '.join(OVERRIDES)}"
            )
        figure = count_value(value)
        if isinstance(figure, bool) or not isinstance(figure, int | float):
            example = PLAUSIBLE[name].example
            raise ChipwiseError(f"overrides['{name}'] {value!r} is not a number. Fix: give e.g. {example}.")
        read[name] = float(figure)
    return read


@_answers("chipwise.economics.tco:owned_tco")
def tco(
    hardware: str,
    region: str | None = None,
    utilisation: NumberIn = 1.0,
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """The owned cost of one chip-hour of a chip or system, every term with its source, and the break-even
    utilisation against renting (as `chipwise tco --json`)."""
    from chipwise.economics.tco import owned_tco, tco_report
    from chipwise.hardware import hardware as hw_view

    _check_options(options, owned_tco, "compare")
    compare = options.pop("compare", "on-demand")
    _text(compare, "compare", optional=False)  # None had raised an AttributeError ('lower')
    _read_options(options, owned_tco, numbers=("pue",))
    if "overrides" in options:
        options["overrides"] = _overrides(options["overrides"])
    _text(region, "region")
    cat = load_catalog(files, sets)
    system = hw_view(cat).system(_name(hardware, "hardware"))
    # None is no utilisation: _number keeps it for the planners (whose None is 'not given'), owned_tco takes a share
    if utilisation is None:
        raise ChipwiseError(
            "utilisation None is not a number. Fix: give the share of hours used, e.g. 0.8 (1.0 the default)."
        )
    owned = owned_tco(cat, system, region, _number(utilisation, "utilisation"), **options)
    return _with_what_if(tco_report(cat, owned, compare), cat)


@_answers()
def claims(
    files: Sequence[str | Path] = (),
    sets: Sequence[str] = (),
    *,
    model: str | None = None,
    seq_len: int | str | None = None,
    precision: str | None = None,
    chips: int | str | None = None,
    tokens: float | str | None = None,
    pricing: str = "on-demand",
    region: str | None = None,
    only: str | Sequence[str] | None = None,
) -> dict[str, Any]:
    """The Trainium3/Trainium4 launch claims, each with its numbers and a verdict (as `chipwise claims --json`), on
    the given workload (`model`, `seq_len`, `precision`, `chips`, `tokens`, `pricing`, `region`: each claim's own
    where None, as the command's options); `only`: these claims alone, as `--claim` ("3", "1a,5" or a list)."""
    from chipwise.planner.claim_runs import SEQ, TOKENS, ClaimWorkload
    from chipwise.planner.claims import check_claims, chosen_claims

    chosen = chosen_claims(only)

    workload = ClaimWorkload(
        model,
        read_count(seq_len, "seq_len", whole=True) or SEQ,
        precision,
        read_count(chips, "chips", whole=True),
        read_count(tokens, "tokens") or TOKENS,
        pricing,
        region,
    )
    cat = load_catalog(files, sets)
    return _with_what_if(check_claims(cat, workload, only=chosen), cat)


@_answers()
def validate(
    path: str | Path, files: Sequence[str | Path] = (), sets: Sequence[str] = (), workers: int | None = None
) -> dict[str, Any]:
    """Predict every row of a ground-truth CSV (training or serving, told apart by its columns) and report the
    errors (as `chipwise validate --json`), a serving file's rows on `workers` processes (default one per CPU;
    copies of this one where it can fork, else one; the report is the same)."""
    from chipwise.sweep.backends import cpu_count
    from chipwise.validation.run import validate_path

    workers = cpu_count() if workers is None else _required(workers, "workers", whole=True, example="2")
    cat = load_catalog(files, sets)
    return _with_what_if(
        validate_path(cat, Path(_path(path, "path", "groundtruth_training.csv")), workers=workers), cat
    )


@_answers()
def model(
    name: str | Path, seq_len: int | str | None = None, files: Sequence[str | Path] = (), sets: Sequence[str] = ()
) -> dict[str, Any]:
    """A model's parameters, FLOPs per token and KV-cache bytes (as `chipwise model show --json`): `name` a preset or
    a config.json's path (a Path too: it had been refused as 'not a name'); `seq_len` None prices FLOPs at 4,096
    tokens or the model's context where shorter, and one past the context is refused; `sets` as for every function
    (a model preset is not a catalog figure, so it changes nothing here; `what_if` names what it changed, as every
    answer's does: the model and catalog answers had none)."""
    from chipwise.workload.presets import load_model, model_summary

    cat = load_catalog(files, sets)
    spec = load_model(cat, _name(name, "model"))
    return _with_what_if(model_summary(spec, read_count(seq_len, "seq_len", whole=True), "seq_len"), cat)


@_answers()
def catalog_list(files: Sequence[str | Path] = (), sets: Sequence[str] = ()) -> dict[str, Any]:
    """Every chip and system of the catalog with its figures, statuses, sources and prices, its fabrics and its
    model presets (as `chipwise catalog list --json`); catalog() gives the Catalog object itself."""
    from chipwise.interfaces.cli.catalog_cmd import list_json

    cat = load_catalog(files, sets)
    return _with_what_if(list_json(cat), cat)


@_answers()
def catalog_show(ident: str, files: Sequence[str | Path] = (), sets: Sequence[str] = ()) -> dict[str, Any]:
    """One chip's, system's or fabric's figures with their statuses and sources, or a chip family's efficiency
    factors with `efficiency.FAMILY` (as `chipwise catalog show ID --json`)."""
    from chipwise.interfaces.cli.catalog_cmd import show_json

    _text(ident, "ident", optional=False)  # None, 5 or ['trn3'] had raised an AttributeError ('strip')
    cat = load_catalog(files, sets)
    return _with_what_if(show_json(cat, ident), cat)


@_answers()
def catalog_engine(
    engine: str, chip: str | None = None, files: Sequence[str | Path] = (), sets: Sequence[str] = ()
) -> dict[str, Any]:
    """Every figure a serving engine is priced with on a chip's family, the level each comes from, and its track
    record there (as `chipwise catalog engine ENGINE --chip ID --json`)."""
    from chipwise.interfaces.cli.catalog_cmd import engine_json

    _text(engine, "engine", optional=False)  # engine=None or 5, chip=5, had raised an AttributeError ('strip')
    _text(chip, "chip")
    cat = load_catalog(files, sets)
    return _with_what_if(engine_json(cat, engine, chip), cat)


@_answers()
def models(files: Sequence[str | Path] = (), sets: Sequence[str] = ()) -> dict[str, Any]:
    """The model presets, each with its id, name, architecture, parameters, layers, aliases and source (as
    `chipwise model list --json`)."""
    from chipwise.workload.presets import preset_summaries

    cat = load_catalog(files, sets)
    return _with_what_if({"models": preset_summaries(cat)}, cat)
