"""A link the client attaches and detaches at once, before `amqp serve` has answered its
attach: Part 2 §2.6.5 lets a link endpoint detach any time after its own attach, and the
partner answers with its attach (not sent yet) and then its detach. python-qpid-proton
does this by itself: `create_sender(...)` then `close()` writes attach and detach together.

Serve used to close the whole connection with amqp:internal-error for a client's sender
(it granted credit on a link it no longer held) and never sent the detach for a client's
receiver. Now both get attach then detach, and the connection and its other links go on.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest
from proton import Message
from proton.handlers import MessagingHandler

from amqpcli.codec import composites as c
from amqpcli.codec.frames import AMQP_HEADER, Frame, FrameReader, encode_frame
from amqpcli.codec.message import Message as AMessage
from tests.net.clirun import amqp, queue_name
from tests.net.onepeer import HANG_GUARD
from tests.peer.proton_clients import _run

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]
_PROTON_GUARD = 15.0  # seconds; a proton run that waits for an answer that never comes


class _Raw:
    """A scripted client on a raw socket (no SASL): writes frame bodies on channel 0 and
    keeps every body serve sends, in order."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD)
        self.reader = FrameReader()
        self.got: list[Any] = []
        self.eof = False

    def write(self, *bodies: Any, header: bool = False, payload: bytes = b"") -> None:
        data = b"".join(encode_frame(b, 0, payload if isinstance(b, c.Transfer) else b"")
                        for b in bodies)
        self.sock.sendall((AMQP_HEADER if header else b"") + data)

    def until(self, done: Callable[[], bool]) -> None:
        """Read until `done()`; a close or the end of the stream first fails the test."""
        while not done():
            assert not any(isinstance(b, c.Close) for b in self.got) and not self.eof, (
                f"serve ended the connection; it sent {self.got}")
            data = self.sock.recv(65536)
            if not data:
                self.eof = True
                continue
            self.got.extend(item.body for item in self.reader.feed(data)
                            if isinstance(item, Frame) and item.body is not None)

    def attach_of(self, name: str) -> Any:
        return next((b for b in self.got if isinstance(b, c.Attach) and str(b.name) == name),
                    None)

    def close(self) -> None:
        """Close; serve's close answers it (everything it sent before comes first)."""
        self.write(c.Close())
        while not any(isinstance(b, c.Close) for b in self.got):
            data = self.sock.recv(65536)
            assert data, f"no close from serve; it sent {self.got}"
            self.got.extend(item.body for item in self.reader.feed(data)
                            if isinstance(item, Frame) and item.body is not None)
        self.sock.close()


def _opening() -> list[Any]:
    return [c.Open(container_id="pipelined"),
            c.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048)]


def _sender(name: str, handle: int, address: str) -> Any:
    return c.Attach(name=name, handle=handle, role=False, source=c.Source(),
                    target=c.Target(address=address), initial_delivery_count=0)


def _receiver(name: str, handle: int, address: str) -> Any:
    return c.Attach(name=name, handle=handle, role=True, source=c.Source(address=address),
                    target=c.Target())


def _credit(handle: int, credit: int) -> Any:
    # sent before serve's begin is seen: no next-incoming-id yet (Part 2 §2.7.4)
    return c.Flow(incoming_window=2048, next_outgoing_id=0, outgoing_window=2048,
                  handle=handle, delivery_count=0, link_credit=credit)


def _answered_by_attach_then_detach(got: list[Any], name: str) -> None:
    """Serve's attach for link `name`, then, next on the handle it chose, a detach
    (closed, no error)."""
    i = next(i for i, b in enumerate(got) if isinstance(b, c.Attach) and str(b.name) == name)
    h = got[i].handle
    later = [b for b in got[i + 1:] if getattr(b, "handle", None) == h]
    assert later and isinstance(later[0], c.Detach), (name, got)
    assert later[0].closed and later[0].error is None, later[0]


@pytest.mark.parametrize("role", ["sender", "receiver"])
def test_attach_and_detach_in_one_write_get_attach_then_detach(serve: Serve, role: str) -> None:
    s = serve()
    q = queue_name()
    attach = _sender("quick", 0, q) if role == "sender" else _receiver("quick", 0, q)
    raw = _Raw(s.port)
    # the detach and a second link's attach go out before serve has answered anything
    raw.write(*_opening(), attach, c.Detach(handle=0, closed=True), _sender("after", 1, q),
              header=True)

    def credit_for_after() -> bool:
        a = raw.attach_of("after")
        return a is not None and any(isinstance(b, c.Flow) and b.handle == a.handle
                                     for b in raw.got)
    raw.until(credit_for_after)
    # the connection and the second link still work: a message goes through
    raw.write(c.Transfer(handle=1, delivery_id=0, delivery_tag=b"t", message_format=0,
                         settled=False), payload=AMessage(b"after").encode())
    raw.until(lambda: any(isinstance(b, c.Disposition) for b in raw.got))
    raw.close()
    _answered_by_attach_then_detach(raw.got, "quick")
    disp = next(b for b in raw.got if isinstance(b, c.Disposition))
    assert isinstance(disp.state, c.Accepted) and disp.settled
    closes = [b for b in raw.got if isinstance(b, c.Close)]
    assert len(closes) == 1 and closes[0].error is None, closes
    s.wait_log(r"detach 'quick'")
    assert "internal error" not in s.log


