"""`amqp serve` against bytes that are no valid frame, sent over raw sockets.

Frame sizes (Part 2 §2.4.1, §2.7.1; Part 5 §5.3.1): until the open frames are exchanged
(SASL included) a frame may be at most 512 bytes (MIN-MAX-FRAME-SIZE), after our open at
most our --max-frame-size. A frame header announcing more is a framing error found from
its 8 bytes: the server reads and keeps nothing more of it. Every framing error ends the
connection: with close(amqp:connection:framing-error) after our open, by closing the
socket before it (no frame can precede our open). A malformed sasl-init is answered
with sasl-outcome sys-perm. Each says in serve's log what happened.

Nothing here measures time: the timeouts are hang guards; an old server that kept such a
connection open fails by running into one.
"""

from __future__ import annotations

import random
import re
import socket
import time
from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import (
    AMQP_HEADER,
    FRAME_TYPE_SASL,
    SASL_HEADER,
    Frame,
    FrameReader,
    ProtocolHeader,
    encode_frame,
)

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]
_HANG_GUARD = 30.0
_CHUNK = b"x" * (1 << 20)
_FLOOD_MB = 64  # what a test tries to send after a frame header the server must refuse
_SMALL = 1 << 20  # "read nothing more": the server's bytes-in stays far below the flood


def _connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=_HANG_GUARD)


def _read_to_eof(sock: socket.socket) -> list[Any]:
    """What the server sends until it closes the socket (a reset counts as the end: it
    comes when the server closes with bytes of ours unread)."""
    reader = FrameReader()
    items: list[Any] = []
    deadline = time.monotonic() + _HANG_GUARD
    while True:
        if time.monotonic() > deadline:
            raise AssertionError(f"the server kept the connection open: {items}")
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            break
        except TimeoutError:
            raise AssertionError(f"the server kept the connection open: {items}") from None
        if not data:
            break
        items += reader.feed(data)
    return items


def _flood(sock: socket.socket) -> int:
    """Send up to _FLOOD_MB MB; the number of 1 MB chunks that went out before the
    server's end was gone."""
    sent = 0
    try:
        for _ in range(_FLOOD_MB):
            sock.sendall(_CHUNK)
            sent += 1
    except OSError:  # a broken pipe or a reset: the server closed
        pass
    return sent


def _bytes_in(s: Any, conn: str) -> int:
    line = s.wait_log(rf"{conn} disconnected \(\d+ bytes in", _HANG_GUARD)
    m = re.search(r"\((\d+) bytes in", line)
    assert m is not None, line
    return int(m.group(1))


def _open_connection(sock: socket.socket, sasl: bool = False) -> list[Any]:
    """Header (and SASL ANONYMOUS) and open; returns the server's items up to its open."""
    reader = FrameReader()
    items: list[Any] = []
    if sasl:
        sock.sendall(SASL_HEADER + encode_frame(
            c.SaslInit(mechanism=c.Symbol("ANONYMOUS"), initial_response=b"t"), 0, b"",
            FRAME_TYPE_SASL))
        items += _until(sock, reader, c.SaslOutcome)
    sock.sendall(AMQP_HEADER + encode_frame(c.Open(container_id="framing-test")))
    return items + _until(sock, reader, c.Open)


def _until(sock: socket.socket, reader: FrameReader, body: type) -> list[Any]:
    items: list[Any] = []
    while not any(isinstance(i, Frame) and isinstance(i.body, body) for i in items):
        data = sock.recv(65536)
        assert data, f"the server closed before {body.__name__}: {items}"
        items += reader.feed(data)
    return items


def _close_error(items: list[Any]) -> Any:
    closes = [i.body for i in items if isinstance(i, Frame) and isinstance(i.body, c.Close)]
    assert len(closes) == 1, items
    assert closes[0].error is not None
    return closes[0].error


def _dropped_after(port: int, data: bytes, sasl: bool) -> None:
    """Send `data` on a new connection: the server answers with its protocol header alone
    and closes the socket."""
    sock = _connect(port)
    try:
        sock.sendall(data)
        _headers_only(_read_to_eof(sock), sasl)
    finally:
        sock.close()


def _headers_only(items: list[Any], sasl: bool) -> None:
    """Only what a server says before the client's first frame: its header (and with
    SASL its mechanisms): no open, no close."""
    assert items and isinstance(items[0], ProtocolHeader), items
    assert items[0].kind == ("sasl" if sasl else "amqp")
    rest = [i.body.NAME for i in items[1:]]
    assert rest == (["sasl-mechanisms"] if sasl else []), items


# --- a frame header announcing more than the limit -------------------------------------


