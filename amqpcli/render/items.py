"""Decoded items (protocol headers, frames, frame errors, messages, values) as JSON and trees.

One JSON object per item, with `"item"` saying which; every item carries its `offset`
in the input. Each can be turned back into its bytes (`item_bytes_from_json`), so
`amqp decode --json` output re-encodes to the input.
"""

from __future__ import annotations

from typing import Any

from amqpcli.codec.composites import Transfer
from amqpcli.codec.frames import Frame, FrameError, ProtocolHeader, encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import Composite
from amqpcli.render.jsonvalues import JsonValueError, Redactions, b64, from_json, to_json, unb64
from amqpcli.render.message import (
    load_sections,
    message_bytes_from_json,
    message_to_json,
    message_tree,
)
from amqpcli.render.redact import is_secret, redact
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
    """One AMQP value found at `offset` in a sequence of values."""

    __slots__ = ("offset", "size", "value")

    def __init__(self, offset: int, value: Any, size: int) -> None:
        self.offset = offset
        self.value = value
        self.size = size


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
    body = frame.body
    if (not isinstance(body, Transfer) or not frame.payload or body.more
            or body.delivery_id is None):
        return None
    try:
        return load_sections(Message.decode(frame.payload))
    except Exception:  # noqa: BLE001 - the payload stays shown as bytes
        return None


def frame_to_json(
    frame: Frame,
    show_secrets: bool = False,
    exact: bool = True,
    message: Message | None = None,
    hidden: bool = False,
) -> dict[str, Any]:
    """A frame's JSON object; `message` is the whole message of a multi-frame delivery
    whose last frame this is (see `TransferAssembler`). When a SASL secret was masked,
    in the performative or in the message (`to_json`), it says `"redacted": true`, and a
    masked message's payload is only its size (`payload-size`: its bytes hold the
    secret), as a SASL frame gives none of its bytes. `hidden`: the payload is a piece
    of a delivery that may hold a secret (`ChunkSecrets`); the message, when there is
    one, decides instead."""
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
    out["performative"] = None if shown.body is None else to_json(shown.body, exact, hide)
    if (secret and not show_secrets) or hide:
        out["redacted"] = True
    # the last frame of a multi-frame delivery may carry no payload (only `more=false`):
    # its message is the delivery's all the same
    msg = message or transfer_message(frame)
    msg_json = None if msg is None else message_to_json(msg, exact, show_secrets)
    if (msg_json is not None and "redacted" in msg_json) or (
            hidden and msg_json is None and not show_secrets):
        out["redacted"] = True
        if frame.payload:
            out["payload-size"] = len(frame.payload)  # its bytes hold the secret
    elif frame.payload:
        out["payload"] = b64(frame.payload)
    if msg_json is not None:
        out["message"] = msg_json
    return out


def item_to_json(
    item: Item, show_secrets: bool = False, exact: bool = True, message: Message | None = None,
    hidden: bool = False,
) -> dict[str, Any]:
    """The JSON object of one decoded item (`message`, `hidden`: see `frame_to_json`)."""
    if isinstance(item, Frame):
        return frame_to_json(item, show_secrets, exact, message, hidden)
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
    out = {
        "item": "value",
        "offset": item.offset,
        "type": _type_name(value),
        "value": to_json(value, exact, hide),
    }
    if value is not item.value or hide:
        out["redacted"] = True
    return out


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
        from amqpcli.codec.encode import encode

        return encode(from_json(obj.get("value"), "value"))
    if kind == "error":
        return b""
    raise JsonValueError("item", f"unknown item {kind!r}")


def item_tree(item: Item, show_secrets: bool = False, message: Message | None = None,
              hidden: bool = False) -> Node:
    """The tree of one decoded item, its root line saying what and where it is
    (`message`, `hidden`: see `frame_to_json`)."""
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
        where = f"@{item.offset}, {item.size} bytes"
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
    if message is not None:
        if hide and "redacted" in message_to_json(message):
            node.children.append(_hidden_payload(frame))
        else:
            node.children.append(value_tree(frame.payload, "payload"))
        node.children.append(message_tree(message, "message (all frames of the delivery)",
                                          show_secrets))
    elif frame.payload:
        msg = transfer_message(frame)
        if msg is not None:
            node.children.append(message_tree(msg, show_secrets=show_secrets))
        elif hide:
            node.children.append(_hidden_payload(frame))
        else:
            node.children.append(value_tree(frame.payload, "payload"))
    return node


def _hidden_payload(frame: Frame) -> Node:
    return Node("payload", "*** (may hold a SASL secret)", f"{len(frame.payload)} bytes")


class TransferAssembler:
    """Joins the payloads of a delivery sent in several transfer frames (`more=true`).

    `feed(frame)` returns the whole message when `frame` ends a delivery that took more
    than one frame, else None. Per (channel, handle) of one stream (`where`: which, when
    there are several); an aborted delivery is dropped.
    """

    def __init__(self) -> None:
        self._parts: dict[tuple[Any, int, int], list[bytes]] = {}

    def feed(self, frame: Frame, where: Any = None) -> Message | None:
        body = frame.body
        if not isinstance(body, Transfer):
            return None
        key = (where, frame.channel, int(body.handle) if isinstance(body.handle, int) else -1)
        if body.aborted:
            self._parts.pop(key, None)
            return None
        if body.more:
            self._parts.setdefault(key, []).append(frame.payload)
            return None
        parts = self._parts.pop(key, None)
        if parts is None:
            return None
        try:
            return load_sections(Message.decode(b"".join([*parts, frame.payload])))
        except Exception:  # noqa: BLE001 - the frames are still shown as bytes
            return None

    def pending_any(self) -> bool:
        """True while a delivery in several frames has more to come."""
        return bool(self._parts)
