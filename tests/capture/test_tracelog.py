"""Frame-trace logs (amqpcli.capture.tracelog): proton's inspect format parsed into values
that encode as the wire did, frame lines into frames, and a crafted router log (with
times) read by pcap-dump like a capture."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from amqpcli.capture.tcp import Closed, Data, Opened
from amqpcli.capture.tracelog import (
    NotAFrame,
    TraceReader,
    TraceSyntaxError,
    is_trace_log,
    parse_frame_line,
    parse_value,
)
from amqpcli.codec.composites import (
    Attach,
    DeleteOnClose,
    Disposition,
    Open,
    Rejected,
    Source,
)
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


def _one_frame(line: str) -> Any:
    (f,) = _frames(parse_frame_line(line).data)
    return f


def test_bare_quotes_older_proton_left_in_binaries_and_payloads() -> None:
    """A quote that does not end its value (by what follows it where it stands) is a byte:
    a tag whose first byte is 0x22, a payload whose last is."""
    f = _one_frame('2019-03-02 08:01:02.000100 +0100 ROUTER_CORE (trace) [C7]:0 <- '
                   '@transfer(20) [handle=0, delivery-id=5, delivery-tag=b""\\x03\\x00\\x00'
                   '\\x00\\x00\\x00\\x00", message-format=0] (6) "\\x00Sw\\xa0\\x02""')
    assert f.body.delivery_tag == b'"\x03\x00\x00\x00\x00\x00\x00'
    assert f.body.message_format == 0
    assert bytes(f.payload) == b'\x00Sw\xa0\x02"'
    # a quote inside a string, a map key and a symbol descriptor
    assert parse_value('{:"k"1"="v"2", "l"=[b"""]}') == {Symbol('k"1'): 'v"2', "l": [b'"']}
    d = parse_value('@:"de"sc" "x"y"')
    assert isinstance(d, Described) and d.descriptor == Symbol('de"sc') and d.value == 'x"y'
    # the size the line says holds the payload to the line's last quote
    with pytest.raises(TraceSyntaxError, match="the payload is 3 bytes"):
        parse_frame_line('[C7]:0 <- @transfer(20) [handle=0] (4) "ab""')
    # a payload cut short with a bare quote in what it shows
    cut = parse_frame_line('[C7]:0 <- @transfer(20) [handle=0, delivery-id=0, delivery-tag=b"1"'
                           ', message-format=0] (3000) "\\x00Sw\\xb1say "hi""... (truncated)')
    assert cut.cut
    (f,) = _frames(cut.data)
    assert bytes(f.payload) == b'\x00Sw\xb1say "hi"'


@pytest.mark.parametrize(("line", "kind", "conn", "time_ns"), [
    # an older router's lines: the frame text after the id, its source location after it
    ("2018-07-20 10:58:40.176628 -0400 SERVER (trace) [2]:  -> SASL (/src/router/server.c:106)",
     "header", "2", 1532098720_176628000),
    (('2018-07-20 10:58:40.176900 -0400 SERVER (trace) [2]:0 <- @open(16) [container-id="peer",'
      ' channel-max=0x7fff] (/src/router/server.c:106)'), "frame", "2", 1532098720_176900000),
    # a newer one's, `FRAME:` before the channel
    ("2019-11-25 14:35:55.022016 -0500 SERVER (trace) [2]:FRAME: 0 -> @close(24) []",
     "frame", "2", 1574710555_022016000),
    ("2019-11-25 14:35:55.022100 -0500 SERVER (trace) [2]:FRAME:   <- EOS", "eos", "2",
     1574710555_022100000),
    ("2019-11-25 14:35:55.022200 -0500 PROTOCOL (trace) [C3]:FRAME: 0 -> @end(23) []",
     "frame", "C3", 1574710555_022200000),
    # a fraction of five digits
    ("2020-01-06 10:52:52.34008 +0000 PROTOCOL (trace) [C3]:0 -> (EMPTY FRAME)", "empty",
     "C3", 1578307972_340080000),
])
def test_router_line_forms(line: str, kind: str, conn: str, time_ns: int) -> None:
    fl = parse_frame_line(line)
    assert (fl.kind, fl.conn, fl.time_ns) == (kind, conn, time_ns)


