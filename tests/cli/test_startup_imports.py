"""`amqp` starts without the heavy stacks: registering every subcommand, `amqp --help`,
`amqp COMMAND --help` and `amqp decode` import typer and option declarations, not the
engine, the net layer, the dissect pipeline, textual, pyspark or pyarrow, nor pydantic
(amqpcli/cli/coerce.py). Help imports neither the codec nor render nor the config file
reader. A run imports the module of the command it names and no other command's; the
top-level help imports none (it lists amqpcli/cli/commands.py's table, and says exactly
what the app with every command registered says).

A command module imports those inside its command function (or a helper it calls); a
top-level import of one of them fails here, naming the module and who imported it.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from amqpcli.cli.app import (
    ROOT_FLAGS,
    _command_named,
    _register,
    _runs_no_command,
    app,
)
from amqpcli.cli.commands import COMMANDS
from tests.paths import REPO_ROOT

# Packages (and their submodules) that must not be loaded at start.
HEAVY = (
    "textual",
    "pyspark",
    "pyarrow",
    "proton",
    "asyncio",
    "amqpcli.engine",
    "amqpcli.net",
    "amqpcli.dissect",
    "amqpcli.pipeline",
    "amqpcli.capture",
    "amqpcli.amqp010",
    "amqpcli.peer",
    "amqpcli.proxy",
    "amqpcli.tui",
    # Typer converts values through pydantic, whose plugin loader reads importlib.metadata;
    # amqp's plain values are converted without it.
    "pydantic",
    "pydantic_core",
    "typer._adapters",
    "importlib.metadata",
)

# Not for help: what only running a command needs.
RUN_ONLY = (
    "amqpcli.codec",
    "amqpcli.render",
    "amqpcli.config",
    "amqpcli.cli.decode_input",
)

EXAMPLE_CAPTURE = "amqpcli/examples/serve-session.pcapng"

REGISTER = (
    "import sys; import amqpcli.cli.app as a; a._register(); "
    "print(sorted(m for m in sys.modules))"
)

# Runs main() with ARGV, then prints the loaded modules as JSON on stderr (stdout is the
# command's own output).
RUN_MAIN = """
import json, sys
from amqpcli.cli.app import main
try:
    main(ARGV)
except SystemExit as e:
    if e.code not in (0, None):
        raise
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def heavy_in(modules: list[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in heavy))


def command_modules(modules: list[str]) -> list[str]:
    names = {f"amqpcli.cli.{c.module}" for c in COMMANDS.values()}
    return sorted(m for m in modules if m in names)


