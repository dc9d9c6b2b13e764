"""The `chipwise` command: sub-commands, the version flag, and one-line errors with exit code 2."""

from __future__ import annotations

import errno
import functools
import inspect
import io
import os
import sys
from typing import Annotated, Any, get_args, get_origin

import typer
import typer.main
from rich.markup import escape

from chipwise import __version__
from chipwise.errors import ChipwiseError
from chipwise.interfaces.cli import (
    catalog_cmd,
    claims_cmd,
    model_cmd,
    plan_cmd,
    predict_cmd,
    sensitivity_cmd,
    sweep_cmd,
    tco_cmd,
    web_cmd,
)
from chipwise.interfaces.cli.common import NO_OPTION_EXIT, PIPE_CLOSED_EXIT, close_stdout, err_console, fit_width

#: the help options of every command
HELP_OPTIONS = ["-h", "--help"]

app = typer.Typer(
    name="chipwise",
    help="Where does an LLM workload run best? Time, plan, dollars, energy and carbon across AI accelerator fleets.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # inherited by every sub-command's context
    context_settings={"help_option_names": HELP_OPTIONS},
)
app.add_typer(catalog_cmd.app, name="catalog")
app.add_typer(model_cmd.app, name="model")
app.add_typer(plan_cmd.app, name="plan")
app.command("predict")(predict_cmd.predict)
app.command("sensitivity")(sensitivity_cmd.sensitivity_cmd)
app.command("tco")(tco_cmd.tco)
app.command("claims")(claims_cmd.claims)
app.command("web")(web_cmd.web)
app.add_typer(sweep_cmd.app, name="sweep")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"chipwise {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """chipwise predicts training and serving time, plans, cost, energy and carbon on AI accelerator fleets."""


def run(argv: list[str] | None = None) -> int:
    """Run the CLI; bad input prints one line naming the problem and the fix, and returns 2."""
    fit_width()
    command = _command()
    try:
        _refuse_repeated_options(command, sys.argv[1:] if argv is None else argv)
        rv = command(args=argv, standalone_mode=False, prog_name="chipwise")
    except ChipwiseError as exc:
        # a search with no answer (exit 1: plan hetero, fleet, lifecycle) is told as plan train's and plan serve's
        # are, 'not ranked:'; bad input (exit 2) as an error
        label = "[bold yellow]not ranked:[/]" if exc.exit_code == NO_OPTION_EXIT else "[bold red]error:[/]"
        err_console.print(f"{label} {escape(str(exc))}", highlight=False, soft_wrap=True)
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("interrupted")
        return INTERRUPTED
    except BrokenPipeError:  # stdout's reader stopped (`| head`): quietly, not 1 (nothing ranked) nor 'cannot read'
        close_stdout()
        return PIPE_CLOSED_EXIT
    except SystemExit as exc:
        # the same, caught before us: Click's main ends a write to a closed pipe (a --json print) with exit 1, and
        # Rich's console (--help's) too, each raised while handling the EPIPE
        if not _pipe_closed(exc):
            raise
        close_stdout()
        return PIPE_CLOSED_EXIT
    except (OSError, UnicodeDecodeError) as exc:  # a file named on the command line that cannot be read as text
        filename = _unread_file(exc)
        name = f"'{filename}'" if filename else "an input file"
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        err_console.print(
            f"[bold red]error:[/] cannot read {escape(name)}: {escape(why)}. "
            "Fix: give the path of a readable text file (YAML, JSON or CSV).",
            highlight=False,
            soft_wrap=True,
        )
        return 2
    except Exception as exc:
        if _is_usage_error(exc):
            return _report_usage_error(exc, command, sys.argv[1:] if argv is None else argv)
        # a bug, not bad input: still one line unless debugging
        if os.environ.get("CHIPWISE_DEBUG"):
            raise
        err_console.print(
            f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))}. "
            "Fix: rerun with CHIPWISE_DEBUG=1 and report it.",
            highlight=False,
            soft_wrap=True,
        )
        return 1
    if rv == INTERRUPTED:  # Typer turns Ctrl-C into a return of 130 (its Exit): said as one caught here is
        err_console.print("interrupted")
    return rv if isinstance(rv, int) else 0


#: the exit code of a run stopped by Ctrl-C (128 + SIGINT, as a shell reports it)
INTERRUPTED = 130


@functools.cache
def _command() -> Any:
    """The Click command tree, its values named (_name_values), built once a process on first use: not at import,
    since __main__ registers `validate` first (about 40 ms a build, which every test's run() had paid)."""
    command = typer.main.get_command(app)
    _name_values(command)
    _one_line_summaries(command)
    return command


def _one_line_summaries(command: Any) -> None:
    """Each sub-command's summary in its group's --help list as one line of text, wrapped to the width: Typer's list
    keeps the line breaks of a docstring's first paragraph, and tco's and validate's had broken mid-sentence at 100
    columns ('... depreciated, operations,' then 'colocation and energy x PUE ...'; '... by chip and by' then
    'source family.'), catalog show's and engine's too. A command's own --help joins them already."""
    for sub in getattr(command, "commands", {}).values():
        first = inspect.cleandoc(sub.help or "").split("\n\n")[0]
        if sub.short_help is None and "\n" in first:
            sub.short_help = " ".join(first.split())
        _one_line_summaries(sub)


#: what --help names an option's value by, from its type, where the option names none itself: Typer 0.29's own,
#: '<int range> [1<=x<=1000000]' or '<list[Path]>', took so wide a column that at 80 columns the option names were cut
_VALUE_NAMES = {"int": "INT", "integer": "INT", "float": "FLOAT", "str": "TEXT", "text": "TEXT", "path": "FILE"}


def _name_values(command: Any) -> None:
    """Give every option and argument of `command` and its sub-commands a short upper-case name for its value in
    --help (a flag none: it takes no value, and Typer 0.29 had shown '--json <bool>'), where it was not given one."""
    # --help's own option is made on first use (Click keeps it once made)
    help_option = command.get_help_option(command.context_class(command, help_option_names=HELP_OPTIONS))
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if param.metavar is None:
            param.metavar = _value_name(param)
    for sub in getattr(command, "commands", {}).values():
        _name_values(sub)


def _value_name(param: Any) -> str:
    if param.param_type_name == "argument":
        return str(param.name).upper()  # SCENARIO, STORE, SWEEP_FILE
    if getattr(param, "is_flag", False):
        return ""
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None:  # the Click types of Typer before 0.2x: INTEGER, PATH, ...
        kind = str(getattr(param.type, "name", ""))
    else:  # a repeatable option's list[X] takes one X at a time
        annotation = descriptor.annotation
        element = get_args(annotation)[0] if get_origin(annotation) is list else annotation
        kind = getattr(element, "__name__", str(element))
    return _VALUE_NAMES.get(kind.lower(), kind.upper())


def _pipe_closed(exc: BaseException) -> bool:
    """Whether `exc` was raised while handling a write to a pipe whose reader had gone (errno EPIPE)."""
    cause = exc.__context__
    while cause is not None:
        if isinstance(cause, OSError) and cause.errno == errno.EPIPE:
            return True
        cause = cause.__context__
    return False


def _unread_file(exc: OSError | UnicodeDecodeError) -> str | None:
    """The file an error reading one names: an OSError's own filename, or, for a UnicodeDecodeError (which names
    none: a binary model config had read "cannot read an input file"), the file open in the frame that was reading
    it, the innermost below the codec's (pathlib's read_text holds it, as does a `with open(...) as f` whose f.read()
    failed, or json.load's fp); None where that frame holds no file (bytes decoded in memory)."""
    filename = getattr(exc, "filename", None)
    if filename:
        return str(filename)
    reading = None
    tb = exc.__traceback__
    while tb is not None:
        if "codecs" not in tb.tb_frame.f_code.co_filename:
            reading = tb.tb_frame
        tb = tb.tb_next
    for value in reading.f_locals.values() if reading is not None else ():
        name = getattr(value, "name", None) if isinstance(value, io.TextIOBase) else None
        if isinstance(name, str):
            return name
    return None


def _is_usage_error(exc: Exception) -> bool:
    """Command-line parsing errors of the underlying Click (vendored by newer Typer): exit code 2."""
    return getattr(exc, "exit_code", None) == 2 and hasattr(exc, "format_message")


def _report_usage_error(exc: Exception, command: Any, argv: list[str]) -> int:
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError":  # the help was printed already
        return 0
    path = ctx.command_path if ctx is not None else _command_path(command, argv)
    message = " ".join(str(exc.format_message()).split())  # type: ignore[attr-defined]
    message = message if message.endswith(("?", "!")) else message.rstrip(".") + "."
    err_console.print(
        f"[bold red]error:[/] {escape(message)} Fix: run '{path} --help'.", highlight=False, soft_wrap=True
    )
    return 2


def _command_path(command: Any, argv: list[str]) -> str:
    """The command an argument list names ('chipwise model list'), for an error Click raised with no context
    ('--json=true' takes no value) that had pointed to 'chipwise --help'."""
    path = ["chipwise"]
    for word in argv:
        subs = getattr(command, "commands", None)
        if word.startswith("-"):
            continue
        if not subs or word not in subs:
            break
        command = subs[word]
        path.append(word)
    return " ".join(path)


def _refuse_repeated_options(command: Any, args: list[str]) -> None:
    """One line for an option of one value given twice: Click keeps the last, so `--hardware h100-sxm --hardware
    h200` had ranked the h200 alone, and `--rate 2 --rate 3` planned for 3 req/s, without a word. Options that add
    up (--set, --slo, --catalog) and flags are let be."""
    leaf = command
    for arg in args:
        if arg == "--":
            break
        commands = getattr(leaf, "commands", {})  # a group's sub-commands (Typer's groups are Click's by shape)
        if not arg.startswith("-") and arg in commands:
            leaf = commands[arg]
    for param in leaf.params:
        if param.param_type_name != "option" or param.multiple or param.is_flag or param.count:
            continue
        given = [a for a in args for opt in param.opts if a == opt or a.startswith(f"{opt}=")]
        if len(given) > 1:
            name = max(param.opts, key=len)
            listed = ", a comma-separated list for several" if name == "--hardware" else ""
            raise ChipwiseError(
                f"{name} is given {len(given)} times; it takes one value, and all but the last would be ignored. "
                f"Fix: give it once{listed}."
            )


def main() -> None:
    sys.exit(run())