@pytest.mark.parametrize("sasl", [False, True], ids=["amqp", "sasl"])
def test_a_huge_frame_before_open_closes_the_socket_and_is_not_read(
        serve: Serve, sasl: bool) -> None:
    s = serve()
    sock = _connect(s.port)
    try:
        header = SASL_HEADER if sasl else AMQP_HEADER
        ftype = b"\x01" if sasl else b"\x00"
        sock.sendall(header + b"\x7f\xff\xff\xff\x02" + ftype + b"\x00\x00")
        _headers_only(_read_to_eof(sock), sasl)
        assert _flood(sock) < _FLOOD_MB  # the server's end is gone
    finally:
        sock.close()
    assert _bytes_in(s, "c1") < _SMALL
    line = s.wait_log(r"c1 from .*: framing error")
    assert "at most 512" in line and "size 2147483647" in line, line


def test_a_frame_just_over_512_before_open_is_refused(serve: Serve) -> None:
    s = serve()
    _dropped_after(s.port, AMQP_HEADER + encode_frame(c.Open(container_id="x" * 600)), False)
    line = s.wait_log(r"c1 from .*: framing error")
    assert "at most 512 (MIN-MAX-FRAME-SIZE" in line and "found size 6" in line, line


def test_a_huge_sasl_frame_is_refused_at_512(serve: Serve) -> None:
    s = serve()
    init = encode_frame(c.SaslInit(mechanism=c.Symbol("PLAIN"),
                                   initial_response=b"\0u\0" + b"p" * 600), 0, b"",
                        FRAME_TYPE_SASL)
    _dropped_after(s.port, SASL_HEADER + init, True)  # no sasl-outcome: nothing was read
    assert "at most 512" in s.wait_log(r"c1 from .*: framing error")


def test_after_open_the_limit_is_max_frame_size(serve: Serve) -> None:
    s = serve("--max-frame-size", "4096")
    sock = _connect(s.port)
    try:
        _open_connection(sock)
        big = encode_frame(c.Begin(next_outgoing_id=0, incoming_window=10,
                                   outgoing_window=10, properties={c.Symbol("p"): "x" * 2000}))
        assert 512 < len(big) <= 4096
        sock.sendall(big)  # over 512 is fine now
        reader = FrameReader()
        _until(sock, reader, c.Begin)
        sock.sendall(b"\x00\x00\x10\x01\x02\x00\x00\x00")  # 4097 bytes announced
        err = _close_error(_read_to_eof(sock))
        assert str(err.condition) == "amqp:connection:framing-error"
        assert "at most 4096" in err.description and "size 4097" in err.description
        assert _flood(sock) < _FLOOD_MB
    finally:
        sock.close()
    assert _bytes_in(s, "c1") < _SMALL
    assert "amqp:connection:framing-error" in s.wait_log(r"c1 closing \(")


def test_frames_after_the_clients_open_in_the_same_write_may_be_larger(
        serve: Serve) -> None:
    """Part 2 §2.4.1 allows a client to pipeline its first frames after its open; those
    above 512 bytes are read (up to our max-frame-size) as once our open has gone out."""
    s = serve()
    sock = _connect(s.port)
    try:
        big = encode_frame(c.Begin(next_outgoing_id=0, incoming_window=10,
                                   outgoing_window=10, properties={c.Symbol("p"): "x" * 2000}))
        sock.sendall(AMQP_HEADER + encode_frame(c.Open(container_id="pipelined")) + big)
        items = _until(sock, FrameReader(), c.Begin)
        assert not [i for i in items if isinstance(i, Frame) and isinstance(i.body, c.Close)]
    finally:
        sock.close()


# --- malformed frame headers ----------------------------------------------------------


_RANDOM = random.Random(20240601).randbytes(64)

_MALFORMED = [
    ("size-under-8", b"\x00\x00\x00\x04\x02\x00\x00\x00", "a frame size of at least 8"),
    ("size-0", b"\x00\x00\x00\x00\x02\x00\x00\x00", "a frame size of at least 8"),
    ("size-ffffffff", b"\xff\xff\xff\xff\x02\x00\x00\x00", "found size 4294967295"),
    ("doff-1", b"\x00\x00\x00\x08\x01\x00\x00\x00", "found doff 1"),
    ("doff-0", b"\x00\x00\x00\x10\x00\x00\x00\x00" + b"\x00" * 8, "found doff 0"),
    ("random", _RANDOM, "framing error"),
]


@pytest.mark.parametrize(("data", "said"), [m[1:] for m in _MALFORMED],
                         ids=[m[0] for m in _MALFORMED])
