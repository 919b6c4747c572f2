"""Messages as JSON (the format of docs/message-format.md) and as a tree.

The JSON object has one member per section present, under the section's spec name, plus
`bare-sha256` (the SHA-256 of the bare message as it arrived) and, when the sections alone
would not re-encode to the same bytes, `encoded` (the whole message, base64). A section
that does not decode (a string that is not UTF-8, say) has no member: `encoded` keeps its
bytes, and reading the object back gives them again.

A SASL secret inside a section (a sasl-init or sasl-response as a value) is masked as
every view masks it (`jsonvalues.to_json`), unless the caller shows secrets: the object
then says `"redacted": true` and has neither `encoded` nor `bare-sha256` (the bytes hold
the secret, and the hash of known bytes would confirm a guess of it). Such an object is
no longer the message that was sent, and `message_from_json` refuses it.
"""

from __future__ import annotations

import hashlib
import operator
from typing import Any

from amqpcli.codec.composites import (
    AmqpSequence,
    AmqpValue,
    ApplicationProperties,
    Data,
    DeliveryAnnotations,
    Footer,
    Header,
    MessageAnnotations,
    Properties,
)
from amqpcli.codec.encode import encodes_as_decoded
from amqpcli.codec.message import SECTION_NAMES, Message
from amqpcli.codec.types import Composite, DecodeError, Symbol
from amqpcli.render.jsonvalues import (
    JsonValueError,
    Redactions,
    b64,
    fields_bytes,
    fields_from_json,
    fields_to_json,
    from_json,
    odd_nans_written,
    same_value,
    to_json,
    unb64,
)
from amqpcli.render.text import Node, value_tree

__all__ = [
    "REDACTED_MESSAGE",
    "SECTION_KEYS",
    "load_sections",
    "message_bytes_from_json",
    "message_from_json",
    "message_to_json",
    "message_tree",
    "payload_problem",
    "payload_to_json",
    "payload_tree",
    "section_errors",
]

# JSON member names, in section order.
SECTION_KEYS = (
    "header",
    "delivery-annotations",
    "message-annotations",
    "properties",
    "application-properties",
    "body",
    "footer",
)
_META_KEYS = ("bare-sha256", "encoded")
# Why a message written with a secret masked is not read back.
REDACTED_MESSAGE = ("a SASL secret in this message was masked (***) when the JSON was "
                    "written, so it is not the message that was sent (JSON written with "
                    "--show-secrets holds it whole)")


def _keyed_to_json(m: dict[Any, Any], key_type: type, exact: bool,
                   hide: Redactions | None) -> dict[str, Any]:
    """A map whose keys are all `key_type` as a plain JSON object; else the tagged form."""
    if all(type(k) is key_type for k in m):
        return {str(k): to_json(v, exact, hide) for k, v in m.items()}
    return to_json(dict(m), exact, hide)  # type: ignore[no-any-return]


def _keyed_from_json(obj: Any, key_type: type, path: str) -> dict[Any, Any]:
    if type(obj) is not dict:
        raise JsonValueError(path, "expected an object")
    if "map" in obj and len(obj) <= 3 and all(k in ("map", "keys", "code") for k in obj):
        value = from_json(obj, path)
        return value  # type: ignore[no-any-return]
    return {key_type(k): from_json(v, f"{path}.{k}") for k, v in obj.items()}


def _body_to_json(body: Any, exact: bool, hide: Redactions | None) -> dict[str, Any]:
    if isinstance(body, AmqpValue):
        return {"value": to_json(body.value, exact, hide)}
    if body and isinstance(body[0], Data):
        return {"data": [to_json(s.value, exact, hide) for s in body]}
    return {"sequence": [to_json(list(s.value), exact, hide) for s in body]}


def _body_from_json(obj: Any, path: str) -> Any:
    if type(obj) is not dict or len(obj) != 1:
        raise JsonValueError(path, 'expected {"data": [...]}, {"sequence": [...]} or {"value": v}')
    ((kind, v),) = obj.items()
    if kind == "value":
        return AmqpValue(from_json(v, f"{path}.value"))
    if kind not in ("data", "sequence") or type(v) is not list or not v:
        raise JsonValueError(path, f"{kind!r}: expected a non-empty array of sections")
    out: list[Any] = []
    for i, x in enumerate(v):
        value = from_json(x, f"{path}.{kind}[{i}]")
        if kind == "data":
            if type(value) is not bytes:
                raise JsonValueError(f"{path}.data[{i}]", "a data section holds binary")
            out.append(Data(value))
        else:
            if not isinstance(value, list):
                raise JsonValueError(
                    f"{path}.sequence[{i}]", "an amqp-sequence section holds a list"
                )
            out.append(AmqpSequence(value))
    return out


