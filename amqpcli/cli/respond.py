"""`amqp respond`: answer the requests on a node, each on its reply-to, and print them.

The requests are printed as `recv` prints messages (`recv`'s `Sink`); the body options
are `amqp send`'s own declarations, as `amqp request` takes them. The loop is
`amqpcli/net/responding.py`.
"""

from __future__ import annotations

import copy
import inspect
import json
import sys
from typing import TYPE_CHECKING, Any

import typer

from amqpcli.cli import send as _send
from amqpcli.cli.app import app
from amqpcli.cli.commands import COMMANDS
from amqpcli.cli.options import check_seconds, check_text, connection_options
from amqpcli.cli.recv import Sink, warn
from amqpcli.cli.send import BODY_TYPES, body_value
from amqpcli.errors import Exit, UserError

if TYPE_CHECKING:  # the net layer loads when the command runs, not for --help
    from amqpcli.net.config import ConnectionConfig

_REPLY = "Reply"
_RCV = "Requests"
_OUT = "Output"

_SEND_PARAMETERS = inspect.signature(_send.send).parameters


def _reply_option(name: str) -> Any:
    """`amqp send`'s declaration of its option `name`, for the same option here: under
    the heading of the options that shape the reply, not send's."""
    option = copy.copy(_SEND_PARAMETERS[name].default)
    option.rich_help_panel = _REPLY
    return option


def fixed_body(text: str, body_type: str | None, json_body: bool) -> bytes:
    """The body sections of every reply, encoded, from --body as send reads a BODY."""
    from amqpcli.net.outgoing import MessageTemplate

    if body_type is None:
        body_type = "value" if json_body else "data"
    template = MessageTemplate(body_type=body_type)
    value = body_value(text.encode("utf-8", "surrogateescape"), body_type, json_body)
    return template.body_bytes(value)


@app.command(help=COMMANDS["respond"].help, epilog=(
    "A request is accepted once the peer has accepted its reply. One with no reply-to is "
    "rejected (amqp:precondition-failed, saying why); one whose reply the peer did not "
    "take is given back (modified, delivery-failed) when the run ends, for another "
    "responder or the next run. Stopped (Ctrl-C, SIGTERM), it releases the requests it took "
    "and had not answered. A request sent pre-settled is answered as any other; one whose "
    "reply failed is lost.\n\n"
    "Examples:\n\n"
    "  amqp respond amqp://localhost/service\n\n"
    "  amqp respond amqp://localhost/service --body pong --count 10 --json\n\n"
    "  amqp respond @prod/rpc --body '{\"map\": {\"ok\": true}}' --json-body --timeout 60"))
@connection_options
def respond(
    conn: ConnectionConfig,
    body: str | None = typer.Option(None, "--body", help="Every reply's body, read as send reads a BODY (--body-type, --json-body). Default: the request's body sections, echoed as they came (with its content-type and content-encoding).", rich_help_panel=_REPLY),
    body_type: str | None = _reply_option("body_type"),
    json_body: bool = _reply_option("json_body"),
    count: int | None = typer.Option(None, "--count", "-c", help="Stop after N requests.", rich_help_panel=_RCV),
    timeout: float | None = typer.Option(None, "--timeout", "-t", help="Stop when no request arrives for this many seconds (default: wait forever).", rich_help_panel=_RCV),
    json_out: bool = typer.Option(False, "--json", help="Each request as one JSON object, as recv --json writes messages (docs/message-format.md); the summary as one JSON object on stderr.", rich_help_panel=_OUT),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary.", rich_help_panel=_OUT),
) -> None:
    from amqpcli.net.client import raise_exit
    from amqpcli.net.responding import RespondPlan, respond_exit, run_respond

    check_text(body, "--body")
    if body is None and (body_type is not None or json_body):
        raise UserError(f"{'--body-type' if body_type is not None else '--json-body'} is "
                        "for --body (without it, the request's body is echoed)", Exit.USAGE)
    if body_type is not None and body_type not in BODY_TYPES:
        raise UserError(f"--body-type must be one of {', '.join(BODY_TYPES)}", Exit.USAGE)
    if count is not None and count < 1:
        raise UserError("--count must be at least 1", Exit.USAGE)
    check_seconds(timeout, "--timeout")
    if not conn.endpoint.address:
        raise UserError("no address: give the requests' node in the URL "
                        "(amqp://host/ADDRESS) or with --address", Exit.USAGE)
    plan = RespondPlan(address=conn.endpoint.address, count=count, timeout=timeout,
                       body=None if body is None else fixed_body(body, body_type, json_body))
    sink = Sink(json_out, None, noun="request")
    try:
        summary = run_respond(conn, plan, sink.write_many_async, on_warning=warn)
    finally:
        sink.close()
    code, why = respond_exit(summary, count)
    failure = summary.failure
    # As recv: a run that failed before its request link was open says only why (a script
    # asking for JSON still gets its object); after Ctrl-C the summary is printed.
    if not quiet and (json_out or failure is None or summary.attached
                      or failure.code == Exit.INTERRUPTED):
        if json_out:
            obj = summary.to_json()
            if code != Exit.OK:
                obj["error"], obj["exit"] = why, int(code)
            print(json.dumps({"respond": obj}), file=sys.stderr)
        else:
            for line in summary.text().splitlines():
                print(f"amqp: {line}", file=sys.stderr)
    raise_exit(code, why, failure)
