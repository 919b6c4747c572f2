"""Secrets out of sight: the one function every renderer passes values through.

AMQP 1.0 carries SASL in two frames: the sasl-init's initial response and a sasl-response
to a challenge. A PLAIN response is `authzid NUL authcid NUL password` (RFC 4616); its
password is replaced by `***` and the user kept. The response of any other mechanism that
holds a secret (AMQPLAIN's table, a SCRAM proof, ...) is `***` whole; ANONYMOUS and
EXTERNAL send none. A sasl-response does not name its mechanism, so it is masked by its
shape: a PLAIN-shaped one keeps its user, any other non-empty one is `***`. A PLAIN-shaped
response under ANONYMOUS or EXTERNAL (a client configured for PLAIN that names the wrong
mechanism) is masked as PLAIN's is: its password is there all the same. Nothing is
masked when the user asked for secrets; nothing else AMQP carries is a secret the protocol
marks as such.

A damaged frame can hide a secret in another SASL performative: a sasl-init whose
descriptor is damaged by one octet reads as a sasl-mechanisms, sasl-challenge or
sasl-outcome with the response in its fields. So a SASL performative whose fields do not
fit its type (more fields than it has, or a value its field cannot hold) is masked whole,
and a sasl-challenge shaped like a PLAIN response (most likely a sasl-response with its
descriptor damaged) is masked like one. The same rule masks raw bytes for hexdumps
(`secret_spans`). A damaged sasl-response of another mechanism reads as a well-formed
sasl-challenge, which nothing tells from a server's.

The rule holds at any depth, the same in every view: a SASL performative carried as a
value (in a list, a map, a field, a message body) is masked as one in a SASL frame. The
text views pass every value they draw through `redact`; the JSON views mask through
`jsonvalues.to_json`'s `redactions` and say `"redacted": true` (a message object, the
item or record holding it), and give none of the bytes that hold the secret (`encoded`,
a transfer's `payload`).
"""

from __future__ import annotations

import re
from typing import Any

from amqpcli.codec.composites import (
    SaslChallenge,
    SaslInit,
    SaslMechanisms,
    SaslOutcome,
    SaslResponse,
    Transfer,
)
from amqpcli.codec.frames import Frame
from amqpcli.codec.types import AmqpList, Array, Described, Symbol, UByte

MASK = b"***"
# Mechanisms whose response holds no secret (unless it is shaped as PLAIN's: `_plain_shaped`).
_NO_SECRET_MECHANISMS = {"ANONYMOUS", "EXTERNAL"}


def _plain_shaped(response: bytes | bytearray) -> bool:
    """`authzid NUL authcid NUL password`: two NULs (an ANONYMOUS trace or an EXTERNAL
    authzid has none)."""
    return response.count(b"\x00") == 2


def redact_plain_response(response: bytes | bytearray) -> bytes:
    """`authzid NUL authcid NUL ***`; bytes that are not a PLAIN response become `***`."""
    parts = bytes(response).split(b"\x00")
    if len(parts) != 3:
        return MASK
    return parts[0] + b"\x00" + parts[1] + b"\x00" + MASK


def _mask_by_shape(response: bytes) -> bytes:
    """A SASL response whose mechanism is unknown: PLAIN-shaped, its password masked;
    anything else non-empty, `***` whole; empty, as it is (there is nothing in it)."""
    return redact_plain_response(response) if response else response


def _masked(response: bytes, mechanism: Any) -> bytes:
    """`response` as it may be shown, sent with `mechanism` (None: not known)."""
    if not response:
        return response
    if not isinstance(mechanism, str):  # unknown, or a damaged encoding
        return _mask_by_shape(response)
    name = mechanism.upper()
    if name in _NO_SECRET_MECHANISMS:
        return redact_plain_response(response) if _plain_shaped(response) else response
    if name == "PLAIN":
        return redact_plain_response(response)
    return MASK  # AMQPLAIN, SCRAM-*, ...: the 0-10 rule


def _response_bytes(response: Any) -> bytes | None:
    if isinstance(response, (bytes, bytearray)):
        return bytes(response)
    if isinstance(response, str):  # a damaged encoding can make it a string
        return response.encode("utf-8", "surrogatepass")
    return None