def message_to_json(msg: Message, exact: bool = True, show_secrets: bool = False) -> dict[str, Any]:
    """The JSON object of a message (docs/message-format.md).

    A section that does not decode has no member; `encoded` is then always written (the
    members cannot give the message back), so no message is written short. A SASL secret
    in a section is masked unless `show_secrets`: the object then says `"redacted": true`
    and carries none of the message's bytes (see the module's docstring)."""
    try:
        sections = _sections(msg)
        errors: dict[str, DecodeError] = {}
    except DecodeError:  # (rare: the sections one by one)
        errors = section_errors(msg)
        sections = tuple(None if key in errors else getattr(msg, attr)
                         for key, attr in zip(SECTION_KEYS, SECTION_NAMES, strict=True))
    header, delivery_annotations, message_annotations, properties, app_properties, body, footer = (
        sections
    )
    hide: Redactions | None = None if show_secrets else []
    odd_nans = odd_nans_written()
    out: dict[str, Any] = {}
    if header is not None:
        out["header"] = fields_to_json(header, exact, hide)
    if delivery_annotations is not None:
        out["delivery-annotations"] = _keyed_to_json(delivery_annotations.value, Symbol, exact,
                                                     hide)
    if message_annotations is not None:
        out["message-annotations"] = _keyed_to_json(message_annotations.value, Symbol, exact,
                                                    hide)
    if properties is not None:
        out["properties"] = fields_to_json(properties, exact, hide)
    if app_properties is not None:
        out["application-properties"] = _keyed_to_json(app_properties.value, str, exact, hide)
    if body is not None:
        out["body"] = _body_to_json(body, exact, hide)
    if footer is not None:
        out["footer"] = _keyed_to_json(footer.value, Symbol, exact, hide)
    if hide:
        # Not the message that was sent: no bytes of it, nor their hash, go with it.
        out["redacted"] = True
        return out
    out["bare-sha256"] = hashlib.sha256(msg.bare_bytes).hexdigest()
    if errors or (exact and odd_nans_written() != odd_nans):
        # (a NaN whose payload or sign "NaN" does not keep: its value re-encodes to the
        # bytes that arrived, its member does not)
        out["encoded"] = b64(msg.encode())
    elif exact and not _members_give_bytes(sections):
        raw = msg.encode()
        if _sections_bytes(sections) != raw:
            out["encoded"] = b64(raw)
    return out


_sections = operator.attrgetter(*SECTION_NAMES)  # a message's sections, in order


def section_errors(msg: Message) -> dict[str, DecodeError]:
    """The sections that do not decode, by JSON member name, with why."""
    errors = {}
    for key, attr in zip(SECTION_KEYS, SECTION_NAMES, strict=True):
        try:
            getattr(msg, attr)
        except DecodeError as e:
            errors[key] = e
    return errors


def payload_to_json(payload: bytes, show_secrets: bool = False) -> dict[str, Any]:
    """`message_to_json` of a transfer's payload; bytes that are no message at all (their
    sections cannot even be told apart) are only `encoded`."""
    try:
        msg = Message.decode(payload)
    except DecodeError:
        return {"encoded": b64(bytes(payload))}
    return message_to_json(msg, show_secrets=show_secrets)


def payload_problem(payload: bytes) -> str | None:
    """Why the payload's JSON object needs its `encoded` member to be whole, if it does:
    the sections that do not decode, or no message at all."""
    try:
        errors = section_errors(Message.decode(payload))
    except DecodeError as e:
        return f"not an AMQP message ({e})"
    if not errors:
        return None
    return "; ".join(f"its {key} section does not decode ({e})" for key, e in errors.items())


def payload_tree(payload: bytes, label: str = "message", show_secrets: bool = False) -> Node:
    """`message_tree` of a transfer's payload, or why it is no message."""
    try:
        msg = Message.decode(payload)
    except DecodeError as e:
        return Node(label, f"decode error {e}", f"{len(payload)} bytes, not a message")
    return message_tree(msg, label, show_secrets)

# Sections holding a map, by their place in SECTION_NAMES, and the key type that lets
# `_keyed_to_json` write it as a plain JSON object (which keeps no map width: it reads back
# as a plain dict).
_KEYED: dict[int, type] = {1: Symbol, 2: Symbol, 4: str, 6: Symbol}


def _members_give_bytes(sections: tuple[Any, ...]) -> bool:
    """True when each section is sure to encode to the very bytes it was decoded from and
    its JSON member to give them back (`encodes_as_decoded`; a map section's map also a
    plain dict, as a wider one comes back narrower): then the members alone give the
    message's bytes, with no need to encode it and compare. False means "not known"."""
    for i, section in enumerate(sections):
        if section is None:
            continue
        if type(section) is list:  # data or amqp-sequence sections
            for s in section:
                if not encodes_as_decoded(s):
                    return False
        elif not encodes_as_decoded(section) or (i in _KEYED and type(section.value) is not dict):
            return False
    return True


def _sections_bytes(sections: tuple[Any, ...]) -> bytes:
    """The message as its sections' values encode on their own: what the JSON members
    alone give back (values keep their types and widths through JSON)."""
    parts = []
    for i, section in enumerate(sections):
        if section is None:
            continue
        key_type = _KEYED.get(i)
        if key_type is not None:
            parts.append(_keyed_bytes(section, key_type))
            continue
        for s in [section] if not isinstance(section, list) else section:
            parts.append(fields_bytes(s))
    return b"".join(parts)


