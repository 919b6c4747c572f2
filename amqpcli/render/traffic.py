"""Captured traffic, one line per frame: both protocols, notices and violations, plain or
coloured, and the same records as JSON objects (one per line).

    00:04:07.123456 c1 -> [0] transfer    handle=0 id=3 tag=0x00000003 settled  data "hi" (57 bytes)
    00:04:07.124001 c2 <- [1] message.transfer sync destination=echo | routing-key=echo | body "hi"

AMQP 1.0 frames are drawn by `frameline` (the one-line format every command shares);
this module adds the connection and direction, AMQP 0-10 assemblies, colour, and JSON.
"""

from __future__ import annotations

import base64
import uuid
from datetime import UTC, datetime
from typing import Any

from amqpcli.dissect.records import (
    AMQP10,
    FilePacket,
    FrameRecord,
    Notice,
    ViolationRecord,
    known_time,
)
from amqpcli.render.frameline import clock, frame_line, item_line
from amqpcli.render.items import item_to_json
from amqpcli.render.jsonvalues import Redactions, _float_json, b64, to_json
from amqpcli.render.redact import redact, redact_010_fields
from amqpcli.render.text import format_binary
from amqpcli.render.types import printable, quoted, shortest_float32

ARROW = {"client": "->", "server": "<-"}
_CHANNEL_WIDTH = 4
_NAME_WIDTH = 11

# performative -> style on a terminal
STYLES = {
    "open": "bold blue",
    "close": "bold blue",
    "begin": "blue",
    "end": "blue",
    "attach": "yellow",
    "detach": "yellow",
    "flow": "cyan",
    "transfer": "green",
    "disposition": "magenta",
    "heartbeat": "dim",
}


_iso_cache: dict[int, str] = {}


def iso(t: float | None) -> str | None:
    """YYYY-MM-DDTHH:MM:SS.ffffffZ (UTC), the microsecond rounded from `t * 1e6` as
    `clock` and the tables (`amqpcli.pipeline.rows`) round it, so every view of a record
    gives it the same time; the part up to the second is formatted once per second."""
    if t is None:
        return None
    sec, us = divmod(round(t * 1_000_000), 1_000_000)
    day = _iso_cache.get(sec)
    if day is None:
        if len(_iso_cache) > 4096:
            _iso_cache.clear()
        day = _iso_cache[sec] = datetime.fromtimestamp(sec, tz=UTC).strftime(
            "%Y-%m-%dT%H:%M:%S.")
    return f"{day}{us:06d}Z"


UNKNOWN_TIME = "-"  # a time the input did not carry (`known_time`)


def clock_text(t: float | None) -> str:
    """`clock(t)`, or `-` for a time not known."""
    return UNKNOWN_TIME if t is None else clock(t)


def head(time: float | None, conn: str, side: str | None) -> str:
    return f"{clock_text(time)} {conn} {ARROW.get(side or '', '  ')}"


# --- one line per record --------------------------------------------------------------


def record_line(rec: FrameRecord, *, show_secrets: bool = False, bodies: bool = True,
                message: Any = None, say_invalid: bool = True) -> str:
    """The line of one frame record, plain text (`message`: the whole message of the
    delivery in several frames this one ends, see `frame_line`). A transfer that is a
    whole delivery, and whose payload is not a valid message, says why: the records
    come in order, with every piece of a delivery in several frames (the caller joins
    them into `message`). `say_invalid` False: the caller cannot know that the capture
    holds the delivery's first frame (a connection joined mid-stream, or bytes lost
    since its link's last delivery ended), so its payload is not judged alone."""
    conn = rec.conn
    # (known_time and head inlined: this is every frame's line)
    h = (f"{clock(rec.time) if conn.timed else UNKNOWN_TIME} {conn.label} "
         f"{ARROW.get(rec.side or '', '  ')}")
    item = rec.item
    if rec.protocol == AMQP10:
        if item.__class__.__name__ == "Frame":
            return f"{h} " + frame_line(item, show_secrets=show_secrets, payload=bodies,
                                        message=message, say_invalid=say_invalid)
        return f"{h} " + item_line(item, show_secrets=show_secrets)
    return f"{h} " + line_010(item, bodies, show_secrets=show_secrets)


def notice_line(rec: Notice) -> str:
    who = rec.conn.label if rec.conn is not None else "--"
    where = (
        f" ({rec.conn.endpoints})"
        if rec.conn is not None and rec.kind in ("encrypted", "midstream")
        else ""
    )
    return note_line(known_time(rec.conn, rec.time), who, rec.side, rec.text + where)


