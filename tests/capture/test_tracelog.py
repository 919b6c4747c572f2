"""Frame-trace logs (amqpcli.capture.tracelog): proton's inspect format parsed into values
that encode as the wire did, frame lines into frames, and a crafted router log (with
times) read by pcap-dump like a capture."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from amqpcli.capture.tracelog import (
    NotAFrame,
    TraceSyntaxError,
    is_trace_log,
    parse_frame_line,
    parse_value,
)
from amqpcli.codec.composites import Attach, Disposition, Open, Rejected, Source
from amqpcli.codec.decode import decode
from amqpcli.codec.frames import FrameReader
from amqpcli.codec.types import Array, Described, Symbol, UByte, UInt, ULong


def test_strings_binaries_and_symbols_unescape() -> None:
    assert parse_value(r'"a\x22b\x5c\x0a\xc3\xa9"') == 'a"b\\\né'
    assert parse_value(r'b"\x00guest\x00\xff"') == b"\x00guest\x00\xff"
    assert parse_value(":PLAIN") == Symbol("PLAIN")
    assert type(parse_value(":PLAIN")) is Symbol
    # a symbol that is not a plain word is quoted, its quote escaped
    assert parse_value(r':"we ird\x22"') == Symbol('we ird"')
    assert parse_value(':"apache.org:selector-filter:string"') == Symbol(
        "apache.org:selector-filter:string")
    # older proton escapes with a backslash
    assert parse_value(r'"say \"hi\""') == 'say "hi"'


def test_numbers_keep_what_the_text_tells() -> None:
    assert parse_value("0x7fff") == 0x7FFF and type(parse_value("0x7fff")) is UInt
    assert type(parse_value("0x1ffffffff")) is ULong
    assert parse_value("-5") == -5
    assert parse_value("2.5") == 2.5
    assert parse_value("null") is None
    assert parse_value("true") is True and parse_value("false") is False
    assert parse_value("UUID(00000000-0000-0000-0000-000000000001)") == uuid.UUID(int=1)


def test_nested_maps_lists_and_arrays() -> None:
    v = parse_value('{:product="amqpcli", "l"=[0x1, -2, true], "m"={:x=b"\\x00"}, '
                    '"e"={}, "a"=@<symbol>[:a, :"b c"], "n"=null}')
    assert v[Symbol("product")] == "amqpcli"
    assert v["l"] == [1, -2, True]
    assert v["m"] == {Symbol("x"): b"\x00"}
    assert v["e"] == {}
    assert isinstance(v["a"], Array) and v["a"].type == "symbol"
    assert list(v["a"]) == [Symbol("a"), Symbol("b c")]
    assert v["n"] is None
    assert parse_value("@<symbol>[]") == Array([], "symbol")
    # older proton names array types so
    assert parse_value("@PN_SYMBOL[:a, :b]") == Array([Symbol("a"), Symbol("b")], "symbol")


def test_described_values_in_fields() -> None:
    # a filter: a described value by symbol, written right after its descriptor
    src = parse_value('@source(40) [address="q", durable=0x0, filter={:sel=@:"apache.org:'
                      'selector-filter:string" "a = 1"}, default-outcome=@modified(39) '
                      '[delivery-failed=true]]')
    assert isinstance(src, Source)
    assert src.address == "q"
    f = src.filter[Symbol("sel")]
    assert isinstance(f, Described)
    assert f.descriptor == Symbol("apache.org:selector-filter:string")
    assert f.value == "a = 1"
    # a descriptor no composite has: kept as it is
    d = parse_value("@1234 [0x1]")
    assert isinstance(d, Described) and d.descriptor == 1234 and d.value == [1]
    # a rejection's error, nested composites
    st = parse_value('@rejected(37) [error=@error(29) [condition=:"amqp:not-found", '
                     'description="no \\x22q\\x22"]]')
    assert isinstance(st, Rejected)
    assert st.error.condition == Symbol("amqp:not-found")
    assert st.error.description == 'no "q"'


def test_field_types_give_integer_widths() -> None:
    """`0x2` is a ubyte in snd-settle-mode, a uint in handle: the frame encodes as the
    spec's types say, and decodes back to the same values."""
    a = parse_value('@attach(18) [name="l", handle=0x0, role=false, snd-settle-mode=0x2, '
                    'rcv-settle-mode=0x0, source=@source(40) [address="q"], '
                    'target=@target(41) [address="q"], initial-delivery-count=0x0, '
                    'max-message-size=0x0, offered-capabilities=:"x y"]')
    assert isinstance(a, Attach)
    from amqpcli.codec.encode import encode

    back = decode(encode(a))[0]
    assert type(back.snd_settle_mode) is UByte and back.snd_settle_mode == 2
    assert type(back.handle) is UInt
    assert type(back.max_message_size) is ULong
    assert back.offered_capabilities == Symbol("x y")
    o = parse_value('@open(16) [container-id="c", max-frame-size=0x8000, channel-max=0x7fff, '
                    'idle-time-out=0x7530]')
    assert isinstance(o, Open)
    assert decode(encode(o))[0].channel_max == 0x7FFF