def test_router_field_shapes() -> None:
    o = _one_frame('[C1]:0 -> @open(16) [container-id="r", offered-capabilities=:"ANONYMOUS-RELAY"]')
    assert o.body.offered_capabilities == Symbol("ANONYMOUS-RELAY")  # one symbol, no array
    a = _one_frame('[C1]:1 <- @attach(18) [name="dyn", handle=0, role=true, source=@source(40) '
                   '[dynamic=true, dynamic-node-properties={:"lifetime-policy"=@:"amqp:delete-'
                   'on-close:list" []}, outcomes=@PN_SYMBOL[:"amqp:accepted:list", '
                   ':"amqp:rejected:list"]]]')
    policy = a.body.source.dynamic_node_properties[Symbol("lifetime-policy")]
    assert isinstance(policy, DeleteOnClose)  # (the spec's, named by its symbol)
    assert a.body.source.outcomes == Array([Symbol("amqp:accepted:list"),
                                            Symbol("amqp:rejected:list")], "symbol")
    with pytest.raises(NotAFrame):  # other text of a router's, with an id in brackets
        parse_frame_line("2021-02-03 04:05:06.000001 +0000 SERVER (info) [2] Connecting to "
                         "127.0.0.1:23731")
    with pytest.raises(NotAFrame):
        parse_frame_line("[2] Connecting to 127.0.0.1:23731")


def test_an_id_used_again_after_eos_is_a_new_connection() -> None:
    lines = ["[9]:  -> AMQP", "[9]:  <- AMQP", '[9]:0 -> @open(16) [container-id="a"]',
             "[9]:  -> EOS", "[9]:  <- EOS",
             "[9] Connecting to 127.0.0.1:23731",
             "[9]:  -> AMQP", "[9]:  <- AMQP", '[9]:0 -> @open(16) [container-id="b"]']
    events = list(TraceReader([io.BytesIO("\n".join(lines).encode())]).events())
    opened = [e for e in events if isinstance(e, Opened)]
    assert len(opened) == 2 and opened[0].flow is not opened[1].flow
    fins = [e for e in events if isinstance(e, Closed)]
    assert [(e.flow is opened[0].flow, e.how) for e in fins] == [
        (True, "fin"), (True, "fin"), (False, "end"), (False, "end")]
    # each connection's bytes start again at 0
    second = [e for e in events if isinstance(e, Data) and e.flow is opened[1].flow]
    assert second[0].offset == 0 and second[0].data == b"AMQP\x00\x01\x00\x00"


def _delivery_lines(*args: str) -> tuple[list[str], list[str]]:
    r = _pcap_dump(*args, "--deliveries")
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines(), [w for w in r.stderr.splitlines() if "warning" in w]


def test_gzipped_logs_read_as_gzipped_captures(tmp_path: Path) -> None:
    """By its first bytes, whatever its name; member after member with zero padding
    between (as gzip reads them); from standard input too."""
    plain = tmp_path / "router.log"
    plain.write_text(ROUTER_LOG)
    expected, _ = _delivery_lines(str(plain))
    assert len(expected) == 2
    data = ROUTER_LOG.encode()
    half = data.index(b"\n", len(data) // 2) + 1
    gz = tmp_path / "router.log.gz"
    gz.write_bytes(gzip.compress(data[:half]) + b"\x00" * 64 + gzip.compress(data[half:]))
    assert is_trace_log(str(gz))
    got, warnings = _delivery_lines(str(gz))
    assert got == expected
    assert len(warnings) == 1 and f"{gz}:17:" in warnings[0]  # (its malformed line)
    with open(gz, "rb") as f:
        piped = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", "-",
                                "--deliveries"], stdin=f, capture_output=True, text=True,
                               check=False, timeout=120)
    assert piped.stdout.splitlines() == expected, piped.stderr


def _long_log(transfers: int) -> bytes:
    lines = [ROUTER_LOG.split("this is a line")[0]]
    for n in range(transfers):
        lines.append(f'2023-05-01 10:00:01.{n:06d} +0000 PROTOCOL (trace) [C3]:0 <- @transfer(20)'
                     f' [handle=0, delivery-id={n + 1}, delivery-tag=b"t{n}", message-format=0,'
                     ' settled=true] (10) "\\x00Sw\\xa1\\x05hello"\n')
    return "".join(lines).encode()


