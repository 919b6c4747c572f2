"""Decoded items (protocol headers, frames, frame errors, messages, values) as JSON and trees.

One JSON object per item, with `"item"` saying which; every item carries its `offset`
in the input. Each can be turned back into its bytes (`item_bytes_from_json`), so
`amqp decode --json` output re-encodes to the input (but where a SASL secret was masked).

Where an item's members alone would give other bytes than the ones it was decoded from (a
value or a field in a wider encoding than needed, `71ffffffff` for the int -1, a str32, a
NaN with a payload or a sign), the item also carries those bytes, base64, as messages and
composites do (docs/message-format.md): a value item as `"encoded"` next to its
`"value"`, a frame's performative as the `"encoded"` of its composite object. Items whose
bytes are canonical (the usual case) carry nothing more.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from amqpcli.codec.composites import Attach, Open, Transfer
from amqpcli.codec.encode import encode  # (loaded with jsonvalues all the same)
from amqpcli.codec.frames import Frame, FrameError, ProtocolHeader, encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.resume import restarts_on_resume
from amqpcli.codec.types import Composite, DecodeError
from amqpcli.render.invalid import NotAMessage, amqp_format
from amqpcli.render.jsonvalues import (
    JsonValueError,
    Redactions,
    b64,
    from_json,
    odd_nans_written,
    to_json,
    unb64,
)
from amqpcli.render.message import (
    load_sections,
    message_bytes_from_json,
    message_to_json,
    message_tree,
)
from amqpcli.render.redact import handle_key, is_secret, may_hold_secret, redact
from amqpcli.render.text import Node, value_tree
from amqpcli.render.types import amqp_type

__all__ = [
    "MessageItem",
    "TransferAssembler",
    "ValueItem",
    "frame_to_json",
    "item_bytes_from_json",
    "item_to_json",
    "item_tree",
    "transfer_message",
]

_FRAME_TYPES = {0: "amqp", 1: "sasl"}


class ValueItem:
    """One AMQP value found at `offset` in a sequence of values; `raw`, the bytes it was
    decoded from (None: not known, taken to be `value`'s own encoding)."""

    __slots__ = ("offset", "raw", "size", "value")

    def __init__(self, offset: int, value: Any, size: int, raw: bytes | None = None) -> None:
        self.offset = offset
        self.value = value
        self.size = size
        self.raw = raw


class MessageItem:
    """An encoded message found at `offset`."""

    __slots__ = ("message", "offset", "size")

    def __init__(self, offset: int, message: Message, size: int) -> None:
        self.offset = offset
        self.message = message
        self.size = size


Item = ProtocolHeader | Frame | FrameError | ValueItem | MessageItem


def transfer_message(frame: Frame) -> Message | None:
    """The message a single-frame transfer carries, decoded; None if it is not one (a
    transfer without a delivery-id continues a delivery: only the first names it)."""
    return _frame_message(frame, False)[0]


def _frame_message(frame: Frame, say_invalid: bool) -> tuple[Message | None, NotAMessage | None]:
    """(`transfer_message(frame)`, and when it is None, `say_invalid` and the transfer
    carries a whole delivery of the AMQP message format: why its payload is not a valid
    message, offsets in the payload and, as `offset`, in the input)."""
    body = frame.body
    if (not isinstance(body, Transfer) or not frame.payload or body.more
            or body.delivery_id is None):
        return None, None
    try:
        return load_sections(Message.decode(frame.payload)), None
    except DecodeError as e:
        if not say_invalid or not amqp_format(body.message_format):
            return None, None
        return None, NotAMessage.at(e, frame.payload, _payload_start(frame))
    except Exception:  # noqa: BLE001 - the payload stays shown as bytes
        return None, None


def _payload_start(frame: Frame) -> int:
    """Where a frame's payload begins in the input."""
    return frame.offset + frame.size - len(frame.payload)


def frame_to_json(
    frame: Frame,
    show_secrets: bool = False,
    exact: bool = True,
    message: Message | NotAMessage | None = None,
    hidden: bool = False,
    say_invalid: bool = False,
) -> dict[str, Any]:
    """A frame's JSON object; `message` is the whole message of a multi-frame delivery
    whose last frame this is (see `TransferAssembler`), or why the payloads joined are
    none (`message-error`, beside the payload; a `NotAMessage` without an error: no
    message is decoded). When a SASL secret was masked,
    in the performative or in the message (`to_json`), it says `"redacted": true`, and a
    masked message's payload is only its size (`payload-size`: its bytes hold the
    secret), as a SASL frame gives none of its bytes. `hidden`: the payload is a piece
    of a delivery that may hold a secret (`ChunkSecrets`); the message, when there is
    one, decides instead; a payload not decoded as a message is hidden so too when a
    SASL performative may begin in it (`may_hold_secret`: its bytes are not masked as a
    message's would be), its `message-error` kept. `say_invalid`: a transfer that carries a whole delivery (the
    caller knows that none it did not see began in an earlier frame) and whose payload
    is not a valid message says why (`message-error`)."""
    secret = is_secret(frame.body)
    shown = redact(frame, show_secrets) if secret else frame  # nothing to hide otherwise
    hide: Redactions | None = None if show_secrets else []  # nested in the performative
    out: dict[str, Any] = {
        "item": "frame",
        "offset": frame.offset,
        "size": frame.size,
        "type": _FRAME_TYPES.get(frame.type, frame.type),
        "channel": frame.channel,
    }
    if frame.doff != 2:
        out["doff"] = frame.doff
    if frame.ext:
        out["ext"] = b64(frame.ext)
    if shown.body is None:
        out["performative"] = None
    else:
        odd_nans = odd_nans_written()
        perf = out["performative"] = to_json(shown.body, exact, hide)
        if (odd_nans_written() != odd_nans and exact and shown is frame and not hide
                and not _keep_performative_bytes(shown.body, perf, show_secrets)):
            out["redacted"] = True  # (its bytes withheld: they may hold a SASL secret)
    if (secret and not show_secrets) or hide:
        out["redacted"] = True
    # the last frame of a multi-frame delivery may carry no payload (only `more=false`):
    # its message is the delivery's all the same
    if message is None:
        msg, bad = _frame_message(frame, say_invalid)
    elif isinstance(message, NotAMessage):
        msg, bad = None, message
    else:
        msg, bad = message, None
    msg_json = None if msg is None else message_to_json(msg, exact, show_secrets)
    if (msg_json is not None and "redacted" in msg_json) or (
            msg_json is None and not show_secrets and (
                hidden or _payload_may_hold_secret(frame))):
        out["redacted"] = True
        if frame.payload:
            out["payload-size"] = len(frame.payload)  # its bytes hold the secret
    elif frame.payload:
        out["payload"] = b64(frame.payload)
    if bad is not None and bad.error is not None:
        out["message-error"] = bad.to_json()
    if msg_json is not None:
        out["message"] = msg_json
    return out


def _keep_performative_bytes(body: Composite, perf: dict[str, Any],
                             show_secrets: bool = False) -> bool:
    """Give the performative's JSON object `perf` the bytes `body` was decoded from, as
    `"encoded"`, when it would not encode back to them without.

    Called only for a performative that holds a NaN "NaN" does not keep (a payload, the
    sign bit: `odd_nans_written` went up while it was converted): a performative whose
    fields alone would not give its bytes back already carries them (`to_json`, exact),
    and any other's JSON encodes back to the same bytes as its fields. So the common
    case costs no encoding. False: the bytes were withheld, as a SASL performative
    begins in them (among items its fields do not show), unless `show_secrets`."""
    raw = bytes(body._raw[0]) if body._raw is not None else encode(body)
    if _json_bytes(perf) != raw:
        if not show_secrets and may_hold_secret(raw):
            return False  # (a SASL performative among items its fields do not show)
        perf["encoded"] = b64(raw)
    return True


def _json_bytes(obj: Any) -> bytes | None:
    """What the JSON form of a value encodes back to (None: it does not)."""
    try:
        return encode(from_json(obj))
    except Exception:  # noqa: BLE001 - it cannot: keep the bytes
        return None


def item_to_json(
    item: Item, show_secrets: bool = False, exact: bool = True,
    message: Message | NotAMessage | None = None, hidden: bool = False,
    say_invalid: bool = False,
) -> dict[str, Any]:
    """The JSON object of one decoded item (`message`, `hidden`, `say_invalid`: see
    `frame_to_json`)."""
    if isinstance(item, Frame):
        return frame_to_json(item, show_secrets, exact, message, hidden, say_invalid)
    if isinstance(item, ProtocolHeader):
        return {
            "item": "protocol-header",
            "offset": item.offset,
            "protocol": item.kind,
            "name": item.name,
            "version": list(item.version),
        }
    if isinstance(item, FrameError):
        out: dict[str, Any] = {
            "item": "error",
            "offset": item.offset,
            "expected": item.expected,
            "found": item.found,
        }
        if item.frame_offset is not None:
            out["frame-offset"] = item.frame_offset
        if item.fatal:
            out["fatal"] = True
        return out
    if isinstance(item, MessageItem):
        msg_json = message_to_json(item.message, exact, show_secrets)
        out = {"item": "message", "offset": item.offset, "message": msg_json}
        if "redacted" in msg_json:
            out["redacted"] = True
        return out
    value = redact(item.value, show_secrets)
    hide: Redactions | None = None if show_secrets else []  # nested in it
    odd_nans = odd_nans_written()
    out = {
        "item": "value",
        "offset": item.offset,
        "type": _type_name(value),
        "value": to_json(value, exact, hide),
    }
    if value is not item.value or hide:
        out["redacted"] = True
    elif exact and item.raw is not None and not _value_keeps_bytes(
            item.value, item.raw, out["value"], odd_nans):
        if not show_secrets and may_hold_secret(item.raw):
            out["redacted"] = True  # (a SASL performative its members did not show)
        else:
            out["encoded"] = b64(item.raw)  # (no secret in it was masked)
    return out


# The format codes of the scalars written in the one form the encoder writes for their
# value (null, booleans, uint 0, ulong 0, list0, the fixed-width types, str8, sym8, vbin8):
# such a value needs no encoding to tell that it encodes back to its bytes.
_ONE_FORM = frozenset((0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x50, 0x51, 0x54, 0x55, 0x60,
                       0x61, 0x72, 0x73, 0x74, 0x82, 0x83, 0x84, 0x94, 0x98, 0xA0, 0xA1, 0xA3))
# The wider forms of scalars, and whether the encoder writes them for value `v` taking
# `n` bytes in all: as it does when the narrower form cannot hold it.
_WIDE_FORMS: dict[int, Any] = {
    0x52: lambda v, n: v != 0,  # smalluint, smallulong (not for 0: uint0, ulong0)
    0x53: lambda v, n: v != 0,
    0x70: lambda v, n: v > 0xFF,  # uint, ulong
    0x80: lambda v, n: v > 0xFF,
    0x71: lambda v, n: not -0x80 <= v <= 0x7F,  # int, long
    0x81: lambda v, n: not -0x80 <= v <= 0x7F,
    0xB0: lambda v, n: n > 5 + 0xFF,  # vbin32, str32, sym32
    0xB1: lambda v, n: n > 5 + 0xFF,
    0xB3: lambda v, n: n > 5 + 0xFF,
}


def _value_keeps_bytes(value: Any, raw: bytes, value_json: Any, odd_nans: int) -> bool:
    """Whether `value_json`, the JSON form of `value` (decoded from `raw`; `odd_nans`: the
    count of odd NaNs written before it was converted), encodes back to `raw`.

    A value whose JSON reads back as it is (it holds no NaN "NaN" does not keep) does when
    it encodes to `raw` itself: a scalar in the form the encoder writes for it is known to
    by its format code (`_ONE_FORM`, `_WIDE_FORMS`), anything else is encoded and compared;
    only a value that does not encode to its bytes has its JSON read back and encoded. The
    common case costs no encoding (a scalar) or one (a list, a map, ...)."""
    if odd_nans_written() == odd_nans:
        code = raw[0]
        if code in _ONE_FORM:
            return True
        wide = _WIDE_FORMS.get(code)
        if wide is not None:
            return wide(value, len(raw)) or _json_bytes(value_json) == raw
        with suppress(Exception):  # (if it cannot, see what its JSON gives)
            if encode(value) == raw:
                return True
    return _json_bytes(value_json) == raw


def _type_name(value: Any) -> str:
    if isinstance(value, Composite):
        return value.NAME
    return amqp_type(value)


def item_bytes_from_json(obj: Any) -> bytes:
    """The bytes a JSON item stands for (errors have none)."""
    if type(obj) is not dict or "item" not in obj:
        raise JsonValueError("", 'an item is an object with an "item" member')
    kind = obj["item"]
    if kind == "protocol-header":
        version = obj.get("version")
        if not (isinstance(version, list) and len(version) == 4):
            raise JsonValueError("version", "expected four numbers")
        return b"AMQP" + bytes(version)
    if kind == "frame":
        perf = obj.get("performative")
        body = None if perf is None else from_json(perf, "performative")
        if body is not None and not isinstance(body, Composite):
            raise JsonValueError("performative", 'expected a performative such as {"open": {...}}')
        ftype = obj.get("type", "amqp")
        type_code = {"amqp": 0, "sasl": 1}.get(ftype, ftype) if isinstance(ftype, str) else ftype
        if not isinstance(type_code, int):
            raise JsonValueError("type", f"unknown frame type {ftype!r}")
        payload = unb64(obj["payload"], "payload") if "payload" in obj else b""
        ext = unb64(obj["ext"], "ext") if "ext" in obj else b""
        return encode_frame(body, int(obj.get("channel", 0)), payload, type_code, ext)
    if kind == "message":
        return message_bytes_from_json(obj.get("message"))
    if kind == "value":
        value = from_json(obj.get("value"), "value")
        if "encoded" in obj:
            raw = _encoded_value(obj["encoded"], obj.get("value"))
            if raw is not None:
                return raw
        return encode(value)
    if kind == "error":
        return b""
    raise JsonValueError("item", f"unknown item {kind!r}")


def _encoded_value(text: Any, value_json: Any) -> bytes | None:
    """The bytes a value item's `"encoded"` keeps, if they still stand for its `"value"`:
    they decode to one value whose JSON form is `value_json` exactly (member order too).
    None when `"value"` was edited: the edit wins, encoded afresh."""
    import json

    from amqpcli.codec.decode import decode

    raw = unb64(text, "encoded")
    try:
        original, end = decode(raw)
    except (DecodeError, RecursionError) as e:
        raise JsonValueError("encoded", f"not the bytes of an AMQP value: {e}") from None
    if end != len(raw):
        raise JsonValueError("encoded", f"not the bytes of one AMQP value: {len(raw) - end} "
                                        "bytes after the first")
    if json.dumps(to_json(original)) != json.dumps(value_json):
        return None
    return raw


def item_tree(item: Item, show_secrets: bool = False,
              message: Message | NotAMessage | None = None, hidden: bool = False,
              say_invalid: bool = False) -> Node:
    """The tree of one decoded item, its root line saying what and where it is
    (`message`, `hidden`, `say_invalid`: see `frame_to_json`). A transfer whose payload
    is not a valid message shows it as bytes, followed by why (`NotAMessage.text`)."""
    if isinstance(item, ProtocolHeader):
        return Node(f"{item.name} protocol header", "", f"@{item.offset}: {item.raw[4:].hex(' ')}")
    if isinstance(item, FrameError):
        return Node("error", str(item), None)
    if isinstance(item, MessageItem):
        node = message_tree(item.message, show_secrets=show_secrets)
        node.type = f"@{item.offset}, {item.size} bytes"
        return node
    if isinstance(item, ValueItem):
        node = value_tree(item.value, "", show_secrets)
        where = f"@{item.offset}, {item.size} byte{'' if item.size == 1 else 's'}"
        node.type = f"{node.type}; {where}" if node.type else where
        if not node.label:
            node.label = "value"
        return node
    frame = item
    kind = "SASL " if frame.type == 1 else ""
    where = f"@{frame.offset}, {frame.size} bytes"
    if frame.ext:
        where += f", ext 0x{frame.ext.hex()}"
    if frame.body is None:
        return Node(f"[{frame.channel}] heartbeat", "", where)
    node = value_tree(frame.body, "", show_secrets)
    node.label = f"[{frame.channel}] {kind}{frame.body.NAME}"
    node.type = where
    hide = hidden and not show_secrets
    if isinstance(message, NotAMessage):
        node.children.append(_hidden_payload(frame) if hide or (
            not show_secrets and _payload_may_hold_secret(frame))
                             else value_tree(frame.payload, "payload"))
        if message.error is not None:
            node.children.append(Node("message (all frames of the delivery)",
                                      message.text(offset=True),
                                      f"{message.size} bytes in all"))
    elif message is not None:
        if hide and "redacted" in message_to_json(message):
            node.children.append(_hidden_payload(frame))
        else:
            node.children.append(value_tree(frame.payload, "payload"))
        node.children.append(message_tree(message, "message (all frames of the delivery)",
                                          show_secrets))
    elif frame.payload:
        msg, bad = _frame_message(frame, say_invalid)
        if msg is not None:
            node.children.append(message_tree(msg, show_secrets=show_secrets))
        elif hide or (not show_secrets and _payload_may_hold_secret(frame)):
            # (not a message, shown as bytes: a SASL performative in it is not masked)
            node.children.append(_hidden_payload(frame))
        else:
            node.children.append(value_tree(frame.payload, "payload"))
        if bad is not None:
            node.children.append(Node("message", bad.text(offset=True), None))
    return node


def _payload_may_hold_secret(frame: Frame) -> bool:
    """Whether a frame's payload, not shown as a message, may hold a SASL secret: a SASL
    frame's (it has none by the spec, so bytes after its performative are the fields of
    a damaged one: a sasl-init whose list was cut to list0 leaves its response there),
    or one in which a SASL performative begins (`may_hold_secret`)."""
    payload = frame.payload
    return bool(payload) and (frame.type == 1 or may_hold_secret(payload))


def _hidden_payload(frame: Frame) -> Node:
    return Node("payload", "*** (may hold a SASL secret)", f"{len(frame.payload)} bytes")


class TransferAssembler:
    """Joins the payloads of a delivery sent in several transfer frames (`more=true`).

    `feed(frame)` returns the whole message when `frame` ends a delivery that took more
    than one frame, else None. When the payloads joined are not a valid message, it
    returns a `NotAMessage` instead, saying why (offsets in the joined payload, and the
    offset in the input of the byte the error points at); of a message format other than
    0 (given by the first frame), a `NotAMessage` without an error: the payload is
    opaque, neither a message nor an invalid one. Per (channel, handle) of one stream
    (`where`: which, when there are several); an aborted delivery is dropped. With
    `join=False` it keeps no payload, and the last frame of a delivery in several gets
    the `NotAMessage` without an error (a view that has every frame's payload: that piece
    is not judged alone as a message).

    A delivery resumed on a link's new attachment (`resume=true`) starts again, or goes
    on from what came on the earlier one, as the model of the connection decides it
    (`restarts_on_resume`): fed the attaches too (`peer`: the `where` of the other
    direction, whose attaches are the receiver's of this one's links), it knows what the
    receiver's attach held. It follows the link by its name and its ends' container-ids
    (Part 2 §2.6.1), from the opens it is fed, not by the handle or connection it was
    under: the new attachment may be under another handle, one another link took in the
    meantime, or on another connection (`forget` keeps what a link left unfinished for
    that). Without the opens, by its name on its own stream only.
    """

    PARKED_MAX = 64  # deliveries kept for a link's next attachment (`_parked`)

    def __init__(self, join: bool = True) -> None:
        self._join = join
        # key -> (the first frame's message-format, the payloads so far, where each
        # starts, the delivery-tag)
        self._parts: dict[tuple[Any, int, int], tuple[Any, list[bytes], list[int], Any]] = {}
        self._ids: dict[tuple[Any, int, int], Any] = {}  # key -> the delivery-id it holds
        # by stream (`where`): (channel, handle) -> the link attached there (`_link`)
        self._links: dict[Any, dict[tuple[int, int], Any]] = {}
        # by stream: the container-id of its side's open
        self._containers: dict[Any, Any] = {}
        # by stream: link name -> its latest attach as the receiver, if it holds unsettled
        # state (an attach of a link resumed)
        self._receivers: dict[Any, dict[Any, Attach]] = {}
        # by link (`_link`): a delivery its attachment left unfinished when another link
        # took its handle or its connection ended, until it is attached again (the
        # oldest go first past PARKED_MAX)
        self._parked: dict[Any, tuple[Any, list[bytes], list[int], Any]] = {}

    def feed(self, frame: Frame, where: Any = None,
             peer: Any = None) -> Message | NotAMessage | None:
        body = frame.body
        if type(body) is not Transfer:
            cls = body.__class__
            if cls is Attach:
                self._attached(frame, body, where, peer)  # type: ignore[arg-type]
            elif cls is Open:
                self._containers[where] = body.container_id  # type: ignore[union-attr]
            return None
        key = (where, frame.channel, handle_key(body.handle))
        if body.aborted:
            self._parts.pop(key, None)
            self._ids.pop(key, None)
            return None
        entry = self._parts.get(key)
        if (entry is not None and body.delivery_id is not None
                and self._ids.get(key) != body.delivery_id):
            # a delivery begins (not the next frame of the one under way): one left
            # unfinished is part of it only if this resumes it (on the link's new
            # attachment) and the receiver's attach held a state of it
            tag = body.delivery_tag
            link = self._links.get(where, {}).get(key[1:])
            if not body.resume or tag != entry[3] or restarts_on_resume(
                    self._receiver(peer, link[0] if link else None), tag):
                del self._parts[key]
        if body.more and body.delivery_id is not None:
            self._ids[key] = body.delivery_id
        if body.more:
            entry = self._parts.get(key)
            if entry is None:
                entry = self._parts[key] = (body.message_format, [], [], body.delivery_tag)
            if self._join:
                entry[1].append(frame.payload)
                entry[2].append(_payload_start(frame))
            return None
        entry = self._parts.pop(key, None)
        self._ids.pop(key, None)
        if entry is None:
            return None
        if not self._join:
            return NotAMessage(None, len(frame.payload))
        fmt, parts, starts, _tag = entry
        parts.append(frame.payload)
        starts.append(_payload_start(frame))
        payload = b"".join(parts)
        try:
            return load_sections(Message.decode(payload))
        except DecodeError as e:
            if not amqp_format(fmt):
                return NotAMessage(None, len(payload))
            return NotAMessage(e, len(payload), _joined_offset(parts, starts, e.offset))
        except Exception:  # noqa: BLE001 - the frames are still shown as bytes
            return None

    def _receiver(self, where: Any, name: Any) -> Attach | None:
        held = self._receivers.get(where)
        return None if held is None else held.get(name)

    def _link(self, name: Any, where: Any, peer: Any) -> Any:
        """Who a link sending on stream `where` is: its name and the container-ids of
        its sender (`where`'s open) and receiver (`peer`'s), the same on any connection
        of the two; without them, its name on this stream."""
        mine = self._containers.get(where)
        theirs = self._containers.get(peer)
        if mine is None or theirs is None:
            return (name, where)
        return (name, mine, theirs)

    def _attached(self, frame: Frame, body: Attach, where: Any, peer: Any) -> None:
        name = body.name
        if not isinstance(name, str):
            return  # (a damaged attach, which the model ignores too: no link to follow)
        if body.role is True:  # the receiver's: what it holds of the link's deliveries
            if body.unsettled:
                self._receivers.setdefault(where, {})[name] = body
            elif where in self._receivers:
                self._receivers[where].pop(name, None)
            return
        # the sender's: a new attachment, whose first transfer begins a delivery or
        # resumes one left unfinished on the link's earlier attachment (under another
        # handle, channel or connection, perhaps: it is moved under this one's)
        key = (where, frame.channel, handle_key(body.handle))
        link = self._link(name, where, peer)
        links = self._links.setdefault(where, {})
        parts = self._parts
        self._ids.pop(key, None)
        held = parts.get(key)
        if held is not None and links.get(key[1:]) != link:
            # another link takes the handle: what the one before left unfinished waits
            # for that one's next attachment
            self._park(links.get(key[1:]), parts.pop(key))
        for old in [k for k in parts if k != key]:
            if self._links.get(old[0], {}).get(old[1:]) == link:
                parts[key] = parts.pop(old)
                self._ids.pop(old, None)
        parked = self._parked.pop(link, None)
        if parked is not None and key not in parts:
            parts[key] = parked
        links[key[1:]] = link

    def _park(self, link: Any, entry: tuple[Any, list[bytes], list[int], Any]) -> None:
        if link is None:
            return  # (a link attached before the input began: not known to resume)
        parked = self._parked
        parked.pop(link, None)
        parked[link] = entry
        if len(parked) > self.PARKED_MAX:
            del parked[next(iter(parked))]

    def forget(self, where: Any) -> None:
        """The stream `where` ended for good: what is held of it goes, but for what its
        links known by their container-ids left unfinished, kept for their attachment
        on another connection."""
        links = self._links.pop(where, {})
        self._receivers.pop(where, None)
        for k in [k for k in self._parts if k[0] == where]:  # (deliveries under way only)
            entry = self._parts.pop(k)
            link = links.get(k[1:])
            if link is not None and len(link) == 3:  # (known by its containers)
                self._park(link, entry)
        for k in [k for k in self._ids if k[0] == where]:
            del self._ids[k]
        self._containers.pop(where, None)

    def offer(self, frame: Any, where: Any = None,
              peer: Any = None) -> Message | NotAMessage | None:
        """`feed`, for a view that meets every frame: what the joins need of it (attaches
        and opens; a transfer while a delivery in several frames may be under way), the
        rest passed over at the cost of a class check."""
        body: Any = getattr(frame, "body", None)
        cls = body.__class__
        if cls is Transfer:
            if body.more or self._parts:
                return self.feed(frame, where, peer)
        elif cls is Attach or cls is Open:
            self.feed(frame, where, peer)
        return None

    def pending_any(self) -> bool:
        """True while a delivery in several frames has more to come (not one kept for a
        link's next attachment)."""
        return bool(self._parts)


def _joined_offset(parts: list[bytes], starts: list[int], pos: int) -> int:
    """Where byte `pos` of the payloads `parts` joined is in the input (`starts`: where each
    part begins there); the end of the payloads is just after the last one."""
    for i, part in enumerate(parts):
        if pos < len(part) or i == len(parts) - 1:
            return starts[i] + pos
        pos -= len(part)
    return pos  # (no parts: never, a delivery has its last frame)