# What the fields of each SASL performative hold, in order: the one rule both for decoded
# values (`_fits`) and for raw bytes (`_list_fits`). "response" is a binary that a damaged
# constructor may have made a string (it is masked as a response either way).
_SASL_FIELDS: dict[type, tuple[str, ...]] = {
    SaslMechanisms: ("symbols",),
    SaslInit: ("symbol", "response", "string"),
    SaslChallenge: ("binary",),
    SaslResponse: ("response",),
    SaslOutcome: ("ubyte", "binary"),
}
# The composites `redact` may mask: what a renderer walking a value checks at each level.
SASL_PERFORMATIVES = frozenset(_SASL_FIELDS)
_SASL_CODES = (SaslMechanisms, SaslInit, SaslChallenge, SaslResponse, SaslOutcome)
_BYTES = (bytes, bytearray, memoryview)
_VALUE_FITS: dict[str, Any] = {
    "symbol": lambda v: isinstance(v, str),
    "symbols": lambda v: isinstance(v, str) or (
        isinstance(v, list) and all(isinstance(x, str) for x in v)),
    "response": lambda v: isinstance(v, (*_BYTES, str)),
    "binary": lambda v: isinstance(v, _BYTES),
    "string": lambda v: isinstance(v, str),
    "ubyte": lambda v: type(v) in (int, UByte) and 0 <= v <= 0xFF,
}


def _fits(value: Any, kinds: tuple[str, ...]) -> bool:
    """True when SASL performative `value` has no more fields than its type (`kinds`) and
    each holds what its field may: a value of its type, or none."""
    raw = value._raw
    if raw is not None and len(raw[1]) > len(kinds):  # fields beyond its type's
        return False
    return all(v is None or _VALUE_FITS[kind](v)
               for kind, v in zip(kinds, (getattr(value, s) for s in value._SLOTS)))


def _masked_whole(value: Any) -> Any:
    """A SASL performative of `value`'s type with every field it has masked (a string
    field stays a string)."""
    return type(value)(*(
        None if v is None else MASK.decode() if isinstance(v, str) else MASK
        for v in (getattr(value, s) for s in value._SLOTS)
    ))


def _shown(value: Any) -> Any:
    """`value` as it may be shown: a masked copy, or None when it holds no secret to
    hide (it is not a SASL performative, or nothing in it is secret)."""
    kinds = _SASL_FIELDS.get(type(value))
    if kinds is None:
        t = type(value)
        if t is Array and value.descriptor is not None:
            return _array_shown(value)
        if t is Described:
            return _described_shown(value)
        return None
    if not _fits(value, kinds):
        return _masked_whole(value)
    if type(value) is SaslChallenge:
        challenge = value.challenge
        if challenge is None or not _plain_shaped(bytes(challenge)):
            return None
        return SaslChallenge(challenge=redact_plain_response(challenge))
    masked = _redacted_response(value)
    if masked is None:
        return None
    if isinstance(value, SaslResponse):
        return SaslResponse(response=masked)
    return SaslInit(
        mechanism=value.mechanism,
        initial_response=masked,
        hostname=value.hostname,
    )


# SASL performatives by descriptor, for those not decoded as one: the elements of an array
# of them, a described value whose type did not fit (a damaged sasl-init)
_SASL_BY_DESCRIPTOR: dict[Any, type] = {
    **{c.CODE: c for c in _SASL_CODES}, **{c.SYMBOL: c for c in _SASL_CODES},
    **{Symbol(c.SYMBOL): c for c in _SASL_CODES}}  # (a Symbol is not its str)


def _fields_shown(cls: Any, value: Any) -> Any:
    """The undescribed value of a `cls` performative (its field list) as it may be shown;
    None when there is nothing to hide. One that is not a field list `cls` can hold has
    every binary and string in it masked, as `_masked_whole` masks one whose fields do
    not fit (the other types hold no response)."""
    if type(value) in (list, AmqpList) and len(value) <= len(cls._SLOTS):
        try:
            shown = _shown(cls(*value))
        except (TypeError, ValueError):
            shown = _masked_whole(cls(*(None,) * len(cls._SLOTS)))
        if shown is None:
            return None
        return [getattr(shown, slot) for slot in cls._SLOTS][: len(value)]
    if isinstance(value, (list, tuple)):
        items = [_masked_scalar(v) for v in value]
        if all(m is None for m in items):
            return None
        return [v if m is None else m for v, m in zip(value, items, strict=True)]
    return _masked_scalar(value)


def _masked_scalar(value: Any) -> Any:
    if isinstance(value, str):
        return MASK.decode()
    if isinstance(value, _BYTES):
        return MASK
    return None


def _sasl_type(descriptor: Any) -> Any:
    try:
        return _SASL_BY_DESCRIPTOR.get(descriptor)
    except TypeError:  # a damaged descriptor can be any value, a list too
        return None


