"""Messages as JSON (the format of docs/message-format.md) and as a tree.

The JSON object has one member per section present, under the section's spec name, plus
`bare-sha256` (the SHA-256 of the bare message as it arrived) and, when some sections'
members would not re-encode to the bytes they arrived as, `encoded-sections`: those
sections' bytes (base64) by member name, and only theirs (RabbitMQ's header, say, not the
body). A section that does not decode (a string that is not UTF-8, say) has no member: its
bytes are in `encoded-sections`, and reading the object back gives them again. Bytes that
are no message at all are `{"encoded": <base64>}` alone; a whole-message `encoded` next to
the members (as older versions wrote) is still read.

A SASL secret inside a section (a sasl-init or sasl-response as a value) is masked as
every view masks it (`jsonvalues.to_json`), unless the caller shows secrets: the object
then says `"redacted": true` and has neither `encoded-sections` nor `bare-sha256` (the
bytes hold the secret, and the hash of known bytes would confirm a guess of it). Such an
object is no longer the message that was sent, and `message_from_json` refuses it.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Collection
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
from amqpcli.codec.types import Composite, DecodeError, Symbol, UInt
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
from amqpcli.render.redact import may_hold_secret
from amqpcli.render.text import Node, value_tree
from amqpcli.render.types import amqp_type

__all__ = [
    "REDACTED_MESSAGE",
    "SECTION_KEYS",
    "load_sections",
    "message_bytes_from_json",
    "message_format_from_json",
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
_META_KEYS = ("bare-sha256", "encoded", "encoded-sections", "message-format")
# Why a message written with a secret masked is not read back.
REDACTED_MESSAGE = ("a SASL secret in this message was masked (***) when the JSON was "
                    "written, so it is not the message that was sent (JSON written with "
                    "--show-secrets holds it whole)")


_TAGGED_MAP_KEYS = ("map", "keys", "code")


def _reads_as_tagged(keys: Any) -> bool:
    """Whether an object with these keys is read as the tagged map form (`{"map": [[k,
    v], …]}`), not as a plain object of the section's entries."""
    keys = list(keys)
    return "map" in keys and len(keys) <= 3 and all(k in _TAGGED_MAP_KEYS for k in keys)


def _plain_keys(m: dict[Any, Any], key_type: type) -> bool:
    """A map written as a plain JSON object: its keys all `key_type`, and not such that
    the object would read back as the tagged form (a section whose one key is `map`)."""
    return all(type(k) is key_type for k in m) and not (
        len(m) <= 3 and _reads_as_tagged(str(k) for k in m))


def _keyed_to_json(m: dict[Any, Any], key_type: type, exact: bool,
                   hide: Redactions | None) -> dict[str, Any]:
    """A map whose keys are all `key_type` as a plain JSON object; else the tagged form."""
    if _plain_keys(m, key_type):
        return {str(k): to_json(v, exact, hide) for k, v in m.items()}
    # (the map itself: its encoding's width, a map32 from proton, is the form's "code")
    return to_json(m, exact, hide)  # type: ignore[no-any-return]


def _keyed_from_json(obj: Any, key_type: type, path: str) -> dict[Any, Any]:
    if type(obj) is not dict:
        raise JsonValueError(path, "expected an object")
    if _reads_as_tagged(obj):
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

    A section that does not decode has no member; its bytes are then always written in
    `encoded-sections` (exact or not), so no message is written short. A SASL secret
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
    # (a NaN whose payload or sign "NaN" does not keep: its value re-encodes to the bytes
    # that arrived, its member does not)
    odd_nan_keys = _odd_nan_sections(sections) if exact and odd_nans_written() != odd_nans else ()
    unsure = _unsure_sections(sections) if exact else ()
    if errors or odd_nan_keys or unsure:
        kept = _kept_sections(msg, sections, errors, odd_nan_keys, unsure)
        if kept and hide is not None and any(
                may_hold_secret(unb64(v, k)) for k, v in kept.items()):
            # a SASL performative in bytes its members do not give back (items beyond a
            # section's fields, a section that does not decode): masked as a whole
            del out["bare-sha256"]
            out["redacted"] = True
        elif kept:
            out["encoded-sections"] = kept
    return out


def _kept_sections(msg: Message, sections: tuple[Any, ...], errors: dict[str, DecodeError],
                   odd_nan_keys: Collection[str], unsure: Collection[int]) -> dict[str, str]:
    """`encoded-sections`: the bytes (base64) of each section that does not decode or
    holds an odd NaN, and of each `unsure` one whose member does not encode back to the
    bytes that arrived."""
    kept = {}
    for i, (key, attr, section) in enumerate(zip(SECTION_KEYS, SECTION_NAMES, sections,
                                                 strict=True)):
        if key in errors or key in odd_nan_keys:
            kept[key] = b64(msg.section_bytes(attr))
        elif i in unsure:
            raw = msg.section_bytes(attr)
            if _member_bytes(i, section) != raw:
                kept[key] = b64(raw)
    return kept


