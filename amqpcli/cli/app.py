"""The `amqp` command: the Typer app, global options, and the one place errors become exits.

Every subcommand lives in its own module under `amqpcli/cli/` and registers itself on `app`
when imported (`amqpcli/cli/commands.py`: a run imports only the command it names, the
top-level help none); the modules stay thin (parse options, call the engine, render).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any

import typer

from amqpcli import __version__
from amqpcli.cli.coerce import install as _plain_values
from amqpcli.errors import Exit, UserError, cut_middle

# Plain option values without pydantic (amqpcli/cli/coerce.py).
_plain_values()

HELP_OPTIONS = ("-h", "--help")

_state = {"debug": False, "stdout_gone": False, "stderr_failed": False}


def debug_enabled() -> bool:
    return _state["debug"]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"amqp {__version__}")
        raise typer.Exit()


def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    _state["debug"] = debug or bool(os.environ.get("AMQP_DEBUG"))


def value_name(param: Any) -> str:
    """What help and the man pages call a parameter's value: its metavar if it has one,
    else a choice's values ([a|b]) or the type's name as Click writes it (TEXT, INTEGER,
    FLOAT, PATH) — not Typer's Python type names (<str>, <list[int]>)."""
    if param.metavar:
        return str(param.metavar)
    td = param.type_descriptor
    if td.is_choice:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in td.choices) + "]"
    args = getattr(td.annotation, "__args__", ())
    base = args[0] if td.is_list and args else td.annotation
    if td.is_path or getattr(base, "__name__", "") == "Path":
        return "PATH"
    return {int: "INTEGER", float: "FLOAT", str: "TEXT", bool: "BOOLEAN"}.get(base, "VALUE")


def _examples_kept_whole(epilog: str) -> str:
    """An epilog whose examples (the paragraphs written indented: commands) Click leaves
    on one line each, at one indent: wrapped to the terminal, they broke when copied."""
    return "\n\n".join("\b\n  " + para.strip() if para.startswith("  ") else para
                       for para in epilog.split("\n\n"))  # (\b: Click's "as it is")