def _keyed_bytes(section: Composite, key_type: type) -> bytes:
    """What a map section's JSON member encodes back to: written as a plain object, its map
    is re-encoded canonically (a map32 from proton comes back as a map8)."""
    m = getattr(section, "value", None)
    if type(m) is dict or not isinstance(m, dict) or not all(type(k) is key_type for k in m):
        return fields_bytes(section)  # the tagged form keeps the map's own encoding
    cls = type(section)
    fresh = cls.__new__(cls)
    fresh._raw = None
    setattr(fresh, "value", dict(m))  # noqa: B010 - a map section's one slot
    return fields_bytes(fresh)


def message_from_json(obj: Any, use_encoded: bool = True) -> Message:
    """The message a JSON object stands for.

    With an `encoded` member whose message has the same sections as the object's own
    members, that message (and so its exact bytes) is returned; edited sections win.
    """
    if type(obj) is not dict:
        raise JsonValueError("", "a message is a JSON object")
    if "redacted" in obj:
        raise JsonValueError("redacted", REDACTED_MESSAGE)
    unknown = set(obj) - set(SECTION_KEYS) - set(_META_KEYS)
    if unknown:
        raise JsonValueError("", f"unknown message member(s): {', '.join(sorted(unknown))}")
    kw: dict[str, Any] = {}
    if "header" in obj:
        kw["header"] = fields_from_json(Header, obj["header"], "header")
    if "delivery-annotations" in obj:
        kw["delivery_annotations"] = DeliveryAnnotations(
            _keyed_from_json(obj["delivery-annotations"], Symbol, "delivery-annotations")
        )
    if "message-annotations" in obj:
        kw["message_annotations"] = MessageAnnotations(
            _keyed_from_json(obj["message-annotations"], Symbol, "message-annotations")
        )
    if "properties" in obj:
        kw["properties"] = fields_from_json(Properties, obj["properties"], "properties")
    if "application-properties" in obj:
        kw["application_properties"] = ApplicationProperties(
            _keyed_from_json(obj["application-properties"], str, "application-properties")
        )
    if "footer" in obj:
        kw["footer"] = Footer(_keyed_from_json(obj["footer"], Symbol, "footer"))
    body = _body_from_json(obj["body"], "body") if "body" in obj else None
    msg = Message(body, **kw)
    if use_encoded and "encoded" in obj:
        try:
            original = Message.decode(unb64(obj["encoded"], "encoded"))
        except DecodeError as e:
            raise JsonValueError("encoded", f"not an encoded message: {e}") from None
        if _same_sections(original, msg):
            return original
    return msg


def _same_sections(original: Message, msg: Message) -> bool:
    """Whether `msg` (from the members) has the sections of `original` (from `encoded`):
    equal where they decode; where one of `original`'s does not, `msg` has none (the
    member was never written), and the bytes of `encoded` stand for it."""
    for attr in SECTION_NAMES:
        mine = getattr(msg, attr)
        try:
            theirs = getattr(original, attr)
        except DecodeError:
            if mine is not None:
                return False
            continue
        if not same_value(theirs, mine):  # (NaN-safe: `!=` says a NaN was edited)
            return False
    return True


def message_bytes_from_json(obj: Any) -> bytes:
    """The message's bytes (exactly the original ones when `encoded` still applies). An
    object of nothing but `encoded` gives its bytes, message or not (`payload_to_json`)."""
    if type(obj) is dict and "encoded" in obj and set(obj) <= set(_META_KEYS):
        return unb64(obj["encoded"], "encoded")
    return message_from_json(obj).encode()


def load_sections(msg: Message) -> Message:
    """Decode every section now (they are decoded lazily), so a DecodeError surfaces here."""
    _sections(msg)
    return msg


def message_tree(msg: Message, label: str = "message", show_secrets: bool = False) -> Node:
    """The tree of a message: one child per section present; SASL secrets in it masked
    (`value_tree`) unless `show_secrets`.

    A section that does not decode shows as an error line in its place (the others are
    still shown), so rendering a received message never fails.
    """
    size = len(msg.encode())
    node = Node(label, "", f"{size} bytes")
    for name, attr in zip(SECTION_KEYS, SECTION_NAMES, strict=True):
        try:
            section = getattr(msg, attr)
        except DecodeError as e:
            node.children.append(Node(name, f"decode error {e}", None))
            continue
        if section is None:
            continue
        if attr != "body":
            child = value_tree(section, name, show_secrets)
            child.text = ""
            node.children.append(child)
            continue
        parts: list[Any] = [section] if isinstance(section, AmqpValue) else list(section)
        for i, part in enumerate(parts):
            child = value_tree(part, "body" if len(parts) == 1 else f"body[{i}]",
                               show_secrets)
            if not child.text.startswith(part.NAME):
                child.text = f"{part.NAME} {child.text}".strip()
            node.children.append(child)
    return node