@pytest.mark.parametrize("text", [
    '"no end', "[0x1, 0x2", "{:a=}", "@<nosuchtype>[1]", "@attach(18) [nosuchfield=1]",
    "b\"\\xZZ\"", "0x1 0x2",
])
def test_bad_values_are_errors(text: str) -> None:
    with pytest.raises(TraceSyntaxError):
        parse_value(text)


def _frames(data: bytes) -> list[object]:
    r = FrameReader()
    return list(r.feed(data))


def test_frame_lines_of_proton_and_of_routers() -> None:
    new = parse_frame_line('[0x5580]: AMQP:FRAME:1 -> @disposition(21) [role=true, first=0x0, '
                           'last=0x2, settled=true, state=@accepted(36) []]')
    assert new.conn == "0x5580" and new.outgoing and new.kind == "frame"
    assert new.time_ns is None
    (f,) = _frames(new.data)
    assert f.channel == 1 and isinstance(f.body, Disposition)
    # an older proton's transfer: its payload quoted
    old = parse_frame_line('[0x5580]:0 <- @transfer(20) [handle=0, delivery-id=0, '
                           'delivery-tag=b"1", message-format=0] (10) "\\x00Sw\\xa1\\x05hello"')
    (f,) = _frames(old.data)
    assert bytes(f.payload) == b"\x00Sw\xa1\x05hello"
    assert not old.outgoing
    # a router's, with its time
    r = parse_frame_line("2023-05-01 10:00:00.123456 +0200 PROTOCOL (trace) [C3]:0 -> "
                         "@begin(17) [next-outgoing-id=0, incoming-window=2147483647, "
                         "outgoing-window=2147483647] (/build/src/server.c:123)")
    assert r.conn == "C3"
    assert r.time_ns == 1682928000_123456000
    assert parse_frame_line("[0x1]: SASL:FRAME:  <- SASL").kind == "header"
    assert parse_frame_line("[0x1]:   IO:FRAME:  -> EOS").kind == "eos"
    assert parse_frame_line("[C1]:0 -> (EMPTY FRAME)").data == b"\x00\x00\x00\x08\x02\x00\x00\x00"
    # the payload proton cut short is kept as far as it goes, and said
    cut = parse_frame_line('[0x1]:0 -> @transfer(20) [handle=0x0, delivery-id=0x0, '
                           'delivery-tag=b"1"] (5000) \\x00Sw\\xb1yyyy ... (truncated)')
    assert cut.cut
    for other in ("2023-05-01 10:00:00 +0000 SERVER (info) Accepted connection",
                  "[C1] Connection to 127.0.0.1:5672 -> failed", "plain text"):
        with pytest.raises(NotAFrame):
            parse_frame_line(other)
    with pytest.raises(TraceSyntaxError):
        parse_frame_line("[C1]:0 -> @transfer(20) [handle=0x0, delivery-id=")
    with pytest.raises(TraceSyntaxError):  # the size said and the bytes shown differ
        parse_frame_line('[C1]:0 -> @transfer(20) [handle=0x0] (9) \\x00Sw')