def note_line(time: float | None, connection: str, side: str | None, text: str) -> str:
    """`22:13:20.012013 c1 !! client: text`: a notice's line, pcap-dump's (`notice_line`)
    and the proxy's, which has no capture record."""
    said_of = f"{side}: " if side else ""
    return f"{clock_text(time)} {connection} !! {said_of}{text}"


def _packet_text(packet: int) -> str:
    """"packet 26", and of several files "packet 26 of b.pcap" (its number is its own
    file's)."""
    if isinstance(packet, FilePacket):
        return f"packet {packet} of {printable(packet.file)}"
    return f"packet {packet}"


def violation_line(rec: ViolationRecord) -> str:
    pkt = f", {_packet_text(rec.packet)}" if rec.packet else ""
    link = f" on link {rec.link!r}" if rec.link else ""
    return (
        f"{clock_text(known_time(rec.conn, rec.time))} {rec.conn.label} !! violation {rec.kind} by {rec.side}"
        f"{link} (frame {rec.frame_no}{pkt}): {rec.detail}"
    )


# --- AMQP 0-10 ------------------------------------------------------------------------


def _v010(v: Any, limit: int = 40) -> str:
    from amqpcli.render.amqp010 import Choice, with_choices

    if isinstance(v, Choice):
        return str(v)
    if v is None or isinstance(v, bool):  # the words, not Python's True, False and None
        return "void" if v is None else "true" if v else "false"
    if isinstance(v, (bytes, bytearray)):
        return format_binary(bytes(v), limit)
    if isinstance(v, str):  # peer text: bare when plain, else quoted with controls escaped
        if (v and len(v) <= limit and " " not in v and v.isprintable() and "\\" not in v
                and '"' not in v):
            return v
        return quoted(v) if len(v) <= limit else quoted(v[:limit]) + "…"
    if isinstance(v, dict):
        inner = ", ".join(f"{printable(k)}={_v010(x, 20)}" for k, x in v.items())
        return "{" + (inner if len(inner) <= 2 * limit else inner[: 2 * limit] + "…") + "}"
    if isinstance(v, list):  # an array or list: its items, not a Python repr
        inner = ",".join(_v010(x, 20) for x in v)
        return "[" + (inner if len(inner) <= 2 * limit else inner[: 2 * limit] + "…") + "]"
    fields = getattr(v, "fields", None)
    if isinstance(fields, dict):  # a struct value, written as the header structs are
        return f"{v.qname}{{{_fields_text(with_choices(v, fields))}}}"
    ranges = getattr(v, "ranges", None)
    if ranges is not None:
        return ranges_text(ranges)
    if isinstance(v, float):
        return str(_shown_float_010(v))
    return str(v)  # a uuid as a uuid, numbers as numbers


def ranges_text(ranges: Any) -> str:
    """A sequence-set's (or byte-ranges') inclusive ranges as the text views write them:
    `0-3,7`."""
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in ranges)


def body_text_010(body: bytes, limit: int = 60) -> str:
    """A 0-10 body cut at `limit` bytes, `…` where it was cut, without its size: the line
    and the tree say that once after it (`b"BBB…" (700 bytes)`)."""
    return format_binary(body[:limit], limit) + ("…" if len(body) > limit else "")


def _fields_text(fields: dict[str, Any], sep: str = " ") -> str:
    return sep.join(f"{k}={_v010(v)}" for k, v in fields.items())


def line_010(item: Any, bodies: bool = True, *, show_secrets: bool = False) -> str:
    """One 0-10 item (protocol header, assembly, stream error) on one line."""
    method = getattr(item, "method", None)
    if method is None:
        err = getattr(item, "error", None)
        if err is not None:
            return f"[-]  stream error {err}"
        return f"AMQP 0-10 protocol header ({bytes(getattr(item, 'raw', b'')).hex(' ')})".replace(
            " ()", ""
        )
    parts = [f"[{item.channel}]".ljust(_CHANNEL_WIDTH), method.qname.ljust(_NAME_WIDTH)]
    if getattr(method, "sync", False):
        parts.append("sync")
    from amqpcli.render.amqp010 import octets, with_choices

    fields = with_choices(method, redact_010_fields(method, show_secrets))
    if fields:
        parts.append(_fields_text(fields))
    for s in item.header:
        parts.append(f"| {s.name}{{{_fields_text(with_choices(s, s.fields))}}}")
    if item.body is not None:
        if bodies:
            parts.append(f"| body {body_text_010(item.body)} ({octets(len(item.body))})")
        else:
            parts.append(f"| body ({octets(len(item.body))})")
    return " ".join(parts)


# --- colour ---------------------------------------------------------------------------


