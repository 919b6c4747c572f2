"""AMQP 0-10 items (protocol header, assemblies, stream errors) as a readable tree.

One line per item and JSON live in `render.traffic` (`line_010`, `json_010`), next to the
1.0 frame lines they sit among in `pcap-dump`; this is the tree `amqp decode` prints.
Credentials in `connection.start-ok` (the PLAIN response: authzid NUL user NUL password)
are masked here unless asked, as they are for 1.0's sasl-init.
"""

from __future__ import annotations

import uuid
from typing import Any

from amqpcli.amqp010.values import Array, Datetime
from amqpcli.render.redact import redact_010_fields
from amqpcli.render.text import format_binary
from amqpcli.render.traffic import body_text_010, plain_010, ranges_text
from amqpcli.render.types import iso_time, printable, quoted


class Choice(str):
    """A field's value shown by its spec enum name ("explicit"), or, outside the enum, as
    the number with a note; text views only (JSON keeps the number)."""


def with_choices(obj: Any, fields: dict[str, Any]) -> dict[str, Any]:
    """`fields` (of the control, command or struct `obj`) with enum values named."""
    out = dict(fields)
    for f in obj.definition.fields:
        names = f.choices
        v = out.get(f.name)
        if names and isinstance(v, int) and not isinstance(v, bool):
            name = names.get(v)
            domain = f.declared.rsplit(".", 1)[-1]
            out[f.name] = Choice(name if name is not None else f"{v} (not a {domain})")
    return out


def octets(n: int) -> str:
    return f"{n} byte{'s' * (n != 1)}"


def _value(v: Any) -> str:
    if isinstance(v, Choice):
        return str(v)
    if v is None or isinstance(v, bool):  # the words, not Python's True, False and None
        return "void" if v is None else "true" if v else "false"
    if isinstance(v, Datetime):  # seconds since the epoch, read as a time where it is one
        iso = iso_time(int(v) * 1000)
        return f"{iso[:-5]}Z ({int(v)})" if iso is not None else str(int(v))
    if isinstance(v, dict):  # a map in a map or list: its entries, each with its type
        return "{" + ", ".join(f"{printable(k)}: {_type_name(x)}{_value(x)}"
                               for k, x in v.items()) + "}"
    if isinstance(v, (bytes, bytearray)):
        return format_binary(bytes(v), 60)
    if isinstance(v, str):  # quoted as a 1.0 string: escapes, and its backslashes too
        return quoted(v)
    if isinstance(v, Array):  # of one type, which the field or entry says
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, list):  # each item with its own type, as a map's entries
        return "[" + ", ".join(f"{_type_name(x)}{_value(x)}" for x in v) + "]"
    fields = getattr(v, "fields", None)
    if isinstance(fields, dict):  # a struct: its name and fields, as header lines give them
        inner = ", ".join(f"{k}: {_value(x)}" for k, x in with_choices(v, fields).items())
        return f"{v.qname} {{{inner}}}"
    ranges = getattr(v, "ranges", None)
    if ranges is not None:  # a sequence-set, byte-ranges: as pcap-dump's line, 0-3,7
        return ranges_text(ranges)
    if isinstance(v, uuid.UUID):
        return str(v)
    plain = plain_010(v)
    return str(plain) if not isinstance(plain, str) else plain


def _wire_type(v: Any) -> str | None:
    """The type a map entry's value carries on the wire (a field's own type is its
    definition's); None for true, false and void, whose words say it."""
    from amqpcli.amqp010.codec import code_of
    from amqpcli.amqp010.model import TYPES_BY_CODE

    if v is None or isinstance(v, bool):
        return None
    try:
        code = code_of(v)
    except (TypeError, ValueError, KeyError):
        return None
    return TYPES_BY_CODE.get(code, f"0x{code:02x}")


def _entry_type(v: Any) -> str:
    """`  (int64)` after an entry's value on its own line."""
    t = _wire_type(v)
    return f"  ({t})" if t is not None else ""


def _type_name(v: Any) -> str:
    """`int64:` before an entry's value inside a map written on one line."""
    t = _wire_type(v)
    return f"{t}:" if t is not None and t not in ("map", "list") else ""


