"""The incremental frame reader: headers, frames, limits, errors, any split of the input."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqpcli.codec.composites import (
    Accepted,
    Attach,
    Begin,
    Disposition,
    Error,
    Flow,
    Modified,
    Open,
    Rejected,
    Released,
    SaslInit,
    SaslMechanisms,
    SaslOutcome,
    Source,
    Target,
    Transfer,
)
from amqpcli.codec.encode import encode
from amqpcli.codec.frames import (
    AMQP_HEADER,
    SASL_HEADER,
    TLS_HEADER,
    Frame,
    FrameError,
    FrameReader,
    ProtocolHeader,
    _decode_transfer_fast,
    encode_frame,
    encode_protocol_header,
    parse_protocol_header,
)
from amqpcli.codec.types import Array, Symbol, UByte, UInt

MESSAGE = bytes.fromhex("005377a105") + b"hello"


def client_stream() -> list[bytes]:
    """A short client conversation, one element per header or frame."""
    return [
        SASL_HEADER,
        encode_frame(
            SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\x00guest\x00guest"), type=1
        ),
        AMQP_HEADER,
        encode_frame(Open(container_id="c1", max_frame_size=UInt(65536))),
        encode_frame(
            Begin(next_outgoing_id=UInt(0), incoming_window=UInt(100), outgoing_window=UInt(100))
        ),
        encode_frame(
            Attach(
                name="l1",
                handle=UInt(0),
                role=False,
                source=Source(address="s"),
                target=Target(address="q"),
            ),
            channel=0,
        ),
        encode_frame(
            Flow(
                next_incoming_id=UInt(0),
                incoming_window=UInt(10),
                next_outgoing_id=UInt(0),
                outgoing_window=UInt(10),
                handle=UInt(0),
                link_credit=UInt(10),
            ),
            channel=0,
        ),
        encode_frame(
            Transfer(handle=UInt(0), delivery_id=UInt(0), delivery_tag=b"t0", settled=False),
            payload=MESSAGE,
        ),
        encode_frame(None),
        encode_frame(Disposition(role=True, first=UInt(0), settled=True, state=Accepted())),
    ]


def read_all(data: bytes, step: int | None = None, **kw: object) -> list[object]:
    r = FrameReader(**kw)  # type: ignore[arg-type]
    items: list[object] = []
    if step is None:
        items += r.feed(data)
    else:
        for i in range(0, len(data), step):
            items += r.feed(data[i : i + step])
    return items + r.close()


def test_whole_stream_items_and_offsets() -> None:
    parts = client_stream()
    items = read_all(b"".join(parts))
    assert len(items) == len(parts)
    offset = 0
    for part, item in zip(parts, items):
        assert item.offset == offset  # type: ignore[attr-defined]
        offset += len(part)
    assert isinstance(items[0], ProtocolHeader) and items[0].kind == "sasl"
    assert isinstance(items[1], Frame) and items[1].type == 1 and items[1].name == "sasl-init"
    assert isinstance(items[2], ProtocolHeader) and items[2].kind == "amqp"
    names = [i.name for i in items[3:]]  # type: ignore[attr-defined]
    assert names == ["open", "begin", "attach", "flow", "transfer", "heartbeat", "disposition"]
    transfer = items[7]
    assert isinstance(transfer, Frame)
    assert transfer.payload == MESSAGE
    assert transfer.body.delivery_tag == b"t0"  # type: ignore[union-attr]
    for part, item in zip(parts, items):
        if isinstance(item, Frame):
            assert item.encode() == part


def test_every_split_point_gives_the_same_items() -> None:
    data = b"".join(client_stream())
    whole = read_all(data)
    for cut in range(len(data) + 1):
        r = FrameReader()
        items = r.feed(data[:cut]) + r.feed(data[cut:]) + r.close()
        assert items == whole, f"split at {cut}"
    assert read_all(data, step=1) == whole


def test_heartbeat_and_extended_header() -> None:
    hb = bytes.fromhex("0000000802000000")
    ext = struct.pack(">IBBH", 16, 4, 0, 7) + b"\xde\xad\xbe\xef\x01\x02\x03\x04"
    items = read_all(hb + ext)
    assert items[0] == Frame(0, 8, 2, 0, 0, b"", None, b"")
    assert items[0].is_heartbeat  # type: ignore[union-attr]
    assert items[1] == Frame(8, 16, 4, 0, 7, b"\xde\xad\xbe\xef\x01\x02\x03\x04", None, b"")
    # An extended header before a real performative is kept and re-encoded.
    framed = encode_frame(Open(container_id="x"), channel=3, ext=b"\x00\x00\x00\x01")
    (f,) = read_all(framed)
    assert isinstance(f, Frame) and f.ext == b"\x00\x00\x00\x01" and f.doff == 3
    assert f.body == Open(container_id="x") and f.encode() == framed


def test_bad_doff_is_reported_and_reading_goes_on() -> None:
    bad_low = struct.pack(">IBBH", 12, 1, 0, 0) + b"\x00" * 4
    bad_high = struct.pack(">IBBH", 12, 4, 0, 0) + b"\x00" * 4
    good = encode_frame(Open(container_id="after"))
    items = read_all(bad_low + bad_high + good)
    assert [type(i) for i in items] == [FrameError, FrameError, Frame]
    assert items[0].offset == 4 and "doff 1" in items[0].found  # type: ignore[union-attr]
    assert items[1].frame_offset == 12 and "doff 4" in items[1].found  # type: ignore[union-attr]
    assert items[2].body.container_id == "after"  # type: ignore[union-attr]


def test_size_below_8_is_fatal() -> None:
    data = struct.pack(">IBBH", 4, 2, 0, 0) + encode_frame(Open(container_id="x"))
    r = FrameReader()
    items = r.feed(data)
    assert len(items) == 1 and isinstance(items[0], FrameError) and items[0].fatal
    assert items[0].offset == 0 and "size 4" in items[0].found
    assert r.feed(b"more bytes") == [] and r.close() == []
    assert r.opaque == "error"


def test_max_frame_size() -> None:
    frame = encode_frame(Open(container_id="x" * 600))
    (ok,) = read_all(frame, max_frame_size=len(frame))
    assert isinstance(ok, Frame)
    items = read_all(AMQP_HEADER + frame, max_frame_size=512)
    assert isinstance(items[1], FrameError) and items[1].fatal
    assert items[1].offset == 8 and f"size {len(frame)}" in items[1].found
    assert "512" in items[1].expected


def test_declared_size_larger_than_input_waits_without_allocating() -> None:
    r = FrameReader()
    assert r.feed(struct.pack(">IBBH", 0xFFFFFFF0, 2, 0, 0)) == []
    assert r.pending == 8
    assert r.feed(b"\x00" * 100) == []
    assert r.pending == 108  # only what arrived is held
    (err,) = r.close()
    assert isinstance(err, FrameError) and "4294967280" in err.expected and err.fatal


def test_truncated_tail_is_reported_on_close() -> None:
    frame = encode_frame(Open(container_id="x"))
    r = FrameReader()
    assert r.feed(frame[:-1]) == []
    (err,) = r.close()
    assert isinstance(err, FrameError) and err.offset == 0
    r = FrameReader()
    r.feed(b"AMQ")
    (err,) = r.close()
    assert "protocol header" in err.expected  # type: ignore[union-attr]
    assert FrameReader().close() == []


def test_undecodable_body_reported_with_offset_then_next_frame() -> None:
    bad = struct.pack(">IBBH", 12, 2, 0, 5) + b"\x00\x53\x10\xff"  # 0xff is no format code
    not_perf = struct.pack(">IBBH", 10, 2, 0, 0) + b"\xa1\x00"  # a string, not a performative
    sasl_in_amqp = encode_frame(SaslOutcome(code=UByte(0)), type=0)
    good = encode_frame(Open(container_id="ok"))
    items = read_all(bad + not_perf + sasl_in_amqp + good)
    assert [type(i) for i in items] == [FrameError, FrameError, FrameError, Frame]
    e0 = items[0]
    assert isinstance(e0, FrameError)
    assert e0.frame_offset == 0 and e0.channel == 5 and e0.offset > 8 and "0xff" in e0.found
    assert "performative" in items[1].expected and "str" in items[1].found  # type: ignore[union-attr]
    assert "sasl-outcome" in items[2].found  # type: ignore[union-attr]


def test_unknown_frame_type_reported() -> None:
    odd = encode_frame(Open(container_id="x"), type=7)
    items = read_all(odd + encode_frame(None))
    assert isinstance(items[0], FrameError) and "frame type 7" in items[0].found
    assert isinstance(items[1], Frame)


@pytest.mark.parametrize(
    ("raw", "kind", "name"),
    [
        (b"AMQP\x00\x01\x00\x00", "amqp", "AMQP 1.0"),
        (b"AMQP\x03\x01\x00\x00", "sasl", "AMQP 1.0 SASL"),
        (b"AMQP\x02\x01\x00\x00", "tls", "AMQP 1.0 TLS"),
        (b"AMQP\x01\x01\x00\x0a", "amqp0-10", "AMQP 0-10"),
        (b"AMQP\x00\x00\x09\x01", "amqp0-9-1", "AMQP 0-9-1"),
        (b"AMQP\x01\x01\x08\x00", "amqp0-8", "AMQP 0-8"),
        (b"AMQP\x01\x01\x00\x09", "amqp0-9", "AMQP 0-9"),
        (b"AMQP\x09\x09\x09\x09", "unknown", "AMQP unknown version 9.9.9.9"),
    ],
)
def test_protocol_headers_named(raw: bytes, kind: str, name: str) -> None:
    (h,) = read_all(raw)
    assert isinstance(h, ProtocolHeader) and h.kind == kind and h.name == name
    assert parse_protocol_header(raw) == h


def test_non_amqp10_header_makes_the_rest_opaque() -> None:
    r = FrameReader()
    items = r.feed(b"AMQP\x01\x01\x00\x0a" + b"\x0f\x00\x00\x10" * 10)
    assert len(items) == 1 and items[0].kind == "amqp0-10"  # type: ignore[union-attr]
    assert r.opaque == "amqp0-10" and r.opaque_bytes == 40
    assert r.feed(b"xyz") == [] and r.opaque_bytes == 43 and r.close() == []
    r = FrameReader()
    assert [i.kind for i in r.feed(TLS_HEADER + b"\x16\x03\x01")] == ["tls"]  # type: ignore[union-attr]
    assert r.opaque == "tls"


def test_sasl_then_amqp_headers_in_one_stream_byte_by_byte() -> None:
    data = (
        SASL_HEADER
        + encode_frame(
            SaslMechanisms(sasl_server_mechanisms=Array([Symbol("PLAIN")], "symbol")), type=1
        )
        + encode_frame(SaslOutcome(code=UByte(0)), type=1)
        + AMQP_HEADER
        + encode_frame(Open(container_id="srv"))
    )
    items = read_all(data, step=1)
    kinds = [getattr(i, "kind", None) or i.name for i in items]  # type: ignore[attr-defined]
    assert kinds == ["sasl", "sasl-mechanisms", "sasl-outcome", "amqp", "open"]


def test_encode_frame_and_header() -> None:
    assert encode_protocol_header() == AMQP_HEADER
    assert encode_protocol_header("sasl") == SASL_HEADER
    assert encode_protocol_header("tls") == TLS_HEADER
    assert encode_protocol_header(1, (1, 0, 10)) == b"AMQP\x01\x01\x00\x0a"
    assert encode_frame(None) == bytes.fromhex("0000000802000000")
    f = encode_frame(Open(container_id="a"), channel=0x1234, type=0)
    assert f[:4] == struct.pack(">I", len(f)) and f[4:8] == b"\x02\x00\x12\x34"
    assert f[8:] == encode(Open(container_id="a"))
    with pytest.raises(ValueError):
        encode_frame(None, ext=b"\x00")
    with pytest.raises(ValueError):
        encode_frame(None, channel=70000)


@pytest.mark.parametrize(
    "transfer",
    [
        Transfer(handle=UInt(0)),
        Transfer(
            handle=UInt(7),
            delivery_id=UInt(300),
            delivery_tag=b"",
            message_format=UInt(0),
            settled=True,
            more=False,
            rcv_settle_mode=UByte(1),
        ),
        Transfer(
            handle=UInt(2**32 - 1),
            delivery_id=UInt(2**31),
            delivery_tag=b"x" * 32,
            more=True,
            resume=False,
            aborted=True,
            batchable=True,
        ),
    ],
)
def test_transfer_fast_path_agrees_with_the_codec(transfer: Transfer) -> None:
    from amqpcli.codec.decode import decode

    raw = encode(transfer) + MESSAGE
    fast = _decode_transfer_fast(memoryview(raw))
    assert fast is not None
    generic = decode(raw, 0)
    assert fast[1] == generic[1]
    assert fast[0] == generic[0] == transfer
    assert encode(fast[0]) == raw[: fast[1]]
    # With a delivery state it defers to the codec.
    with_state = encode(Transfer(handle=UInt(0), state=Accepted()))
    assert _decode_transfer_fast(memoryview(with_state)) is None
    # Wide list encoding and truncations: taken or refused, never wrong.
    for cut in range(len(raw)):
        r = _decode_transfer_fast(memoryview(raw[:cut]))
        if r is not None:
            assert r[0] == decode(raw[:cut], 0)[0]


@pytest.mark.parametrize(
    "disposition",
    [
        Disposition(role=True, first=UInt(0), last=UInt(5), settled=True, state=Accepted()),
        Disposition(role=True, first=UInt(7), settled=True, state=Released(), batchable=False),
        Disposition(role=False, first=UInt(1), state=Rejected()),
        Disposition(role=True, first=UInt(300000)),
        Disposition(role=True, first=UInt(2), state=Modified()),
    ],
)
def test_disposition_fast_path_agrees_with_the_codec(disposition: Disposition) -> None:
    from amqpcli.codec.decode import decode

    raw = encode(disposition)
    fast = _decode_transfer_fast(memoryview(raw))
    assert fast is not None
    generic = decode(raw, 0)
    assert fast[1] == generic[1] == len(raw)
    assert fast[0] == generic[0] == disposition
    assert type(fast[0].state) is type(generic[0].state)
    if generic[0].state is not None:
        assert fast[0].state._raw == generic[0].state._raw
        assert encode(fast[0].state) == encode(generic[0].state)
    assert encode(fast[0]) == raw
    # A state with fields defers to the codec.
    with_error = encode(Disposition(role=True, first=UInt(0), state=Rejected(
        error=Error(condition=Symbol("amqp:x")))))
    assert _decode_transfer_fast(memoryview(with_error)) is None
    for cut in range(len(raw)):
        r = _decode_transfer_fast(memoryview(raw[:cut]))
        if r is not None:
            assert r[0] == decode(raw[:cut], 0)[0]


def test_a_field_cut_short_at_the_end_of_the_frame_is_a_frame_error() -> None:
    # a smalluint whose value byte is missing, the list's size pointing at it: the fast
    # path used to read past the body and raise IndexError out of the reader
    for body in (bytes.fromhex("005314c0020152"), bytes.fromhex("005314c0020170000001"),
                 bytes.fromhex("005315c00302415200")[:-1]):
        frame = struct.pack(">IBBH", 8 + len(body), 2, 0, 0) + body
        items = FrameReader().feed(frame)
        assert len(items) == 1 and isinstance(items[0], FrameError)



_UINTS = st.one_of(st.just(0), st.integers(1, 255), st.integers(256, 2**32 - 1)).map(UInt)
_FLAGS = st.one_of(st.none(), st.booleans())
_PERFORMATIVES = st.one_of(
    st.builds(
        Transfer, handle=_UINTS, delivery_id=st.one_of(st.none(), _UINTS),
        delivery_tag=st.one_of(st.none(), st.binary(max_size=40)),
        message_format=st.one_of(st.none(), _UINTS), settled=_FLAGS, more=_FLAGS,
        rcv_settle_mode=st.one_of(st.none(), st.integers(0, 1).map(UByte)),
        resume=_FLAGS, aborted=_FLAGS, batchable=_FLAGS),
    st.builds(
        Disposition, role=st.booleans(), first=_UINTS, last=st.one_of(st.none(), _UINTS),
        settled=_FLAGS, batchable=_FLAGS,
        state=st.one_of(st.none(), st.sampled_from([Accepted, Released, Rejected, Modified])
                        .map(lambda c: c()))),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PERFORMATIVES, min_size=1, max_size=8), st.integers(1, 4))
def test_fast_path_and_its_templates_agree_with_the_codec(
        perfs: list[Transfer | Disposition], repeat: int) -> None:
    """Every performative read several times (a layout seen twice becomes a template),
    whole and split across feeds: the same values, types and bytes as the codec's
    decoder, whichever path decoded it, and no object shared between two frames."""
    from amqpcli.codec.decode import decode

    stream = b"".join(encode_frame(p, payload=MESSAGE if isinstance(p, Transfer) else b"")
                      for p in perfs) * repeat
    for chunk in (len(stream), 7):
        r = FrameReader()
        items: list[object] = []
        for i in range(0, len(stream), chunk):
            items += r.feed(stream[i : i + chunk])
        assert len(items) == len(perfs) * repeat
        states = set()
        for item, want in zip(items, perfs * repeat, strict=True):
            assert isinstance(item, Frame)
            raw = encode(want)
            generic = decode(raw, 0)[0]
            got = item.body
            assert type(got) is type(generic) and got == generic == want
            assert got._raw[0] == generic._raw[0] == raw
            assert encode(got) == raw
            for slot in got._SLOTS:
                assert type(getattr(got, slot)) is type(getattr(generic, slot))
            state = getattr(got, "state", None)
            if state is not None:
                assert state._raw == generic.state._raw and id(state) not in states
                states.add(id(state))


def test_a_body_error_says_the_streams_offsets_in_its_text_too() -> None:
    # an open whose container-id says 10 bytes and holds 3: the frame ends at byte 19 of
    # the stream, which the text said as 11 (counted from the body) beside offset 14
    body = bytes.fromhex("005310c00601a10a616263")
    frame = (8 + len(body)).to_bytes(4, "big") + b"\x02\x00\x00\x00" + body
    heartbeat = b"\x00\x00\x00\x08\x02\x00\x00\x00"
    err = list(FrameReader().feed(heartbeat + frame))[-1]
    assert isinstance(err, FrameError)
    assert (err.offset, err.found, err.frame_offset) == (22, "end of input at 27", 8)
