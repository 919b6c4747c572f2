"""`amqp send`: messages to a node, with every section settable, and a summary at the end."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import re
import stat
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

import typer

from amqpcli.cli.app import app
from amqpcli.cli.commands import COMMANDS
from amqpcli.cli.options import (
    check_link_options,
    check_path,
    check_positive,
    check_seconds,
    check_text,
    connection_options,
    json_within_depth,
    parse_key_value,
    parse_value,
    typed_value,
)
from amqpcli.errors import Exit, UserError

if TYPE_CHECKING:  # the net layer loads when the command runs, not for --help
    from amqpcli.net.config import ConnectionConfig
    from amqpcli.net.outgoing import MessageTemplate, OutgoingMessage, PerMessage

# amqpcli.net.outgoing.BODY_TYPES, written out (a test keeps the two equal): the help
# text needs it, and importing amqpcli.net for it would load the whole codec for --help.
BODY_TYPES = ("data", "value", "sequence", "map")

_MSG = "Message"
_HDR = "Header"
_FLOW = "Sending"
_OUT = "Output"

# Properties options: option name -> (field, how its text becomes a value).
_PROPERTY_TYPES: dict[str, Any] = {
    "message_id": "id",
    "user_id": "binary",
    "to": "string",
    "subject": "string",
    "reply_to": "string",
    "correlation_id": "id",
    "content_type": "symbol",
    "content_encoding": "symbol",
    "absolute_expiry_time": "timestamp",
    "creation_time": "timestamp",
    "group_id": "string",
    "group_sequence": "uint",
    "reply_to_group_id": "string",
}


def _property_value(name: str, text: str) -> Any:
    """The value of a properties option: made for each message when its text has {n} or
    {uuid} in it (`PerMessage`), else now."""
    what = "--" + name.replace("_", "-")
    if _PROPERTY_TYPES[name] == "string":
        return _per_message(text, str, what)  # (as typed_value makes a string, faster)
    return _per_message(text, lambda s: _property_now(name, s), what)


def _property_now(name: str, text: str) -> Any:
    kind = _PROPERTY_TYPES[name]
    what = "--" + name.replace("_", "-")
    if kind == "id":
        # message-id / correlation-id: string unless typed (ulong:5, uuid:…, binary:…)
        return parse_value(text, what)
    if kind == "binary":
        # user-id is binary (Part 3 §3.2.4): text is its UTF-8 bytes; binary:hex:00ff
        # gives any bytes, as a binary anywhere else takes them
        head, sep, rest = text.partition(":")
        if sep and head.lower() == "binary":
            return typed_value(head, rest, what)
        return text.encode("utf-8")
    return typed_value(kind, text, what)


def _per_message(text: str, make: Callable[[str], Any], what: str) -> Any:
    """`make(text)` now, or a `PerMessage` when `text` has a placeholder in it ({n},
    {n%K}, {uuid}) or a time of the clock (`now`, `now+60s`: each message's own, so that
    an expiry a minute ahead is a minute ahead of each message, however long the run);
    the escapes ({{n}}, {{uuid}}) become their literal text either way. An unknown
    placeholder ({seq}) is a usage error naming `what`."""
    from amqpcli.net.outgoing import PerMessage, check_placeholders, expand, has_placeholder

    check_placeholders(text, what)
    if has_placeholder(text):
        return PerMessage(text, make)
    value = make(expand(text, 0))  # (a clock's text made once first: its error is no message's)
    if make is not str and _CLOCK.search(text):
        return PerMessage(text, make)
    return value


# a timestamp typed relative to the clock (now, now+60s, timestamp:now-5m)
_CLOCK = re.compile(r"(?<![\w-])now(?![\w])")


def _map_entry(item: str, what: str) -> tuple[str, Any]:
    """A KEY[:TYPE]=VALUE option: its key and its value, typed as `parse_key_value`
    types it, now or for each message (`_per_message`); keys are taken as they are."""
    head, sep, text = item.partition("=")
    if not sep or not head or "{" not in text:
        return parse_key_value(item, what)  # (which refuses a malformed one)
    key = head.rsplit(":", 1)[0]
    return key, _per_message(text, lambda s: parse_key_value(f"{head}={s}", what)[1],
                             f"{what} {key!r}")


def build_template(
    body_type: str,
    props: dict[str, str | None],
    durable: bool | None,
    priority: int | None,
    ttl: int | None,
    first_acquirer: bool | None,
    properties: list[str],
    annotations: list[str],
    delivery_annotations: list[str],
    footer: list[str],
    sequence: str | None = None,
    timestamp: bool = False,
) -> MessageTemplate:
    """The template of the run's messages. `sequence`: the application property that
    numbers them (--sequence); `timestamp`: each carries its send-time stamp
    (--timestamp, the property `TIMESTAMP_KEY`). The first message's values are checked
    now, the rest of the run's by `message_source`, which knows how many there are."""
    from amqpcli.codec import types as t
    from amqpcli.net.outgoing import TIMESTAMP_KEY, MessageTemplate, PerMessage

    for name, text in props.items():
        check_text(text, "--" + name.replace("_", "-"))
    for items, what in ((properties, "--property"), (annotations, "--annotation"),
                        (delivery_annotations, "--delivery-annotation"), (footer, "--footer")):
        for item in items:
            check_text(item, what)
    header: dict[str, Any] = {}
    if durable is not None:
        header["durable"] = durable
    if priority is not None:
        if not 0 <= priority <= 255:
            raise UserError("--priority must be 0-255", Exit.USAGE)
        header["priority"] = t.UByte(priority)
    if ttl is not None:
        if not 0 <= ttl <= 0xFFFFFFFF:
            raise UserError("--ttl must be 0-4294967295 milliseconds", Exit.USAGE)
        header["ttl"] = t.UInt(ttl)
    if first_acquirer is not None:
        header["first_acquirer"] = first_acquirer
    application_properties = dict(_map_entry(p, "--property") for p in properties)
    if sequence is not None:
        if sequence in application_properties:
            raise UserError(f"--property {sequence!r} and --sequence set the same property "
                            "(--sequence-key names another)", Exit.USAGE)
        application_properties[sequence] = PerMessage("{n}", lambda s: t.ULong(int(s)))
    if timestamp and TIMESTAMP_KEY in application_properties:
        given = "--sequence-key" if TIMESTAMP_KEY == sequence else "--property"
        raise UserError(f"{given} {TIMESTAMP_KEY!r} and --timestamp set the same property",
                        Exit.USAGE)
    template = MessageTemplate(
        body_type=body_type,
        header=header,
        properties={k: _property_value(k, v) for k, v in props.items() if v is not None},
        application_properties=application_properties,
        message_annotations=_symbol_keys(annotations, "--annotation"),
        delivery_annotations=_symbol_keys(delivery_annotations, "--delivery-annotation"),
        footer=_symbol_keys(footer, "--footer"),
        timestamp=TIMESTAMP_KEY if timestamp else None,
    )
    return template


def _symbol_keys(items: list[str], what: str) -> dict[Any, Any]:
    # Annotation keys are symbols (Part 3 §3.2.10); x-opt- is the convention, not a rule.
    from amqpcli.codec.types import Symbol

    return {Symbol(k): v for k, v in (_map_entry(i, what) for i in items)}


