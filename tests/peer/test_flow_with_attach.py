"""A receiver's flow that arrives with its attach (before our attach reply) is acted on
once we attach: python-qpid-proton writes `create_receiver` and `drain(n)` together."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from proton import Message
from proton.handlers import MessagingHandler

from tests.net.clirun import queue_name
from tests.peer.proton_clients import _run, send_all

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]
_HANG_GUARD = 15.0  # seconds; a drain that never completes ends the run here


class _Drainer(MessagingHandler):  # type: ignore[misc]
    """Attaches a receiver and drains `n` in the same write; records how the drain ended."""

    def __init__(self, url: str, address: str, n: int) -> None:
        super().__init__(prefetch=0, auto_accept=True)
        self.url, self.address, self.n = url, address, n
        self.bodies: list[Any] = []
        self.completed = False
        self.drained = 0
        self.conn: Any = None
        self.timer: Any = None

    def on_start(self, event: Any) -> None:
        self.conn = event.container.connect(self.url, allowed_mechs="ANONYMOUS",
                                            reconnect=False)
        link = event.container.create_receiver(self.conn, self.address, name="drainer")
        link.drain(self.n)  # goes out with the attach
        self.timer = event.container.schedule(_HANG_GUARD, self)

    def on_message(self, event: Any) -> None:
        self.bodies.append(event.message.body)

    def on_link_flow(self, event: Any) -> None:
        link = event.link
        if link.is_receiver and link.credit == 0 and not self.completed:
            self.completed = True
            self.drained = link.drained()
            self.timer.cancel()
            self.conn.close()

    def on_timer_task(self, event: Any) -> None:
        self.conn.close()


def _drain(url: str, address: str, n: int) -> _Drainer:
    h = _Drainer(url, address, n)
    _run(h, _HANG_GUARD)
    return h


def _link_flows(s: Any, conn: str) -> list[str]:
    """The flows serve sent on handle 0 of connection `conn`, once it answered the
    client's close (the trace has them all by then)."""
    s.wait_out(rf"{conn} <- \[0\]  close")
    return [x.split(" <- [0]  ")[1] for x in s.stdout if f"{conn} <- [0]  flow" in x
            and " handle=0 " in x]


def test_drain_sent_with_the_attach_completes_after_the_messages(serve: Serve) -> None:
    s = serve("--trace")
    q = queue_name()
    report = send_all(s.url, q, [Message(body=f"m{i}") for i in range(3)])
    assert [o.state for o in report.outcomes] == ["accepted"] * 3
    h = _drain(s.url, q, 10)
    assert h.bodies == ["m0", "m1", "m2"]
    assert h.completed, "the drain was never completed"
    assert h.drained == 7  # the unused credit, given back by advancing delivery-count
    # one flow answers the drain: the credit used up, drain echoed, what is left
    (flow,) = _link_flows(s, "c2")
    assert flow.startswith("flow        handle=0 delivery-count=10 link-credit=0 available=0 "
                           "drain "), flow


def test_drain_sent_with_the_attach_on_an_empty_queue(serve: Serve) -> None:
    s = serve("--trace")
    h = _drain(s.url, queue_name(), 5)
    assert h.bodies == []
    assert h.completed, "the drain was never completed"
    assert h.drained == 5
    (flow,) = _link_flows(s, "c1")
    assert flow.startswith("flow        handle=0 delivery-count=5 link-credit=0 available=0 "
                           "drain "), flow
