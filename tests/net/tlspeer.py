"""Scripted TCP and TLS peers on 127.0.0.1 for the tests of how the client reports TLS
failures: a listener that counts the connections it takes, server-side TLS contexts from
the test certificates, and what such a peer does once connected."""

from __future__ import annotations

import socket
import ssl
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self

HANG_GUARD = 60.0  # seconds a peer waits for the client before giving up


class Listener:
    """Takes connections on 127.0.0.1 and runs `serve(conn)` for each in a thread; closes
    everything when its `with` block ends."""

    def __init__(self, serve: Callable[[socket.socket], None]) -> None:
        self.srv = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.srv.getsockname()[1])
        self.peers: list[tuple[str, int]] = []  # in the order they were accepted
        self.changed = threading.Condition()
        self.conns: list[socket.socket] = []
        self.serve = serve
        threading.Thread(target=self._run, daemon=True).start()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        with self.changed:  # so that _run does not take up a socket closed under it
            self.srv.close()
            for c in self.conns:
                c.close()

    def accepted(self) -> int:
        """How many connections came before now: a last one of our own is accepted after
        all of them (the listen queue is in order), and not counted."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=HANG_GUARD) as own:
            me = own.getsockname()
            with self.changed:
                assert self.changed.wait_for(lambda: me in self.peers, HANG_GUARD)
                return self.peers.index(me)

    def _run(self) -> None:
        while True:
            try:
                conn, addr = self.srv.accept()
            except OSError:
                return
            conn.settimeout(HANG_GUARD)
            with self.changed:
                if self.srv.fileno() == -1:  # the block ended while this one came in
                    conn.close()
                    return
                self.peers.append(addr)
                self.conns.append(conn)
                self.changed.notify_all()
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            self.serve(conn)
        except OSError:
            pass
        finally:
            conn.close()


def server_context(cert: Path, key: Path, client_ca: Path | None = None) -> ssl.SSLContext:
    """A server's TLS context; with `client_ca`, one that requires a client certificate."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    if client_ca is not None:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(str(client_ca))
    return ctx


def handshake_then(ctx: ssl.SSLContext, then: Callable[[ssl.SSLSocket], None],
                   ) -> Callable[[socket.socket], None]:
    """A TLS server: the handshake (a failure ends the connection), then `then`."""
    def serve(conn: socket.socket) -> None:
        try:
            tls = ctx.wrap_socket(conn, server_side=True)
        except (ssl.SSLError, OSError):
            return
        then(tls)
        tls.close()

    return serve


def reset(conn: socket.socket) -> None:
    """Close with an RST (as a server that closes with our bytes unread does)."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def until_closed(conn: socket.socket) -> None:
    """Read and say nothing until the client goes."""
    while conn.recv(4096):
        pass


def one_line(stderr: str) -> str:
    """The error of a command's stderr that holds that one line and nothing else."""
    assert stderr.count("\n") == 1 and stderr.startswith("amqp: error: "), stderr
    return stderr.removeprefix("amqp: error: ").rstrip("\n")