def check_body_size(size: int, body: str | None, file: str | None, from_file: str | None,
                    lines: bool, expand_body: bool, json_body: bool,
                    body_type: str | None) -> None:
    """--size makes the body: refused with another way of giving one, and for a body
    type that takes no text of a given length."""
    from amqpcli.net.outgoing import MAX_BODY

    if not 0 <= size <= MAX_BODY:
        raise UserError(f"--size must be 0-{MAX_BODY} bytes ({MAX_BODY >> 20} MiB)", Exit.USAGE)
    given = [name for name, v in (
        ("a BODY argument", body is not None), ("--file", file is not None),
        ("--from", from_file is not None), ("--lines", lines), ("--expand", expand_body),
        ("--json-body", json_body)) if v]
    if given:
        raise UserError(f"--size makes the body: {', '.join(given)} "
                        f"{'does' if len(given) == 1 else 'do'} not go with it", Exit.USAGE)
    if body_type not in (None, "data", "value"):
        raise UserError(f"--size makes a data body (or with --body-type value a string): "
                        f"not a {body_type} one", Exit.USAGE)


def body_value(text: bytes, body_type: str, json_body: bool) -> Any:
    """The body for one message from its text, as the body type wants it."""
    if body_type == "data" and not json_body:
        return text
    try:
        s = text.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        raise UserError(f"the body is not UTF-8 text (byte 0x{text[e.start]:02x} at offset "
                        f"{e.start}); --body-type data sends bytes as they are",
                        Exit.USAGE) from None
    if json_body or body_type in ("sequence", "map"):
        from amqpcli.render.jsonvalues import JsonValueError, from_json

        try:
            obj = json_within_depth(s)
            if body_type == "map" and not json_body:
                # a plain JSON object: its members are the map's entries (string keys,
                # values in the lossless JSON format, as a sequence's elements are)
                if type(obj) is not dict:
                    raise UserError("--body-type map needs a JSON object body "
                                    '(\'{"key": value, ...}\')', Exit.USAGE)
                value = {k: from_json(v, f".{k}") for k, v in obj.items()}
            else:
                value = from_json(obj)
        except json.JSONDecodeError as e:
            # (a body of one line: where in it, not JSON's "line 1")
            at = f"at column {e.colno}" if "\n" not in s else f"at line {e.lineno} column {e.colno}"
            raise UserError(f"body is not lossless JSON: {e.msg} {at}", Exit.USAGE) from None
        except (ValueError, JsonValueError) as e:
            raise UserError(f"body is not lossless JSON: {e}{_plain_object_hint(s, body_type)}",
                            Exit.USAGE) from None
        if body_type == "sequence" and not isinstance(value, list):
            raise UserError("--body-type sequence needs a JSON array body", Exit.USAGE)
        if body_type == "map" and not isinstance(value, dict):
            raise UserError("--body-type map with --json-body needs a map value "
                            '({"map": {...}})', Exit.USAGE)
        if body_type == "data" and not isinstance(value, bytes):
            raise UserError("--body-type data with --json-body needs a binary value", Exit.USAGE)
        return value
    return parse_value(s, "body")


def _warn_if_json_object(body: str) -> None:
    """A `value` BODY that is a JSON object goes out as that text, a string: most likely
    a map was meant, which says so before anything is sent."""
    if not body.lstrip().startswith("{"):
        return
    try:
        is_object = type(json.loads(body)) is dict
    except (ValueError, RecursionError):  # (not JSON, or nested past the parser's depth)
        return
    if is_object:
        _warn("--body-type value sends this JSON object as a string; --body-type map sends "
              "it as a map")


def _plain_object_hint(text: str, body_type: str) -> str:
    """What to write instead, when a body refused as lossless JSON is a JSON object that
    is no type tag (`{"op": "sum", "args": [1, 2]}`): most likely meant as a map."""
    if body_type == "map" or not text.lstrip().startswith("{"):
        return ""
    return (" (for a plain JSON object as a map body: --body-type map without --json-body, "
            'or {"map": {...}})')


def _is_stdin(stream: BinaryIO) -> bool:
    return sys.stdin is not None and stream is sys.stdin.buffer


def _close_input(stream: BinaryIO | None) -> None:
    """An input opened by `_open_input` closed when it is done with (stdin is left open)."""
    if stream is not None and not _is_stdin(stream):
        stream.close()


def _open_input(path: str) -> BinaryIO:
    if path == "-":
        if sys.stdin is None:  # started with stdin closed (`<&-`)
            raise UserError("standard input is closed: nothing to read", Exit.USAGE)
        return sys.stdin.buffer
    try:
        return open(path, "rb")
    except OSError as e:
        raise UserError(f"cannot read {path!r}: {e.strerror}", Exit.USAGE) from None


def _may_wait(path: str) -> bool:
    """Whether reading `path` ('-': standard input) may wait for its input to come: it is
    not a regular file (a pipe, a FIFO, a terminal)."""
    try:
        mode = os.fstat(0).st_mode if path == "-" else os.stat(path).st_mode
    except (OSError, ValueError):
        return False  # (opening it says what is wrong)
    return not stat.S_ISREG(mode)


def _warn(text: str) -> None:
    """A warning, said as it happens (a reconnect in a long run is news then)."""
    print(f"amqp: warning: {text}", file=sys.stderr, flush=True)


