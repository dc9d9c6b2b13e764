"""User-facing errors: one line naming the problem and the fix, never a traceback."""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path


class ChipwiseError(Exception):
    """A problem with the user's input or data. Its message is one line: the problem, then the fix."""

    exit_code = 2


class UnknownNameError(ChipwiseError):
    """A name (chip, system, model, region, ...) that the catalog does not hold."""

    def __init__(self, kind: str, name: object, known: Iterable[str], hint: str = "") -> None:
        name = name if isinstance(name, str) else str(name)  # a Python caller's 5 or None: it had raised AttributeError
        known = sorted(set(known))
        close = difflib.get_close_matches(name.lower(), [k.lower() for k in known], n=3, cutoff=0.5)
        lookup = {k.lower(): k for k in known}
        suggestion = f" Did you mean {', '.join(repr(lookup[c]) for c in close)}?" if close else ""
        fix = hint or f"run 'chipwise catalog list' to see the {_plural(kind)} the catalog holds"
        super().__init__(f"unknown {kind} {quoted(name)}.{suggestion} Fix: {fix}.")
        self.name = name
        self.suggestions = [lookup[c] for c in close]


#: the longest name a message quotes whole; a longer one is quoted by its first SHOWN characters and its length
LONGEST_QUOTED = 100
SHOWN = 60


def quoted(name: str) -> str:
    """`name` as a message quotes it ('trn3'): a model name of 900,000 characters had been echoed whole, a one-line
    error (and the web page's answer) of 900,128 bytes; it now reads its first 60 characters, 'xx...x'... (900,000
    characters)."""
    if len(name) <= LONGEST_QUOTED:
        return f"'{name}'"
    return f"'{name[:SHOWN]}'... ({len(name):,} characters)"


def shown_value(value: object) -> str:
    """A value as an error line quotes it (its repr), cut short where long: a list of thousands had filled the
    screen."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def one_of(value: str, choices: Sequence[str], kind: str) -> str:
    """`value` where it is one of a closed set's `choices` (a pricing mode, an objective, a recovery, ...), else one
    line listing them in their order, with the near matches an id's look-up offers: '--objective tim' had been told
    the list but not 'time'."""
    if value not in choices:
        raise UnknownNameError(kind, value, choices, hint=f"use one of {', '.join(choices)}")
    return value


def _plural(kind: str) -> str:
    """Every alternative of a kind in the plural: 'chip, system or fabric' -> 'chips, systems or fabrics' (an 's'
    on the whole had read 'chip, system or fabrics')."""

    def plural(word: str) -> str:
        return word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"

    return re.sub(r"\w+(?=,| or |$)", lambda m: plural(m[0]), kind)


class InfeasibleError(ChipwiseError):
    """A workload or plan that cannot run on the hardware asked for (does not fit, no valid plan)."""

    #: plans or replica shapes priced before the search gave up (a search reports how many it looked at)
    searched: int = 0
    #: what the search estimated before it gave up (a serving search's per-shape estimates), if anything
    estimate: object | None = None


def long_number(exc: Exception, where: str) -> ChipwiseError | None:
    """The one line for text (`where`: what it is) holding an integer past Python's limit on digits, whose own
    ValueError advises sys.set_int_max_str_digits; None for any other error."""
    if "integer string conversion" not in str(exc):
        return None
    limit = sys.get_int_max_str_digits()
    return ChipwiseError(f"{where} holds a number of more than {limit:,} digits. Fix: give a realistic value.")


def user_file(path: str | Path, what: str, fix: str, folder_fix: str = "") -> Path:
    """`path` where it names a file, else one line: an empty path, a folder, or nothing there, each named as such
    (a folder had read as 'does not exist', an empty --workload as "cannot read '.'"). `what` names the file
    ('sweep file'), `fix` what to give where there is none ('check the path'), `folder_fix` what to give for a
    folder (default: a `what` in it)."""
    if not str(path).strip():
        raise ChipwiseError(f"the {what}'s path is empty. Fix: {fix}.")
    p = Path(path)
    if p.is_dir():
        raise ChipwiseError(f"{what} '{path}' is a folder. Fix: {folder_fix or f'name a {what} in it'}.")
    if not p.exists():
        raise ChipwiseError(f"{what} '{path}' does not exist. Fix: {fix}.")
    return p


def read_text(path: str | Path, what: str, fix: str = "save it as UTF-8 text", encoding: str = "utf-8") -> str:
    """The text of file `path`, or one line naming it (`what`: 'catalog file') where it is not UTF-8 text (`fix`:
    what to do then) or cannot be read (a binary file had read "cannot read an input file: not UTF-8 text", with no
    name). `encoding` 'utf-8-sig' drops a spreadsheet's byte-order mark."""
    try:
        return Path(path).read_text(encoding=encoding)
    except UnicodeDecodeError:
        raise ChipwiseError(f"{what} '{path}' is not UTF-8 text. Fix: {fix}.") from None
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise ChipwiseError(f"cannot read {what} '{path}': {why}. Fix: check the path and its permissions.") from None
