"""An outcome that comes right as `amqp send`'s wait for outcomes times out: the timeout's
error and the summary's counts are one decision. The outcome is counted (read in the
turn of the loop the wait timed out in, or while the run closes after the timeout), so
the run whose every outcome came is not failed with "no outcome for 0 message(s)" or
"no outcome for 1 message(s)" beside `accepted 1`. The race (`amqp serve --settle-delay`
equal to `--timeout`) is forced here by driving the send logic directly."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.errors import Exit, UserError
from amqpcli.net.client import Client, Pending, SenderLink
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.outgoing import OutgoingMessage
from amqpcli.net.reconnecting import Reconnects
from amqpcli.net.sending import SendPlan, _Sender, run_send, summary_exit, summary_text

TIMEOUT = 0.05


def _accepted(pending: Pending) -> None:
    """What the read loop does with the peer's disposition (accepted, settled)."""
    pending.delivery.receiver_state = c.Accepted()
    pending._resolve()


def _sent(s: _Sender, sender: SenderLink, n: int) -> list[Pending]:
    """`n` messages sent on `sender`, no outcome yet."""
    out = []
    for number in range(1, n + 1):
        pending = Pending(SimpleNamespace(receiver_state=None))
        s.s.messages += 1
        s._sent_one(OutgoingMessage(number=number, payload=b"x"), False, pending)
        out.append(pending)
    s.exhausted = True
    return out


def _link() -> tuple[Client, SenderLink]:
    client = Client(ConnectionConfig())
    sender = SenderLink(client, SimpleNamespace(detach={}), "q")
    client._links[id(sender.link)] = sender
    return client, sender


def test_an_outcome_read_as_the_wait_times_out_is_no_timeout() -> None:
    async def main() -> None:
        client, sender = _link()
        s = _Sender(ConnectionConfig(), SendPlan(address="q", timeout=TIMEOUT))
        s.sender = sender
        pendings = _sent(s, sender, 3)

        async def times_out(deadline: float | None, what: str) -> None:
            # the disposition is read in the turn the deadline passes: the wait ends
            # with its timeout, the outcomes already counted
            for p in pendings:
                _accepted(p)
            raise UserError(what, Exit.TIMEOUT)

        sender.wait_changed = times_out  # type: ignore[method-assign]
        await s._wait_confirmed(client)  # no "no outcome for 0 message(s)"
        assert s.s.accepted == 3 and not s.unconfirmed

    asyncio.run(main())


@pytest.mark.parametrize(("heard", "code", "error"), [
    (3, Exit.OK, None),  # every outcome came, read while closing after the timeout
    (1, Exit.IN_DOUBT, "no outcome for 2 message(s) within 0.05s"),  # two still missing
])
def test_the_timeout_is_decided_with_what_was_heard_by_the_end(
        monkeypatch: pytest.MonkeyPatch, heard: int, code: Exit, error: str | None) -> None:
    pendings: list[Pending] = []
    made: list[SenderLink] = []

    async def connect(self: Reconnects, cfg: Any, **hooks: Any) -> Client:
        client, sender = _link()
        made.append(sender)

        async def close(**kw: Any) -> None:
            # the peer's dispositions, written before our close came, read as we close
            for p in pendings[:heard]:
                _accepted(p)

        async def abort() -> None:
            client.ended = True

        client.close = close  # type: ignore[method-assign]
        client.abort = abort  # type: ignore[method-assign]
        return client

    async def send_all(self: _Sender, client: Client, messages: Any, start: float) -> None:
        self.sender = made[0]
        pendings.extend(_sent(self, made[0], 3))

    monkeypatch.setattr(Reconnects, "connect", connect)
    monkeypatch.setattr(_Sender, "_send_all", send_all)
    summary = run_send(ConnectionConfig(), SendPlan(address="q", timeout=TIMEOUT), iter(()))
    assert summary.accepted == heard
    assert len(summary.in_doubt) == 3 - heard
    assert summary_exit(summary)[0] == code
    obj = summary.to_json()
    assert obj.get("error") == error
    assert obj.get("exit", 0) == code
    if error is None:
        assert summary.failure is None
        assert summary_text(summary).startswith("sent 3, accepted 3, in doubt 0")