def _array_shown(value: Array) -> Array | None:
    cls = _sasl_type(value.descriptor)
    if cls is None:
        return None
    items = [_fields_shown(cls, x) for x in value]
    if all(m is None for m in items):
        return None
    # (each masked element keeps its type: a list stays a list, a binary a binary)
    return Array([x if m is None else m for x, m in zip(value, items, strict=True)],
                 value.type, None, value.descriptor)


def _described_shown(value: Described) -> Described | None:
    cls = _sasl_type(value.descriptor)
    if cls is None:
        return None
    inner = _fields_shown(cls, value.value)
    return None if inner is None else Described(value.descriptor, inner)


def _redacted_response(value: Any) -> Any:
    """The SASL response of `value` (a sasl-init or sasl-response) as it may be shown, of
    the type it has (bytes, or str from a damaged encoding); None when `value` holds no
    secret to hide."""
    if isinstance(value, SaslInit):
        response, mechanism = value.initial_response, value.mechanism
    elif isinstance(value, SaslResponse):
        response, mechanism = value.response, None
    else:
        return None
    raw = _response_bytes(response)
    if raw is None:
        return None
    masked = _masked(raw, mechanism)
    if masked == raw:
        return None
    if isinstance(response, str):
        return masked.decode("utf-8", "surrogatepass")
    return masked


def is_secret(value: Any) -> bool:
    """True for a SASL performative that `redact` masks: a sasl-init or sasl-response
    whose response holds a PLAIN password or is that of a mechanism other than ANONYMOUS
    and EXTERNAL, one whose fields do not fit its type, or a PLAIN-shaped
    sasl-challenge."""
    return _shown(value) is not None


def redact(value: Any, show_secrets: bool = False) -> Any:
    """`value` (a performative, a frame, anything) with SASL secrets masked.

    Returns the value itself when there is nothing to hide (or `show_secrets`), else a
    copy: the caller's object is never changed.
    """
    if show_secrets:
        return value
    if isinstance(value, Frame):
        body = redact(value.body)
        if body is value.body:
            return value
        return Frame(
            value.offset,
            value.size,
            value.doff,
            value.type,
            value.channel,
            value.ext,
            body,
            value.payload,
        )
    shown = _shown(value)
    return value if shown is None else shown



# --- deliveries in several frames ------------------------------------------------------
# A SASL performative as a value in a message (any of the five: a damaged sasl-init reads
# as another): its descriptor in any encoding, then the constructor of its field list.
_SASL_SYMBOLS = b"|".join(
    re.escape(prefix + c.SYMBOL.encode())
    for c in _SASL_CODES
    for prefix in (bytes([0xA3, len(c.SYMBOL)]), b"\xb3" + len(c.SYMBOL).to_bytes(4, "big")))
_NESTED_SASL = re.compile(
    rb"\x00(?:\x53[\x40-\x44]|\x80\x00{7}[\x40-\x44]|" + _SASL_SYMBOLS + rb")[\x45\xc0\xd0]")
# bytes kept from one frame's payload for a match cut by the next frame: the longest
# (00 b3 len32 symbol constructor) less one
_CARRY = 6 + max(len(c.SYMBOL) for c in _SASL_CODES)


def handle_key(handle: Any) -> int:
    """A transfer's handle as the key of its deliveries in progress: a number as it is,
    anything else (a handle of another type, a boolean or a negative number: a damaged or
    hostile frame) the one key -1, which no handle on the wire has. The views that follow
    deliveries in several frames (`ChunkSecrets`, `TransferAssembler`, pcap-dump's) key
    them by (stream, channel, `handle_key`)."""
    return int(handle) if (isinstance(handle, int) and handle.__class__ is not bool
                           and handle >= 0) else -1


def may_hold_secret(payload: bytes | bytearray) -> bool:
    """Whether a transfer's payload that is not shown as a message (it does not decode as
    one, or is a piece of one) may hold a SASL secret: the bytes of a described SASL
    performative begin in it. The views then give its size only, unless asked to show
    secrets: a message that decodes is masked as a whole instead (`redact`)."""
    return _NESTED_SASL.search(payload) is not None


