"""`amqp serve --idle-timeout S` (Part 2 §2.4.5): S is the real threshold, the silence
after which the server closes; its open advertises half of it, and a client silent for
longer than the advertised value but less than S is not closed.

The client is the project's engine driven by hand over a blocking socket, so the test
decides exactly when it is silent (it sends no heartbeats)."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from proton.handlers import MessagingHandler
from proton.reactor import Container

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
        s.wait_log(r"closing \(amqp:resource-limit-exceeded")
        # the 1.5 s broke nothing: the one violation logged is the whole threshold's
        broken = [ln for ln in s.log.splitlines() if "broke the protocol" in ln]
        assert len(broken) == 1 and "nothing received for" in broken[0], broken
    finally:
        c.close()


class _Idle(MessagingHandler):  # type: ignore[misc]
    """Connects, stays idle (proton heartbeats for it), closes after `seconds`."""

    def __init__(self, url: str, seconds: float) -> None:
        super().__init__()
        self.url, self.seconds = url, seconds
        self.conn: Any = None
        self.remote_error: Any = None

    def on_start(self, event: Any) -> None:
        self.conn = event.container.connect(self.url, allowed_mechs="ANONYMOUS",
                                            reconnect=False)
        event.container.schedule(self.seconds, self)

    def on_timer_task(self, event: Any) -> None:
        self.conn.close()

    def on_connection_remote_close(self, event: Any) -> None:
        self.remote_error = event.connection.remote_condition


def test_a_proton_client_heartbeating_as_advertised_breaks_nothing(serve: Serve) -> None:
    # proton sends its empty frames at the interval the open advertised (1 s here), each a
    # little late: within the 2 s threshold that interval stands for, so no violation
    s = serve("--idle-timeout", "2", "--trace")
    idle = _Idle(s.url, 3.5)
    runner = threading.Thread(target=Container(idle).run, daemon=True)
    runner.start()
    runner.join(_HANG_GUARD)
    assert not runner.is_alive()
    s.wait_log(r"c1 closed by the client")
    s.wait_out(r"c1 <- \[0\] +close")
    assert idle.remote_error is None
    trace = "\n".join(s.stdout)
    assert len(re.findall(r"c1 -> \[0\] +heartbeat", trace)) >= 2, trace  # it heartbeat
    assert "broke the protocol" not in s.log, s.log
