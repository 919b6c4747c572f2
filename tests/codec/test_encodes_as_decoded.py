"""`encodes_as_decoded`: a decoded composite whose bytes the encoder would write again.

Whenever it says True, `encode_fields` must give exactly the bytes the composite was
decoded from: checked on composites written with every width and form the format allows
(the encoder's own, wider ones, booleans as 0x56, long descriptors, trailing nulls), on
random and mutated bytes, and after fields change. It must also say True for the usual
canonical performatives and sections, or it would save nothing.
"""

from __future__ import annotations

import struct
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqpcli.codec import composites as _c
from amqpcli.codec.decode import decode, decode_all
from amqpcli.codec.encode import encode, encode_fields, encodes_as_decoded
from amqpcli.codec.frames import FrameReader, encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import (
    AmqpList,
    AmqpMap,
    Array,
    Byte,
    Char,
    Composite,
    Decimal32,
    Decimal64,
    Decimal128,
    DecodeError,
    Described,
    Int,
    Long,
    Short,
    Symbol,
    Timestamp,
    UByte,
    UInt,
    ULong,
    UShort,
)

from .helpers import values

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _odd(draw: st.DrawFn) -> bool:
    """Whether a value is written in another form than the encoder's (one in eight)."""
    return draw(st.integers(0, 7)) == 0


def _sized(draw: st.DrawFn, small: int, body: bytes, count: int | None = None) -> bytes:
    """A variable-width or compound value: its one-byte form when it fits (unless drawn
    odd), else its four-byte form."""
    extra = 1 if count is not None else 0
    fits = len(body) + extra <= 0xFF and (count is None or count <= 0xFF)
    if fits and not _odd(draw):
        head = bytes((small, len(body) + extra)) + (bytes((count,)) if count is not None else b"")
    else:
        wide = small + 0x10
        head = bytes((wide,)) + struct.pack(">I", len(body) + 4 * extra)
        head += struct.pack(">I", count) if count is not None else b""
    return head + body


def any_width(draw: st.DrawFn, v: Any) -> bytes:
    """`v` encoded as the encoder does, or (drawn odd) in another form that holds it."""
    t = type(v)
    if v is None:
        return b"\x40"
    if t is bool:
        return bytes((0x56, int(v))) if _odd(draw) else (b"\x41" if v else b"\x42")
    if t in (UInt, ULong):
        zero, small, full, fmt = (0x43, 0x52, 0x70, ">I") if t is UInt else (0x44, 0x53, 0x80, ">Q")
        odd = _odd(draw)
        if v == 0 and not odd:
            return bytes((zero,))
        if v <= 0xFF and (v != 0 or odd) and not (odd and draw(st.booleans())):
            return bytes((small, v))
        return bytes((full,)) + struct.pack(fmt, v)
    if t in (Int, Long):
        small, full, fmt = (0x54, 0x71, ">i") if t is Int else (0x55, 0x81, ">q")
        if -0x80 <= v <= 0x7F and not _odd(draw):
            return bytes((small,)) + struct.pack(">b", v)
        return bytes((full,)) + struct.pack(fmt, v)
    if t is bytes:
        return _sized(draw, 0xA0, v)
    if t is str:
        return _sized(draw, 0xA1, v.encode("utf-8"))
    if t is Symbol:
        return _sized(draw, 0xA3, v.encode("ascii"))
    if isinstance(v, Array):
        return encode(v)
    if isinstance(v, list):
        body = b"".join(any_width(draw, x) for x in v)
        if not v and not _odd(draw):
            return b"\x45"
        return _sized(draw, 0xC0, body, len(v))
    if isinstance(v, dict):
        body = b"".join(any_width(draw, k) + any_width(draw, x) for k, x in v.items())
        return _sized(draw, 0xC1, body, 2 * len(v))
    if isinstance(v, Described):
        return b"\x00" + any_width(draw, v.descriptor) + any_width(draw, v.value)
    return encode(v)  # the other types have one encoding


@st.composite
def composites_bytes(draw: st.DrawFn) -> bytes:
    """A composite written in any width: its descriptor, list, fields, nested values."""
    cls = draw(st.sampled_from([c for c in _c.ALL if c.CODE <= 0xFF]))
    form = draw(st.integers(0, 11))
    if form == 0:
        descriptor = bytes((0x00, 0x80)) + struct.pack(">Q", cls.CODE)
    elif form == 1:
        descriptor = b"\x00" + _sized(draw, 0xA3, cls.SYMBOL.encode())
    else:
        descriptor = bytes((0x00, 0x53, cls.CODE))
    if cls.HAS_VALUE:
        value = draw(_section_values(cls))
        return descriptor + any_width(draw, value)
    items = draw(st.lists(_field_value(), max_size=len(cls.FIELDS) + (_odd(draw))))
    if items and draw(st.integers(0, 5)) == 0:
        items.append(None)  # a trailing null
    return descriptor + any_width(draw, items)