def styled(line: str, rec: Any) -> Any:
    """A rich `Text` of a line from this module, coloured by what it says."""
    from rich.text import Text

    text = Text(line)
    if isinstance(rec, (Notice, ViolationRecord)):
        text.stylize("bold red" if isinstance(rec, ViolationRecord) else "yellow")
        return text
    n = len(clock_text(known_time(rec.conn, rec.time)))
    text.stylize("dim", 0, n)
    c0 = n + 1
    c1 = c0 + len(rec.conn.label)
    text.stylize("cyan", c0, c1)
    text.stylize("green" if rec.side == "client" else "magenta", c1 + 1, c1 + 3)
    p0 = c1 + 4 + _CHANNEL_WIDTH + 1
    name = line[p0:].split(" ", 1)[0]
    style = STYLES.get(name)
    if style is None:
        style = "red" if name in ("frame", "stream") else "bold"
    text.stylize(style, p0, p0 + len(name))
    return text


# --- JSON -----------------------------------------------------------------------------


def _base(kind: str, rec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"record": kind}
    if getattr(rec, "protocol", None):
        out["protocol"] = rec.protocol
    out["time"] = iso(known_time(rec.conn, rec.time))
    out["connection"] = rec.conn.label if rec.conn is not None else None
    return out


def record_json(
    rec: FrameRecord, *, show_secrets: bool = False, bodies: bool = True, hidden: bool = False,
    message: Any = None, say_invalid: bool = True,
) -> dict[str, Any]:
    """A frame record as JSON. 1.0: the decoded item exactly as `amqp decode --json`
    writes it (message in the format of `recv --json`; `hidden`: a piece of a delivery in
    several frames that may hold a SASL secret, see `ChunkSecrets`; `message`: see
    `frame_to_json`, a `NotAMessage` without an error for the last piece of a delivery
    in several frames, which is not decoded alone; a whole delivery's payload that is
    not a valid message says why, `message-error`, unless `say_invalid` is False: see
    `record_line`); 0-10: the method, header structs and body."""
    out = _base("frame", rec)
    out["from"] = rec.side
    _packet_json(out, rec.packet)
    if rec.frame_no:
        out["frame"] = rec.frame_no
    item = rec.item
    if rec.protocol == AMQP10:
        fields = (item_to_json(item, show_secrets, hidden=hidden, message=message,
                               say_invalid=say_invalid) if bodies
                  else _brief_json(item, show_secrets))
    else:
        fields = json_010(item, bodies, show_secrets=show_secrets)
    if "protocol" in fields:  # a protocol header's own protocol: "sasl", "amqp0-10", ...
        fields["header"] = fields.pop("protocol")
    out.update(fields)
    return out


def _brief_json(item: Any, show_secrets: bool) -> dict[str, Any]:
    """A frame without its payload decoded: the performative and the payload's size."""
    if item.__class__.__name__ != "Frame":
        return item_to_json(item, show_secrets)
    body = redact(item.body, show_secrets)
    hide: Redactions | None = None if show_secrets else []  # nested in the performative
    out: dict[str, Any] = {
        "item": "frame",
        "offset": item.offset,
        "size": item.size,
        "type": {0: "amqp", 1: "sasl"}.get(item.type, item.type),
        "channel": item.channel,
        "performative": None if body is None else to_json(body, True, hide),
    }
    if body is not item.body or hide:
        out["redacted"] = True
    if item.payload:
        out["payload-size"] = len(item.payload)
    return out


def _shown_float_010(v: float) -> float:
    """A 0-10 float as every view shows it: one of type `float` (32-bit) as the shortest
    decimal that reads back as the same 32 bits, by 1.0's rule for its floats
    (`shortest_float32`: 0.1, not 0.10000000149011612, its value as a double); a double
    as it is."""
    from amqpcli.amqp010.model import TYPES_BY_NAME

    if getattr(v, "code", None) == TYPES_BY_NAME["float"][0]:
        return shortest_float32(v)
    return v


