"""`amqp request`: send requests, wait for their replies, print them with round-trip times.

The message options are `amqp send`'s own declarations (`_send_option`): one definition
of each, the same help and names in both commands; so is the message building
(`build_template`, `message_source`, `body_value`, `check_body_size`) and the output of
replies (`recv`'s `Sink`). The loop is `amqpcli/net/requesting.py`.
"""

from __future__ import annotations

import inspect
import json
import sys
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import typer

from amqpcli.cli import send as _send
from amqpcli.cli.app import app
from amqpcli.cli.commands import COMMANDS
from amqpcli.cli.options import check_path, check_seconds, check_text, connection_options
from amqpcli.cli.recv import Sink, warn
from amqpcli.cli.send import (
    BODY_TYPES,
    body_value,
    build_template,
    check_body_size,
    message_source,
)
from amqpcli.errors import Exit, UserError

if TYPE_CHECKING:  # the net layer loads when the command runs, not for --help
    from amqpcli.net.config import ConnectionConfig
    from amqpcli.net.outgoing import MessageTemplate, OutgoingMessage

_REQ = "Requests"
_OUT = "Output"
MAX_CONCURRENCY = 1_000_000  # requests in flight: far past any use, within a credit

_SEND_PARAMETERS = inspect.signature(_send.send).parameters


def _send_option(name: str) -> Any:
    """`amqp send`'s declaration of its option `name` (its typer.Option), for the same
    option here."""
    return _SEND_PARAMETERS[name].default


def _default_id() -> str:
    """Each request's message-id (and correlation-id) when none is given: unique across
    runs (a reply node named with --reply-to may hold an older run's replies), with the
    request's number at the end."""
    return f"{uuid.uuid4()}:{{n}}"


def _per_request(text: str) -> bool:
    """Whether `text` makes an id of each request's own ({n}, {uuid}; not their escapes)."""
    from amqpcli.net.outgoing import has_placeholder

    return has_placeholder(text)


def _several(template: MessageTemplate, bodies: list[str],
             json_body: bool) -> Iterator[OutgoingMessage]:
    """One request per BODY argument, in order (each checked now, before we connect)."""
    values = [body_value(b.encode("utf-8", "surrogateescape"), template.body_type, json_body)
              for b in bodies]
    for v in values:
        template.check_body(v)
    template.check_run(len(values))  # ({n} in the options: the first request it fails for)
    return (template.encode(n, v) for n, v in enumerate(values, 1))


@app.command(help=COMMANDS["request"].help, epilog=(
    "With --reconnect, a request whose reply had not come when the connection was lost is "
    "in doubt (the service may have acted on it), and each is said. As send does with a "
    "message whose outcome had not come, a request with no outcome is sent again on the "
    "next connection (at least once: the service may get it twice); one accepted is not, "
    "and stays in doubt (exit 7) unless its reply still comes on a --reply-to node. A "
    "dynamic reply node is made again on each connection.\n\n"
    "Examples:\n\n"
    "  amqp request amqp://localhost/service 'Twas brillig' 'and the slithy toves'\n\n"
    "  amqp request @prod/rpc --json-body '{\"map\": {\"op\": \"sum\"}}' --json | jq .body\n\n"
    "  amqp request amqp://router/service hello --count 100 --concurrency 10 --reply-to replies"))