def _odd_nan_sections(sections: tuple[Any, ...]) -> list[str]:
    """The sections holding a NaN that "NaN" does not read back as (converted again to
    count them: the rare case)."""
    found = []
    for key, section in zip(SECTION_KEYS, sections, strict=True):
        if section is None:
            continue
        before = odd_nans_written()
        for part in section if type(section) is list else [section]:
            to_json(part)
        if odd_nans_written() != before:
            found.append(key)
    return found


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


def payload_to_json(payload: bytes, show_secrets: bool = False,
                    message_format: int = 0) -> dict[str, Any]:
    """`message_to_json` of a transfer's payload; bytes that are no message at all (their
    sections cannot even be told apart) are only `encoded`. The transfer's
    `message_format`, when not 0, is the `message-format` member (left out for 0, the AMQP
    message format, as almost every message is)."""
    out: dict[str, Any]
    try:
        msg = Message.decode(payload)
    except DecodeError:
        out = {"encoded": b64(bytes(payload))}
    else:
        out = message_to_json(msg, show_secrets=show_secrets)
    if message_format:
        out["message-format"] = message_format
    return out


def message_format_from_json(obj: Any) -> int:
    """The `message-format` member of a message's JSON object: the message-format its
    transfers go with (0 when absent)."""
    value = obj.get("message-format", 0) if type(obj) is dict else 0
    if type(value) is not int or not 0 <= value <= 0xFFFFFFFF:
        raise JsonValueError("message-format", "expected an integer 0..4294967295 (a uint)")
    return value


def payload_problem(payload: bytes, obj: dict[str, Any]) -> str | None:
    """What `obj`, the object `payload_to_json` gave for `payload`, carries as bytes that
    no member stands for, and why, if anything: no message at all (written whole in
    `encoded`), or sections that do not decode (their bytes in `encoded-sections`)."""
    if "encoded" in obj:
        try:
            Message.decode(payload)
        except DecodeError as e:
            return f'not an AMQP message ({e}); written whole in "encoded"'
    if not any(key not in obj for key in obj.get("encoded-sections", ())):
        return None  # (every section kept as bytes has its member too)
    errors = section_errors(Message.decode(payload))
    reasons = "; ".join(f"its {key} section does not decode ({e})" for key, e in errors.items())
    return f'{reasons}; kept as bytes in "encoded-sections"'


def payload_tree(payload: bytes, label: str = "message", show_secrets: bool = False,
                 message_format: int = 0) -> Node:
    """`message_tree` of a transfer's payload, or why it is no message. The transfer's
    `message_format`, when not 0, is its first line (`message-format: N  (uint)`, as the
    transfer's field reads): a vendor's format, whose bytes need not be an AMQP message.
    0, the AMQP message format, is not shown."""
    try:
        msg = Message.decode(payload)
    except DecodeError as e:
        node = Node(label, f"decode error {e}", f"{len(payload)} bytes, not a message")
    else:
        node = message_tree(msg, label, show_secrets)
    if message_format:
        node.children.insert(0, value_tree(UInt(message_format), "message-format"))
    return node

# Sections holding a map, by their place in SECTION_NAMES, and the key type that lets
# `_keyed_to_json` write it as a plain JSON object (which keeps no map width: it reads back
# as a plain dict).
_KEYED: dict[int, type] = {1: Symbol, 2: Symbol, 4: str, 6: Symbol}


def _unsure_sections(sections: tuple[Any, ...]) -> list[int]:
    """The places of the sections not sure to encode to the very bytes they were decoded
    from with their JSON member giving them back (`encodes_as_decoded`; a map section's
    map also a plain dict, as a wider one comes back narrower). Usually none: then the
    members alone give the message's bytes, with nothing to encode and compare."""
    unsure = []
    for i, section in enumerate(sections):
        if section is None:
            continue
        if type(section) is list:  # data or amqp-sequence sections
            for s in section:
                if not encodes_as_decoded(s):
                    unsure.append(i)
                    break
        elif not encodes_as_decoded(section) or (i in _KEYED and type(section.value) is not dict):
            unsure.append(i)
    return unsure


def _member_bytes(i: int, section: Any) -> bytes:
    """What section `i`'s JSON member alone encodes back to (values keep their types and
    widths through JSON)."""
    key_type = _KEYED.get(i)
    if key_type is not None:
        return _keyed_bytes(section, key_type)
    if type(section) is list:
        return b"".join(_body_part_bytes(s) for s in section)
    return fields_bytes(section)


def _body_part_bytes(part: Data | AmqpSequence) -> bytes:
    """What one data or amqp-sequence section's JSON element encodes back to: a sequence
    is written as a plain JSON array, so its list comes back in the smallest form (a
    list32 from proton as a list8)."""
    if type(part) is AmqpSequence and type(part.value) is not list:
        return fields_bytes(AmqpSequence(list(part.value)))
    return fields_bytes(part)


def _keyed_bytes(section: Composite, key_type: type) -> bytes:
    """What a map section's JSON member encodes back to: written as a plain object, its map
    is re-encoded canonically (a map32 from proton comes back as a map8)."""
    m = getattr(section, "value", None)
    if type(m) is dict or not isinstance(m, dict) or not _plain_keys(m, key_type):
        return fields_bytes(section)  # the tagged form keeps the map's own encoding
    cls = type(section)
    fresh = cls.__new__(cls)
    fresh._raw = None
    setattr(fresh, "value", dict(m))  # noqa: B010 - a map section's one slot
    return fields_bytes(fresh)


