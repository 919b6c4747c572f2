"""`amqp serve --idle-timeout S` (Part 2 §2.4.5): S is the real threshold, the silence
after which the server closes; its open advertises half of it, and a client silent for
longer than the advertised value but less than S is not closed.

The client is the project's engine driven by hand over a blocking socket, so the test
decides exactly when it is silent (it sends no heartbeats)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

from amqpcli.engine import ConnectionClosed, ConnectionOpened, Endpoint, SessionBegun

Serve = Callable[..., Any]
_HANG_GUARD = 20.0


class _Client:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=_HANG_GUARD)
        self.ep = Endpoint("client", container_id="idle-test")
        self.events: list[Any] = []

    def send(self) -> float:
        data = self.ep.data_to_send()
        if data:
            self.sock.sendall(data)
        return time.monotonic()

    def wait_for(self, kind: type) -> tuple[Any, float]:
        """The first new event of `kind` from the server and when it arrived."""
        deadline = time.monotonic() + _HANG_GUARD
        while time.monotonic() < deadline:
            for e in self.events:
                if isinstance(e, kind) and e.side == self.ep.remote:
                    self.events.remove(e)
                    return e, time.monotonic()
            data = self.sock.recv(65536)
            if not data:
                raise AssertionError(f"connection ended before {kind.__name__}: {self.events}")
            self.events.extend(self.ep.receive_data(data, time.time()))
        raise AssertionError(f"no {kind.__name__} from the server: {self.events}")

    def close(self) -> None:
        self.sock.close()


def test_advertises_half_and_closes_after_the_full_threshold(serve: Serve) -> None:
    s = serve("--idle-timeout", "2")
    assert s.port is not None
    c = _Client(s.port)
    try:
        c.ep.open()
        c.send()
        opened, _ = c.wait_for(ConnectionOpened)
        assert opened.open.idle_time_out == 1000  # half of the 2 s threshold
        # silent for 1.5 s: more than advertised, less than the threshold
        time.sleep(1.5)
        c.ep.begin()
        last = c.send()
        c.wait_for(SessionBegun)  # answered, not closed
        closed, at = c.wait_for(ConnectionClosed)
        assert closed.error is not None
        assert str(closed.error.condition) == "amqp:resource-limit-exceeded"
        assert at - last >= 1.9, at - last  # the full threshold, not the advertised half
    finally:
        c.close()