def test_a_receiver_gone_before_our_attach_takes_no_message(serve: Serve) -> None:
    """Credit granted with the attach, then the detach, all before our attach: nothing
    is sent on (or held for) that link; every message goes to the next receiver."""
    s = serve()
    q = queue_name()
    r = amqp("send", f"{s.url}/{q}", "m", "--count", "3")
    assert r.returncode == 0, r.stderr
    raw = _Raw(s.port)
    raw.write(*_opening(), _receiver("gone", 0, q), _credit(0, 10),
              c.Detach(handle=0, closed=True), _receiver("next", 1, q), _credit(1, 10),
              header=True)

    def transfers_to_next() -> int:
        a = raw.attach_of("next")
        return 0 if a is None else sum(
            1 for b in raw.got if isinstance(b, c.Transfer) and b.handle == a.handle)
    raw.until(lambda: transfers_to_next() == 3)
    raw.close()
    _answered_by_attach_then_detach(raw.got, "gone")
    assert sum(1 for b in raw.got if isinstance(b, c.Transfer)) == 3


class _QuickSender(MessagingHandler):  # type: ignore[misc]
    """A sender created and closed at once (attach and detach in one write), then a second
    sender on the same connection that sends one message."""

    def __init__(self, url: str, address: str) -> None:
        super().__init__()
        self.url, self.address = url, address
        self.quick_closed_by_peer = False
        self.accepted = False
        self.errors: list[str] = []
        self.conn: Any = None
        self.quick: Any = None
        self.second: Any = None
        self.sent = False
        self.timer: Any = None

    def on_start(self, event: Any) -> None:
        self.conn = event.container.connect(self.url, allowed_mechs="ANONYMOUS",
                                            reconnect=False)
        self.quick = event.container.create_sender(self.conn, self.address, name="quick")
        self.quick.close()
        self.second = event.container.create_sender(self.conn, self.address, name="second")
        self.timer = event.container.schedule(_PROTON_GUARD, self)

    def on_sendable(self, event: Any) -> None:
        if event.sender == self.second and not self.sent:
            event.sender.send(Message(body="after"))
            self.sent = True

    def on_link_closed(self, event: Any) -> None:
        if event.link == self.quick:
            self.quick_closed_by_peer = True
            self._done()

    def on_accepted(self, event: Any) -> None:
        self.accepted = True
        self._done()

    def _done(self) -> None:
        if self.accepted and self.quick_closed_by_peer:
            self.timer.cancel()
            self.conn.close()

    def on_connection_error(self, event: Any) -> None:
        self.errors.append(str(event.connection.remote_condition))

    def on_link_error(self, event: Any) -> None:
        self.errors.append(str(event.link.remote_condition))

    def on_timer_task(self, event: Any) -> None:
        self.conn.close()


class _QuickReceiver(MessagingHandler):  # type: ignore[misc]
    """A receiver created and closed at once; waits for the peer's detach."""

    def __init__(self, url: str, address: str) -> None:
        super().__init__()
        self.url, self.address = url, address
        self.closed_by_peer = False
        self.errors: list[str] = []
        self.conn: Any = None
        self.timer: Any = None

    def on_start(self, event: Any) -> None:
        self.conn = event.container.connect(self.url, allowed_mechs="ANONYMOUS",
                                            reconnect=False)
        event.container.create_receiver(self.conn, self.address, name="quickr").close()
        self.timer = event.container.schedule(_PROTON_GUARD, self)

    def on_link_closed(self, event: Any) -> None:
        self.closed_by_peer = True
        self.timer.cancel()
        self.conn.close()

    def on_connection_error(self, event: Any) -> None:
        self.errors.append(str(event.connection.remote_condition))

    def on_timer_task(self, event: Any) -> None:
        self.conn.close()


def test_proton_sender_closed_at_once(serve: Serve) -> None:
    s = serve()
    h = _QuickSender(s.url, queue_name())
    _run(h, _PROTON_GUARD)
    assert h.errors == []
    assert h.quick_closed_by_peer and h.accepted
    assert "internal error" not in s.log


def test_proton_receiver_closed_at_once(serve: Serve) -> None:
    s = serve()
    h = _QuickReceiver(s.url, queue_name())
    _run(h, _PROTON_GUARD)
    assert h.errors == []
    assert h.closed_by_peer