@pytest.mark.parametrize("sasl", [False, True], ids=["amqp", "sasl"])
def test_a_malformed_frame_before_open_closes_the_socket(
        serve: Serve, data: bytes, said: str, sasl: bool) -> None:
    s = serve()
    _dropped_after(s.port, (SASL_HEADER if sasl else AMQP_HEADER) + data, sasl)
    line = s.wait_log(r"c1 from .*: framing error: ")
    assert said in line, line
    s.wait_log(r"c1 disconnected")


@pytest.mark.parametrize(("data", "said", "answered"), [
    (b"\x00\x00\x00\x04\x02\x00\x00\x00", "a frame size of at least 8", False),
    (b"\xff\xff\xff\xff\x02\x00\x00\x00", "found size 4294967295", False),
    (b"\x00\x00\x00\x08\x01\x00\x00\x00", "found doff 1", True),
], ids=["size-under-8", "size-ffffffff", "doff-1"])
def test_a_malformed_frame_after_open_is_closed_with_framing_error(
        serve: Serve, data: bytes, said: str, answered: bool) -> None:
    """A size the stream cannot be read past ends the connection after our close; after a
    bad doff the frame size still says where the next frame is, and our close waits for
    the client's."""
    s = serve()
    sock = _connect(s.port)
    try:
        _open_connection(sock, sasl=True)
        sock.sendall(data)
        if answered:
            reader = FrameReader()
            items = _until(sock, reader, c.Close)
            sock.sendall(encode_frame(c.Close()))
            items += _read_to_eof(sock)
        else:
            items = _read_to_eof(sock)
        err = _close_error(items)
        assert str(err.condition) == "amqp:connection:framing-error"
        assert said in err.description, err.description
    finally:
        sock.close()
    line = s.wait_log(r"c1 closing \(")
    assert "amqp:connection:framing-error" in line and said in line, line
    if answered:
        s.wait_log(r"c1 closed by the client")


# --- SASL -----------------------------------------------------------------------------


def _sasl_frame(body: bytes) -> bytes:
    return (8 + len(body)).to_bytes(4, "big") + b"\x02\x01\x00\x00" + body


@pytest.mark.parametrize(("body", "said"), [
    (b"\x00\x53\x41\x45", "no mechanism"),  # sasl-init with an empty list
    (b"\x00\x53\x41\xc0\x01\x00", "no mechanism"),  # list8 of no fields
    (b"\x00\x53\x41\xc0\x03\x01\x52\x07", "the mechanism is UInt, not a symbol"),
    (b"\x00\x53\x41\xc0\x0c\x02\xa3\x05PLAIN\xa1\x02xy", "the initial-response is str"),
], ids=["empty-list", "list8-empty", "uint-mechanism", "string-response"])
def test_a_malformed_sasl_init_gets_sys_perm_and_its_own_log_line(
        serve: Serve, body: bytes, said: str) -> None:
    s = serve()
    sock = _connect(s.port)
    try:
        sock.sendall(SASL_HEADER + _sasl_frame(body))
        items = _read_to_eof(sock)
    finally:
        sock.close()
    outcomes = [i.body for i in items if isinstance(i, Frame)
                and isinstance(i.body, c.SaslOutcome)]
    assert len(outcomes) == 1 and int(outcomes[0].code) == 3, items  # sys-perm
    line = s.wait_log(r"c1 from .*: bad sasl-init: ")
    assert said in line, line
    assert "protocol header not accepted" not in s.log


def test_an_undecodable_sasl_frame_is_a_framing_error(serve: Serve) -> None:
    s = serve()
    _dropped_after(s.port, SASL_HEADER + _sasl_frame(b"\x00\x53\x41\x40"), True)  # a described null
    assert "SASL frame body" in s.wait_log(r"c1 from .*: framing error: ")
    assert "protocol header not accepted" not in s.log


def test_an_empty_sasl_frame_drops_the_connection(serve: Serve) -> None:
    """Part 5 §5.3.1: an empty frame during SASL is an irrecoverable error; no AMQP close
    can be sent in SASL, so the socket is closed."""
    s = serve()
    _dropped_after(s.port, SASL_HEADER + b"\x00\x00\x00\x08\x02\x01\x00\x00", True)
    line = s.wait_log(r"c1 from .*: framing error: ")
    assert "an empty SASL frame" in line, line


_INIT = encode_frame(c.SaslInit(mechanism=c.Symbol("ANONYMOUS"), initial_response=b"t"), 0,
                     b"", FRAME_TYPE_SASL)