def _is_fifo(path: str) -> bool:
    """Whether `path` names a FIFO (opening one for reading waits for its writer)."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False  # (opening it says what is wrong)


def _where(path: str) -> str:
    """An input as an error names it."""
    return "standard input" if path == "-" else repr(path)


@contextlib.contextmanager
def _reading(path: str) -> Iterator[None]:
    """A read that fails after the open (an I/O error, a device that cannot be read) is a
    one-line error like a failed open."""
    from amqpcli.net.outgoing import TooLarge

    where = _where(path)
    try:
        yield
    except OSError as e:
        raise UserError(f"cannot read {where}: {e.strerror or e}", Exit.USAGE) from None
    except TooLarge as e:
        raise UserError(f"{where}: {e}", Exit.USAGE) from None


def message_source(
    template: MessageTemplate,
    body: str | None,
    file: str | None,
    lines: bool,
    json_body: bool,
    count: int | None,
    endless: bool,
    expand_body: bool = False,
    size: int | None = None,
) -> Iterator[OutgoingMessage]:
    """Numbered messages: the body repeated `count` times (or forever with `endless`),
    or one message per line of the input. A single body is read and checked now, and
    with a known count every message's values ({n} in them) and body (--expand), so bad
    input is an error before we connect, naming the first message it is wrong for
    (`MessageTemplate.check_run`); lines as `_line_messages` says. `expand_body`: {n}
    and {uuid} in a BODY argument are made for each message (a body read from a file or
    stdin is sent as it is). `size`: the body is `size` bytes of a printable pattern
    (--size: `sized_body`), bytes of a data section or the string of an amqp-value."""
    if size is not None:
        return _sized_messages(template, size, count, endless)
    if body is not None and file is not None:
        raise UserError("give a BODY argument or --file, not both", Exit.USAGE)
    if body is None and file is None:
        # a closed stdin (`<&-`) is read, to be refused as `--file -` is: not an empty body
        file = "-" if sys.stdin is None or not sys.stdin.isatty() else None
    if expand_body and body is None:
        raise UserError("--expand makes {n} and {uuid} in a BODY argument; a body from "
                        f"{'a file' if file not in (None, '-') else 'standard input'} is "
                        "sent as it is", Exit.USAGE)
    if lines:
        return _line_messages(template, body, file, json_body, count, expand_body)
    if file is not None:
        from amqpcli.net.outgoing import read_whole

        stream = _open_input(file)
        try:
            with _reading(file):
                raw = read_whole(stream)
        finally:
            _close_input(stream)
    else:
        # the argument's bytes as given (not UTF-8 ones come back from the surrogates)
        raw = (body or "").encode("utf-8", "surrogateescape")
    total = 1 if count is None and not endless else count
    if expand_body:
        from amqpcli.net.outgoing import check_placeholders

        check_placeholders(raw.decode("utf-8", "surrogateescape"), "body")
    if expand_body and _has_placeholder(raw):
        make = _body_maker(template, raw, json_body)
        template.check_run(total, make)  # every message now: no surprise mid-run
        return (template.encode(n, make.value(n)) for n in _numbers(total))
    value = body_value(raw, template.body_type, json_body)
    template.check_body(value)
    template.check_run(total)
    return (template.encode(n, value) for n in _numbers(total))


def _sized_messages(template: MessageTemplate, size: int, count: int | None,
                    endless: bool) -> Iterator[OutgoingMessage]:
    """Messages whose body is `size` bytes of `sized_body`: a data section's bytes, or as
    the string of an amqp-value (`--body-type value`)."""
    from amqpcli.net.outgoing import sized_body

    raw = sized_body(size)
    value: Any = raw if template.body_type == "data" else raw.decode("ascii")
    template.check_body(value)
    total = 1 if count is None and not endless else count
    template.check_run(total)
    return (template.encode(n, value) for n in _numbers(total))


def _numbers(total: int | None) -> Iterator[int]:
    """1, 2, … `total` (without end for None)."""
    n = 0
    while total is None or n < total:
        n += 1
        yield n


def _has_placeholder(text: bytes) -> bool:
    from amqpcli.net.outgoing import has_placeholder

    return has_placeholder(text.decode("utf-8", "surrogateescape"))


def _body_maker(template: MessageTemplate, text: bytes, json_body: bool) -> PerMessage:
    """The body of each message from a BODY with placeholders (`.value(n)`): expanded,
    then read as the body type reads it."""
    from amqpcli.net.outgoing import PerMessage

    return PerMessage(text.decode("utf-8", "surrogateescape"), lambda s: body_value(
        s.encode("utf-8", "surrogateescape"), template.body_type, json_body))


def _line_messages(template: MessageTemplate, body: str | None, file: str | None,
                   json_body: bool, count: int | None,
                   expand_body: bool = False) -> Iterator[OutgoingMessage]:
    """One message per line (message n is line n, at most `count`). A line that makes no
    body is an error naming it (`line 17 of standard input: …`).

    What is there before we connect is checked then, so that a mistake in it sends
    nothing: every line of the BODY argument or of a regular file, and the values ({n})
    of as many messages as they make (`_Lines.check_all`; a file is read twice, here and
    as it is sent). Of a pipe, a terminal or a FIFO, whose producer may still be
    writing, only the first line, if it has already come whole (nothing is waited for,
    and no line past it is taken before the connection); a FIFO named by --file is not
    opened before, as opening one waits for its writer. A later line that fails ends the
    input there: the lines before it are sent and reported as sent."""
    from amqpcli.net.outgoing import MAX_BODY, read_line_bodies, read_without_waiting

    if body is not None:
        raw = body.encode("utf-8", "surrogateescape")
        lines = _Lines(template, "-", "the BODY argument", json_body, count, expand_body)
        lines.check_all(raw.splitlines())
        return lines.messages(lines.bodies(raw.splitlines()))
    path = file or "-"
    lines = _Lines(template, path, _where(path), json_body, count)
    if path != "-" and _is_fifo(path):
        template.check_run(count)  # (the most the lines may make)
        return lines.messages_opened_later()
    stream = _open_input(path)
    if _all_there(stream):
        start = stream.tell()
        try:
            with _reading(path):
                lines.check_all(read_line_bodies(stream))
            stream.seek(start)
        except BaseException:
            _close_input(stream)
            raise
        return lines.messages(lines.bodies(read_line_bodies(stream)), stream)
    template.check_run(count)  # (the most the lines may make)
    with _reading(path):
        head, ended = read_without_waiting(stream.fileno())
        bodies = lines.bodies(
            read_line_bodies(io.BytesIO(head)) if ended else read_line_bodies(stream, head))
        if ended or b"\n" in head or len(head) > MAX_BODY:
            # line 1 has come (or is too long already): its body now, its message when
            # taken (request's reply-to is known once connected)
            first = next(bodies, None)
            if first is None:
                raise lines.no_lines()
            bodies = itertools.chain((first,), bodies)
    return lines.messages(bodies, stream)


def _all_there(stream: BinaryIO) -> bool:
    """Whether `stream` is a regular file or held in memory: all of it is there now, to be
    read again after a seek (not a pipe, a terminal, a FIFO or a device)."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # (io.UnsupportedOperation: in memory)
        return True
    return stat.S_ISREG(os.fstat(fd).st_mode)


class _Lines:
    """The lines of one input as messages: `where` names the input in errors (`line 3 of
    'orders.txt': …`, `standard input has no lines`)."""

    def __init__(self, template: MessageTemplate, path: str, where: str, json_body: bool,
                 count: int | None, expand_body: bool = False) -> None:
        self.template = template
        self.path = path
        self.where = where
        self.json_body = json_body
        self.count = count
        self.expand_body = expand_body  # (lines of the BODY argument only: see message_source)

    def bodies(self, texts: Iterable[bytes]) -> Iterator[tuple[int, Any]]:
        """(n, the body of line n) for the first `count` lines; a line that makes no body
        is an error naming it."""
        from amqpcli.net.outgoing import check_placeholders, expand

        template = self.template
        for n, text in enumerate(itertools.islice(texts, self.count), 1):
            try:
                if self.expand_body:
                    line = text.decode("utf-8", "surrogateescape")
                    check_placeholders(line, "body")
                    text = expand(line, n).encode("utf-8", "surrogateescape")
                value = body_value(text, template.body_type, self.json_body)
                template.check_body(value)  # (encoded once: `encode` takes it as is)
            except UserError as e:
                raise UserError(f"line {n} of {self.where}: {e}", e.code) from None
            yield n, value

    def no_lines(self) -> UserError:
        # as `--count 0` is: a run told to send nothing is a mistake
        return UserError(f"{self.where} has no lines: nothing to send", Exit.USAGE)

    def check_all(self, texts: Iterable[bytes]) -> None:
        """Every line of an input that is all there now made into its body, and the values
        of as many messages as there are lines: the error, if any, is the first failing
        message's, a line's or a value's."""
        n = 0
        try:
            if self.json_body or self.template.body_type != "data" or self.expand_body:
                for n, _ in self.bodies(texts):
                    pass
            else:  # (any line is a data body as it is: only how many there are is to be known)
                for n, _ in enumerate(itertools.islice(texts, self.count), 1):
                    pass
        except UserError:
            self.template.check_run(n)  # (a value of a message before the bad line first)
            raise
        if n == 0:
            raise self.no_lines()
        self.template.check_run(n)

    def messages(self, bodies: Iterable[tuple[int, Any]],
                 stream: BinaryIO | None = None) -> Iterator[OutgoingMessage]:
        """The messages of the lines' `bodies` as they are read; `stream`, what they are
        read from, closed at the end (unless it is stdin)."""
        n = 0
        try:
            with _reading(self.path):
                for n, value in bodies:
                    yield self.template.encode(n, value)
        finally:
            _close_input(stream)
        if n == 0:
            raise self.no_lines()

    def messages_opened_later(self) -> Iterator[OutgoingMessage]:
        """`messages` of an input opened when the first is taken."""
        from amqpcli.net.outgoing import read_line_bodies

        stream = _open_input(self.path)
        yield from self.messages(self.bodies(read_line_bodies(stream)), stream)


