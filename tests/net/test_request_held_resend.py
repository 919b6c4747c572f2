"""`amqp request --reconnect` (amqpcli/net/requesting.py), driven through `_Requester.run`
with a scripted client (no socket).

A request to be sent again that waits for credit when the connection is lost stays a
resend (`_Requester.again`).
The window it needs,
a connection lost while a resend waits for the new link's credit, cannot be hit in turn
by a live peer. Connection 1 sends request 1 and is lost before its outcome; connection 2
is lost while request 1 waits for credit; then either a third connection sends it (a
resend: counted once as a request) or none comes (it went out before: in doubt, exit 7).

Each connection's dynamic reply node is given to `on_reply_to`, so that a request built
after a reconnect names the new node as it is built, not rewritten as it goes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.errors import Exit, UserError
from amqpcli.net import requesting
from amqpcli.net.client import ConnectionLost
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.outgoing import MessageTemplate, PerMessage
from amqpcli.net.requesting import RequestPlan, _Requester, request_exit

LOST = UserError("connection lost", Exit.CONNECTION)
_REQ_N = PerMessage("req-{n}", str)  # as `amqp request`'s default ids: one per request


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
    ended = detaching = False

    def __init__(self, address: str) -> None:
        self.remote_attach = c.Attach(name="r", handle=0, role=True,
                                      source=c.Source(address=address))
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

    def __init__(self, script: str, node: str) -> None:
        self.script = script
        self.node = node  # its dynamic reply node
        self.transport = _Transport()
        self.sent: list[bytes] = []

    async def open_receiver(self, address: Any, **kw: Any) -> _Replies:
        return _Replies(self.node)

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
        # the loss is seen while replies are awaited: no outcome, or accepted and no reply
        return _Pending({"lost before the outcome": None,
                         "lost before the reply": c.Accepted()}.get(self.client.script,
                                                                    c.Released()))

    def _check(self) -> None:
        if self.client.script.startswith("lost before the") and self.client.sent:
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
        client = _Client(self.scripts[len(self.clients)], f"node-{len(self.clients) + 1}")
        self.clients.append(client)
        return client

    def got_somewhere(self) -> None:
        pass

    def after_loss(self, error: UserError) -> float | None:
        return 0.0 if len(self.clients) < len(self.scripts) else None


def _run(monkeypatch: pytest.MonkeyPatch, scripts: list[str], count: int = 1,
         reply_to: str | None = "replies",
         on_reply_to: Callable[[str], None] = lambda a: None) -> Any:
    monkeypatch.setattr(_Reconnects, "scripts", scripts)
    monkeypatch.setattr(requesting, "Reconnects", _Reconnects)
    template = MessageTemplate(properties={"message_id": _REQ_N, "reply_to": reply_to})
    messages = (template.encode(n, b"a") for n in range(1, count + 1))
    return _run_requests(reply_to, count, messages, on_reply_to)


def _run_requests(reply_to: str | None, count: int, messages: Any,
                  on_reply_to: Callable[[str], None]) -> Any:
    cfg = ConnectionConfig.__new__(ConnectionConfig)
    object.__setattr__(cfg, "reconnect", None)
    plan = RequestPlan(address="service", reply_to=reply_to, timeout=5, expected=count)
    requester = _Requester(cfg, plan, on_reply_to, lambda inc: None, lambda w: None)
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


def test_a_request_built_after_a_reconnect_names_the_new_dynamic_node(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_Reconnects, "scripts", ["lost before the reply", "sends"])
    monkeypatch.setattr(requesting, "Reconnects", _Reconnects)
    # as `amqp request` builds its requests: the template follows the reply node
    template = MessageTemplate(properties={"message_id": _REQ_N, "reply_to": None})
    built: list[bytes] = []
    nodes: list[str] = []

    def reply_node(address: str) -> None:
        nodes.append(address)
        template.properties["reply_to"] = address

    def messages() -> Any:
        for n in (1, 2):
            msg = template.encode(n, b"a")
            built.append(msg.payload)
            yield msg

    sent: list[bytes] = []
    send = _Sender.send

    def recorded(sender: _Sender, payload: bytes, settled: bool) -> _Pending:
        sent.append(payload)
        return send(sender, payload, settled)

    monkeypatch.setattr(_Sender, "send", recorded)
    s = _run_requests(None, 2, messages(), reply_node)
    assert nodes == ["node-1", "node-2"]
    assert [Message.decode(p).properties.reply_to for p in sent] == ["node-1", "node-2"]
    assert sent == built  # each as it was built: none decoded and encoded again
    assert (s.send.messages, s.send.in_doubt) == (2, [(1, "req-1")]), s.send