class ChunkSecrets:
    """Which payloads of a delivery sent in several transfer frames may hold a SASL secret.

    Such a payload is a piece of a message that may not decode alone, and the views print
    it as bytes; a SASL performative carried in the message (see the module's text) would
    go out in them, password and all. So from the first piece in which the bytes of a
    described SASL performative begin (searched across the cut between pieces), that
    piece and every later one of the delivery are hidden: the views give their size
    only, as they do for a masked message's payload. A view that decodes the delivery's
    whole message (`TransferAssembler`) lets the message decide for its last piece.

    `hides(key, frame)` per frame in order; `key` tells the deliveries in progress apart
    (one direction of one connection, with the frame's channel and handle).
    """

    __slots__ = ("_open",)

    def __init__(self) -> None:
        # key -> (last bytes of the pieces so far, hiding since an earlier piece)
        self._open: dict[Any, tuple[bytes, bool]] = {}

    def hides(self, key: Any, frame: Any) -> bool:
        body = getattr(frame, "body", None)  # (any item: a header, an error, 0-10's)
        if not isinstance(body, Transfer):
            return False
        key = (key, frame.channel, handle_key(body.handle))
        state = self._open.get(key)
        if state is None and not body.more:
            return False  # in one frame: its message is decoded and masked as a whole
        carried, hiding = state if state is not None else (b"", False)
        seen = carried + frame.payload
        hiding = hiding or _NESTED_SASL.search(seen) is not None
        if body.more and not body.aborted:
            self._open[key] = (seen[-_CARRY:], hiding)
        else:
            self._open.pop(key, None)
        return hiding and bool(frame.payload)

    def pending(self) -> bool:
        """True while a delivery whose pieces are hidden has more to come."""
        return any(hiding for _, hiding in self._open.values())

    def pending_any(self) -> bool:
        """True while any delivery in several frames has more to come."""
        return bool(self._open)


# Where a sasl-init or a sasl-response starts in raw bytes: its descriptor, small-ulong or
# ulong 0x41 or 0x43.
_SASL_INIT_DESCRIPTORS = (b"\x00\x53\x41", b"\x00\x80" + (0x41).to_bytes(8, "big"))
_SASL_RESPONSE_DESCRIPTORS = (b"\x00\x53\x43", b"\x00\x80" + (0x43).to_bytes(8, "big"))
# Mechanisms whose initial response holds no secret.
_OPEN_MECHANISMS = {b"ANONYMOUS", b"EXTERNAL"}


def _frame_end(data: bytes, at: int) -> int:
    """The end of the SASL frame holding the byte `at` (its header is 8 bytes, its
    descriptor at header + 4 * doff), or the end of `data` when no header fits."""
    for doff in (2, *range(3, 16)):
        start = at - 4 * doff
        if start < 0:
            break
        size = int.from_bytes(data[start:start + 4], "big")
        if data[start + 4] == doff and data[start + 5] == 1 and size >= at - start:
            return min(len(data), start + size)
    return len(data)


def secret_spans(data: bytes | bytearray) -> list[tuple[int, int]]:
    """Byte ranges `[start, stop)` of `data` that may hold a SASL secret, for a hexdump to
    mask: the initial response of every sasl-init (but ANONYMOUS's and EXTERNAL's) and the
    response of every sasl-response that can be located by its descriptor (a
    sasl-response does not name its mechanism: each is masked whole). Found in raw
    (possibly corrupt) bytes, so when in doubt a range reaches to the end of the frame: it
    is the bytes of the response, and what follows it only when the list's own size shows
    where the response ends."""
    data = bytes(data)
    spans: list[tuple[int, int]] = []
    for descriptors, find_span in _SECRET_DESCRIPTORS:
        for descriptor in descriptors:
            at = data.find(descriptor)
            while at >= 0:
                span = find_span(data, at, at + len(descriptor))
                if span is not None:
                    spans.append(span)
                at = data.find(descriptor, at + 1)
    spans += _damaged_descriptor_spans(data)
    spans += secret_spans_010(data)
    return sorted(set(spans))


# Every SASL performative's descriptor, small-ulong and ulong: intact, none is damaged.
_SASL_DESCRIPTORS = frozenset(
    form for code in range(0x40, 0x45)
    for form in (b"\x00\x53" + bytes([code]), b"\x00\x80" + code.to_bytes(8, "big"))
)