class Replay:
    """Messages from a file of JSON lines, bare message bytes unchanged: lines as
    ``amqp recv --json`` writes them, and the items of ``amqp decode --json`` and records of
    ``amqp pcap-dump --json`` that carry a whole message (their ``message`` member). The
    other items and records (protocol headers, frames other than transfers, the transfers
    before the last of a delivery, links, summaries, ...) are no message: they are skipped
    and counted in `skipped`, as is a delivery's message met a second time (pcap-dump's
    `--json --deliveries --frames` writes it in the transfer frame's record and in the
    delivery's). At most `count` messages; `sequence`: the application property that
    numbers each message as sent (--sequence); `relay`: every message must have a `to`
    (they go through the anonymous relay).

    What is there before we connect is checked then, as `--lines` input is
    (`_line_messages`), so that a mistake in it sends nothing: a bad path, every line of a
    regular file up to the `count`-th message (the file is read twice, here and as it is
    sent) and a file that holds no message. Of a pipe, a terminal or a FIFO, whose producer
    may still be writing, only the first line, if it has already come whole (nothing is
    waited for); a FIFO named is opened when the first message is taken, as opening one
    waits for its writer. A later line that fails ends the input there: the messages before
    it are sent and reported as sent."""

    def __init__(self, path: str, count: int | None, sequence: str | None = None,
                 relay: bool = False) -> None:
        self.path = path
        self.count = count
        self.skipped = 0
        self.line = 0  # the line of the last message read (`InputRead`)
        self.sequence = sequence
        self.relay = relay
        self._messages = self._checked_messages()

    def __iter__(self) -> Iterator[OutgoingMessage]:
        return self._messages

    def _checked_messages(self) -> Iterator[OutgoingMessage]:
        if self.path != "-" and _is_fifo(self.path):
            return self._messages_opened_later()
        stream = _open_input(self.path)
        try:
            with _reading(self.path):
                lines = self._check_what_is_there(stream)
        except BaseException:
            _close_input(stream)
            raise
        return self._messages_of(lines, stream)

    def _check_what_is_there(self, stream: BinaryIO) -> Iterator[bytes]:
        """The lines of `stream` to send, those there now checked (see the class)."""
        from amqpcli.net.outgoing import MAX_BODY, read_lines, read_without_waiting

        if _all_there(stream):
            start = stream.tell()
            self._check(read_lines(stream), whole=True)
            stream.seek(start)
            return read_lines(stream)
        head, ended = read_without_waiting(stream.fileno())
        if ended:  # (all of it has come, and is here)
            self._check(read_lines(io.BytesIO(head)), whole=True)
            return read_lines(io.BytesIO(head))
        lines = read_lines(stream, head=head)
        if b"\n" in head or len(head) > MAX_BODY:
            # line 1 has come (or is too long already): taking it reads nothing more
            first = next(lines)
            self._check((first,), whole=False)
            return itertools.chain((first,), lines)
        return lines

    def _check(self, lines: Iterable[bytes], whole: bool) -> None:
        """The messages of `lines` made as they would be sent, and dropped; `whole`: the
        lines are all the input, which must hold a message."""
        n = 0
        for n, _, _ in self._payloads(lines):
            pass
        if whole and n == 0:
            raise self._no_messages()
        self.skipped = 0  # (counted again as they are sent)
        self.line = 0

    def _no_messages(self) -> UserError:
        lines = f" (its {self.skipped} lines carry none)" if self.skipped else ""
        return UserError(f"{_input_name(self.path)} holds no messages{lines}: nothing to send",
                         Exit.USAGE)

    def _messages_of(self, lines: Iterable[bytes],
                  stream: BinaryIO | None) -> Iterator[OutgoingMessage]:
        """The messages of `lines` as they are read; `stream`, what they are read from,
        closed at the end (unless it is stdin)."""
        from amqpcli.net.outgoing import OutgoingMessage

        n = 0
        try:
            with _reading(self.path):
                for n, payload, message_format in self._payloads(lines):
                    yield OutgoingMessage(n, payload, _message_id(payload),
                                          message_format=message_format)
        finally:
            _close_input(stream)
        if n == 0:
            raise self._no_messages()

    def _messages_opened_later(self) -> Iterator[OutgoingMessage]:
        """The messages of an input opened when the first is taken (`_messages_of`)."""
        from amqpcli.net.outgoing import read_lines

        stream = _open_input(self.path)
        yield from self._messages_of(read_lines(stream), stream)

    def _payloads(self, lines: Iterable[bytes]) -> Iterator[tuple[int, bytes, int]]:
        """(n, message n as it goes out, its message-format) for the messages `lines`
        carry, at most `count` (no line past the last is read); the lines that carry none
        are counted in `skipped`, one that should and does not is an error naming it."""
        path = self.path
        n = 0
        # (connection, frame) of the last transfer of each pcap-dump delivery sent, until
        # its other record (frame or delivery) comes and is skipped
        sent: set[tuple[Any, Any]] = set()
        # the same for a last transfer without its message (`AwaitsItsDelivery`): its line
        # and why, an error if its delivery's record does not follow
        awaited: dict[tuple[Any, Any], tuple[int, str]] = {}
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                obj = json_within_depth(line)
                try:
                    payload = replayed_message(obj)
                except AwaitsItsDelivery as e:
                    awaits = _capture_transfer(obj)
                    if awaits is None:
                        raise
                    awaited.setdefault(awaits, (lineno, str(e)))
                    self.skipped += 1
                    continue
                if payload is not None:
                    payload = self._as_sent(payload, n + 1)
                    message_format = replayed_format(obj)
            except NoMessage as e:
                raise UserError(f"{_line_of(path, lineno)}: {e}", Exit.USAGE) from None
            except UnicodeDecodeError as e:
                raise UserError(f"{_line_of(path, lineno)}: {_not_utf8(line, e)}",
                                Exit.USAGE) from None
            except json.JSONDecodeError as e:
                raise UserError(f"{_line_of(path, lineno)}: not a message in the JSON format: "
                                f"{_not_json(e)}", Exit.USAGE) from None
            except (ValueError, KeyError, TypeError) as e:
                raise UserError(f"{_line_of(path, lineno)}: not a message in the JSON format: "
                                f"{e}", Exit.USAGE) from None
            if payload is None:
                self.skipped += 1
                continue
            key = _capture_transfer(obj)
            if key is not None:
                if key in sent:
                    sent.discard(key)
                    self.skipped += 1
                    continue
                if awaited.pop(key, None) is None:
                    sent.add(key)
            n += 1
            self.line = lineno
            yield n, payload, message_format
            if n == self.count:
                return
        if awaited:
            lineno, why = min(awaited.values())
            raise UserError(f"{_line_of(path, lineno)}: {why} (no record of its delivery "
                            "followed)", Exit.USAGE)

    def _as_sent(self, payload: bytes, n: int) -> bytes:
        """A replayed message as message `n` of this run goes out."""
        if self.relay and _properties(payload, "to") is None:
            raise NoMessage("a message with no 'to': with no address in the URL each message "
                            "goes to its 'to' (the anonymous relay)")
        if self.sequence is not None:
            from amqpcli.codec.types import ULong
            from amqpcli.net.outgoing import with_application_property

            payload = with_application_property(payload, self.sequence, ULong(n))
        return payload


