"""`amqp browse`: list what a node holds without consuming it (copy, drain, stop)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import typer

from amqpcli.cli.app import app
from amqpcli.cli.commands import COMMANDS
from amqpcli.cli.options import connection_options
from amqpcli.cli.recv import (
    BODIES_ONLY_OPTION,
    DURATION_OPTION,
    JSON_SUMMARY_OPTION,
    OUT_OPTION,
    SAVE_BODIES_OPTION,
    make_plan,
    make_sink,
    recv_exit,
    saved_note,
    summary_json,
    warn,
)
from amqpcli.errors import Exit

if TYPE_CHECKING:  # the net layer loads when the command runs, not for --help
    from amqpcli.net.config import ConnectionConfig
    from amqpcli.net.receiving import RecvSummary


def browse_text(s: RecvSummary, count: int | None, address: str | None) -> str:
    """The summary line, saying what was actually seen: the whole node, the first
    --count messages, or what came before an interrupt, an error or a timeout."""
    n = s.received
    noun = "message" if n == 1 else "messages"
    if s.failure is not None:
        why = "the interrupt" if s.failure.code == Exit.INTERRUPTED else "the error"
        seen = f"{n} {noun} seen on {address!r} before {why} (the node may hold more)"
    elif s.timed_out:
        seen = f"{n} {noun} seen on {address!r} before the timeout (the node may hold more)"
    elif s.duration_over and not s.drained:
        seen = f"{n} {noun} seen on {address!r} in the --duration (the node may hold more)"
    elif count is not None and n >= count and not s.drained:
        seen = f"first {n} {noun} on {address!r} (--count {count}: the node may hold more)"
    else:
        seen = f"{n} {noun} on {address!r}"
    text = f"{seen} ({s.text('browsed')})"
    if s.copy_unchecked is not None:
        text += f"; not checked whether the peer copied or consumed them ({s.copy_unchecked})"
    return text


def browse_exit(s: RecvSummary, timeout: float) -> tuple[Exit, str]:
    """As `recv`'s, and a listing the peer never finished (it did not answer the drain in
    --timeout) is a timeout (5): the node may hold more than was shown."""
    code, why = recv_exit(s, None)
    if code == Exit.OK and s.timed_out:
        return Exit.TIMEOUT, (f"the peer did not answer the drain in {timeout:g}s: the listing "
                              "may be incomplete")
    return code, why


def _failed_before_attach(s: RecvSummary) -> bool:
    """A browse that failed before its link was attached (no connection, TLS, SASL, a
    refused link) says only why: it saw nothing of the node, so a count of what it saw is
    noise. After Ctrl-C the summary is always printed, as `recv` and `send` do."""
    return s.failure is not None and not s.attached and s.failure.code != Exit.INTERRUPTED


@app.command(help=COMMANDS["browse"].help,
             epilog="Examples:\n\n  amqp browse amqp://localhost//queue/orders\n\n"
             "  amqp browse @prod//queue/orders --json | jq -c .body")
@connection_options
def browse(
    conn: ConnectionConfig,
    selector: str | None = typer.Option(None, "--selector", "-s", help="Only messages matching this JMS-style selector."),
    count: int | None = typer.Option(None, "--count", "-c", help="At most N messages."),
    credit: int = typer.Option(500, "--credit", help="Messages asked for at a time."),
    capabilities: list[str] | None = typer.Option(None, "--capability", help="A capability of the source (repeatable): queue or topic for the kind of node (Artemis, amqp serve)."),  # noqa: B008 - a repeatable option
    timeout: float = typer.Option(10.0, "--timeout", "-t", help="Seconds to wait for the peer to answer a drain."),
    duration: float | None = DURATION_OPTION,
    json_out: bool = typer.Option(False, "--json", help="One JSON object per message, then a summary object on stderr."),
    bodies_only: bool = BODIES_ONLY_OPTION,
    save_bodies: str | None = SAVE_BODIES_OPTION,
    out: str | None = OUT_OPTION,
    json_summary: bool = JSON_SUMMARY_OPTION,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary."),
) -> None:
    from amqpcli.net.client import raise_exit
    from amqpcli.net.receiving import run_recv

    plan = make_plan(conn, count, timeout, credit, True, "accept", "first", selector, [],
                     None, False, False, True, check_copy=True,
                     capabilities=capabilities or [], duration=duration)
    sink = make_sink(json_out, out, bodies_only, save_bodies, quiet)
    summary = run_recv(conn, plan, sink, on_warning=warn)
    code, why = browse_exit(summary, timeout)
    saved_note(sink, quiet or json_out or json_summary)
    if not quiet:
        if json_out or json_summary:
            obj = summary_json(summary, sink)
            if code.value and summary.failure is None:
                obj["error"], obj["exit"] = why, int(code)
            print(json.dumps({"browse": obj}), file=sys.stderr)
        elif not _failed_before_attach(summary):
            print(f"amqp: {browse_text(summary, count, conn.endpoint.address)}", file=sys.stderr)
    raise_exit(code, why, summary.failure)  # an internal error's own line, once the summary is out