def _damaged_descriptor_spans(data: bytes) -> list[tuple[int, int]]:
    """The spans of SASL frames (a frame header with doff 2 and type 1) whose descriptor is
    one octet away from a sasl-init's or a sasl-response's: the damage hides it from the
    search by descriptor, and the response is read as if the descriptor were intact (as
    both when it is one octet away from both). A descriptor damaged into that of another
    SASL performative is found by its fields: see `_other_sasl_span`."""
    spans: list[tuple[int, int]] = []
    at = data.find(b"\x02\x01", 4)
    while at >= 0:
        h, d = at - 4, at + 4
        size = int.from_bytes(data[h:at], "big")
        if size >= 11:
            other = _other_sasl_span(data, d, min(len(data), h + size))
            if other is not None:
                spans.append(other)
            for descriptors, find_span in _SECRET_DESCRIPTORS:
                for descriptor in descriptors:
                    got = data[d:d + len(descriptor)]
                    if (
                        len(got) == len(descriptor)
                        and got not in _SASL_DESCRIPTORS
                        and sum(a != b for a, b in zip(got, descriptor)) == 1
                    ):
                        span = find_span(data, d, d + len(descriptor))
                        if span is not None:
                            spans.append(span)
        at = data.find(b"\x02\x01", at + 1)
    return spans


# The SASL performatives other than sasl-init and sasl-response, by descriptor code.
_OTHER_SASL = {cls.CODE: cls for cls in (SaslMechanisms, SaslChallenge, SaslOutcome)}
# The constructors each kind of field may have (a null fits any).
_CODES_OF: dict[str, frozenset[int]] = {
    "symbol": frozenset((0xA3, 0xB3)),
    "symbols": frozenset((0xA3, 0xB3, 0xE0, 0xF0)),
    "response": frozenset((0xA0, 0xB0, 0xA1, 0xB1)),
    "binary": frozenset((0xA0, 0xB0)),
    "string": frozenset((0xA1, 0xB1)),
    "ubyte": frozenset((0x50,)),
}


def _other_sasl_span(data: bytes, d: int, frame_end: int) -> tuple[int, int] | None:
    """The span to mask of the SASL frame whose descriptor is at `d` when that is a
    sasl-mechanisms', sasl-challenge's or sasl-outcome's (each is one octet away from a
    sasl-init's): from its field list to the frame's end when its fields do not fit its
    type (`_SASL_FIELDS`), the challenge when it is PLAIN-shaped; None otherwise."""
    if data[d:d + 2] == b"\x00\x53" and d + 2 < len(data):
        code, pos = data[d + 2], d + 3
    elif data[d:d + 2] == b"\x00\x80" and d + 10 <= len(data):
        code, pos = int.from_bytes(data[d + 2:d + 10], "big"), d + 10
    else:
        return None
    cls = _OTHER_SASL.get(code)
    if cls is None:
        return None
    fields = _list_fits(data, pos, frame_end, _SASL_FIELDS[cls])
    if fields is None:
        first = pos + {0xC0: 3, 0xD0: 9, 0x45: 1}.get(data[pos] if pos < len(data) else -1, 0)
        first = min(first, frame_end)
        return (first, frame_end) if first < frame_end else None
    if cls is SaslChallenge and fields:
        start, stop = fields[0]
        if _plain_shaped(data[start:stop]):  # PLAIN-shaped: a damaged sasl-response
            return (start, stop)
    return None


def _list_fits(data: bytes, pos: int, frame_end: int,
               kinds: tuple[str, ...]) -> list[tuple[int, int]] | None:
    """The fields of the list at `pos` when it fits `kinds` (at most that many fields, each
    with a constructor its kind allows, each inside the list, and the list ending where the
    frame does): the span of each field's content (empty for a null); None when not."""
    if pos >= len(data):
        return None
    code = data[pos]
    if code == 0x45:
        return [] if pos + 1 == frame_end else None
    if code == 0xC0 and pos + 2 < len(data):
        count, p, end = data[pos + 2], pos + 3, pos + 2 + data[pos + 1]
    elif code == 0xD0 and pos + 8 < len(data):
        count, p = int.from_bytes(data[pos + 5:pos + 9], "big"), pos + 9
        end = pos + 5 + int.from_bytes(data[pos + 1:pos + 5], "big")
    else:
        return None
    if end != frame_end or count > len(kinds):
        return None
    spans = []
    for kind in kinds[:count]:
        if p >= end:
            return None
        c = data[p]
        if c == 0x40:
            spans.append((p + 1, p + 1))
            p += 1
            continue
        if c not in _CODES_OF[kind]:
            return None
        if c == 0x50:
            start, stop = p + 1, p + 2
        elif c in (0xA0, 0xA1, 0xA3, 0xE0) and p + 1 < end:
            start, stop = p + 2, p + 2 + data[p + 1]
        elif c in (0xB0, 0xB1, 0xB3, 0xF0) and p + 4 < end:
            start, stop = p + 5, p + 5 + int.from_bytes(data[p + 1:p + 5], "big")
        else:
            return None
        if c in (0xE0, 0xF0):  # an array: of symbols
            at = start + (1 if c == 0xE0 else 4)  # its element constructor, after the count
            if at >= stop or data[at] not in _CODES_OF["symbol"]:
                return None
        if stop > end:
            return None
        spans.append((start, stop))
        p = stop
    return spans if p == end else None


