"""Scripted peers for tests of how the client meets odd peers: `one_connection` takes a
TCP connection on 127.0.0.1 and hands its socket to a function; `engine_peer` runs an
AMQP 1.0 peer on the engine there and hands each event to the test's script."""

from __future__ import annotations

import itertools
import socket
import threading
from collections.abc import Callable
from typing import Any

from amqpcli.engine import Endpoint, Event

HANG_GUARD = 60.0  # seconds a peer waits for the client before giving up


def one_connection(serve: Callable[[socket.socket], None],
                   count: int = 1) -> tuple[int, threading.Thread]:
    """Listen on a free port; in a thread, accept one connection and run `serve` on it
    (a socket error ends it quietly), then close it; `count` connections so, one after
    the other (a client that reconnects), then stop listening. (port, thread)."""
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(HANG_GUARD)

    def run() -> None:
        try:
            for _ in range(count):
                conn, _ = srv.accept()
                conn.settimeout(HANG_GUARD)
                try:
                    serve(conn)
                except OSError:
                    pass
                finally:
                    conn.close()
        except OSError:
            pass  # (no client came)
        finally:
            srv.close()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return int(srv.getsockname()[1]), th


class PeerConnection:
    """One connection of an `engine_peer` as its script sees it: the engine's endpoint
    (`ep`), which connection of the run it is (`number`, from 1), and how it ends."""

    def __init__(self, ep: Endpoint, number: int, sock: socket.socket) -> None:
        self.ep = ep
        self.number = number
        self.sock = sock
        self.hung_up = False
        self.silent = False

    def hang_up(self) -> None:
        """Drop the connection without a word, now (a peer that dies): what the engine
        has still to send is not sent, the events still to come are not handed on."""
        self.hung_up = True

    def go_silent(self) -> None:
        """Answer nothing from now on (a frozen peer): what the engine has to send is not
        sent, and what the client sends is read and ignored until it hangs up."""
        self.silent = True

    def write(self, data: bytes) -> None:
        """Bytes of the script's own making, written at once (a frame the engine would
        not send)."""
        self.sock.sendall(data)


def engine_peer(script: Callable[[PeerConnection, Event], None], *, count: int = 1,
                **endpoint: Any) -> tuple[int, threading.Thread]:
    """An AMQP 1.0 peer on the engine, on `one_connection` (`count` connections, one
    after the other): each gets its own `Endpoint("peer", **endpoint)`, which answers the
    client's protocol header (no SASL: the client connects with --sasl-mechanism none),
    open and begins by itself, and its links unless `link_policy` says otherwise. Every
    event the client's bytes cause goes to `script(connection, event)`; then what the
    engine has to send is written. A connection ends when the client hangs up, when the
    script hangs up, or once the peer's close has gone out (its own, or its answer to
    the client's). (port, thread)."""
    numbers = itertools.count(1)

    def serve(sock: socket.socket) -> None:
        peer = PeerConnection(Endpoint("peer", **endpoint), next(numbers), sock)
        ep = peer.ep
        t = 0.0
        while data := sock.recv(65536):
            if peer.silent:
                continue
            t += 0.001  # (the engine's clock: only its order matters here)
            for e in ep.receive_data(data, t):
                script(peer, e)
                if peer.hung_up:
                    return
                if peer.silent:
                    break
            if peer.silent:
                continue
            if out := ep.data_to_send():
                sock.sendall(out)
            if ep.local in ep.connection.close:
                return

    return one_connection(serve, count)