def _run(code: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO_ROOT, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_heavy_in_matches_packages_and_submodules_only() -> None:
    assert heavy_in(["amqpcli.net", "amqpcli.net.client", "asyncio.events", "typer",
                     "amqpcli.network", "amqpcli.cli.tui", "textual"]) == [
        "amqpcli.net", "amqpcli.net.client", "asyncio.events", "textual"]


def test_registering_every_subcommand_loads_no_heavy_module() -> None:
    proc = _run(REGISTER)
    modules = ast.literal_eval(proc.stdout.strip())
    assert "amqpcli.cli.pcap_dump" in modules and "amqpcli.cli.tui" in modules  # registered
    assert heavy_in(modules) == [], (
        "imported when amqp starts; import these inside the command function instead")
    assert heavy_in(modules, RUN_ONLY) == [], "imported for help; import them when running"


def _modules_after(argv: list[str]) -> list[str]:
    proc = _run(RUN_MAIN.replace("ARGV", repr(argv)))
    assert proc.stdout  # help, the decoded tree or the frames were printed
    return json.loads(proc.stderr.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("argv", [
    ["--help"],
    ["send", "--help"],
    ["recv", "--help"],
    ["request", "--help"],
    ["pcap-dump", "--help"],
    ["decode", "--example", "message"],
], ids=" ".join)
def test_command_loads_no_heavy_module(argv: list[str]) -> None:
    modules = _modules_after(argv)
    assert heavy_in(modules) == []
    if "--help" in argv:
        assert heavy_in(modules, RUN_ONLY) == []


@pytest.mark.parametrize(("argv", "expected"), [
    (["--help"], []),  # the listing: commands.COMMANDS
    (["--debug", "-h", "send"], []),
    (["send", "--help"], ["amqpcli.cli.send"]),
    (["--debug", "tui", "--help"], ["amqpcli.cli.tui"]),
    (["browse", "--help"], ["amqpcli.cli.browse", "amqpcli.cli.recv"]),  # browse uses recv's
    # request takes send's message options and prints replies as recv prints messages
    (["request", "--help"], ["amqpcli.cli.recv", "amqpcli.cli.request", "amqpcli.cli.send"]),
    (["decode", "--example", "message"], ["amqpcli.cli.decode"]),
    (["pcap-dump", EXAMPLE_CAPTURE, "--frames-only"], ["amqpcli.cli.pcap_dump"]),
], ids=["help", "debug-help", "send", "tui", "browse", "request", "decode", "pcap-dump"])
def test_a_run_imports_only_its_own_command(argv: list[str], expected: list[str]) -> None:
    assert command_modules(_modules_after(argv)) == expected


def test_pcap_dump_run_loads_neither_pydantic_nor_the_client_stack() -> None:
    modules = _modules_after(["pcap-dump", EXAMPLE_CAPTURE, "--frames-only"])
    assert heavy_in(modules, ("pydantic", "typer._adapters", "importlib.metadata")) == []
    assert heavy_in(modules, ("asyncio", "textual", "pyarrow", "pyspark", "amqpcli.net")) == []


@pytest.mark.parametrize(("args", "name"), [
    (["send", "amqp://h/q", "--help"], "send"),
    (["--debug", "pcap-dump", "x.pcap"], "pcap-dump"),
    (["--version", "--debug", "recv"], "recv"),
    (["frob"], "frob"),  # no such command: register() registers all, Click says so
    ([], None),
    (["--help"], None),
    (["-h", "send"], None),  # the top-level help, listing every command
    (["--debug", "--help", "send"], None),
    (["--", "send"], None),
    (["--debug=1", "send"], None),
    (["-x", "send"], None),
])
def test_command_named(args: list[str], name: str | None) -> None:
    assert _command_named(args) == name


@pytest.mark.parametrize(("args", "none"), [
    ([], True),
    (["--help"], True),
    (["-h", "send"], True),
    (["--debug", "--help"], True),
    (["--version"], True),
    (["--debug"], True),  # Click's "Missing command."
    (["send", "--help"], False),
    (["frob"], False),  # Click looks it up, and suggests a command
    (["--", "--help"], False),
    (["--bogus", "--help"], False),
])
def test_runs_no_command(args: list[str], none: bool) -> None:
    assert _runs_no_command(args) is none


def test_while_the_shell_completes_every_command_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_AMQP_COMPLETE", "bash_complete")
    assert _command_named(["send", "--"]) is None
    assert not _runs_no_command([])


# In a fresh process: other tests here import command modules in their own order, and
# the order in which commands register is the order `amqp --help` lists them.
LISTING_VS_APP = """
import json
from typer.testing import CliRunner
from amqpcli.cli.app import _listing, _register, app
_register()
out = []
for args in ARGS:
    for columns in COLUMNS:
        pair = []
        for target in (_listing(), app):
            r = CliRunner().invoke(target, args, prog_name="amqp",
                                   env={"COLUMNS": str(columns), "NO_COLOR": "1"})
            pair.append([r.exit_code, r.output])
        out.append([args, columns, pair])
print(json.dumps(out))
"""


def test_the_listing_says_what_the_app_with_every_command_says() -> None:
    code = (LISTING_VS_APP.replace("ARGS", repr([["--help"], [], ["--debug"], ["--version"],
                                                 ["--debug", "-h", "x"]]))
            .replace("COLUMNS", repr([30, 60, 80, 100, 200])))
    results = json.loads(_run(code).stdout)
    assert len(results) == 25
    for args, columns, (listing, full) in results:
        assert listing == full, (args, columns)
    assert "  pcap-dump  Rebuild conversations" in results[3][2][0][1]  # --help at 100


def test_root_flags_are_the_root_options_and_take_no_value() -> None:
    """`_command_named` steps over ROOT_FLAGS only: a root option that took a value would
    make it take that value for the command's name."""
    import typer.main

    group = typer.main.get_command(app)  # its params: the root's own, not -h/--help
    assert {o for p in group.params for o in p.opts} == ROOT_FLAGS
    assert all(p.is_flag for p in group.params)  # type: ignore[attr-defined]


def test_modules_name_every_command_and_its_module() -> None:
    import typer.main

    _register()
    group = typer.main.get_command(app)
    assert set(group.commands) == set(COMMANDS)
    for name, cmd in group.commands.items():
        assert cmd.callback is not None
        assert cmd.callback.__module__ == f"amqpcli.cli.{COMMANDS[name].module}"
        assert cmd.help == COMMANDS[name].help
    # In a fresh process (other tests here import command modules in their own order),
    # registering every command lists them in COMMANDS' order, as the listing does.
    proc = _run("import typer.main; import amqpcli.cli.app as a; a._register(); "
                "print(list(typer.main.get_command(a.app).commands))")
    assert ast.literal_eval(proc.stdout.strip()) == list(COMMANDS)


def test_written_out_constants_match_their_sources() -> None:
    from amqpcli.cli import options, send
    from amqpcli.net.outgoing import BODY_TYPES

    assert send.BODY_TYPES == BODY_TYPES
    assert set(options._converters()[0]) == options.TYPE_NAMES


def test_a_run_builds_only_its_command_when_others_are_registered(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """In one process that registered every command (an earlier run, the shell
    completing), a run of `decode` had Typer build all nine commands' options first: seven
    times the work of a run, and of every in-process run of the test suite after it."""
    import typer.main

    from amqpcli.cli.app import main

    _register()
    before = list(app.registered_commands)
    built: list[str] = []
    real = typer.main.get_command_from_info

    def counting(command_info: typer.models.CommandInfo, **kw: object) -> object:
        built.append(command_info.callback.__name__)  # type: ignore[union-attr]
        return real(command_info=command_info, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(typer.main, "get_command_from_info", counting)
    main(["decode", "40"])  # (a null)
    assert built == ["decode"]
    assert app.registered_commands == before  # every command again after the run
    with pytest.raises(SystemExit):
        main(["nosuch"])  # Click's error still sees every command
    assert "No such command 'nosuch'" in capsys.readouterr().err


def test_a_url_in_the_arguments_loads_only_the_url_reader() -> None:
    # Its password is registered as a secret of the run (for the error lines), which
    # reads the URL; that must not start the transport (ssl) or the client.
    modules = _modules_after(["send", "amqp://u:long-secret@h/q", "--help"])
    assert "amqpcli.net.url" in modules
    assert heavy_in(modules, ("ssl", "amqpcli.net.config", "amqpcli.net.client",
                              "asyncio")) == []