def _field_list(data: bytes, pos: int, frame_end: int) -> tuple[int, int] | None:
    """The performative's field list at `pos`: (where its first field starts, where it
    ends by its own size, at most `frame_end`) for a list8 or list32; None for list0 (no
    fields); (pos, -1) for anything else (damage: the caller masks to the frame's end)."""
    code = data[pos] if pos < len(data) else None
    end = frame_end
    if code == 0xC0:
        if pos + 2 < len(data):
            end = min(end, pos + 2 + data[pos + 1])
        return pos + 3, end
    if code == 0xD0:
        if pos + 8 < len(data):
            end = min(end, pos + 5 + int.from_bytes(data[pos + 1:pos + 5], "big"))
        return pos + 9, end
    if code == 0x45:
        return None
    return pos, -1


def _response_span(data: bytes, at: int, pos: int) -> tuple[int, int] | None:
    """The span of the response of the sasl-response whose descriptor starts at `at` (its
    field list at `pos`); None when it surely has none (an empty list, a null or an empty
    binary that the list's size agrees with)."""
    frame_end = _frame_end(data, at)
    fields = _field_list(data, pos, frame_end)
    if fields is None or fields[1] < 0:
        return None if fields is None else ((pos, frame_end) if pos < frame_end else None)
    pos, end = fields
    # The response, the list's one field: vbin8, vbin32 or null.
    code = data[pos] if pos < len(data) else None
    if code == 0x40 and pos + 1 == end:
        return None
    if code == 0xA0 and pos + 1 < len(data):
        n, pos = data[pos + 1], pos + 2
    elif code == 0xB0 and pos + 4 < len(data):
        n, pos = int.from_bytes(data[pos + 1:pos + 5], "big"), pos + 5
    else:
        return (pos, frame_end) if pos < frame_end else None
    stop = pos + n
    if stop == end:  # the list agrees: the response's length is trusted
        return (pos, stop) if n else None
    return (pos, min(len(data), max(stop, end, frame_end)))


def _init_span(data: bytes, at: int, pos: int) -> tuple[int, int] | None:
    frame_end = _frame_end(data, at)
    fields = _field_list(data, pos, frame_end)
    if fields is None or fields[1] < 0:
        return None if fields is None else ((pos, frame_end) if pos < frame_end else None)
    pos, end = fields
    # The mechanism: sym8 or sym32.
    code = data[pos] if pos < len(data) else None
    if code == 0xA3 and pos + 1 < len(data):
        n, pos = data[pos + 1], pos + 2
    elif code == 0xB3 and pos + 4 < len(data):
        n, pos = int.from_bytes(data[pos + 1:pos + 5], "big"), pos + 5
    else:
        return (pos, frame_end) if pos < frame_end else None
    if pos + n > end:  # its size runs past the list: what follows cannot be located
        return (pos, frame_end) if pos < frame_end else None
    mechanism = data[pos:pos + n]
    pos += n
    # ANONYMOUS and EXTERNAL send no secret, but for a response shaped as PLAIN's
    open_mechanism = len(mechanism) == n and mechanism.upper() in _OPEN_MECHANISMS
    # The initial response: vbin8, vbin32 or null.
    code = data[pos] if pos < len(data) else None
    if code == 0x40:
        # No response, if the list agrees: it ends here or a hostname fills the rest.
        after = pos + 1
        if open_mechanism or after >= end or (
                after + 1 < len(data) and data[after] == 0xA1
                and after + 2 + data[after + 1] == end):
            return None
        return (pos, min(len(data), max(end, frame_end)))
    if code == 0xA0 and pos + 1 < len(data):
        n, pos = data[pos + 1], pos + 2
    elif code == 0xB0 and pos + 4 < len(data):
        n, pos = int.from_bytes(data[pos + 1:pos + 5], "big"), pos + 5
    else:
        return None if open_mechanism else ((pos, frame_end) if pos < frame_end else None)
    stop = pos + n
    if open_mechanism:
        return (pos, min(stop, len(data))) if _plain_shaped(data[pos:stop]) else None
    # The response's length is trusted only where the list agrees: it ends the list, or a
    # hostname (or what takes its place: a null, a str8 or str32 of the right size) fills
    # the rest exactly.
    trusted = stop <= end and (
        stop == end
        or (stop + 1 == end and data[stop] == 0x40)
        or (stop + 1 < len(data) and stop + 2 + data[stop + 1] == end)
        or (data[stop:stop + 1] == b"\xb1"
            and stop + 5 + int.from_bytes(data[stop + 1:stop + 5], "big") == end)
    )
    if not trusted:
        stop = max(stop, end, frame_end)
    return (pos, min(stop, len(data)))