_SCALARS = st.sampled_from([None, True, False, UInt(0), UInt(1), UInt(255), UInt(256),
                            ULong(0), ULong(7), ULong(300), UByte(1), Symbol("amqp:x"),
                            "text", b"tag", b"", "", Int(-1), Int(1000), Long(5), Long(1000),
                            Timestamp(1700000000000), "x" * 300, b"y" * 300])


def _field_value() -> st.SearchStrategy[Any]:
    nested = st.builds(lambda x: Described(ULong(0x24), x), st.lists(_SCALARS, max_size=3))
    simple_map = st.dictionaries(st.sampled_from(["k", Symbol("s"), UInt(1)]), _SCALARS,
                                 max_size=3)
    return st.one_of(_SCALARS, _SCALARS, _SCALARS, nested, simple_map, values(6))


def _section_values(cls: type[Composite]) -> st.SearchStrategy[Any]:
    if cls.SOURCE == "binary":
        return st.binary(max_size=300)
    if cls.SOURCE == "map":
        keys = st.sampled_from(["k", "key", Symbol("s"), Symbol("x-opt"), UInt(1)])
        return st.dictionaries(keys, _SCALARS | values(4), max_size=4)
    if cls.SOURCE == "list":
        return st.lists(_SCALARS, max_size=4)
    return _SCALARS | values(6)


def _composites_in(v: Any) -> list[Composite]:
    """Every composite in a decoded value, nested ones too."""
    out: list[Composite] = []
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, Composite):
            out.append(x)
            stack.extend([x.value] if x.HAS_VALUE else [getattr(x, s) for s in x._SLOTS])
        elif isinstance(x, Described):
            stack += [x.descriptor, x.value]
        elif isinstance(x, dict):
            stack += [*x.keys(), *x.values()]
        elif isinstance(x, list):
            stack += list(x)
    return out


def _holds(c: Composite) -> bool:
    """The property: True only where the encoder gives the decoded bytes back."""
    if encodes_as_decoded(c):
        assert c._raw is not None
        assert encode_fields(c) == c._raw[0], (c, c._raw[0].hex())
        return True
    return False


@SETTINGS
@given(composites_bytes())
def test_true_only_when_the_fields_encode_to_the_bytes(raw: bytes) -> None:
    try:
        value, _ = decode(raw)
    except DecodeError:
        return
    for c in _composites_in(value):
        _holds(c)


@SETTINGS
@given(st.data())
def test_canonical_bytes_are_known(data: st.DataObject) -> None:
    """Written by the encoder, the usual field types are recognised as written so."""
    raw = data.draw(composites_bytes())
    value, _ = decode(raw)
    if not isinstance(value, Composite) or value._raw is None:
        return
    try:
        canonical = encode_fields(value) == raw
    except Exception:  # noqa: BLE001 - a field the encoder cannot take
        return
    simple = all(type(x) in _SIMPLE or isinstance(x, Composite)
                 for x in ([value.value] if value.HAS_VALUE else
                           [getattr(value, s) for s in value._SLOTS]))
    if canonical and simple and not value.HAS_VALUE:
        assert encodes_as_decoded(value)


_SIMPLE = {type(None), bool, UInt, ULong, UByte, UShort, Byte, Short, Int, Long, Symbol,
           Timestamp, Char, Decimal32, Decimal64, Decimal128}


@SETTINGS
@given(st.binary(max_size=120), st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)),
                                         max_size=4))
def test_random_and_mutated_bytes(data: bytes, flips: list[tuple[int, int]]) -> None:
    base = bytearray(encode(_c.Transfer(handle=UInt(1), delivery_id=UInt(9),
                                        delivery_tag=b"t1", message_format=UInt(0),
                                        settled=False, state=_c.Accepted())))
    for i, v in flips:
        if i < len(base):
            base[i] = v
    for raw in (data, bytes(base)):
        try:
            found = decode_all(raw)
        except DecodeError:
            continue
        for value in found:
            for c in _composites_in(value):
                _holds(c)