class NoMessage(ValueError):
    """A line that should carry a whole message and does not (the reason)."""


class AwaitsItsDelivery(NoMessage):
    """The last transfer of a pcap-dump delivery, without its message (one in several
    frames, or --frames-only): the delivery's own record, if it follows, carries it."""


def replayed_message(obj: Any) -> bytes | None:
    """The bytes of the message a line of JSON holds (see `Replay`); None for an item or
    record that is no message. Raises NoMessage for one that should carry a message and
    does not, ValueError (a JsonValueError) for JSON that is not a message."""
    from amqpcli.render.message import message_bytes_from_json

    if type(obj) is not dict or ("item" not in obj and "record" not in obj):
        _refuse_masked(obj)
        # a line of recv --json, or no message at all
        return _not_empty(message_bytes_from_json(obj))
    if obj.get("item") == "assembly" or obj.get("protocol") == "amqp-0-10":
        if obj.get("record") == "delivery" or obj.get("method") == "message.transfer":
            raise NoMessage("an AMQP 0-10 message: --from sends AMQP 1.0 messages")
        return None  # the rest of an AMQP 0-10 connection
    if obj.get("record") == "delivery":
        if obj.get("aborted"):
            return None  # its sender gave it up: it was never delivered
        if obj.get("incomplete"):
            raise NoMessage("a delivery whose message the capture did not see whole (bytes "
                            "lost, or its connection ended before its last transfer)")
        if "message" not in obj:
            raise NoMessage("a delivery without its message (pcap-dump --json --deliveries "
                            "writes it, but not with --frames-only)")
    elif obj.get("item") == "frame":
        transfer = _transfer(obj.get("performative"))
        if transfer is None or transfer.more or transfer.aborted:
            return None  # another performative, or no delivery's end
        if "message" not in obj:
            if "message-error" in obj:
                raise NoMessage("a transfer whose payload is no message "
                                f"({obj['message-error']})")
            raise AwaitsItsDelivery("a transfer without a whole message: the last frame "
                                    "of a delivery in several (pcap-dump --json "
                                    "--deliveries has the delivery whole), or --frames-only")
    elif obj.get("item") != "message":
        return None  # a protocol header, a value, an error; a link, summary, ... record
    message = obj.get("message")
    if type(message) is dict and "undecodable" in message:
        raise NoMessage(f"its message does not decode ({message['undecodable']})")
    _refuse_masked(message)
    return _not_empty(message_bytes_from_json(message))


def replayed_format(obj: Any) -> int:
    """The message-format the message of a line `replayed_message` takes goes with: a
    pcap-dump frame's, its transfer's; any other line's, its message's `message-format`
    member (0 when absent). Raises ValueError (a JsonValueError) for one that is no
    uint."""
    from amqpcli.render.message import message_format_from_json

    if obj.get("item") == "frame":
        return int(_transfer(obj.get("performative")).message_format or 0)
    if "item" in obj or "record" in obj:
        return message_format_from_json(obj.get("message"))
    return message_format_from_json(obj)


def _not_empty(payload: bytes) -> bytes:
    """A message's bytes, refusing none at all: an object with no sections (`{}`) would go
    out as a transfer with no payload, which is no message (a bare message has a body)."""
    if not payload:
        from amqpcli.render.jsonvalues import JsonValueError

        raise JsonValueError("", "an object with no sections is no message: nothing to send")
    return payload


def _refuse_masked(message: Any) -> None:
    """A message written with a SASL secret masked in it is not the one that was sent."""
    if type(message) is dict and "redacted" in message:
        raise NoMessage("a SASL secret in its message was masked (***) when the JSON was "
                        "written, so it is not the message that was sent; JSON written with "
                        "--show-secrets (decode, pcap-dump) replays it")


def _capture_transfer(obj: Any) -> tuple[Any, Any] | None:
    """For a pcap-dump record carrying a message: (connection, number of the frame that
    ended its delivery), the same for the transfer frame's record and the delivery's."""
    if type(obj) is not dict:
        return None
    record = obj.get("record")
    if record == "frame":
        return obj.get("connection"), obj.get("frame")
    if record == "delivery":
        frames = [step.get("frame") for step in obj.get("timeline") or ()
                  if type(step) is dict and step.get("kind") == "transfer"
                  and step.get("side") == obj.get("from")]
        return (obj.get("connection"), frames[-1]) if frames else None
    return None


def _transfer(performative: Any) -> Any:
    """The transfer a frame's JSON performative is, or None for another one."""
    from amqpcli.codec.composites import Transfer
    from amqpcli.render.jsonvalues import from_json

    if type(performative) is not dict or "transfer" not in performative:
        return None
    transfer = from_json(performative, "performative")
    return transfer if isinstance(transfer, Transfer) else None


