"""A link name attached, detached and attached again in one write, before `amqp serve`
answered any of it: python-qpid-proton does this for `create_sender(a); sender.close();
create_sender(a)` in one callback. A link name may be used again once the link is
detached (Part 2 §2.6.3); serve answers the first attachment (attach, then detach,
§2.6.5) and then the second, which is a link of its own.

Serve used to end the session with amqp:not-allowed (link-name-in-use) instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from proton import Message
from proton.handlers import MessagingHandler

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message as AMessage
from tests.net.clirun import amqp, queue_name
from tests.peer.proton_clients import _run
from tests.peer.test_pipelined_detach import _credit, _opening, _Raw, _receiver, _sender

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]
_PROTON_GUARD = 15.0  # seconds; a proton run that waits for an answer that never comes


def _link_frames(got: list[Any], name: str) -> list[tuple[str, int, bool | None]]:
    """Serve's attaches of link `name` and the detaches on the handles they took, in
    order: (performative, handle, closed)."""
    out: list[tuple[str, int, bool | None]] = []
    ours: set[int] = set()
    for b in got:
        if isinstance(b, c.Attach) and str(b.name) == name:
            ours.add(int(b.handle))
            out.append(("attach", int(b.handle), None))
        elif isinstance(b, c.Detach) and int(b.handle) in ours:
            assert b.error is None, b
            ours.discard(int(b.handle))
            out.append(("detach", int(b.handle), bool(b.closed)))
    return out


def _transfer(handle: int, delivery_id: int, body: bytes) -> tuple[Any, bytes]:
    return (c.Transfer(handle=handle, delivery_id=delivery_id, delivery_tag=b"%d" % delivery_id,
                       message_format=0, settled=False), AMessage(body).encode())


def _accepted(raw: _Raw, first: int) -> bool:
    return any(isinstance(b, c.Disposition) and int(b.first) <= first <= int(b.last or b.first)
               and isinstance(b.state, c.Accepted) and b.settled for b in raw.got)


@pytest.mark.parametrize("closed", [True, False])
def test_sender_attached_detached_attached_in_one_write(serve: Serve, closed: bool) -> None:
    s = serve()
    q = queue_name()
    raw = _Raw(s.port)
    raw.write(*_opening(), _sender("same", 0, q), c.Detach(handle=0, closed=closed),
              _sender("same", 1, q), header=True)

    def credit_for_second() -> bool:
        return any(isinstance(b, c.Flow) and b.handle is not None and b.link_credit
                   for b in raw.got)
    raw.until(credit_for_second)
    assert _link_frames(raw.got, "same") == [
        ("attach", 0, None), ("detach", 0, closed), ("attach", 0, None)]
    t, payload = _transfer(1, 0, b"second")
    raw.write(t, payload=payload)
    raw.until(lambda: _accepted(raw, 0))
    raw.close()
    assert not any(isinstance(b, c.End) for b in raw.got[:-1]), raw.got
    r = amqp("recv", f"{s.url}/{q}", "--count", "1", "--timeout", "30")
    assert r.returncode == 0 and "second" in r.stdout, (r.stdout, r.stderr)


def test_receiver_attached_detached_attached_in_one_write(serve: Serve) -> None:
    s = serve()
    q = queue_name()
    r = amqp("send", f"{s.url}/{q}", "m", "--count", "2")
    assert r.returncode == 0, r.stderr
    raw = _Raw(s.port)
    raw.write(*_opening(), _receiver("same", 0, q), _credit(0, 10),
              c.Detach(handle=0, closed=True), _receiver("same", 0, q), _credit(0, 10),
              header=True)
    raw.until(lambda: sum(1 for b in raw.got if isinstance(b, c.Transfer)) == 2)
    raw.close()
    frames = _link_frames(raw.got, "same")
    assert frames == [("attach", 0, None), ("detach", 0, True), ("attach", 0, None)]
    # both messages on the second attachment: after its attach, none before
    second = max(i for i, b in enumerate(raw.got) if isinstance(b, c.Attach))
    assert all(i > second for i, b in enumerate(raw.got) if isinstance(b, c.Transfer))


@pytest.mark.parametrize("closed", [True, False])
def test_a_transfer_before_credit_on_the_second_attachment_gets_its_outcome(
        serve: Serve, closed: bool) -> None:
    """As on any new link (a transfer before credit is taken, as sent with the attach):
    the message is accepted and stored."""
    s = serve()
    q = queue_name()
    raw = _Raw(s.port)
    t, payload = _transfer(1, 0, b"early")
    raw.write(*_opening(), _sender("same", 0, q), c.Detach(handle=0, closed=closed),
              _sender("same", 1, q), header=True)
    raw.write(t, payload=payload)
    raw.until(lambda: _accepted(raw, 0))
    raw.close()
    r = amqp("recv", f"{s.url}/{q}", "--count", "1", "--timeout", "30")
    assert r.returncode == 0 and "early" in r.stdout, (r.stdout, r.stderr)


def test_a_resume_after_the_detach_was_answered_is_unchanged(serve: Serve) -> None:
    """The ordinary re-attach: detach with closed=false answered, then attach again."""
    s = serve()
    q = queue_name()
    raw = _Raw(s.port)
    raw.write(*_opening(), _sender("same", 0, q), header=True)
    raw.until(lambda: any(isinstance(b, c.Flow) for b in raw.got))
    raw.write(c.Detach(handle=0, closed=False))
    raw.until(lambda: any(isinstance(b, c.Detach) for b in raw.got))
    raw.write(_sender("same", 0, q))
    raw.until(lambda: sum(1 for b in raw.got if isinstance(b, c.Flow)) == 2)
    t, payload = _transfer(0, 0, b"resumed")
    raw.write(t, payload=payload)
    raw.until(lambda: _accepted(raw, 0))
    raw.close()
    assert _link_frames(raw.got, "same") == [
        ("attach", 0, None), ("detach", 0, False), ("attach", 0, None)]
    s.wait_log(r"detach 'same' \(kept\)")


def test_attached_twice_without_a_detach_ends_the_session(serve: Serve) -> None:
    """Attached again and never detached: the first is answered, then the session ends
    with amqp:not-allowed (a name in use), as before; not an internal error."""
    s = serve()
    q = queue_name()
    raw = _Raw(s.port)
    raw.write(*_opening(), _sender("same", 0, q), _sender("same", 1, q), header=True)
    raw.until(lambda: any(isinstance(b, c.End) for b in raw.got))
    end = next(b for b in raw.got if isinstance(b, c.End))
    assert str(end.error.condition) == "amqp:not-allowed", end
    assert sum(1 for b in raw.got if isinstance(b, c.Attach)) == 1
    raw.write(c.End())
    raw.close()
    assert "internal error" not in s.log


class _SenderAgain(MessagingHandler):  # type: ignore[misc]
    """A sender created and closed at once, then created again under the same name in the
    same callback (one write); the second sends one message."""

    def __init__(self, url: str, address: str) -> None:
        super().__init__()
        self.url, self.address = url, address
        self.first_closed_by_peer = False
        self.accepted = False
        self.errors: list[str] = []
        self.conn: Any = None
        self.first: Any = None
        self.second: Any = None
        self.sent = False
        self.timer: Any = None

    def on_start(self, event: Any) -> None:
        self.conn = event.container.connect(self.url, allowed_mechs="ANONYMOUS",
                                            reconnect=False)
        self.first = event.container.create_sender(self.conn, self.address, name="same")
        self.first.close()
        self.second = event.container.create_sender(self.conn, self.address, name="same")
        self.timer = event.container.schedule(_PROTON_GUARD, self)

    def on_sendable(self, event: Any) -> None:
        if event.sender == self.second and not self.sent:
            event.sender.send(Message(body="again"))
            self.sent = True

    def on_link_closed(self, event: Any) -> None:
        if event.link == self.first:
            self.first_closed_by_peer = True
            self._done()

    def on_accepted(self, event: Any) -> None:
        self.accepted = True
        self._done()

    def _done(self) -> None:
        if self.accepted and self.first_closed_by_peer:
            self.timer.cancel()
            self.conn.close()

    def on_connection_error(self, event: Any) -> None:
        self.errors.append(str(event.connection.remote_condition))

    def on_session_error(self, event: Any) -> None:
        self.errors.append(str(event.session.remote_condition))

    def on_link_error(self, event: Any) -> None:
        self.errors.append(str(event.link.remote_condition))

    def on_timer_task(self, event: Any) -> None:
        self.conn.close()


def test_proton_sender_closed_and_created_again(serve: Serve) -> None:
    s = serve()
    h = _SenderAgain(s.url, queue_name())
    _run(h, _PROTON_GUARD)
    assert h.errors == []
    assert h.first_closed_by_peer and h.accepted
    assert "not-allowed" not in s.log
