"""Malformed 0-10 input ends in DecodeError (or a StreamError item) with an offset inside
the input, never in another exception: random bytes and mutated valid streams."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqpcli.amqp010 import (
    COMMANDS,
    CONTROLS,
    PROTOCOL_HEADER,
    Assembly,
    DecodeError,
    StreamDecoder,
    StreamError,
    decode_header,
    decode_method,
    decode_stream,
    decode_value,
    encode_assembly,
)
from amqpcli.amqp010.model import STRUCTS
from amqpcli.amqp010.session import SessionObserver
from tests.amqp010.samples import sample_method, sample_struct

# AMQP010_FUZZ_EXAMPLES raises the count for a longer hunt
FUZZ = settings(max_examples=int(os.environ.get("AMQP010_FUZZ_EXAMPLES", "300")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
METHODS = sorted([*CONTROLS.values(), *COMMANDS.values()], key=lambda m: m.qname)
HEADER_STRUCTS = [s for s in STRUCTS.values() if s.type_code is not None]
TYPES = ["map", "list", "array", "struct32", "sequence-set", "byte-ranges", "str16",
         "str8-utf16", "message.reply-to", "dtx.xid", "session.header"]


def _valid_stream() -> bytes:
    out = bytearray(PROTOCOL_HEADER)
    for i, md in enumerate(METHODS):
        m = sample_method(md, i)
        if md.kind == "command" and i % 3 == 0:
            out += encode_assembly(m, i % 3, (sample_struct(HEADER_STRUCTS[i % 7], i),),
                                   b"body" * i, max_frame_size=64)
        else:
            out += encode_assembly(m, i % 3)
    return bytes(out)


VALID = _valid_stream()


def _run_stream(data: bytes, cuts: list[int], expect_header: bool = True) -> list[Any]:
    dec = StreamDecoder(expect_header=expect_header)
    items: list[Any] = []
    start = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts) + [len(data)]:
        items += dec.feed(data[start:cut])
        start = max(start, cut)
    items += dec.close()
    errors = [x for x in items if isinstance(x, StreamError)]
    assert len(errors) <= 1 and (not errors or items[-1] is errors[0])
    for e in errors:
        assert 0 <= e.offset <= len(data)
    obs = SessionObserver()  # whatever decodes must also be safe to observe
    for n, x in enumerate(items):
        if isinstance(x, Assembly):
            obs.feed(x, float(n), "client" if n % 2 else "server")
    return items


@FUZZ
@given(st.binary(max_size=600), st.lists(st.integers(0, 600), max_size=5), st.booleans())
def test_random_bytes_as_a_stream(data: bytes, cuts: list[int], header: bool) -> None:
    _run_stream((PROTOCOL_HEADER if header else b"") + data, cuts)
    _run_stream(data, cuts, expect_header=False)


@FUZZ
@given(st.binary(max_size=300), st.sampled_from(TYPES), st.booleans())
def test_random_bytes_as_values_and_segments(data: bytes, type_name: str, cmd: bool) -> None:
    for call in (lambda: decode_value(type_name, data),
                 lambda: decode_method(data, 0, len(data), cmd),
                 lambda: decode_header(data, 0, len(data))):
        try:
            call()
        except DecodeError as e:
            assert 0 <= e.offset <= len(data)


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(VALID)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["flip", "set", "insert", "delete", "truncate"]))
        if not data:
            break
        pos = draw(st.integers(0, len(data) - 1))
        if kind == "flip":
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "set":
            data[pos] = draw(st.sampled_from([0x00, 0xFF, 0x7F, 0x80, 0x0F, 0xAB, 0x95]))
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[pos:pos + draw(st.integers(1, 8))]
        else:
            del data[pos:]
    return bytes(data)


@FUZZ
@given(mutated(), st.lists(st.integers(0, len(VALID)), max_size=4))
def test_mutated_valid_streams(data: bytes, cuts: list[int]) -> None:
    items = _run_stream(data, cuts)
    try:
        whole = decode_stream(data)
    except DecodeError as e:
        assert 0 <= e.offset <= len(data)
        assert isinstance(items[-1], StreamError) and items[-1].offset == e.offset
    else:
        assert len(whole) == len(items)


def test_the_valid_stream_decodes_whole() -> None:
    items = decode_stream(VALID)
    assert len(items) == 1 + len(METHODS)


def _payloads() -> list[tuple[bool, bytes, bytes]]:
    """(is command, method segment, header segment) of every method in VALID."""
    from amqpcli.amqp010 import encode_header, encode_method

    out = []
    for i, md in enumerate(METHODS):
        m = sample_method(md, i)
        header = encode_header([sample_struct(HEADER_STRUCTS[i % 7], i)])
        out.append((md.kind == "command", encode_method(m), header))
    return out


PAYLOADS = _payloads()


@FUZZ
@given(st.sampled_from(PAYLOADS), st.data())
def test_mutated_segments_inside_valid_frames(p: tuple[bool, bytes, bytes], data: Any) -> None:
    """Frames stay valid, the segments inside them do not: exercises the field decoders."""
    from amqpcli.amqp010 import encode_frames

    is_cmd, method, header = p
    segs = [bytearray(method), bytearray(header)] if is_cmd else [bytearray(method)]
    for seg in segs:
        for _ in range(data.draw(st.integers(0, 3))):
            if not seg:
                break
            pos = data.draw(st.integers(0, len(seg) - 1))
            if data.draw(st.booleans()):
                seg[pos] = data.draw(st.integers(0, 255))
            else:
                del seg[pos:pos + data.draw(st.integers(1, 4))]
    track = 1 if is_cmd else 0
    stream = b"".join(encode_frames(t, bytes(s), 0, track, i == 0, i == len(segs) - 1)
                      for i, (t, s) in enumerate(zip([track, 2], segs)))
    _run_stream(stream, [], expect_header=False)
