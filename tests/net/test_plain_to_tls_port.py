"""A plain amqp:// URL to a TLS port: the peer ends the connection right after our AMQP
protocol header without a word (an OpenSSL server finds no TLS record in it), and the
error says the peer may expect TLS (amqps://) instead of only "connection reset"."""

from __future__ import annotations

import socket

import pytest

from tests.net.clirun import amqp
from tests.net.tlspeer import Listener, handshake_then, one_line, server_context, until_closed
from tests.peers.tls import Certs


@pytest.mark.parametrize("end", ["tls-server", "hang-up"])
def test_plain_url_to_a_tls_port_suggests_amqps(tls_certs: Certs, end: str) -> None:
    if end == "tls-server":  # resets: it closes with our bytes unread
        serve = handshake_then(server_context(tls_certs.server_cert, tls_certs.server_key),
                               until_closed)
    else:  # one that reads the header and closes
        def serve(conn: socket.socket) -> None:
            conn.recv(8)

    with Listener(serve) as ln:
        r = amqp("send", f"amqp://127.0.0.1:{ln.port}/q", "x")
    assert r.returncode == 3
    line = one_line(r.stderr)
    assert line.startswith(f"cannot connect to 127.0.0.1:{ln.port}: connection ")
    assert line.endswith(" by peer right after our protocol header: the peer may expect TLS "
                         "(amqps://)"), line


def test_an_amqp_peer_that_hangs_up_later_gets_no_tls_hint() -> None:
    def answer_then_hang_up(conn: socket.socket) -> None:
        conn.recv(8)
        conn.sendall(b"AMQP\x03\x01\x00\x00")  # the SASL header, then nothing more

    with Listener(answer_then_hang_up) as ln:
        r = amqp("send", f"amqp://127.0.0.1:{ln.port}/q", "x")
    assert r.returncode == 3
    line = one_line(r.stderr)
    assert line == f"cannot connect to 127.0.0.1:{ln.port}: connection closed by peer", line