def _field_lines(obj: Any, fields: dict[str, Any], indent: str) -> list[str]:
    lines: list[str] = []
    for name, v in with_choices(obj, fields).items():
        if isinstance(v, dict) and v:
            lines.append(f"{indent}{name}:  (map, {len(v)} entr{'y' if len(v) == 1 else 'ies'})")
            # (a key is the peer's text: its control characters escaped, as --brief does)
            lines += [f"{indent}  {printable(k)}: {_value(x)}{_entry_type(x)}"
                      for k, x in v.items()]
        else:
            lines.append(f"{indent}{name}: {_value(v)}")
    return lines


def tree_010(item: Any, show_secrets: bool = False) -> list[str]:
    """Plain text lines for one item; the first names it, the rest are its fields."""
    method = getattr(item, "method", None)
    if method is None:
        err = getattr(item, "error", None)
        if err is not None:
            return [f"decode error at offset {item.offset}: {err}"]
        return [f"AMQP 0-10 protocol header  (@{item.offset}: {bytes(item.raw[4:]).hex(' ')})"]
    kind = type(method).__name__.lower()  # control / command
    flags = ", sync" if getattr(method, "sync", False) else ""
    frames = f"{item.frames} frame{'s' * (item.frames != 1)}"
    lines = [f"[{item.channel}] {method.qname}  ({kind}{flags}, @{item.offset}, {frames})"]
    lines += _field_lines(method, redact_010_fields(method, show_secrets), "  ")
    for struct in item.header:
        lines.append(f"  header {struct.qname}")
        lines += _field_lines(struct, dict(struct.fields), "    ")
    if item.body is not None:
        lines.append(f"  body: {body_text_010(item.body)}  ({octets(len(item.body))})")
    return lines


# --- destinations: `pcap-dump --links` of a 0-10 connection ----------------------------


def _modes(sub: Any) -> list[str]:
    """A subscription's accept and acquire modes where they are not the usual ones."""
    bits = []
    if sub.accept_mode != 0:
        bits.append(f"accept-mode {_choice('message.accept-mode', sub.accept_mode)}")
    if sub.acquire_mode != 0:
        bits.append(f"acquire-mode {_choice('message.acquire-mode', sub.acquire_mode)}")
    return bits


def _choice(domain: str, value: int) -> str:
    from amqpcli.amqp010.model import ENUMS

    return ENUMS.get(domain, {}).get(value, str(value))


def destination_line(label: str, d: Any) -> str:
    """One `Destination` (amqpcli.amqp010.session) of connection `label` on one line: its
    session, who sends, the subscription that opened it, its transfers by state."""
    session = quoted(d.session) if d.session is not None else "(not attached)"
    first = (f"{label} s{d.session_no} destination {quoted(d.destination)} ({d.sender} sends)"
             f" session {session} channel {d.channel}")
    sub = d.subscription
    if sub is not None:
        bits = [f"{sub.flow_mode} mode", *_modes(sub)]
        if d.subscribes > 1:
            bits.append(f"subscribed {d.subscribes} times")
        if sub.cancelled_at is not None:
            bits.append("cancelled")
        queue = quoted(sub.queue) if sub.queue is not None else "(no queue)"
        first += f", subscribed to queue {queue} ({', '.join(bits)})"
    states = " ".join(f"{k}={v}" for k, v in d.states.items())
    n = d.transfers
    return f"{first}: {n} transfer{'s' * (n != 1)} ({d.bytes} B) {states}"


def destination_json(label: str, d: Any) -> dict[str, Any]:
    from amqpcli.render.traffic import iso

    sub = d.subscription
    out: dict[str, Any] = {
        "record": "destination",
        "protocol": "amqp-0-10",
        "connection": label,
        "session": d.session_no,
        "session-name": d.session,
        "channel": d.channel,
        "destination": d.destination,
        "sender": d.sender,
        "first-time": iso(d.first_time),
        "transfers": d.transfers,
        "bytes": d.bytes,
        "outcomes": dict(d.states),
        "subscription": None,
    }
    if sub is not None:
        out["subscription"] = {
            "queue": sub.queue,
            "time": iso(sub.time),
            "accept-mode": sub.accept_mode,
            "acquire-mode": sub.acquire_mode,
            "exclusive": sub.exclusive,
            "arguments": plain_010(sub.arguments, typed=True) if sub.arguments else None,
            "flow-mode": sub.flow_mode,
            "credit": dict(sub.credit),
            "cancelled": iso(sub.cancelled_at),
            "subscribes": d.subscribes,
        }
    return out