_SECRET_DESCRIPTORS = (
    (_SASL_INIT_DESCRIPTORS, _init_span),
    (_SASL_RESPONSE_DESCRIPTORS, _response_span),
)


# AMQP 0-10 carries SASL in connection.start-ok / secure-ok `response` fields.
_SECRET_010 = {"connection.start-ok", "connection.secure-ok"}


def redact_010_fields(method: Any, show_secrets: bool = False) -> dict[str, Any]:
    """A 0-10 control's or command's fields with the SASL response masked (PLAIN keeps
    its user); the method itself is never changed."""
    fields = dict(method.fields)
    if show_secrets or method.qname not in _SECRET_010:
        return fields
    response = fields.get("response")
    mechanism = str(fields.get("mechanism", "")).upper()
    if not isinstance(response, (bytes, bytearray)) or (
            mechanism in _NO_SECRET_MECHANISMS and not _plain_shaped(response)):
        return fields
    fields["response"] = (redact_plain_response(response)
                          if mechanism == "PLAIN" or mechanism in _NO_SECRET_MECHANISMS
                          else MASK)
    return fields


# --- AMQP 0-10 in raw bytes ----------------------------------------------------------------
#
# connection.start-ok (class 1, control 2: client-properties map, mechanism str8, response
# vbin32, locale str8) and connection.secure-ok (1, 4: response vbin32) are control segments:
# a 12-octet frame header (flags, segment type 0, size, reserved, track 0, channel, four
# reserved zeros), then class and control codes, two octets of packing flags and the fields.

_CODES_010 = {b"\x01\x02": 4, b"\x01\x04": 1}  # codes → how many fields the control has
_HEADER_010 = 12
_ZEROS = b"\x00\x00\x00\x00"


def _header_010_checks(data: bytes, h: int) -> int:
    """How many of five marks of the first frame of a control segment the 12 octets at `h`
    carry: format 0 with the first-frame bit, segment type 0, reserved octet 4, track 0 and
    the four reserved octets at the end."""
    return (
        (data[h] & 0xF2 == 0x02)
        + (data[h + 1] == 0)
        + (data[h + 4] == 0)
        + (data[h + 5] == 0)
        + (data[h + 8:h + 12] == _ZEROS)
    )


def _segment_010(data: bytes, h: int) -> tuple[bytes, list[tuple[int, int]], bool]:
    """The payload of the control segment whose first frame starts at `h`, its frames'
    payloads joined: (payload, [(payload index, data offset) of each frame's payload],
    complete). Continuation frames are followed while their headers say so; the segment
    is complete when a frame marked last ends inside `data`."""
    payload = bytearray()
    chunks: list[tuple[int, int]] = []
    at = h
    while True:
        size = int.from_bytes(data[at + 2:at + 4], "big")
        chunks.append((len(payload), at + _HEADER_010))
        payload += data[at + _HEADER_010:at + max(size, _HEADER_010)]
        if size < _HEADER_010 or at + size > len(data):
            return bytes(payload), chunks, False
        if data[at] & 0x01:  # the segment's last frame
            return bytes(payload), chunks, True
        at += size
        if not (
            at + _HEADER_010 <= len(data)
            and data[at] & 0xF2 == 0
            and data[at + 1] == 0
            and data[at + 4] == 0
            and data[at + 5] == 0
            and data[at + 6:at + 8] == data[h + 6:h + 8]
            and data[at + 8:at + 12] == _ZEROS
        ):
            return bytes(payload), chunks, False


def _to_data(chunks: list[tuple[int, int]], i: int) -> int:
    """The data offset of payload index `i` (past the last frame: as if it went on)."""
    start, at = next(c for c in reversed(chunks) if c[0] <= i)
    return at + i - start


