"""`amqp recv` against a peer that breaks the opening sequence: a begin (or a close)
before its open, an AMQP frame during SASL, an empty SASL frame (Part 5 §5.3.1: an
irrecoverable error). The client fails at once with a one-line error and exit 3 (it
hung until the connect timeout on the empty SASL frame)."""

from __future__ import annotations

import socket
import threading

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import AMQP_HEADER, SASL_HEADER, encode_frame
from tests.net.clirun import amqp
from tests.net.onepeer import HANG_GUARD, one_connection

pytestmark = pytest.mark.integration

_BEGIN = encode_frame(c.Begin(next_outgoing_id=0, incoming_window=10, outgoing_window=10))


def _peer(answer: bytes) -> tuple[int, threading.Thread]:
    """Answers one connection's protocol header with `answer`, then reads to the end."""

    def serve(conn: socket.socket) -> None:
        conn.recv(8)
        conn.sendall(answer)
        while conn.recv(65536):
            pass

    return one_connection(serve)


@pytest.mark.parametrize(("answer", "args", "said"), [
    (AMQP_HEADER + _BEGIN, ("--sasl-mechanism", "none"), "begin before open"),
    (AMQP_HEADER + encode_frame(c.Close()), ("--sasl-mechanism", "none"),
     "close in state header"),
    (SASL_HEADER + _BEGIN, (), "begin before open"),
    (SASL_HEADER + b"\x00\x00\x00\x08\x02\x01\x00\x00", (), "an empty SASL frame"),
], ids=["begin-before-open", "close-before-open", "begin-during-sasl", "empty-sasl-frame"])
def test_recv_fails_in_one_line(answer: bytes, args: tuple[str, ...], said: str) -> None:
    port, t = _peer(answer)
    r = amqp("recv", f"amqp://127.0.0.1:{port}/q", "-c", "1", "-t", "30", *args,
             timeout=HANG_GUARD)
    t.join(HANG_GUARD)
    assert r.returncode == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "broke the protocol" in lines[0] and said in lines[0], r.stderr
    assert "within" not in r.stderr  # not the connect timeout
