"""The fast paths of the frame and record renderers say exactly what the general code
says: the one-line frame's precomputed field specs (usual encodings and odd ones: wrong
integer types, non-boolean flags, choice values, terminus and state composites, binary
fields), binary text, the data-body peek, and JSON record times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.types import Array, Symbol, UByte, UInt, ULong, UShort
from amqpcli.render import frameline
from amqpcli.render.frameline import (
    KEY_FIELDS,
    _binary,
    _drawer,
    _field,
    _fields,
    summarize_payload,
)
from amqpcli.render.text import format_binary
from amqpcli.render.traffic import iso

PERFORMATIVES: list[Any] = [
    c.Open(container_id="box", hostname="h", max_frame_size=UInt(65536),
           channel_max=UShort(7), idle_time_out=UInt(60000)),
    c.Open(container_id="box", max_frame_size=65536, channel_max=UInt(3)),  # wrong types
    c.Begin(remote_channel=UShort(0), next_outgoing_id=UInt(1), incoming_window=UInt(2),
            outgoing_window=UInt(3), handle_max=UInt(9)),
    c.Attach(name="l", handle=UInt(0), role=True, snd_settle_mode=UByte(1),
             rcv_settle_mode=UByte(0), source=c.Source(address="q", dynamic=True),
             target=c.Target(address=None), initial_delivery_count=UInt(0)),
    c.Attach(name="l", handle=UInt(1), role=False, snd_settle_mode=UByte(7),
             source=None, target=c.Target(address="t")),
    c.Attach(name="l", handle=UInt(1), role=True, unsettled={
        b"t1": c.Accepted(), b"t2": None, b"\x00\x01": c.Received(
            section_number=UInt(0), section_offset=ULong(9)), b"t4": c.Released()},
             incomplete_unsettled=True),
    c.Attach(name="l", handle=UInt(1), role=True, unsettled={}, incomplete_unsettled=False),
    c.Attach(name="l", handle=UInt(1), role=True, unsettled=[1]),  # not a map
    c.Flow(handle=UInt(0), delivery_count=UInt(1), link_credit=UInt(100),
           available=UInt(3), drain=True, echo=False, next_incoming_id=UInt(0),
           incoming_window=UInt(5), next_outgoing_id=UInt(6), outgoing_window=UInt(7)),
    c.Flow(drain=UInt(1), echo="x", incoming_window=ULong(5)),  # odd flags and types
    c.Transfer(handle=UInt(0), delivery_id=UInt(3), delivery_tag=b"t-3",
               message_format=UInt(0), settled=False, more=True, state=c.Accepted(),
               resume=False, aborted=True),
    c.Transfer(handle=UInt(2), delivery_tag=bytearray(b"\x00\x01\x02"), settled=True,
               state=c.Rejected(error=c.Error(condition=Symbol("amqp:x"), description="d"))),
    c.Transfer(handle=UInt(2), delivery_tag=b"\xff" * 40, state=c.Modified(
        delivery_failed=True, undeliverable_here=False)),
    c.Disposition(role=True, first=UInt(0), last=UInt(9), settled=True,
                  state=c.Received(section_number=UInt(0), section_offset=ULong(3))),
    c.Disposition(role=UByte(1), first=0),
    c.Detach(handle=UInt(0), closed=True, error=c.Error(condition=Symbol("amqp:y"))),
    c.End(error="not an error"),
    c.Close(error=c.Error(condition=Symbol("amqp:z"), description="bye")),
    c.SaslMechanisms(sasl_server_mechanisms=Array([Symbol("PLAIN"), Symbol("ANONYMOUS")])),
    c.SaslMechanisms(sasl_server_mechanisms=Symbol("PLAIN")),
    c.SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\x00u\x00p", hostname="h"),
    c.SaslOutcome(code=UByte(0), additional_data=b"more"),
    c.SaslOutcome(code=UByte(9)),
]


@pytest.mark.parametrize("perf", PERFORMATIVES, ids=lambda p: p.NAME)
def test_precomputed_fields_match_the_general_form(perf: Any) -> None:
    expected = [t for t in (_field(perf, n) for n in KEY_FIELDS[perf.NAME]) if t is not None]
    parts: list[str] = []
    _fields(perf, parts)
    assert parts == expected
    drawn = _drawer(type(perf))(perf, "[0] ")
    assert drawn[:2] == ["[0] ", perf.NAME.ljust(11)]
    assert drawn[2:] == expected
    assert parts  # every example draws something


BINARIES = [b"", b"a", b"tag-1", b'q"uo\\te', b"\x00guest\x00pw", b"\x00\x00\x00\x01",
            b"abc\x00def\x00ghi\x00jk", b"abc\x01def", bytes(range(256)), b"x" * 100,
            b'"' * 70, b"\x00" * 3 + b"abcdefghijkl", bytearray(b"ba"), memoryview(b"mv\x00")]


@pytest.mark.parametrize("data", BINARIES)
@pytest.mark.parametrize("limit", [0, 4, 32, 60])
def test_binary_matches_format_binary(data: Any, limit: int) -> None:
    assert _binary(data, limit) == format_binary(data, limit)


def _section(code: int, value: bytes) -> bytes:
    return b"\x00\x53" + bytes([code]) + value


MESSAGES = [
    _section(0x75, b"\xa0\x05hello"),
    _section(0x70, b"\x45") + _section(0x75, b"\xa0\x03\x00\x01\x02"),
    _section(0x75, b"\xb0\x00\x00\x00\x02hi"),
    _section(0x75, b"\xa0\x46" + b"y" * 70),
    _section(0x75, b"\xa0\x02ab") + _section(0x75, b"\xa0\x02cd"),  # two data sections
    _section(0x77, b"\xa1\x02hi"),  # amqp-value
    _section(0x75, b"\xa0\x09tooshort"),  # malformed: the size says so
    b"\x00\x80" + (0x75).to_bytes(8, "big") + b"\xa0\x02ab",  # ulong descriptor
    _section(0x70, b"\x45"),  # no body
]


@pytest.mark.parametrize("payload", MESSAGES)
def test_data_body_peek_matches_the_decoded_body(payload: bytes,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    fast = summarize_payload(payload)
    monkeypatch.setattr(frameline, "_one_data", lambda msg: None)
    assert fast == summarize_payload(payload)


ISO_TIMES = [0.0, -0.5, -1.0000005, 1.0000005, 1.0000015, 1.9999995, 1.99999949, -1e-7,
             2.5e-6, -2.5e-6, 1700000000.123456, 1763849600.9999996, 1763849600.0000004,
             4102444800.5, -2208988800.25]


@pytest.mark.parametrize("t", [*ISO_TIMES, 1700000000.0046205, 1700000000.0046215])
def test_iso_is_the_time_the_frame_lines_and_the_tables_give(t: float) -> None:
    # the microsecond rounded from t * 1e6, as `clock` and the tables
    # (amqpcli.pipeline.rows) round it, so JSON, text and tables agree
    us = round(t * 1_000_000)
    want = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=us)
    assert iso(t) == want.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert iso(t)[11:-1] == frameline.clock(t)


@pytest.mark.parametrize("perf", [*PERFORMATIVES, None, c.Transfer(handle=UInt(0), more=True),
                                  c.End(), c.Close()], ids=lambda p: getattr(p, "NAME", "hb"))
@pytest.mark.parametrize("channel", [0, 7, 300])
def test_frame_line_is_the_general_form(perf: Any, channel: int) -> None:
    """The whole line (channel, name, key fields, payload, extended header; with and
    without a head) against the line composed from `_field`, the general form."""
    from amqpcli.codec.frames import Frame
    from amqpcli.render.frameline import frame_line
    from amqpcli.render.redact import redact

    for payload, ext in ((b"", b""), (b"\x00\x53\x77\xa1\x02hi", b"\x00\x00\x00\x01")):
        if perf is None and payload:
            continue
        frame = Frame(0, 8, 2, 0, channel, ext, perf, payload)
        shown = redact(frame) if isinstance(perf, c.SaslInit) else frame
        name = "heartbeat" if perf is None else perf.NAME
        head = [f"[{channel}]".ljust(4), name.ljust(11)]
        if perf is not None:
            head += [t for t in (_field(shown.body, n) for n in KEY_FIELDS[name])
                     if t is not None]
        body = []
        if payload:
            # (a transfer without a delivery-id continues a delivery: no message of its own)
            body.append(" " + summarize_payload(payload) if name == "transfer"
                        and not perf.more and perf.delivery_id is not None
                        else f" ({len(payload)} bytes)")
        tail = [f"ext=0x{ext.hex()}"] if ext else []
        for show_payload in (True, False):
            want = " ".join(head + (body if show_payload else []) + tail)
            assert frame_line(frame, payload=show_payload) == want.rstrip()
            assert frame_line(frame, payload=show_payload, time=0.5, direction="->") == (
                "00:00:00.500000 -> " + want).rstrip()