@pytest.mark.parametrize(("data", "said"), [
    (_INIT + _INIT, "sasl-init in state sasl-done"),
    (_INIT + AMQP_HEADER + _INIT, "sasl-init in state header"),
    (_sasl_frame(b"\x00\x53\x43\xc0\x03\x01\xa0\x00"), "sasl-response without a sasl-challenge"),
], ids=["init-twice", "init-after-the-amqp-header", "response-unasked"])
def test_a_sasl_frame_out_of_turn_drops_the_connection(
        serve: Serve, data: bytes, said: str) -> None:
    """A second sasl-init is not answered with a second outcome, and a sasl-response
    nothing asked for is not ignored: either ends the connection (no close is possible
    before our open)."""
    s = serve()
    sock = _connect(s.port)
    try:
        sock.sendall(SASL_HEADER + data)
        items = _read_to_eof(sock)
    finally:
        sock.close()
    outcomes = [i for i in items if isinstance(i, Frame) and isinstance(i.body, c.SaslOutcome)]
    assert len(outcomes) <= 1, items
    assert not [i for i in items if isinstance(i, Frame) and i.type == 0], items
    line = s.wait_log(r"c1 from .*: protocol error: ")
    assert said in line, line


# --- a performative before the client's open --------------------------------------------


_BEGIN = encode_frame(c.Begin(next_outgoing_id=0, incoming_window=10, outgoing_window=10))


@pytest.mark.parametrize(("frames", "said"), [
    (_BEGIN, "begin before open"),
    (_BEGIN + encode_frame(c.Open(container_id="late")), "begin before open"),
    (encode_frame(c.Attach(name="l", handle=0, role=False)), "attach before open"),
    (encode_frame(c.Close()), "close in state header"),
], ids=["begin", "begin-then-open", "attach", "close"])
@pytest.mark.parametrize("sasl", [False, True], ids=["amqp", "sasl"])
def test_a_performative_before_the_clients_open_drops_the_connection(
        serve: Serve, frames: bytes, said: str, sasl: bool) -> None:
    """Part 2 §2.4.1: the open is the first frame. Our open goes out only in answer to
    the client's, so nothing (no open, no close) can answer a frame before it: the socket
    is closed and the log says what the client sent."""
    s = serve()
    sock = _connect(s.port)
    try:
        before = b""
        if sasl:
            before = SASL_HEADER + _INIT
        sock.sendall(before + AMQP_HEADER + frames)
        items = _read_to_eof(sock)
    finally:
        sock.close()
    assert not [i for i in items if isinstance(i, Frame) and i.type == 0], items
    line = s.wait_log(r"c1 from .*: protocol error: ")
    assert said in line, line
    s.wait_log(r"c1 disconnected")


def test_a_performative_during_sasl_drops_the_connection(serve: Serve) -> None:
    s = serve()
    _dropped_after(s.port, SASL_HEADER + _BEGIN, True)
    assert "begin before open" in s.wait_log(r"c1 from .*: protocol error: ")


def test_a_refused_protocol_header_counts_as_bytes_in(serve: Any) -> None:
    s = serve()
    assert s.port is not None
    sock = _connect(s.port)
    sock.sendall(b"AMQP\x05\x01\x00\x00")  # no such protocol id
    while sock.recv(65536):
        pass
    sock.close()
    s.wait_log(r"protocol header not accepted", _HANG_GUARD)
    assert _bytes_in(s, "c1") == 8


def _framing_error_after_plain(s: Any, conn: str, password: str) -> tuple[str, str]:
    """A client that authenticates with PLAIN and `password`, opens, then sends a frame
    with doff 1: the close's description and serve's closing line."""
    sock = _connect(s.port)
    try:
        reader = FrameReader()
        sock.sendall(SASL_HEADER + encode_frame(
            c.SaslInit(mechanism=c.Symbol("PLAIN"),
                       initial_response=b"\0user\0" + password.encode()), 0, b"",
            FRAME_TYPE_SASL))
        _until(sock, reader, c.SaslOutcome)
        sock.sendall(AMQP_HEADER + encode_frame(c.Open(container_id="framing-test")))
        _until(sock, reader, c.Open)
        sock.sendall(b"\x00\x00\x00\x08\x01\x00\x00\x00")
        items = _until(sock, reader, c.Close)
        sock.sendall(encode_frame(c.Close()))
        items += _read_to_eof(sock)
        description = str(_close_error(items).description)
    finally:
        sock.close()
    line = s.wait_log(rf"{conn} closing \(")
    return description, line.split(f"{conn} closing", 1)[1]


def test_a_framing_errors_offset_does_not_tell_the_passwords_length(serve: Serve) -> None:
    """The offset of a framing error after SASL is counted from the AMQP header that
    follows it: counted from the connection's first byte it would hold the size of the
    client's sasl-init, and so its password's length."""
    s = serve()
    short = _framing_error_after_plain(s, "c1", "pw")
    long = _framing_error_after_plain(s, "c2", "a-much-longer-password")
    assert short == long, (short, long)
    assert "found doff 1" in short[0]
    assert "after SASL" in short[0], short[0]