@connection_options(body="bodies")
def request(
    conn: ConnectionConfig,
    bodies: list[str] | None = typer.Argument(None, metavar="body", help="The body of each request, one request per BODY (default: one request, its body from stdin when it is not a terminal).", show_default=False),  # noqa: B008 - several
    file: str | None = _send_option("file"),
    lines: bool = _send_option("lines"),
    size: int | None = _send_option("size"),
    body_type: str | None = _send_option("body_type"),
    json_body: bool = _send_option("json_body"),
    message_id: str | None = _send_option("message_id"),
    user_id: str | None = _send_option("user_id"),
    to: str | None = _send_option("to"),
    subject: str | None = _send_option("subject"),
    correlation_id: str | None = _send_option("correlation_id"),
    content_type: str | None = _send_option("content_type"),
    content_encoding: str | None = _send_option("content_encoding"),
    absolute_expiry_time: str | None = _send_option("absolute_expiry_time"),
    creation_time: str | None = _send_option("creation_time"),
    group_id: str | None = _send_option("group_id"),
    group_sequence: str | None = _send_option("group_sequence"),
    reply_to_group_id: str | None = _send_option("reply_to_group_id"),
    properties: list[str] | None = _send_option("properties"),  # noqa: B008 - a repeatable option
    annotations: list[str] | None = _send_option("annotations"),  # noqa: B008 - a repeatable option
    delivery_annotations: list[str] | None = _send_option("delivery_annotations"),  # noqa: B008 - a repeatable option
    footer: list[str] | None = _send_option("footer"),  # noqa: B008 - a repeatable option
    durable: bool | None = _send_option("durable"),
    priority: int | None = _send_option("priority"),
    ttl: int | None = _send_option("ttl"),
    first_acquirer: bool | None = _send_option("first_acquirer"),
    reply_to: str | None = typer.Option(None, "--reply-to", help="Take the replies from this node (each request's reply-to names it). Default: a dynamic node the peer creates for this run.", rich_help_panel=_REQ),
    count: int | None = typer.Option(None, "--count", "-c", help="Requests to send (default: 1, or one per BODY or per line of --lines).", rich_help_panel=_REQ),
    concurrency: int = typer.Option(1, "--concurrency", help="Requests waiting for their reply at a time (1: each waits for its reply before the next goes).", rich_help_panel=_REQ),
    timeout: float = typer.Option(10.0, "--timeout", "-t", help="Seconds to wait for a reply (or an outcome) before giving up on those missing.", rich_help_panel=_REQ),
    json_out: bool = typer.Option(False, "--json", help="Each reply as one JSON object, as recv --json writes messages (docs/message-format.md); the summary as one JSON object on stderr.", rich_help_panel=_OUT),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary.", rich_help_panel=_OUT),
) -> None:
    from amqpcli.net.client import raise_exit
    from amqpcli.net.requesting import RequestPlan, request_exit, run_requests

    if isinstance(bodies, str):  # the lone positional, when the URL came from elsewhere
        bodies = [bodies]
    bodies = list(bodies or [])
    check_path(file, "--file")
    check_text(reply_to, "--reply-to")
    if reply_to == "":
        raise UserError("--reply-to needs a node address", Exit.USAGE)
    if body_type is not None and body_type not in BODY_TYPES:
        raise UserError(f"--body-type must be one of {', '.join(BODY_TYPES)}", Exit.USAGE)
    if size is not None:
        check_body_size(size, bodies[0] if bodies else None, file, None, lines, False,
                        json_body, body_type)
    if count is not None and count < 1:
        raise UserError("--count must be at least 1", Exit.USAGE)
    if not 1 <= concurrency <= MAX_CONCURRENCY:  # (the reply link's credit follows it)
        raise UserError(f"--concurrency must be between 1 and {MAX_CONCURRENCY}", Exit.USAGE)
    check_seconds(timeout, "--timeout")
    if not conn.endpoint.address:
        raise UserError("no address: give the requests' node in the URL (amqp://host/ADDRESS) "
                        "or with --address", Exit.USAGE)
    if len(bodies) > 1 and (file is not None or lines or count is not None):
        raise UserError("several BODY arguments are one request each: no --file, --lines or "
                        "--count with them", Exit.USAGE)
    # Replies are told apart by the ids: a reply whose correlation-id is a request's
    # message-id or its correlation-id answers it, so requests waiting at once need both
    # ids their own. With --concurrency 1 only one waits at a time: a fixed id is fine.
    if concurrency > 1 and (len(bodies) > 1 or lines or (count or 1) > 1):
        fixed = next((option for option, text in (("--message-id", message_id),
                                                  ("--correlation-id", correlation_id))
                      if text is not None and not _per_request(text)), None)
        if fixed is not None:
            raise UserError(f"{fixed} without {{n}} or {{uuid}} gives every request the same "
                            "id: with --concurrency above 1 their replies could not be told "
                            "apart", Exit.USAGE)
    ids = message_id if message_id is not None else _default_id()
    props = {
        "message_id": ids, "user_id": user_id, "to": to, "subject": subject,
        "reply_to": None, "correlation_id": correlation_id if correlation_id is not None else ids,
        "content_type": content_type, "content_encoding": content_encoding,
        "absolute_expiry_time": absolute_expiry_time, "creation_time": creation_time,
        "group_id": group_id, "group_sequence": group_sequence,
        "reply_to_group_id": reply_to_group_id,
    }
    if body_type is None:
        body_type = "value" if json_body else "data"
    template = build_template(
        body_type, props, durable, priority, ttl, first_acquirer, properties or [],
        annotations or [], delivery_annotations or [], footer or [],
    )
    if len(bodies) > 1:
        messages = _several(template, bodies, json_body)
        expected: int | None = len(bodies)
    else:
        messages = message_source(template, bodies[0] if bodies else None, file, lines,
                                  json_body, count, False, size=size)
        expected = count if count is not None else None if lines else 1

    def reply_node(address: str) -> None:
        # Known once the reply link is attached (a dynamic node's name comes from the
        # peer), before the first request is encoded: every request carries it.
        template.properties["reply_to"] = address

    sink = Sink(json_out, None, noun="reply")
    plan = RequestPlan(address=conn.endpoint.address, reply_to=reply_to,
                       concurrency=concurrency, timeout=timeout, expected=expected)
    try:
        summary = run_requests(conn, plan, messages, on_reply_to=reply_node,
                               write_replies=sink.write_many_async, on_warning=warn,
                               input_waits=lines)
    finally:
        sink.close()
    code, why = request_exit(summary)
    failure = summary.failure
    # As send: a run that failed before its request link was open says only why, unless
    # asked for JSON (a script always gets its object); after Ctrl-C the summary is
    # printed. Once it is open, the summary says what became of the requests, even with
    # none sent (no credit came: "not sent 2").
    if not quiet and (json_out or not (failure is not None and not summary.send.link_opened
                                       and failure.code != Exit.INTERRUPTED)):
        if json_out:
            print(json.dumps({"request": summary.to_json()}), file=sys.stderr)
        else:
            for line in summary.text().splitlines():
                print(f"amqp: {line}", file=sys.stderr)
    raise_exit(code, why, failure)  # an internal error's own line, once the summary is out