class _Group(typer.core.TyperGroup):
    """The `amqp` group: its commands' help names values as `value_name` does (an argument
    by its name: FILES...)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for command in self.commands.values():
            if command.epilog:
                command.epilog = _examples_kept_whole(command.epilog)
            for p in command.params:
                if p.param_type_name == "argument":
                    p.metavar = (p.metavar or p.name or "").upper()
                    p.display_type_rich = lambda ctx: None  # type: ignore[attr-defined] # (the name says it)
                elif not getattr(p, "is_flag", False) and not getattr(p, "count", False):
                    p.metavar = value_name(p)


def _new_app() -> typer.Typer:
    """The `amqp` group with its root options and no commands yet."""
    new = typer.Typer(
        name="amqp",
        cls=_Group,
        help="A command-line toolkit for AMQP 1.0: send, receive, browse, decode, dissect captures.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Help text is plain text: no Rich markup, so "amqp:link:detach-forced" is no emoji and
        # "[user@]host" keeps its brackets (and --help need not load Rich).
        rich_markup_mode=None,
        context_settings={"help_option_names": list(HELP_OPTIONS)},
    )
    new.callback()(_root)
    return new


app = _new_app()


def _register(command: str | None = None) -> None:
    """Add the subcommand `command` to `app`, or every subcommand (None, or no command's
    name)."""
    from amqpcli.cli.commands import register

    register(command)


# The root options that take no value: what `_command_named` may step over.
ROOT_FLAGS = frozenset({"--debug", "--version"})


def _completing() -> bool:
    """Click is asked to complete a word for the shell (its _PROG_COMPLETE variable)."""
    return any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)


def _command_named(args: list[str]) -> str | None:
    """The subcommand `args` run, if it can be told without parsing them: the first
    argument, after root flags. None for anything else (help, no command, `--`, an option
    Click must judge) and while the shell completes a word: then every command is
    registered."""
    if _completing():
        return None
    for arg in args:
        if arg in ROOT_FLAGS:
            continue
        return None if arg.startswith("-") else arg
    return None


def _runs_no_command(args: list[str]) -> bool:
    """True if `args` end before any command is looked up: nothing (help), root flags only
    (--version, or Click's "Missing command"), or the root help option before anything
    but root flags."""
    if _completing():
        return False
    for arg in args:
        if arg in ROOT_FLAGS:
            continue
        return arg in HELP_OPTIONS
    return True


def _not_imported() -> None:
    raise AssertionError("a command of amqp's help listing was run")


def _listing() -> typer.Typer:
    """The `amqp` group with every command as its name and help text only (from
    amqpcli/cli/commands.py): all that the top-level help shows of them, without importing
    and building a single command."""
    from amqpcli.cli.commands import COMMANDS

    listing = _new_app()
    for name, command in COMMANDS.items():
        listing.command(name, help=command.help)(_not_imported)
    return listing


# Hidden: the shell completion scripts call `amqp --list-profiles` on TAB, so it answers
# before every subcommand is imported (amqpcli/config.py).
LIST_PROFILES = "--list-profiles"


def _one_line(text: str) -> str:
    """An error's text as one harmless line: errors name files and values as given, which
    may hold control characters (a file named with an escape sequence)."""
    if text.isprintable():
        return text
    from amqpcli.render.types import printable

    return printable(text)


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


DEBUG_FLAG = "--debug"


def _lift_debug(args: list[str]) -> tuple[list[str], bool]:
    """`args` without every `--debug` before a `--`, and whether there was one: the flag
    works anywhere on the command line (`amqp send URL x --debug`), not only before the
    subcommand as Click would have it. After `--` it is an argument like any other."""
    rest: list[str] = []
    found = False
    for i, arg in enumerate(args):
        if arg == "--":
            rest.extend(args[i:])
            break
        if arg == DEBUG_FLAG:
            found = True
        else:
            rest.append(arg)
    return rest, found


class StdoutWriteError(OSError):
    """Writing (or flushing) standard output failed: a full disk, an I/O error."""


class _StdoutFile(io.FileIO):
    """File descriptor 1 under `sys.stdout`, whose write errors say they are stdout's, so
    `main` can tell "cannot write standard output" from a bug. A closed pipe stays a
    BrokenPipeError (quiet, like `| head`)."""

    def write(self, b: Any) -> int | None:  # type: ignore[override]
        try:
            return super().write(b)
        except BrokenPipeError:
            _state["stdout_gone"] = True  # (Typer turns it into exit 1: see `main`)
            raise
        except OSError as e:
            raise StdoutWriteError(e.errno, e.strerror) from None


def _guard_stdout() -> None:
    """Route the process's standard output through `_StdoutFile` (only the real one: a
    test's captured stdout is left alone), writing what it cannot encode escaped."""
    out = sys.stdout
    if out is not sys.__stdout__ or not isinstance(out, io.TextIOWrapper):
        return
    try:
        if out.fileno() != 1:
            return
        out.flush()
        line_buffering = out.line_buffering
        raw = _StdoutFile(1, "w", closefd=False)
        buffered = io.BufferedWriter(raw)
        # Text from damaged input (a symbol with bytes that are not UTF-8, kept as lone
        # surrogates) is written escaped (\udc80): never raw bytes that are no UTF-8, as
        # surrogateescape would, nor an encoding error, as strict would.
        sys.stdout = io.TextIOWrapper(
            buffered, encoding=out.encoding, errors="backslashreplace", newline=None,
            line_buffering=line_buffering, write_through=out.write_through,
        )
    except (OSError, ValueError):
        return


class _StderrFile(io.FileIO):
    """File descriptor 2 under `sys.stderr`, whose write errors are dropped: stderr holds
    diagnostics only (errors, warnings, summaries, the trace), and one that cannot be
    written (full, an I/O error, its reader gone) loses those lines, never the run's own
    exit code. `stderr_failed` tells that a write was lost."""

    def write(self, b: Any) -> int | None:  # type: ignore[override]
        try:
            return super().write(b)
        except OSError:
            _state["stderr_failed"] = True
            return len(b)


class _NoStderr(io.TextIOBase):
    """`sys.stderr` for a process started with standard error closed (`2>&-`): everything
    written is dropped (Python leaves sys.stderr None, and print(file=None) would write
    errors into standard output)."""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        _state["stderr_failed"] = True
        return len(s)


def stderr_failed() -> bool:
    """A write to standard error was lost (see `_guard_stderr`)."""
    return _state["stderr_failed"]


def _guard_stderr() -> None:
    """Make the process's standard error drop what it cannot write, so that no error,
    warning or summary line turns a run into an "internal error" (exit 1) or changes its
    exit code. Only the real one: a test's captured stderr is left alone."""
    err = sys.stderr
    if err is None:
        sys.stderr = _NoStderr()
        return
    if err is not sys.__stderr__ or not isinstance(err, io.TextIOWrapper):
        return
    try:
        if err.fileno() != 2:
            return
        try:
            err.flush()
        except OSError:
            pass
        raw = _StderrFile(2, "w", closefd=False)
        sys.stderr = io.TextIOWrapper(
            io.BufferedWriter(raw), encoding=err.encoding, errors=err.errors,
            newline=None, line_buffering=True, write_through=True,
        )
    except (OSError, ValueError):
        return


# What a value that typer could not convert is, in the words of the other options' errors:
# typer converts through pydantic, whose text ("Input should be a valid integer, unable
# to parse string as an integer") neither quotes the value nor reads as ours.
_CONVERSION_WORDS = {
    "int_parsing": "is not an integer",
    "int_from_float": "is not an integer",
    "int_type": "is not an integer",
    "float_parsing": "is not a number",
    "float_type": "is not a number",
    "bool_parsing": "is not true or false",
}


def _plain_conversion_error(e: Exception) -> None:
    """Reword a typer conversion error (a BadParameter caused by pydantic) in place."""
    errors = getattr(e.__cause__, "errors", None)
    if not callable(errors) or not hasattr(e, "message"):
        return
    try:
        first = errors()[0]
        words = _CONVERSION_WORDS[first["type"]]
    except (LookupError, TypeError):
        return
    value = first.get("input")
    e.message = f"{cut_middle(value if isinstance(value, str) else str(value))!r} {words}"


def _quiet_stdout() -> None:
    """Point fd 1 at /dev/null and drop what is buffered for it, so the interpreter's
    final flush cannot fail again (and print "Exception ignored")."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    except OSError:
        pass


def _flush_stdout() -> None:
    """Flush standard output inside `main`'s error handling (not at interpreter exit,
    where a failure would be a stray message and a wrong exit status)."""
    if sys.stdout is not None:
        sys.stdout.flush()


@contextlib.contextmanager
def _only_command(name: str | None) -> Iterator[None]:
    """While a run of command `name` is parsed, the app holds that command alone, as a
    process that imported only its module does, even when others are registered (an
    earlier run in the same process: Typer would build every command's options first)."""
    from amqpcli.cli.commands import COMMANDS

    saved = app.registered_commands
    if name in COMMANDS:
        app.registered_commands = [c for c in saved if _command_name(c) == name] or saved
    try:
        yield
    finally:
        app.registered_commands = saved


def _command_name(info: Any) -> str:
    return info.name or info.callback.__name__.replace("_", "-")


def _register_url_secrets(args: list[str]) -> None:
    """The passwords of the URLs on the command line (and in $AMQP_URL) are secrets of the
    run from the start: an error quoting an argument as it was typed masks them, whatever
    characters they hold."""
    texts = [a for a in args if "://" in a]
    env = os.environ.get("AMQP_URL")
    if env and "://" in env:
        texts.append(env)
    if not texts:
        return
    from amqpcli.errors import register_secret
    from amqpcli.net.url import url_passwords

    for text in texts:
        try:
            for password in url_passwords(text):
                register_secret(password)
        except ValueError:  # (text no URL reading could make sense of: nothing to mask)
            continue


def _masked(text: str) -> str:
    """An error line with the password of any URL in it masked (usage errors repeat the
    arguments as typed: a URL given where a number or a file was expected), and the run's
    own password wherever it is."""
    from amqpcli.errors import mask_secrets

    text = mask_secrets(text)  # (the run's password, where a peer's text repeats it)
    if ":/" not in text:
        return text
    from amqpcli.net.url import mask_urls

    return mask_urls(text)


def _masked_traceback(e: BaseException) -> str:
    """`e`'s traceback as --debug shows it: its text, and every text of the exceptions
    chained to it, quote what was typed (a URL given as a file) or what a peer sent, so
    the secrets are masked in it as in the one-line error."""
    import traceback

    return _masked("".join(traceback.format_exception(e)))


def _print_traceback(e: BaseException) -> None:
    sys.stderr.write(_masked_traceback(e))


def _masked_excepthook(kind: type[BaseException], e: BaseException, tb: Any) -> None:
    """The interpreter's last word on an exception --debug lets through: its traceback,
    masked."""
    sys.stderr.write(_masked_traceback(e.with_traceback(tb)))


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    args, debug = _lift_debug(args)
    if debug:
        _state["debug"] = True
        # The root option sees it too (the flag is taken out of the command line).
        args = [DEBUG_FLAG, *args]
    _guard_stderr()
    _register_url_secrets(args)
    if sys.stdout is None:
        # Started with standard output closed (`amqp ... >&-`).
        print("amqp: error: cannot write standard output: it is closed", file=sys.stderr)
        sys.exit(int(Exit.USAGE))
    _guard_stdout()
    if args == [LIST_PROFILES]:
        from amqpcli.config import print_profile_names

        print_profile_names()
        return
    target = app
    named: str | None = None
    if _runs_no_command(args):
        target = _listing()
    else:
        # Only the command this run names (Click's errors still see every one).
        named = _command_named(args)
        _register(named)
    # A service manager or `kill` stops long runs (serve, proxy, recv) with SIGTERM: close
    # links and recordings as Ctrl-C does, instead of dying mid-write.
    signal.signal(signal.SIGTERM, _terminate)
    # A closed terminal (SIGHUP) ends a run the same way, so that what it started (a live
    # capture's processes) is ended too; unless it is ignored (nohup).
    if signal.getsignal(signal.SIGHUP) is signal.SIG_DFL:
        signal.signal(signal.SIGHUP, _terminate)
    try:
        try:
            with _only_command(named):
                rc = target(args=args, standalone_mode=False)
        finally:
            # What is still buffered must reach stdout while its errors can be reported
            # (a usage error's exit included).
            _flush_stdout()
        # Without standalone mode Typer returns a typer.Exit's code (130 after Ctrl-C)
        # instead of exiting with it.
        if isinstance(rc, int) and rc:
            if rc == Exit.INTERRUPTED:
                print("amqp: interrupted", file=sys.stderr)
            sys.exit(rc)
    except UserError as e:
        if _state["debug"]:
            # the traceback too, but the same exit code: scripts see no difference
            _print_traceback(e)
        print(f"amqp: error: {_masked(_one_line(str(e)))}", file=sys.stderr)
        sys.exit(int(e.code))
    except KeyboardInterrupt:
        print("amqp: interrupted", file=sys.stderr)
        sys.exit(int(Exit.INTERRUPTED))
    except BrokenPipeError:
        # Reader went away (e.g. `amqp ... | head`): not an error worth a word.
        # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
        _quiet_stdout()
        sys.exit(0)
    except StdoutWriteError as e:
        _quiet_stdout()
        if _state["debug"]:
            _print_traceback(e)
        print(f"amqp: error: cannot write standard output: {e.strerror or e}", file=sys.stderr)
        sys.exit(int(Exit.USAGE))
    except SystemExit as e:
        if e.code == 1 and _state["stdout_gone"]:
            # Typer catches a BrokenPipeError itself and exits 1, the code of a bug: a
            # reader that went away is the quiet end below.
            _quiet_stdout()
            sys.exit(0)
        raise
    except Exception as e:  # click usage errors and bugs
        try:
            import click
        except ModuleNotFoundError:  # newer typer releases vendor click as typer._click
            from typer import _click as click  # type: ignore[no-redef]

        if isinstance(e, click.exceptions.ClickException):
            # one line, as every other error: what is wrong, and where help is
            ctx = getattr(e, "ctx", None)
            where = f" (amqp {ctx.info_name} --help)" if (
                ctx is not None and ctx.parent is not None) else " (amqp --help)"
            if not isinstance(e, click.exceptions.UsageError):
                where = ""
            _plain_conversion_error(e)
            text = _masked(" ".join(e.format_message().split()))
            print(f"amqp: error: {text}{where}", file=sys.stderr)
            sys.exit(e.exit_code)
        abort = getattr(click.exceptions, "Abort", None)  # absent from typer's vendored click
        if abort is not None and isinstance(e, abort):
            print("amqp: interrupted", file=sys.stderr)
            sys.exit(int(Exit.INTERRUPTED))
        if _state["debug"]:
            # (the interpreter prints it, through the hook that masks it)
            sys.excepthook = _masked_excepthook
            raise
        print(f"amqp: internal error: {type(e).__name__}: {_masked(_one_line(str(e)))} "
              "(rerun with --debug)",
              file=sys.stderr)
        sys.exit(int(Exit.FAILURE))