def test_the_usual_performatives_and_sections() -> None:
    usual = [
        _c.Transfer(handle=UInt(0), delivery_id=UInt(0), delivery_tag=b"\x00" * 8,
                    message_format=UInt(0), settled=False),
        _c.Transfer(handle=UInt(3), delivery_id=UInt(70000), delivery_tag=b"abc",
                    message_format=UInt(0), more=True),
        _c.Disposition(role=True, first=UInt(5), last=UInt(300), settled=True,
                       state=_c.Accepted()),
        _c.Flow(next_incoming_id=UInt(1), incoming_window=UInt(2047),
                next_outgoing_id=UInt(1), outgoing_window=UInt(0xFFFFFFFF), handle=UInt(0),
                delivery_count=UInt(0), link_credit=UInt(100)),
        _c.Header(durable=True, priority=UByte(4)),
        _c.Properties(message_id="id-1", to="queue", subject="s",
                      content_type=Symbol("text/plain"), creation_time=Timestamp(1),
                      group_sequence=UInt(7)),
        _c.ApplicationProperties({"k": "v", "n": Long(5), "u": UInt(1000), "b": True}),
        _c.MessageAnnotations({Symbol("x-opt"): "v"}),
        _c.Data(b"x" * 100),
        _c.Data(b"x" * 1000),
        _c.AmqpValue("text"),
    ]
    for c in usual:
        raw = encode(c)
        decoded, _ = decode(raw)
        assert encodes_as_decoded(decoded), c
        assert encode_fields(decoded) == raw


def test_wider_and_changed_are_not_taken() -> None:
    t = _c.Transfer(handle=UInt(0), delivery_id=UInt(1), delivery_tag=b"t")
    raw = encode(t)
    wide = raw.replace(b"\x52\x01", b"\x70\x00\x00\x00\x01")
    wide = wide[:4] + bytes([wide[4] + 3]) + wide[5:]
    decoded, _ = decode(wide)
    assert not encodes_as_decoded(decoded) and encode_fields(decoded) != wide
    decoded, _ = decode(raw)
    assert encodes_as_decoded(decoded)
    decoded.delivery_id = UInt(1)  # an equal value, but not the decoded object
    assert not encodes_as_decoded(decoded)
    props, _ = decode(encode(_c.ApplicationProperties({"k": UInt(1)})))
    assert encodes_as_decoded(props)
    props.value["k"] = UInt(2)  # changed in place: the bytes no longer say it
    assert not encodes_as_decoded(props)
    assert encode_fields(props) != props._raw[0]
    props.value["k"] = Long(1)
    assert not encodes_as_decoded(props)
    flags, _ = decode(encode(_c.ApplicationProperties({"t": True, "f": False, "n": None})))
    assert encodes_as_decoded(flags)
    flags.value["t"] = UInt(1)
    assert not encodes_as_decoded(flags)
    flags.value["t"], flags.value["f"] = True, None
    assert not encodes_as_decoded(flags)
    # a map written with a key twice keeps both entries (the second key wrapped), so its
    # fields give its bytes back
    twice = bytes.fromhex("005374c10b04a1016b5201a1016b5202")
    dup, _ = decode(twice)
    assert len(dup.value) == 2 and encodes_as_decoded(dup) and encode_fields(dup) == twice
    # annotations written with string keys: the encoder makes them symbols
    ann, _ = decode(bytes.fromhex("005372c10502a1016b40"))
    assert not encodes_as_decoded(ann) and encode_fields(ann) != ann._raw[0]
    # a str and a symbol in a binary field
    for field, value in (("delivery_tag", "t"), ("delivery_tag", Symbol("t"))):
        t = decode(encode(Described(ULong(0x14), [UInt(0), UInt(1), value])))[0]
        _holds(t)
        assert getattr(t, field) == value
    odd = decode(bytes.fromhex("005314c009044343a00174a0017a"))[0]  # bytes in message-format
    assert not encodes_as_decoded(odd)
    for m in (AmqpMap({"k": UInt(1)}), AmqpList([UInt(1)])):
        m.code = 0xD1 if isinstance(m, dict) else 0xD0
        c, _ = decode(encode(_c.AmqpValue(m)))
        _holds(c)


