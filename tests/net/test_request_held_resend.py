"""`amqp request --reconnect`: a request to be sent again that waits for credit when the
connection is lost stays a resend (amqpcli/net/requesting.py, `_Requester.again`).

Driven through `_Requester.run` with a scripted client (no socket): the window it needs,
a connection lost while a resend waits for the new link's credit, cannot be hit in turn
by a live peer. Connection 1 sends request 1 and is lost before its outcome; connection 2
is lost while request 1 waits for credit; then either a third connection sends it (a
resend: counted once as a request) or none comes (it went out before: in doubt, exit 7).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

from amqpcli.codec import composites as c
from amqpcli.errors import Exit, UserError
from amqpcli.net import requesting
from amqpcli.net.client import ConnectionLost
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.outgoing import MessageTemplate
from amqpcli.net.requesting import RequestPlan, _Requester, request_exit

LOST = UserError("connection lost", Exit.CONNECTION)


class _Pending:
    def __init__(self, state: Any) -> None:
        self.state = state

    def on_done(self, callback: Callable[[Any], None]) -> None:
        if self.state is not None:
            callback(self)


class _Transport:
    def flush(self) -> None:
        pass


class _Replies:
    credit = 100

    def __init__(self) -> None:
        self.queue: list[Any] = []
        self.changed = asyncio.Event()

    def flow(self, n: int) -> None:
        pass

    def flush_settlements(self) -> None:
        pass

    async def wait_changed(self, deadline: float, what: str) -> None:
        await asyncio.sleep(0)

    def take(self, n: Any) -> list[Any]:
        return []

    async def close(self) -> None:
        pass


class _Client:
    """One connection: `script` says what happens on it (`_Sender`)."""

    peer_close_error = None

    def __init__(self, script: str) -> None:
        self.script = script
        self.transport = _Transport()
        self.sent: list[bytes] = []

    async def open_receiver(self, address: Any, **kw: Any) -> _Replies:
        return _Replies()

    async def open_sender(self, address: str) -> _Sender:
        return _Sender(self)

    def _engine_drained(self, link: Any) -> None:
        pass

    async def close(self) -> None:
        pass

    async def abort(self) -> None:
        pass


class _Sender:
    link = None

    def __init__(self, client: _Client) -> None:
        self.client = client

    async def wait_sendable(self, concurrency: int, timeout: float) -> None:
        if self.client.script == "lost waiting for credit":
            raise ConnectionLost(LOST)

    def send(self, payload: bytes, settled: bool) -> _Pending:
        self.client.sent.append(payload)
        # "lost before the outcome": no outcome, the loss is seen while replies are awaited
        return _Pending(None if self.client.script == "lost before the outcome"
                        else c.Released())

    def _check(self) -> None:
        if self.client.script == "lost before the outcome" and self.client.sent:
            raise ConnectionLost(LOST)

    async def close(self) -> None:
        pass


class _Reconnects:
    """The connections of the run, one per script, each loss followed by a reconnect while
    scripts are left."""

    scripts: ClassVar[list[str]] = []

    def __init__(self, policy: Any, warn: Any) -> None:
        self.made = 0
        self.clients: list[_Client] = []

    async def connect(self, cfg: Any, **hooks: Any) -> _Client:
        client = _Client(self.scripts[len(self.clients)])
        self.clients.append(client)
        return client

    def got_somewhere(self) -> None:
        pass

    def after_loss(self, error: UserError) -> float | None:
        return 0.0 if len(self.clients) < len(self.scripts) else None


def _run(monkeypatch: pytest.MonkeyPatch, scripts: list[str]) -> Any:
    monkeypatch.setattr(_Reconnects, "scripts", scripts)
    monkeypatch.setattr(requesting, "Reconnects", _Reconnects)
    template = MessageTemplate(properties={"message_id": "req-1", "reply_to": "replies"})
    messages = iter([template.encode(1, b"a")])
    cfg = ConnectionConfig.__new__(ConnectionConfig)
    object.__setattr__(cfg, "reconnect", None)
    plan = RequestPlan(address="service", reply_to="replies", timeout=5, expected=1)
    requester = _Requester(cfg, plan, lambda a: None, lambda inc: None, lambda w: None)
    return asyncio.run(requester.run(messages))


def test_a_resend_lost_while_waiting_for_credit_is_still_a_resend(
        monkeypatch: pytest.MonkeyPatch) -> None:
    s = _run(monkeypatch, ["lost before the outcome", "lost waiting for credit", "sends"])
    assert (s.send.messages, s.send.resent, s.send.sent) == (1, 1, 2), s.send
    assert s.send.released == 1 and s.send.in_doubt == [], s.send


def test_a_resend_lost_while_waiting_for_credit_at_the_end_is_in_doubt(
        monkeypatch: pytest.MonkeyPatch) -> None:
    s = _run(monkeypatch, ["lost before the outcome", "lost waiting for credit"])
    assert s.send.in_doubt == [(1, "req-1")], s.send
    assert (s.send.messages, s.not_sent) == (1, 0)
    assert request_exit(s)[0] == Exit.IN_DOUBT