ROUTER_LOG = """\
2023-05-01 10:00:00.000000 +0000 SERVER (info) Container Name: Router.A
2023-05-01 10:00:00.100000 +0000 SERVER (info) [C3] Accepted connection to 0.0.0.0:5672 from 127.0.0.1:40000
2023-05-01 10:00:00.100100 +0000 PROTOCOL (trace) [C3]: <- AMQP
2023-05-01 10:00:00.100200 +0000 PROTOCOL (trace) [C3]: -> AMQP
2023-05-01 10:00:00.100300 +0000 PROTOCOL (trace) [C3]:0 <- @open(16) [container-id="client", hostname="localhost", channel-max=32767]
2023-05-01 10:00:00.100400 +0000 PROTOCOL (trace) [C3]:0 -> @open(16) [container-id="Router.A", max-frame-size=16384, channel-max=32767, idle-time-out=8000, offered-capabilities=:"ANONYMOUS-RELAY", properties={:product="qpid-dispatch-router", :version="1.19.0", :"qd.conn-id"=3}]
2023-05-01 10:00:00.100500 +0000 PROTOCOL (trace) [C3]:0 <- @begin(17) [next-outgoing-id=0, incoming-window=2147483647, outgoing-window=2147483647]
2023-05-01 10:00:00.100600 +0000 PROTOCOL (trace) [C3]:0 -> @begin(17) [remote-channel=0, next-outgoing-id=0, incoming-window=2147483647, outgoing-window=2147483647]
2023-05-01 10:00:00.100700 +0000 PROTOCOL (trace) [C3]:0 <- @attach(18) [name="sender-1", handle=0, role=false, snd-settle-mode=2, rcv-settle-mode=0, source=@source(40) [durable=0, timeout=0, dynamic=false], target=@target(41) [address="orders", durable=0, timeout=0, dynamic=false], initial-delivery-count=0, max-message-size=0]
2023-05-01 10:00:00.100800 +0000 PROTOCOL (trace) [C3]:0 -> @attach(18) [name="sender-1", handle=0, role=true, snd-settle-mode=2, rcv-settle-mode=0, source=@source(40) [durable=0, timeout=0, dynamic=false], target=@target(41) [address="orders", durable=0, timeout=0, dynamic=false], initial-delivery-count=0, max-message-size=0]
2023-05-01 10:00:00.100900 +0000 PROTOCOL (trace) [C3]:0 -> @flow(19) [next-incoming-id=0, incoming-window=2147483647, next-outgoing-id=0, outgoing-window=2147483647, handle=0, delivery-count=0, link-credit=250, drain=false]
2023-05-01 10:00:00.200000 +0000 PROTOCOL (trace) [C3]:0 <- @transfer(20) [handle=0, delivery-id=0, delivery-tag=b"1", message-format=0] (10) "\\x00Sw\\xa1\\x05hello"
this is a line a router might write between frames -> of no interest
2023-05-01 10:00:00.200000 +0000 PROTOCOL (trace) [C3]:0 <- @transfer(20) [handle=0, delivery-id=1, delivery-tag=b"2", message-format=0] (10) "\\x00Sw\\xa1\\x05world"
2023-05-01 10:00:00.212500 +0000 PROTOCOL (trace) [C3]:0 -> @disposition(21) [role=true, first=0, settled=true, state=@accepted(36) []]
2023-05-01 10:00:00.250000 +0000 PROTOCOL (trace) [C3]:0 -> @disposition(21) [role=true, first=1, settled=true, state=@rejected(37) [error=@error(29) [condition=:"amqp:not-found", description="no route"]]]
2023-05-01 10:00:00.260000 +0000 PROTOCOL (trace) [C3]:0 <- @transfer(20) [handle=0, delivery-id=2, delivery-tag=b"3", message-format=0 (10) "\\x00Sw\\xa1\\x05brok!"
2023-05-01 10:00:00.300000 +0000 PROTOCOL (trace) [C3]:0 <- @close(24) []
2023-05-01 10:00:00.300100 +0000 PROTOCOL (trace) [C3]:0 -> @close(24) []
"""


def _pcap_dump(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", *args],
                          check=False, capture_output=True, text=True, timeout=120)


def test_router_log_deliveries_outcomes_and_latency(tmp_path: Path) -> None:
    log = tmp_path / "router.log"  # (no extension tells it: its lines do)
    log.write_text(ROUTER_LOG)
    assert is_trace_log(str(log))
    r = _pcap_dump(str(log), "--deliveries", "--json")
    assert r.returncode == 0, r.stderr
    # the malformed line is one warning with its line number, and the run goes on
    warnings = [w for w in r.stderr.splitlines() if w.startswith("amqp: warning:")]
    assert len(warnings) == 1, r.stderr
    assert f"{log}:17:" in warnings[0] and "does not parse" in warnings[0]
    records = [json.loads(line) for line in r.stdout.splitlines()]
    deliveries = [d for d in records if d.get("record") == "delivery"]
    assert [d["outcome"] for d in deliveries] == ["accepted", "rejected"]
    assert [round(d["latency"] * 1000, 1) for d in deliveries] == [12.5, 50.0]
    text = _pcap_dump(str(log), "--deliveries").stdout.splitlines()
    assert "12.500 ms" in text[0] and "accepted" in text[0]
    assert "50.000 ms" in text[1] and "amqp:not-found" in text[1]
    assert text[0].startswith("10:00:00.200000 c1 -> sender-1")
    # frame numbers are the log's line numbers; the router is the server
    conns = _pcap_dump(str(log), "--connections", "--json").stdout
    conn = next(json.loads(x) for x in conns.splitlines() if '"connection"' in x)
    assert conn["client"] == "C3:1" and conn["server"] == "C3:0"
    frames = [json.loads(x) for x in _pcap_dump(str(log), "--json").stdout.splitlines()]
    transfer = next(f for f in frames if "transfer" in f.get("performative", {}))
    assert transfer["packet"] == 12


def test_a_capture_is_no_trace_log(tmp_path: Path) -> None:
    cap = Path(__file__).parent.parent.parent / "amqpcli/examples/serve-session.pcapng"
    assert not is_trace_log(str(cap))
    text = tmp_path / "notes.txt"
    text.write_text("nothing here\n[x] -> y\n")
    assert not is_trace_log(str(text))