def test_frames_fast_path_transfers() -> None:
    frames = [
        encode_frame(_c.Transfer(handle=UInt(0), delivery_id=UInt(i), delivery_tag=bytes([i % 256]) * 8,
                                 message_format=UInt(0), settled=i % 2 == 0), 1, b"payload")
        for i in range(0, 600, 7)
    ]
    frames += [encode_frame(_c.Disposition(role=True, first=UInt(i), settled=True,
                                           state=_c.Accepted()), 1) for i in range(0, 300, 50)]
    reader = FrameReader()
    out = reader.feed(b"".join(frames))
    assert len(out) == len(frames)
    for f in out:
        assert encodes_as_decoded(f.body), f.body
        assert encode_fields(f.body) == f.body._raw[0]


def test_message_sections_as_split() -> None:
    msg = Message(b"body" * 100, header=_c.Header(durable=True),
                  properties=_c.Properties(message_id=UInt(5), to="q"),
                  application_properties={"a": "b"}, footer={Symbol("f"): UInt(1)})
    m = Message.decode(msg.encode())
    for c in (m.header, m.properties, m.application_properties, *m.body, m.footer):
        assert encodes_as_decoded(c) and encode_fields(c) == c._raw[0]


def _forms(v: Any) -> list[bytes]:
    """Every encoding of the scalar `v` (the encoder's first)."""
    first = encode(v)
    t = type(v)
    out = [first]
    if t is bool:
        out.append(bytes((0x56, int(v))))
    elif t in (UInt, ULong):
        small, full, fmt = (0x52, 0x70, ">I") if t is UInt else (0x53, 0x80, ">Q")
        if v <= 0xFF:
            out.append(bytes((small, v)))
        out.append(bytes((full,)) + struct.pack(fmt, v))
    elif t in (Int, Long):
        full, fmt = (0x71, ">i") if t is Int else (0x81, ">q")
        out.append(bytes((full,)) + struct.pack(fmt, v))
    elif t in (bytes, str, Symbol):
        body = v if t is bytes else v.encode("utf-8")  # (a symbol's ASCII is its UTF-8)
        code = {bytes: 0xB0, str: 0xB1, Symbol: 0xB3}[t]
        out.append(bytes((code,)) + struct.pack(">I", len(body)) + body)
    return list(dict.fromkeys(out))


def _list_forms(prefix: bytes, items: list[bytes]) -> list[bytes]:
    body = b"".join(items)
    forms = []
    if len(body) + 1 <= 0xFF:
        forms.append(prefix + bytes((0xC0, len(body) + 1, len(items))) + body)
    forms.append(prefix + b"\xd0" + struct.pack(">II", len(body) + 4, len(items)) + body)
    if not items:
        forms.insert(0, prefix + b"\x45")
    return forms


def test_every_other_form_of_each_field() -> None:
    """Each field of some usual composites written in each form the format allows, the
    list in both widths, with and without a trailing null: only the encoder's own bytes
    are taken."""
    cases = [
        _c.Transfer(handle=UInt(0), delivery_id=UInt(200), delivery_tag=b"tag",
                    message_format=UInt(0), settled=True, more=False),
        _c.Flow(next_incoming_id=UInt(1), incoming_window=UInt(70000),
                next_outgoing_id=UInt(0), outgoing_window=UInt(5), echo=True),
        _c.Properties(message_id=ULong(9), to="q", subject="s" * 3,
                      content_type=Symbol("t"), creation_time=Timestamp(-5),
                      group_sequence=UInt(300)),
        _c.Header(durable=False, priority=UByte(4), ttl=UInt(1000), delivery_count=UInt(0)),
        _c.Attach(name="n", handle=UInt(1), role=True, initial_delivery_count=UInt(0),
                  max_message_size=ULong(0)),
        _c.Begin(next_outgoing_id=UInt(0), incoming_window=UInt(1), outgoing_window=UInt(1),
                 handle_max=UInt(0xFFFFFFFF)),
        _c.Disposition(role=False, first=UInt(0), last=UInt(1), settled=True,
                       state=_c.Accepted(), batchable=False),
    ]
    for c in cases:
        canonical = encode(c)
        prefix = canonical[:3]
        values = [getattr(c, s) for s in c._SLOTS]
        while values and values[-1] is None:
            values.pop()
        items = [encode(v) for v in values]
        variants = []
        for i, v in enumerate(values):
            if isinstance(v, Composite) or v is None:
                continue
            for form in _forms(v):
                variants.append([*items[:i], form, *items[i + 1:]])
        variants.append([*items, b"\x40"])
        seen = 0
        for its in variants:
            for raw in _list_forms(prefix, its):
                decoded, end = decode(raw)
                assert end == len(raw) and isinstance(decoded, type(c))
                assert _holds(decoded) == (raw == canonical), (c, raw.hex())
                seen += raw == canonical
        assert seen