class InputRead(Iterator["OutgoingMessage"]):
    """The messages of an input (`--lines` from a file or standard input, `--from`)
    counted as they are read, and whether it was read to its end (or to `--count`): a run
    that ends before it has sent them all (a failure, Ctrl-C, `--duration`) says so in its
    summary (`unread`), rather than leaving what it never sent unmentioned. `line()`: the
    line of the last message read (message n is line n of `--lines`; `--from` skips
    lines)."""

    def __init__(self, messages: Iterator[OutgoingMessage], path: str,
                 line: Callable[[], int] | None = None) -> None:
        self._messages = messages
        self.path = path
        self.read = 0  # messages read (by the thread that reads a pipe: ahead of the run)
        self.ended = False  # its end (or --count) was reached
        self.failed = False  # a line or a read failed: its error names where it stopped
        self._line = line
        # `--from`: the lines of the last messages read, for the line of the last one sent
        # (those read and not sent are a run's window and read-ahead at most)
        self._lines: deque[int] = deque(maxlen=_LINES_KEPT)

    def __next__(self) -> OutgoingMessage:
        try:
            msg = next(self._messages)
        except StopIteration:
            self.ended = True
            raise
        except BaseException:
            self.failed = True
            raise
        self.read += 1
        if self._line is not None:
            self._lines.append(self._line())
        return msg

    def line_of(self, n: int) -> int | None:
        """The line of message `n` (1 on), if known; 0 for none."""
        if self._line is None or n <= 0:
            return n if n >= 0 else None
        back = self.read - n
        return self._lines[-1 - back] if 0 <= back < len(self._lines) else None

    def unread(self, taken: int) -> tuple[str, dict[str, Any]] | None:
        """What the summary says of an input the run did not send to its end (None: it
        did, or a bad line ended it, which its error says): the messages the run sent
        from it (`taken`, those before it sent or in doubt), those read from it and never
        sent, and the lines after the last one sent of a regular file (to resume from:
        `tail -n +LINE`) or that the rest of a pipe was not read."""
        if self.failed or (self.ended and taken >= self.read):
            return None
        where = _where(self.path)
        what = "not read to its end" if not self.ended else "read to its end, not all sent"
        obj: dict[str, Any] = {"name": _input_name(self.path), "read-to-end": self.ended,
                               "messages-taken": taken}
        line = self.line_of(taken)
        left = _lines_left(self.path, line) if line is not None else None
        if line is not None and left is not None:
            obj.update({"last-line-read": line, "lines-not-read": left})
            if not taken:
                return f"{where} {what}: no message taken from it; {left} line(s) not sent", obj
            return (f"{where} {what}: {taken} message(s) taken from it, up to line {line}; "
                    f"{left} line(s) after it not sent"), obj
        text = f"{where} {what}: {taken} message(s) taken from it"
        ahead = self.read - taken
        if ahead > 0:
            obj["read-not-sent"] = ahead
            text += f", {ahead} more read from it but not sent"
        return text + ("" if self.ended else "; the rest of it was not read"), obj


# How many of the last messages read `InputRead` keeps the lines of: more than a send's
# window and read-ahead hold unsent.
_LINES_KEPT = 1 << 16


def _lines_left(path: str, line: int) -> int | None:
    """How many lines of `path` ('-': standard input) come after line `line`, when it is
    a regular file (read again from its start, its position left alone); None for a
    pipe, a FIFO, a terminal, or a file that cannot be read now."""
    try:
        fd = 0 if path == "-" else os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        lines = offset = 0
        last = b"\n"
        while chunk := os.pread(fd, 1 << 20, offset):
            lines += chunk.count(b"\n")
            offset += len(chunk)
            last = chunk[-1:]
        lines += last != b"\n"  # (a last line with no line ending)
        return max(0, lines - line)
    except OSError:
        return None
    finally:
        if fd != 0:
            os.close(fd)


def _input_name(path: str) -> str:
    return "standard input" if path == "-" else path


