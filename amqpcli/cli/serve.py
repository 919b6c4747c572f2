"""`amqp serve`: a local AMQP 1.0 peer with in-memory queues and fault injection."""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from amqpcli.cli.app import app
from amqpcli.cli.commands import COMMANDS
from amqpcli.cli.options import (
    check_credit,
    check_idle_timeout,
    check_max_frame_size,
    check_secret,
    check_text,
)
from amqpcli.errors import Exit, UserError, listen_error

if TYPE_CHECKING:
    from amqpcli.peer import Server

_FAULTS = "Fault injection"
_SASL = "Authentication"
RULE_HELP = ("a share (0.1) or a pattern: every:N, first:N, after:N, at:N,M…, all, none "
             "(counted per sender link)")


def _log(text: str) -> None:
    sys.stderr.write(f"amqp serve: {text}\n")
    sys.stderr.flush()


@app.command(help=COMMANDS["serve"].help,
             epilog="Examples:\n\n  amqp serve --listen 5672\n\n"
             "  amqp serve --listen 5673 --reject every:3 --trace")
def serve(
    ctx: typer.Context,
    listen: Annotated[str, typer.Option("--listen", "-l", help="PORT, HOST:PORT or [V6]:PORT; loopback unless a host is given. Port 0 picks a free one.")] = "127.0.0.1:5672",
    user: Annotated[str | None, typer.Option("--user", "-u", help="Require SASL PLAIN with this user (and --password).", rich_help_panel=_SASL)] = None,
    password: Annotated[str | None, typer.Option("--password", help="The password --user must give (or $AMQP_PASSWORD).", envvar="AMQP_PASSWORD", show_default=False, rich_help_panel=_SASL)] = None,
    no_sasl: Annotated[bool, typer.Option("--no-sasl", help="Do not speak SASL (answer a SASL header with the AMQP one).", rich_help_panel=_SASL)] = False,
    reject: Annotated[str | None, typer.Option("--reject", help=f"Reject messages from senders: {RULE_HELP}.", rich_help_panel=_FAULTS)] = None,
    release: Annotated[str | None, typer.Option("--release", help="Release messages from senders (same forms as --reject).", rich_help_panel=_FAULTS)] = None,
    modify: Annotated[str | None, typer.Option("--modify", help="Answer modified{delivery-failed} (same forms as --reject).", rich_help_panel=_FAULTS)] = None,
    settle_delay: Annotated[float, typer.Option("--settle-delay", help="Milliseconds before a sender hears its outcome.", rich_help_panel=_FAULTS)] = 0.0,
    credit: Annotated[int | None, typer.Option("--credit", help="Credit window granted to senders (default 500, at most 2147483647; 0 never grants: senders stall).", rich_help_panel=_FAULTS)] = None,
    detach_after: Annotated[int | None, typer.Option("--detach-after", help="Detach each link (amqp:link:detach-forced) after N deliveries on it.", rich_help_panel=_FAULTS)] = None,
    close_after: Annotated[int | None, typer.Option("--close-after", help="Close each connection (amqp:connection:forced) after N deliveries on it.", rich_help_panel=_FAULTS)] = None,
    refuse: Annotated[list[str] | None, typer.Option("--refuse", help="Refuse links to addresses matching this glob with amqp:not-found (repeatable).", rich_help_panel=_FAULTS)] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed for the share rules (repeatable runs).", rich_help_panel=_FAULTS)] = None,
    max_frame_size: Annotated[int, typer.Option("--max-frame-size", help="Largest frame we accept, in bytes (512 to 4294967295).")] = 65536,
    idle_timeout: Annotated[float | None, typer.Option("--idle-timeout", help="Seconds of client silence before we close.")] = None,
    trace: Annotated[bool, typer.Option("--trace", help="Print every frame, one line each, on stdout.")] = False,
    show_secrets: Annotated[bool, typer.Option("--show-secrets", help="Show SASL passwords and credentials in --trace (masked by default).")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No log lines (the listening line stays).")] = False,
) -> None:
    import asyncio

    from amqpcli.peer import Broker, Faults, Server, check_rules, parse_rule
    from amqpcli.proxy import parse_listen

    where = parse_listen(listen)
    if user is None and password is not None and _from_env(ctx, "password"):
        # $AMQP_PASSWORD is the clients' password, used only with a user, as theirs is
        password = None
    if user == "" or password == "":
        # (an empty user was no user: the server took every client, anonymous or not)
        given = "--user" if user == "" else (
            "$AMQP_PASSWORD" if _from_env(ctx, "password") else "--password")
        raise UserError(f"{given} is empty: a server that requires SASL PLAIN needs a user "
                        "and a password", Exit.USAGE)
    if (user is None) != (password is None):
        raise UserError("--user and --password go together", Exit.USAGE)
    if user is not None and no_sasl:
        raise UserError("--user needs SASL: drop --no-sasl", Exit.USAGE)
    # both are compared as UTF-8 with what a client sends: refused here, not at each login
    check_text(user, "--user")
    check_secret(password, "$AMQP_PASSWORD" if _from_env(ctx, "password") else "--password")
    check_credit(credit, "--credit", least=0)
    for name, value in (("--detach-after", detach_after), ("--close-after", close_after)):
        if value is not None and value < 1:  # counts compared with deliveries: no upper bound
            raise UserError(f"{name} must be at least 1", Exit.USAGE)
    if not math.isfinite(settle_delay) or settle_delay < 0:
        raise UserError("--settle-delay must be a finite number of milliseconds, 0 or more "
                        f"(got {settle_delay:g})", Exit.USAGE)
    check_idle_timeout(idle_timeout, "--idle-timeout")
    check_max_frame_size(max_frame_size, "--max-frame-size")
    rules = [(option, parse_rule(text, option) if text is not None else None)
             for option, text in (("--reject", reject), ("--release", release),
                                  ("--modify", modify))]
    check_rules(rules)
    if any(not pattern for pattern in refuse or []):  # (it would refuse only the empty address)
        raise UserError("--refuse: the pattern is empty (a glob such as 'secret.*', or '*' "
                        "for every address)", Exit.USAGE)
    faults = Faults(
        reject=rules[0][1], release=rules[1][1], modify=rules[2][1],
        settle_delay=settle_delay / 1000.0,
        credit=credit,
        detach_after=detach_after,
        close_after=close_after,
        refuse=list(refuse or []),
        seed=seed,
    )
    from amqpcli.cli.trace import frame_tracer

    broker = Broker(faults, log=(lambda _t: None) if quiet else _log)
    server = Server(where, broker,
                    sasl="required" if user else "none" if no_sasl else "optional",
                    user=user, password=password,
                    trace=frame_tracer(lambda: sys.stdout, show_secrets) if trace else None,
                    max_frame_size=max_frame_size, idle_timeout=idle_timeout)
    sasl_text = ("SASL PLAIN required" if user else "no SASL" if no_sasl
                 else "SASL ANONYMOUS or PLAIN, or none")
    try:
        asyncio.run(_run(server, sasl_text, faults.active))
    except KeyboardInterrupt:
        pass
    # Only Ctrl-C (or SIGTERM) ends it, and it stops the server cleanly; by the
    # exit-status table that is still "interrupted": 130.
    _log("stopped")
    sys.exit(int(Exit.INTERRUPTED))


def _from_env(ctx: typer.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "ENVIRONMENT"


async def _run(server: Server, sasl_text: str, active: list[str]) -> None:
    import asyncio
    import signal

    from amqpcli.render.types import one_line

    try:
        host, port = await server.start()
    except OSError as e:
        raise listen_error(server.listen[0], server.listen[1], e) from None
    hp = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    # (a --refuse glob is shown as typed: its control characters escaped, as a client's
    # names are in the lines after it)
    faults = f"; faults: {one_line(' '.join(active))}" if active else ""
    _log(f"listening on {hp} ({sasl_text}{faults})")
    # Ctrl-C and SIGTERM set `stop` instead of raising KeyboardInterrupt wherever the loop
    # happens to be (asyncio would print tracebacks): every connection is then closed with
    # an AMQP close, written out before its socket closes.
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    handled: list[tuple[signal.Signals, Any]] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(sig)
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            continue
        handled.append((sig, previous))
    try:
        if handled:
            await stop.wait()
        else:
            await server.serve_forever()
    finally:
        await server.close()
        for sig, previous in handled:
            loop.remove_signal_handler(sig)
            signal.signal(sig, previous)