def plain_010(v: Any, typed: bool = False) -> Any:
    """0-10 values as JSON: bytes as text or base64, sets as ranges, the rest plain.
    `typed` (the JSON views) keeps every type the wire gave, so nothing is lost: see
    `_typed_010`; a dict is then a method's or struct's fields."""
    if typed:
        return _fields_010(v) if isinstance(v, dict) else _typed_010(v, False)
    if isinstance(v, (bytes, bytearray)):
        try:
            text = bytes(v).decode("utf-8")
            if text.isprintable():
                return {"binary-text": text}
        except UnicodeDecodeError:
            pass
        return {"binary": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, dict):
        return {str(k): plain_010(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain_010(x) for x in v]
    ranges = getattr(v, "ranges", None)
    if ranges is not None:
        return {"sequence-set": [list(r) for r in ranges]}
    if isinstance(v, uuid.UUID):
        return {"uuid": str(v)}
    if isinstance(v, float):
        return _shown_float_010(v)
    if isinstance(v, (bool, int, str)) or v is None:
        return v
    fields = getattr(v, "fields", None)
    if isinstance(fields, dict):
        return {"struct": getattr(v, "qname", ""), "fields": plain_010(fields)}
    return str(v)


def _fields_010(fields: dict[str, Any]) -> dict[str, Any]:
    return {str(k): _typed_010(x, False) for k, x in fields.items()}


def _typed_010(v: Any, inner: bool) -> Any:
    """Lossless JSON of a 0-10 value. A value read from a map or list (`inner`) carries its
    own type code on the wire, so it is written as {type: value} ({"int64": 5}, {"str16":
    "x"}; a code the spec does not name as {"0x1f": ...}), a map or list in one as {"map":
    {...}} or {"list": [...]}; true, false and null need no name. An array names its
    element type once: {"array": [...], "type": "str16"}. A field's own value has the type
    its definition declares and is written plain."""
    from amqpcli.amqp010.codec import code_of
    from amqpcli.amqp010.model import TYPES_BY_CODE
    from amqpcli.amqp010.values import Array

    if isinstance(v, Array):
        return {"array": [_typed_010(x, False) for x in v],
                "type": TYPES_BY_CODE.get(v.code, f"0x{v.code:02x}")}
    if isinstance(v, dict):
        m = {str(k): _typed_010(x, True) for k, x in v.items()}
        return {"map": m} if inner else m
    if isinstance(v, (list, tuple)):
        items = [_typed_010(x, True) for x in v]
        return {"list": items} if inner else items
    fields = getattr(v, "fields", None)
    if isinstance(fields, dict):
        return {"struct": getattr(v, "qname", ""), "fields": _fields_010(fields)}
    plain = plain_010(v)
    if isinstance(plain, float):  # NaN and the infinities as strings, as 1.0's JSON has them
        plain = _float_json(plain)
    if not inner or v is None or isinstance(v, (bool, uuid.UUID)):
        return plain
    code = code_of(v)
    return {TYPES_BY_CODE.get(code, f"0x{code:02x}"): plain}


def json_010(item: Any, bodies: bool = True, *, show_secrets: bool = False) -> dict[str, Any]:
    method = getattr(item, "method", None)
    if method is None:
        err = getattr(item, "error", None)
        if err is not None:
            return {"item": "error", "offset": item.offset, "error": str(err)}
        # as a 1.0 header is written (render.items), so one reader takes both
        return {"item": "protocol-header", "offset": getattr(item, "offset", 0),
                "protocol": "amqp0-10", "name": "AMQP 0-10", "version": [1, 1, 0, 10]}
    fields = redact_010_fields(method, show_secrets)
    out: dict[str, Any] = {
        "item": "assembly",
        "offset": item.offset,
        "channel": item.channel,
        "track": item.track,
        "method": method.qname,
        "fields": plain_010(fields, typed=True),
    }
    if fields != method.fields:  # as a 1.0 sasl-init's record says it was masked
        out["redacted"] = True
    if getattr(method, "sync", False):
        out["sync"] = True
    if item.header:
        out["header"] = [{"struct": s.qname, "fields": plain_010(s.fields, typed=True)}
                         for s in item.header]
    if item.body is not None:
        out["body"] = plain_010(item.body) if bodies else {"size": len(item.body)}
    return out


def _packet_json(out: dict[str, Any], packet: int) -> None:
    """A record's `packet`, and read from several files, its `file`."""
    if packet:
        out["packet"] = packet
        if isinstance(packet, FilePacket):
            out["file"] = packet.file


def notice_json(rec: Notice) -> dict[str, Any]:
    out = _base("notice", rec)
    if rec.side:
        out["side"] = rec.side
    _packet_json(out, rec.packet)
    out["kind"] = rec.kind
    out["text"] = rec.text
    return out


def violation_json(rec: ViolationRecord) -> dict[str, Any]:
    out = _base("violation", rec)
    out.update({"kind": rec.kind, "side": rec.side, "frame": rec.frame_no, "detail": rec.detail})
    _packet_json(out, rec.packet)
    if rec.link is not None:
        out["link"] = rec.link
    return out


__all__ = [
    "b64",
    "body_text_010",
    "clock",
    "iso",
    "json_010",
    "line_010",
    "note_line",
    "notice_json",
    "notice_line",
    "plain_010",
    "ranges_text",
    "record_json",
    "record_line",
    "styled",
    "violation_json",
    "violation_line",
]