def test_a_gzipped_log_cut_short_or_damaged_gives_the_lines_before(tmp_path: Path) -> None:
    data = _long_log(400)
    packed = gzip.compress(data)
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(packed[:len(packed) // 2])
    got, warnings = _delivery_lines(str(cut))
    assert 50 < len(got) < 400
    assert warnings == [(f"amqp: warning: {cut}: the gzip data is cut short after "
                         f"{len(packed) // 2} compressed bytes (the lines before it were read)")]
    bad = bytearray(packed)
    bad[len(bad) // 2] ^= 0xFF
    damaged = tmp_path / "damaged.log.gz"
    damaged.write_bytes(bytes(bad))
    got, warnings = _delivery_lines(str(damaged))
    assert 50 < len(got) < 400
    # (what the bad byte garbled before zlib saw it are lines that do not parse)
    assert "damaged gzip data" in warnings[-1], warnings[-1]


def test_a_reader_of_the_output_gone_is_no_read_error(tmp_path: Path) -> None:
    """`amqp pcap-dump LOG | head -1`: the output's reader gone ends the run quietly, as
    for a capture; it was taken for the log's read error ("cannot read on: Broken pipe"):
    the output is flushed as each line of the log is waited for."""
    log = tmp_path / "router.log"
    log.write_bytes(_long_log(3000))
    r = subprocess.run(f"'{sys.executable}' -m amqpcli pcap-dump '{log}' | head -1",
                       shell=True, capture_output=True, text=True, check=False, timeout=120)
    assert len(r.stdout.splitlines()) == 1
    assert "cannot read on" not in r.stderr and "Broken pipe" not in r.stderr, r.stderr


def test_a_line_of_no_such_time_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    """A month 98 or a 25th hour is the line's error, said as any line that does not parse
    is (it was an internal error: strptime's ValueError out of the reader)."""
    log = tmp_path / "router.log"
    log.write_text(ROUTER_LOG.replace("2023-05-01 10:00:00.100500", "2023-98-01 10:00:00.100500")
                   .replace("2023-05-01 10:00:00.100600", "2023-05-01 25:00:00.100600"))
    r = _pcap_dump(str(log), "--deliveries")
    assert r.returncode == 0 and "internal error" not in r.stderr, r.stderr
    warnings = [w for w in r.stderr.splitlines() if "does not parse" in w]
    assert [w.split("(")[1].split(" at column")[0] for w in warnings[:2]] == [
        "no such time: 2023-98-01 10:00:00.100500 +0000",
        "no such time: 2023-05-01 25:00:00.100600 +0000"]
    assert f"{log}:7:" in warnings[0] and f"{log}:8:" in warnings[1]


def test_out_writes_the_tables_of_a_trace_log(tmp_path: Path) -> None:
    """--out takes a log as it takes a capture (it was refused: 'its views need no
    tables'): its rows are written, and the line that does not parse is warned of."""
    log = tmp_path / "router.log"
    log.write_text(ROUTER_LOG)
    r = _pcap_dump(str(log), "--out", str(tmp_path / "t"))
    assert (r.returncode, r.stdout) == (0, ""), r.stderr
    assert f"{log}:17: a frame line that does not parse" in r.stderr
    assert "wrote " in r.stderr and "2 deliveries" in r.stderr
    assert (tmp_path / "t" / "_SUCCESS").is_file()


def test_each_logs_cut_payloads_are_counted_in_its_own_warning(tmp_path: Path) -> None:
    """Of two logs each with one payload proton cut short, each warning counts one (the
    second counted the first's too)."""
    lines = ["[0x1]: AMQP:FRAME:  -> AMQP", "[0x1]: AMQP:FRAME:  <- AMQP",
             ("[0x1]: AMQP:FRAME:0 -> @transfer(20) [handle=0, delivery-id=0, "
              'delivery-tag=b"1"] (5000) \\x00Sw\\xb1yyyy ... (truncated)')]
    logs = []
    for name in ("a.trace", "b.trace"):
        log = tmp_path / name
        log.write_text("\n".join(lines) + "\n")
        logs.append(log)
    warnings: list[str] = []
    list(TraceReader([str(p) for p in logs], warn=warnings.append).events())
    cut = [w for w in warnings if "cut" in w]
    assert cut == [f"{log}:3: the log cut 1 transfer payload short (proton shows at most "
                   "about 1 KiB of a frame): those messages are incomplete" for log in logs]