_BYTE_ORDER_MARKS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
                     (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def _not_utf8(line: bytes, e: UnicodeDecodeError) -> str:
    """Why a --from line is not text, in the user's terms rather than the codec's."""
    for mark, name in _BYTE_ORDER_MARKS:
        if line.startswith(mark):
            return (f"the input is {name} (it starts with a {name} byte-order mark): JSON "
                    "lines must be UTF-8")
    return f"not UTF-8 text: byte 0x{line[e.start]:02x} at column {e.start + 1}"


def _not_json(e: json.JSONDecodeError) -> str:
    """JSON's error, but of a NUL where it stopped said as such (a NUL is no JSON; text
    that has them, UTF-16 or UTF-32, is not UTF-8)."""
    if e.doc[e.pos:e.pos + 1] == "\x00":
        column = len(e.doc[:e.pos].encode("utf-8")) + 1
        return f"a NUL byte at column {column} (JSON lines are UTF-8 text)"
    return str(e)


def _line_of(path: str, lineno: int) -> str:
    """Where a line is, for an error: `in.jsonl:17` of a file, as compilers say it; of
    standard input as --lines says it."""
    return f"line {lineno} of standard input" if path == "-" else f"{path}:{lineno}"


def _message_id(payload: bytes) -> Any:
    """The message-id of encoded message bytes (for the in-doubt report), or None."""
    return _properties(payload, "message_id")


def _properties(payload: bytes, name: str) -> Any:
    """A field of the properties of encoded message bytes, or None."""
    from amqpcli.codec.message import Message

    try:
        props = Message.decode(payload).properties
    except ValueError:
        return None
    return getattr(props, name) if props is not None else None


@app.command(help=COMMANDS["send"].help, epilog=(
    "Examples:\n\n"
    "  amqp send amqp://localhost//queue/orders hello --property priority:int=5\n\n"
    "  amqp send @prod//queue/orders --file orders.txt --lines --rate 100\n\n"
    "  amqp recv @old//queue/orders -t 5 --out orders.jsonl\n\n"
    "  amqp send @new//queue/orders --from orders.jsonl\n\n"
    "Moving messages between nodes goes through a file: a send that stops early (a "
    "failure, Ctrl-C) says which lines it did not read, and they are still there to send "
    "again; piped from recv, they would be consumed from the old node and lost."))
@connection_options(body="body", without=("max_message_size",))
def send(
    conn: ConnectionConfig,
    body: str | None = typer.Argument(None, help="The body (default: stdin when it is not a terminal).", show_default=False),
    file: str | None = typer.Option(None, "--file", "-f", help="Read the body from FILE ('-': stdin).", rich_help_panel=_MSG),
    lines: bool = typer.Option(False, "--lines", help="One message per line of the input.", rich_help_panel=_MSG),
    size: int | None = typer.Option(None, "--size", help="A body of N bytes (no BODY, --file or stdin): 0-9a-zA-Z repeated, as a data section's bytes, or with --body-type value as a string of N characters (qpid-send --content-size, Artemis producer --message-size).", metavar="N", rich_help_panel=_MSG),
    body_type: str | None = typer.Option(None, "--body-type", "-b", help=f"Body type: {', '.join(BODY_TYPES)} (default: data; value with --json-body). 'value' takes TYPE:VALUE (int:5, symbol:x; a string without TYPE:), 'sequence' a JSON array (an amqp-sequence section), 'map' a JSON object (an amqp-value section holding a map: '{{\"op\": \"sum\", \"args\": [1, 2]}}'; values in the lossless JSON format).", rich_help_panel=_MSG, show_default=False),
    json_body: bool = typer.Option(False, "--json-body", help="The body is a value in the lossless JSON format (docs/message-format.md); an amqp-value section unless --body-type says otherwise.", rich_help_panel=_MSG),
    from_file: str | None = typer.Option(None, "--from", help="Replay the messages in FILE ('-': stdin): lines of 'amqp recv --json', and the items of 'amqp decode --json' and records of 'amqp pcap-dump --json' that carry a whole message; their other lines are skipped.", rich_help_panel=_MSG),
    expand_body: bool = typer.Option(False, "--expand", help="{n}, {n%K} and {uuid} in the BODY argument too, as in every option (never in a body read from --file or stdin).", rich_help_panel=_MSG),
    message_id: str | None = typer.Option(None, "--message-id", "--id", help="message-id; here and in every value of the options below {n} is the message number, {n%K} it modulo K (g{n%3}: g1, g2, g0, ...), {uuid} a fresh UUID, {{n}} the text {n} (another {NAME} is an error); TYPE:VALUE for ulong/uuid/binary (ulong:{n}: typed, per message).", rich_help_panel=_MSG),
    user_id: str | None = typer.Option(None, "--user-id", help="user-id, binary: text as its UTF-8 bytes; binary:hex:00ff for any bytes (binary:TEXT: TEXT's bytes).", rich_help_panel=_MSG),
    to: str | None = typer.Option(None, "--to", rich_help_panel=_MSG),
    subject: str | None = typer.Option(None, "--subject", rich_help_panel=_MSG),
    reply_to: str | None = typer.Option(None, "--reply-to", rich_help_panel=_MSG),
    correlation_id: str | None = typer.Option(None, "--correlation-id", rich_help_panel=_MSG),
    content_type: str | None = typer.Option(None, "--content-type", rich_help_panel=_MSG),
    content_encoding: str | None = typer.Option(None, "--content-encoding", rich_help_panel=_MSG),
    absolute_expiry_time: str | None = typer.Option(None, "--absolute-expiry-time", help="ms since the epoch, ISO 8601, 'now' or now+DURATION / now-DURATION (now+60s, now-5m; units ms, s, m, h).", rich_help_panel=_MSG),
    creation_time: str | None = typer.Option(None, "--creation-time", help="ms since the epoch, ISO 8601, 'now' or now+DURATION / now-DURATION (now+60s, now-5m; units ms, s, m, h).", rich_help_panel=_MSG),
    group_id: str | None = typer.Option(None, "--group-id", rich_help_panel=_MSG),
    group_sequence: str | None = typer.Option(None, "--group-sequence", rich_help_panel=_MSG),
    reply_to_group_id: str | None = typer.Option(None, "--reply-to-group-id", rich_help_panel=_MSG),
    properties: list[str] | None = typer.Option(None, "--property", "-P", help="Application property KEY=VALUE or KEY:TYPE=VALUE (repeatable; sn:long={n}: the message number as a long).", rich_help_panel=_MSG),  # noqa: B008 - a repeatable option
    annotations: list[str] | None = typer.Option(None, "--annotation", "-A", help="Message annotation KEY[:TYPE]=VALUE (key is a symbol; repeatable).", rich_help_panel=_MSG),  # noqa: B008 - a repeatable option
    delivery_annotations: list[str] | None = typer.Option(None, "--delivery-annotation", help="Delivery annotation KEY[:TYPE]=VALUE (repeatable).", rich_help_panel=_MSG),  # noqa: B008 - a repeatable option
    footer: list[str] | None = typer.Option(None, "--footer", help="Footer entry KEY[:TYPE]=VALUE (repeatable).", rich_help_panel=_MSG),  # noqa: B008 - a repeatable option
    sequence: bool = typer.Option(False, "--sequence", help="Number every message of the run from 1 in the application property sn (ulong), for a receiver to find gaps and duplicates.", rich_help_panel=_MSG),
    sequence_key: str | None = typer.Option(None, "--sequence-key", help="The property --sequence sets (default: sn); implies --sequence.", rich_help_panel=_MSG),
    timestamp: bool = typer.Option(False, "--timestamp", help="Stamp every message with the application property ts (long: nanoseconds since the Unix epoch, UTC) as it goes out, for recv's latency figures (qpid-send --timestamp).", rich_help_panel=_MSG),
    durable: bool | None = typer.Option(None, "--durable/--no-durable", help="header.durable", rich_help_panel=_HDR, show_default=False),
    priority: int | None = typer.Option(None, "--priority", help="header.priority (0-255)", rich_help_panel=_HDR),
    ttl: int | None = typer.Option(None, "--ttl", help="header.ttl in milliseconds", rich_help_panel=_HDR),
    first_acquirer: bool | None = typer.Option(None, "--first-acquirer/--no-first-acquirer", help="header.first-acquirer", rich_help_panel=_HDR, show_default=False),
    count: int | None = typer.Option(None, "--count", "-c", help="Messages to send (default: 1, or every line / every message of --from).", rich_help_panel=_FLOW),
    rate: float | None = typer.Option(None, "--rate", help="At most this many messages per second.", rich_help_panel=_FLOW),
    duration: float | None = typer.Option(None, "--duration", help="Keep sending the body for this many seconds.", rich_help_panel=_FLOW),
    presettled: bool = typer.Option(False, "--presettled", help="Send pre-settled (at most once: no outcomes).", rich_help_panel=_FLOW),
    settled_alias: bool = typer.Option(False, "--settled", hidden=True),  # the old spelling of --presettled
    window: int = typer.Option(1000, "--window", help="Most unsettled messages in flight.", rich_help_panel=_FLOW),
    txn_size: int | None = typer.Option(None, "--txn-size", help="Send in transactions of N messages.", rich_help_panel=_FLOW),
    rollback: bool = typer.Option(False, "--rollback", help="With --txn-size: roll each transaction back instead of committing.", rich_help_panel=_FLOW),
    on_release: str = typer.Option("fail", "--on-release", help="What becomes of a message the peer released (not delivered): fail (counted released, exit 6) or retry[:N] (sent again after a pause, 0.1s doubled at each retry up to 5s, while the other messages go on; at most N times each, default 3, at most 100; not with --txn-size or --presettled).", metavar="fail|retry[:N]", rich_help_panel=_FLOW),
    force_relay: bool = typer.Option(False, "--force-relay", help="Use the anonymous relay (a URL with no address: each message goes to its --to) even when the peer's open does not offer ANONYMOUS-RELAY.", rich_help_panel=_FLOW),
    timeout: float = typer.Option(30.0, "--timeout", "-t", help="Seconds to wait for credit or outcomes before giving up.", rich_help_panel=_FLOW),
    capabilities: list[str] | None = typer.Option(None, "--capability", help="A capability of the target (repeatable): topic or queue for the kind of node (Artemis, amqp serve).", rich_help_panel=_FLOW),  # noqa: B008 - a repeatable option
    link_name: str | None = typer.Option(None, "--link-name", help="The link's name in the attach (default: amqp-sender-N).", rich_help_panel=_FLOW),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as one JSON object.", rich_help_panel=_OUT),
    progress: bool | None = typer.Option(None, "--progress/--no-progress", help="Progress bar on stderr (default: on a terminal for long runs, without --trace or --report-every).", rich_help_panel=_OUT, show_default=False),
    report_every: float | None = typer.Option(None, "--report-every", help="Every SECONDS, a line on stderr with the figures so far: sent, in the interval and its rate, outcomes, in flight (JSON objects with --json).", metavar="SECONDS", rich_help_panel=_OUT),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary.", rich_help_panel=_OUT),
) -> None:
    from amqpcli.net.client import raise_exit
    from amqpcli.net.sending import SendPlan, parse_on_release, run_send, summary_exit, summary_text

    settled = presettled or settled_alias
    check_path(file, "--file")
    check_path(from_file, "--from")
    if body_type is not None and body_type not in BODY_TYPES:
        raise UserError(f"--body-type must be one of {', '.join(BODY_TYPES)}", Exit.USAGE)
    if count is not None and count < 1:
        # As for recv: a run that is told to do nothing is a mistake, not a success.
        raise UserError("--count must be at least 1", Exit.USAGE)
    if window < 1:
        raise UserError("--window must be at least 1", Exit.USAGE)
    if txn_size is not None and (txn_size < 1 or settled):
        raise UserError("--txn-size needs a positive size and unsettled sends", Exit.USAGE)
    if rollback and txn_size is None:
        raise UserError("--rollback needs --txn-size", Exit.USAGE)
    release_retries = parse_on_release(on_release)
    if release_retries and settled:
        raise UserError("--on-release retry needs unsettled sends: a pre-settled message has "
                        "no outcome", Exit.USAGE)
    if release_retries and txn_size is not None:
        # a release inside a transaction holds only once it commits: its retry would go in
        # another transaction, after the one it was part of had committed without it
        raise UserError("--on-release retry does not go with --txn-size: a message released in "
                        "a transaction would be sent again in another one", Exit.USAGE)
    check_positive(rate, "--rate")
    check_seconds(duration, "--duration")
    check_seconds(timeout, "--timeout")
    check_seconds(report_every, "--report-every")
    if report_every is not None and progress:
        # both draw on stderr: the bar's line would be cut by every report
        raise UserError("--progress and --report-every both write on stderr: give one",
                        Exit.USAGE)
    check_link_options(link_name, capabilities or [])
    # No address: each message goes to its `to` through the peer's anonymous relay
    # (a sender link whose target has a null address, Part 2 §2.6.3 / AMQP Anonymous
    # Terminus for Message Routing), as long as every message has a `to`.
    relay = not conn.endpoint.address
    if relay and to is None and from_file is None:
        raise UserError("no address: give it in the URL (amqp://host/ADDRESS) or with --address, "
                        "or give each message a --to for the peer's anonymous relay", Exit.USAGE)
    if force_relay and not relay:
        raise UserError("--force-relay is for a URL with no address (the anonymous relay)",
                        Exit.USAGE)
    if sequence_key is not None:
        check_text(sequence_key, "--sequence-key")
        if not sequence_key:
            raise UserError("--sequence-key needs a name", Exit.USAGE)
    seq_key = sequence_key if sequence_key is not None else "sn" if sequence else None

    props = {
        "message_id": message_id, "user_id": user_id, "to": to, "subject": subject,
        "reply_to": reply_to, "correlation_id": correlation_id, "content_type": content_type,
        "content_encoding": content_encoding, "absolute_expiry_time": absolute_expiry_time,
        "creation_time": creation_time, "group_id": group_id, "group_sequence": group_sequence,
        "reply_to_group_id": reply_to_group_id,
    }
    if size is not None:
        check_body_size(size, body, file, from_file, lines, expand_body, json_body, body_type)
    if from_file is not None:
        if body is not None or file is not None or lines or expand_body:
            raise UserError("--from replays whole messages: no BODY, --file, --lines or "
                            "--expand with it", Exit.USAGE)
        if timestamp:
            raise UserError("--from sends the messages as recorded: --timestamp, which stamps "
                            "each message as it goes out, does not go with it", Exit.USAGE)
        # the replayed messages are sent as recorded: an option that would change them
        # is refused rather than silently left out
        given = [f"--{k.replace('_', '-')}" for k, v in props.items() if v is not None] + [
            name for name, v in (
                ("--body-type", body_type is not None), ("--json-body", json_body),
                ("--property", properties), ("--annotation", annotations),
                ("--delivery-annotation", delivery_annotations), ("--footer", footer),
                ("--durable/--no-durable", durable is not None), ("--priority", priority is not None),
                ("--ttl", ttl is not None),
                ("--first-acquirer/--no-first-acquirer", first_acquirer is not None),
            ) if v]
        if given:
            raise UserError(f"--from sends the messages as recorded: {', '.join(given)} would "
                            "not apply (edit the file, e.g. with jq)", Exit.USAGE)
        replay = Replay(from_file, count, seq_key, relay)
        messages: Iterator[OutgoingMessage] = iter(replay)
        read: InputRead | None = InputRead(messages, from_file, lambda: replay.line)
    else:
        replay = None
        if body_type is None:
            # a JSON value is an amqp-value section's; bytes as given, a data section's
            body_type = "value" if json_body else "data"
        template = build_template(
            body_type, props, durable, priority, ttl, first_acquirer, properties or [],
            annotations or [], delivery_annotations or [], footer or [], seq_key,
            timestamp,
        )
        if relay and not template.properties["to"]:  # (the one way to an empty to: --to '')
            raise UserError("--to '': the anonymous relay needs a node name in each message's to",
                            Exit.USAGE)
        if body is not None and body_type == "value" and not json_body:
            _warn_if_json_object(body)
        messages = message_source(template, body, file, lines, json_body, count,
                                  duration is not None, expand_body, size)
        read = InputRead(messages, file or "-") if lines and body is None else None
    if read is not None:
        messages = read

    show_progress = progress if progress is not None else (
        sys.stderr is not None and sys.stderr.isatty() and conn.trace is None
        and report_every is None)
    plan = SendPlan(
        address=conn.endpoint.address or None, force_relay=force_relay, settled=settled,
        window=window, rate=rate,
        duration=duration, txn_size=txn_size, rollback=rollback, timeout=timeout,
        progress=show_progress, expected=count if count is not None else (
            1 if from_file is None and not lines and duration is None else None),
        link_name=link_name, capabilities=tuple(capabilities or ()),
        timestamp=timestamp, report_every=report_every, report_json=json_out,
        release_retries=release_retries,
    )
    # lines from a pipe, a FIFO or a terminal come when they come: read in a thread
    waits = ((from_file is not None and _may_wait(from_file))
             or (lines and body is None and _may_wait(file or "-")))
    summary = run_send(conn, plan, messages, input_waits=waits, on_warning=_warn)
    # A run that failed before its link was open says only why (no summary of nothing
    # tried), unless asked for JSON: a script then always gets its one object (as
    # browse's); after Ctrl-C the summary is always printed. Once the link is open it is
    # printed, even with nothing sent (no credit came: "not sent 5").
    if not quiet and (json_out or not (summary.failure is not None and not summary.link_opened
                                       and summary.failure.code != Exit.INTERRUPTED)):
        # (those taken from the input and sent, or in doubt: what a resume starts after)
        unread = read.unread(summary.sent_first) if read is not None else None
        if json_out:
            obj = summary.to_json()
            if replay is not None:
                obj["skipped"] = replay.skipped
            if unread is not None:
                obj["input"] = unread[1]
            print(json.dumps(obj))
        else:
            print(summary_text(summary))
            if unread is not None:
                print(unread[0])
            if replay is not None and replay.skipped:
                print(f"skipped {replay.skipped} line(s) of {_input_name(replay.path)} that "
                      "carry no message (protocol headers, frames other than transfers, "
                      "link and summary records, ...) or one already sent (a delivery's "
                      "record after its transfer frame's)")
    code, why = summary_exit(summary)
    raise_exit(code, why, summary.failure)  # an internal error's own line, once the summary is out
