"""python-qpid-proton clients for the `amqp serve` tests: an independent implementation
on the other end of the wire.

`send_all(url, address, messages)` sends with a `MessagingHandler` and reports what the
peer said (each delivery's outcome, the link's and the connection's error condition);
`receive_raw(url, address, n)` receives `n` messages and keeps each one's bytes exactly
as they arrived. Both run a proton `Container` in a thread; `timeout` only guards
against a hang (the run ends early when everything is settled or the peer ends the link).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from proton import Delivery, Message
from proton.handlers import MessagingHandler
from proton.reactor import Container


@dataclass
class Outcome:
    index: int
    state: str  # accepted, rejected, released, modified
    condition: str | None = None
    failed: bool = False
    undeliverable: bool = False


@dataclass
class SendReport:
    outcomes: list[Outcome] = field(default_factory=list)
    link_error: str | None = None
    connection_error: str | None = None
    credit: int = 0
    timed_out: bool = False


_STATES = {Delivery.ACCEPTED: "accepted", Delivery.REJECTED: "rejected",
           Delivery.RELEASED: "released", Delivery.MODIFIED: "modified"}


def _connect(event: Any, url: str, user: str | None, password: str | None) -> Any:
    if user is not None:
        return event.container.connect(url, user=user, password=password, reconnect=False,
                                       allowed_mechs="PLAIN", allow_insecure_mechs=True)
    return event.container.connect(url, allowed_mechs="ANONYMOUS", reconnect=False)


class _Sender(MessagingHandler):  # type: ignore[misc]
    def __init__(self, url: str, address: str, messages: list[Message], timeout: float,
                 user: str | None, password: str | None) -> None:
        super().__init__()
        self.url, self.address, self.messages = url, address, messages
        self.timeout, self.user, self.password = timeout, user, password
        self.report = SendReport()
        self.sent = 0
        self.index: dict[Any, int] = {}
        self.conn: Any = None
        self.timer: Any = None

    def on_start(self, event: Any) -> None:
        self.conn = _connect(event, self.url, self.user, self.password)
        event.container.create_sender(self.conn, self.address)
        self.timer = event.container.schedule(self.timeout, self)

    def on_timer_task(self, event: Any) -> None:
        self.report.timed_out = True
        self.conn.close()

    def _finish(self) -> None:
        self.timer.cancel()
        self.conn.close()

    def on_sendable(self, event: Any) -> None:
        link = event.sender
        while link.credit and self.sent < len(self.messages):
            d = link.send(self.messages[self.sent])
            self.index[d] = self.sent
            self.sent += 1

    def _record(self, event: Any) -> None:
        d = event.delivery
        remote = d.remote
        cond = remote.condition.name if remote.condition is not None else None
        self.report.outcomes.append(Outcome(self.index.get(d, -1), _STATES.get(d.remote_state, str(d.remote_state)),
                                            cond, bool(remote.failed), bool(remote.undeliverable)))
        if len(self.report.outcomes) == len(self.messages):
            self.report.credit = event.link.credit
            self._finish()

    on_accepted = on_rejected = on_released = _record

    def on_link_error(self, event: Any) -> None:
        cond = event.link.remote_condition
        self.report.link_error = cond.name if cond is not None else "no condition"
        self._finish()

    def on_connection_error(self, event: Any) -> None:
        cond = event.connection.remote_condition
        self.report.connection_error = cond.name if cond is not None else "no condition"
        self._finish()

    def on_connection_remote_close(self, event: Any) -> None:
        # Seen besides MessagingHandler's own handling, which takes amqp:connection:forced
        # for a drop to reconnect after and reports nothing.
        cond = event.connection.remote_condition
        if cond is not None:
            self.report.connection_error = cond.name
            self._finish()

    def on_transport_error(self, event: Any) -> None:
        cond = event.transport.condition
        if self.report.connection_error is None:
            self.report.connection_error = cond.name if cond is not None else "transport error"
        self.timer.cancel()


class _RawReceiver(MessagingHandler):  # type: ignore[misc]
    def __init__(self, url: str, address: str, n: int, timeout: float) -> None:
        super().__init__(prefetch=0, auto_accept=False)
        self.url, self.address, self.n, self.timeout = url, address, n, timeout
        self.raws: list[bytes] = []
        self.link_error: str | None = None
        self.timed_out = False
        self.conn: Any = None
        self.timer: Any = None

    def on_start(self, event: Any) -> None:
        self.conn = _connect(event, self.url, None, None)
        link = event.container.create_receiver(self.conn, self.address)
        link.flow(self.n)
        self.timer = event.container.schedule(self.timeout, self)

    def on_timer_task(self, event: Any) -> None:
        self.timed_out = True
        self.conn.close()

    def _finish(self) -> None:
        self.timer.cancel()
        self.conn.close()

    def on_delivery(self, event: Any) -> None:
        d = event.delivery
        link = d.link
        if not link.is_receiver or d.partial:
            return
        self.raws.append(link.recv(d.pending))
        link.advance()
        d.update(Delivery.ACCEPTED)
        d.settle()
        if len(self.raws) == self.n:
            self._finish()

    def on_link_error(self, event: Any) -> None:
        cond = event.link.remote_condition
        self.link_error = cond.name if cond is not None else "no condition"
        self._finish()


def _run(handler: Any, timeout: float) -> None:
    box: list[BaseException] = []

    def target() -> None:
        try:
            Container(handler).run()
        except BaseException as e:  # noqa: BLE001 - reported in the test's thread
            box.append(e)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout + 30)
    if t.is_alive():
        raise AssertionError("the proton container never stopped")
    if box:
        raise box[0]


def send_all(url: str, address: str, messages: list[Message], *, timeout: float = 30.0,
             user: str | None = None, password: str | None = None) -> SendReport:
    h = _Sender(url, address, messages, timeout, user, password)
    _run(h, timeout)
    h.report.outcomes.sort(key=lambda o: o.index)
    return h.report


def receive_raw(url: str, address: str, n: int, *, timeout: float = 30.0) -> list[bytes]:
    h = _RawReceiver(url, address, n, timeout)
    _run(h, timeout)
    if h.link_error:
        raise AssertionError(f"receiver link closed: {h.link_error}")
    return h.raws