def message_from_json(obj: Any, use_encoded: bool = True) -> Message:
    """The message a JSON object stands for.

    With `encoded-sections`, each section it keeps the bytes of is those bytes while its
    member still says what they say (`_with_kept_sections`). With a whole-message
    `encoded` (as older versions wrote) whose message has the same sections as the
    object's own members, that message is returned. Edited sections win either way.
    """
    if type(obj) is not dict:
        raise JsonValueError("", "a message is a JSON object")
    if "redacted" in obj:
        raise JsonValueError("redacted", REDACTED_MESSAGE)
    unknown = set(obj) - set(SECTION_KEYS) - set(_META_KEYS)
    if unknown:
        raise JsonValueError("", f"unknown message member(s): {', '.join(sorted(unknown))}")
    if "encoded" in obj and "encoded-sections" in obj:
        raise JsonValueError("", 'a message has "encoded" (the whole message) or '
                                 '"encoded-sections", not both')
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
        kw["properties"] = _properties_from_json(obj["properties"])
    if "application-properties" in obj:
        kw["application_properties"] = ApplicationProperties(
            _keyed_from_json(obj["application-properties"], str, "application-properties")
        )
    if "footer" in obj:
        kw["footer"] = Footer(_keyed_from_json(obj["footer"], Symbol, "footer"))
    body = _body_from_json(obj["body"], "body") if "body" in obj else None
    msg = Message(body, **kw)
    if use_encoded and "encoded-sections" in obj:
        return _with_kept_sections(msg, obj["encoded-sections"])
    if use_encoded and "encoded" in obj:
        try:
            original = Message.decode(unb64(obj["encoded"], "encoded"))
        except DecodeError as e:
            raise JsonValueError("encoded", f"not an encoded message: {e}") from None
        if _same_sections(original, msg):
            return original
    return msg


# The properties that are addresses: an address-string (Part 3 §3.2.4, §3.2.17), so text.
_ADDRESS_FIELDS = (("to", "to"), ("reply_to", "reply-to"))


def _properties_from_json(v: Any) -> Properties:
    """The properties section; `to` and `reply-to` are addresses, strings, and any other
    value there is an error naming the field (it would go out as an address no peer can
    use)."""
    props = fields_from_json(Properties, v, "properties")
    for attr, name in _ADDRESS_FIELDS:
        value = getattr(props, attr)
        if value is not None and type(value) is not str:
            raise JsonValueError(f"properties.{name}", "expected a string (an address), "
                                 f"found a value of type {amqp_type(value)}")
    return props  # type: ignore[return-value]


def _with_kept_sections(msg: Message, kept: Any) -> Message:
    """`msg` (from the members) with the bytes `encoded-sections` keeps for a section in
    place of the member's encoding, as long as they decode to what the member says. The
    bytes of a section that does not decode (it was written with no member) stand for it;
    a member removed removes its section."""
    if type(kept) is not dict:
        raise JsonValueError("encoded-sections", "expected an object of base64 strings "
                                                 "by section name")
    unknown = set(kept) - set(SECTION_KEYS)
    if unknown:
        raise JsonValueError("encoded-sections",
                             f"unknown section name(s): {', '.join(sorted(unknown))}")
    out = bytearray()
    for key, attr in zip(SECTION_KEYS, SECTION_NAMES, strict=True):
        mine = getattr(msg, attr)
        if key in kept:
            raw, theirs = _kept_section(kept[key], key, attr)
            if theirs is _UNDECODED:
                keep = mine is None  # (a member given for it says what the section is)
            else:  # (same_value: NaN-safe, where `!=` says a NaN was edited)
                keep = mine is not None and same_value(theirs, mine)
            if keep:
                out += raw
                continue
        if mine is not None:
            msg.encode_section_into(out, attr)
    return Message.decode(bytes(out))


_UNDECODED = object()  # a kept section whose bytes do not decode


def _kept_section(text: Any, key: str, attr: str) -> tuple[bytes, Any]:
    """The bytes `encoded-sections` keeps for section `key`, and the section they decode
    to (`_UNDECODED` if they do not); an error unless they are that one section."""
    path = f"encoded-sections.{key}"
    raw = unb64(text, path)
    try:
        part = Message.decode(raw)
    except DecodeError as e:
        raise JsonValueError(path, f"not the bytes of a {key} section: {e}") from None
    if not raw or part.section_bytes(attr) != raw:
        raise JsonValueError(path, f"not the bytes of one {key} section alone")
    try:
        return raw, getattr(part, attr)
    except DecodeError:
        return raw, _UNDECODED


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
    """The message's bytes (exactly the original ones where `encoded-sections` or
    `encoded` still apply). An object of nothing but `encoded` gives its bytes, message or
    not (`payload_to_json`)."""
    if type(obj) is dict and "encoded" in obj and set(obj) <= {"bare-sha256", "encoded",
                                                               "message-format"}:
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
