"""A scripted peer that takes one TCP connection on 127.0.0.1 and hands its socket to a
function, for tests of how the client meets odd peers."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

HANG_GUARD = 60.0  # seconds a peer waits for the client before giving up


def one_connection(serve: Callable[[socket.socket], None]) -> tuple[int, threading.Thread]:
    """Listen on a free port; in a thread, accept one connection and run `serve` on it
    (a socket error ends it quietly), then close both. (port, thread)."""
    srv = socket.create_server(("127.0.0.1", 0))

    def run() -> None:
        conn, _ = srv.accept()
        conn.settimeout(HANG_GUARD)
        try:
            serve(conn)
        except OSError:
            pass
        finally:
            conn.close()
            srv.close()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return int(srv.getsockname()[1]), th