_SASL_NAME = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def _response_010(payload: bytes, fields: int, complete: bool) -> tuple[int, int, bool] | None:
    """Where the SASL response of a start-ok (`fields` 4) or secure-ok (1) may be in its
    segment's `payload` (class and control codes first): (start, stop, trusted), or None
    for a response that holds no secret (ANONYMOUS, EXTERNAL, or none at all), each
    field read as the spec has it. Untrusted, the range starts at the first octet that
    cannot be accounted for and reaches to the end of the segment (or further, as far as
    the response's own size says)."""
    from amqpcli.amqp010.codec import decode_value
    from amqpcli.amqp010.errors import DecodeError

    end = len(payload)
    pos = 2
    if pos + 2 > end:
        return (pos, end, False)
    flags = int.from_bytes(payload[pos:pos + 2], "little")
    if flags >> fields:
        return (pos, end, False)
    pos += 2
    mechanism = None
    if fields == 4:
        if flags & 1:  # client-properties
            try:
                _, pos = decode_value("map", payload, pos, end)
            except (DecodeError, ValueError, OverflowError):
                return (pos, end, False)
        if not flags & 2:  # a start-ok always names its mechanism
            return (pos, end, False)
        n = payload[pos] if pos < end else 0
        mechanism = payload[pos + 1:pos + 1 + n]
        if not 1 <= n <= 20 or len(mechanism) != n or not set(mechanism) <= _SASL_NAME:
            return (pos, end, False)
        pos += 1 + n
        response_bit = 4
    else:
        response_bit = 1
    if not flags & response_bit:
        return (pos, end, False)
    if pos + 4 > end:
        return (pos, end, False)
    n = int.from_bytes(payload[pos:pos + 4], "big")
    start, stop = pos + 4, pos + 4 + n
    trusted = complete and stop <= end
    if trusted and fields == 4 and flags & 8:  # the locale must end the segment
        trusted = stop < end and stop + 1 + payload[stop] == end
    elif trusted:
        trusted = stop == end
    if not trusted:
        return (start, max(stop, end), False)
    if n == 0 or (mechanism in _OPEN_MECHANISMS and not _plain_shaped(payload[start:stop])):
        return None
    return (start, stop, True)


def secret_spans_010(data: bytes | bytearray) -> list[tuple[int, int]]:
    """Byte ranges of `data` that may hold the SASL response of an AMQP 0-10
    connection.start-ok or secure-ok, for a hexdump to mask. A control is located by its
    codes after a frame header that looks like its first frame (four of that header's
    five fixed marks suffice), or by a frame header with all five marks followed by codes
    one octet away from these controls' that do not decode as the control they name. When
    any field does not read as it should, the range reaches to the end of the segment."""
    data = bytes(data)
    spans: list[tuple[int, int]] = []
    for h in _candidates_010(data):
        codes = data[h + _HEADER_010:h + _HEADER_010 + 2]
        fields = _CODES_010.get(codes)
        if fields is None:
            if not (codes[0] == 1 or codes[1] in (2, 4)) or _header_010_checks(data, h) < 5:
                continue
        elif _header_010_checks(data, h) < 4:
            continue
        payload, chunks, complete = _segment_010(data, h)
        if fields is None:
            if _decodes_010(payload, complete):
                continue
            fields = 1 if codes[1] == 4 else 4
        found = _response_010(payload, fields, complete)
        if found is None:
            continue
        start, stop, trusted = found
        first = _to_data(chunks, start)
        last = _to_data(chunks, stop - 1) + 1 if stop > start else first
        if not trusted:
            last = max(last, _to_data(chunks, len(payload) - 1) + 1 if payload else first)
        last = min(last, len(data))
        if first < last:
            spans.append((first, last))
    return spans


def _candidates_010(data: bytes) -> list[int]:
    """Offsets that may hold the frame header of a start-ok or secure-ok: 12 octets before
    their codes, or 8 before four zero octets (the header's reserved end)."""
    found = set()
    for pattern, back in ((b"\x01\x02", _HEADER_010), (b"\x01\x04", _HEADER_010), (_ZEROS, 8)):
        at = data.find(pattern)
        while at >= 0:
            if at >= back:
                found.add(at - back)
            at = data.find(pattern, at + 1)
    return sorted(h for h in found if h + _HEADER_010 + 2 <= len(data))


def _decodes_010(payload: bytes, complete: bool) -> bool:
    """True when a whole control segment's payload decodes as the control its codes name."""
    from amqpcli.amqp010.codec import decode_method
    from amqpcli.amqp010.errors import DecodeError

    if not complete:
        return False
    try:
        decode_method(payload, 0, len(payload), False)
    except (DecodeError, ValueError, OverflowError):
        return False
    return True
