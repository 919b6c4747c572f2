"""How `amqp request` settles the replies it writes (amqpcli/net/requesting.py,
`_Requester._replies`), with a scripted writer: the replies taken together are written
together, and only those written whole are accepted, their settlements sent before the
run ends; a reply cut short, or pre-settled and left unwritten, is said; those not
accepted are counted as given back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.errors import Exit
from amqpcli.net.client import Incoming
from amqpcli.net.outgoing import OutgoingMessage
from amqpcli.net.receiving import OutputError, WriteStopped
from amqpcli.net.requesting import RequestPlan, _Requester


class _Delivery:
    def __init__(self, correlation_id: str, presettled: bool) -> None:
        self.payload = Message(b"reply", properties=c.Properties(
            correlation_id=correlation_id)).encode()
        self.presettled = presettled
        self.sender_settled = False


class _Replies:
    """The reply link: what was settled, and what of it went out to the peer."""

    def __init__(self) -> None:
        self.batch: list[str] = []
        self.sent: list[str] = []

    def settle(self, inc: Incoming, state: Any) -> None:
        assert isinstance(state, c.Accepted)
        self.batch.append(Message.decode(inc.payload).properties.correlation_id)

    def flush_settlements(self) -> None:
        self.sent += self.batch
        self.batch = []


class _Pending:
    def on_done(self, callback: Any) -> None:
        pass


def _run(failure: BaseException | None, presettled: bool = False
         ) -> tuple[_Requester, _Replies, list[str], BaseException | None]:
    """Requests 1-3 waiting, their three replies taken together, the write ending with
    `failure`: the requester, the reply link, the warnings and what `_replies` raised."""
    warnings: list[str] = []
    written: list[Sequence[Incoming]] = []

    async def write(incomings: Sequence[Incoming], before_waiting: Any) -> None:
        written.append(incomings)
        if failure is not None:
            raise failure

    requester = _Requester(None, RequestPlan(address="service"),  # type: ignore[arg-type]
                           lambda a: None, write, warnings.append)
    for n in (1, 2, 3):
        msg = OutgoingMessage(n, b"", f"req-{n}")
        requester._sent(msg, (("string", f"req-{n}"),), _Pending(), False)  # type: ignore[arg-type]
    replies = _Replies()
    taken = [Incoming(_Delivery(f"req-{n}", presettled), 0) for n in (1, 2, 3)]
    raised: BaseException | None = None
    try:
        asyncio.run(requester._replies(replies, taken))  # type: ignore[arg-type]
    except (OutputError, WriteStopped) as e:
        raised = e
    (run,) = written  # one write for the three, each numbered by its request
    assert [inc.number for inc in run] == [1, 2, 3]
    return requester, replies, warnings, raised


def test_all_written_all_accepted() -> None:
    requester, replies, warnings, raised = _run(None)
    assert raised is None and warnings == []
    assert replies.sent + replies.batch == ["req-1", "req-2", "req-3"]
    assert requester.s.replies == 3 and not requester.waiting


@pytest.mark.parametrize("failure", [OutputError("cannot write standard output: No space "
                                                 "left on device", Exit.USAGE, 1),
                                     WriteStopped(1, cut=False)])
def test_the_replies_written_whole_are_accepted_before_the_run_ends(
        failure: BaseException) -> None:
    """Stopped once the line under way was finished, or failed after it: the reply
    written is accepted and its settlement sent; the others are not, their requests still
    wait (missing)."""
    requester, replies, warnings, raised = _run(failure)
    assert raised is failure
    assert (replies.sent, replies.batch) == (["req-1"], [])
    assert requester.s.replies == 1 and len(requester.s.round_trips) == 1
    assert sorted(requester.waiting) == [2, 3]
    assert warnings == []
    assert requester.s.given_back == 2  # (not accepted: the peer keeps them)


def test_a_reply_cut_short_is_said() -> None:
    requester, replies, warnings, raised = _run(WriteStopped(1, cut=True))
    assert isinstance(raised, WriteStopped)
    assert replies.sent == ["req-1"] and sorted(requester.waiting) == [2, 3]
    assert requester.s.given_back == 2  # the one cut short and the one after it
    assert warnings == [("stopped while the output took the reply to request 2: its line "
                         "is cut short there (not accepted: the peer keeps it)")]
    assert requester.s.send.warnings == warnings  # (in the summary too)


def test_pre_settled_replies_not_written_are_said_lost() -> None:
    requester, replies, warnings, raised = _run(WriteStopped(0, cut=True), presettled=True)
    assert isinstance(raised, WriteStopped)
    assert replies.sent == [] and requester.s.replies == 0
    assert requester.s.given_back == 0  # (pre-settled: nothing to give back)
    assert warnings == [
        ("stopped while the output took the reply to request 1: its line is cut short there "
         "(it was pre-settled: lost)"),
        ("2 pre-settled reply(ies) not written: lost (the responder settled them as it "
         "sent them): request(s) 2, 3")]


class _ReplyLink:
    """The reply link as the run stops taking replies: what is here, the credit taken
    back, and what was released."""

    ended = detaching = False

    def __init__(self, here: list[Incoming]) -> None:
        self.here = here
        self.credit = 11
        self.released: list[Any] = []
        self.flushed = False

    def take(self, limit: Any) -> list[Incoming]:
        out, self.here = self.here, []
        return out

    def flow(self, credit: int) -> None:
        self.credit = credit

    def settle_many(self, deliveries: list[Any], state: Any) -> None:
        assert isinstance(state, c.Released)
        self.released += deliveries

    def flush_settlements(self) -> None:
        self.flushed = True


def test_replies_here_when_the_run_takes_no_more_are_given_back() -> None:
    """Released (the peer keeps them) and counted; a pre-settled one cannot be: said lost."""
    warnings: list[str] = []
    requester = _Requester(None, RequestPlan(address="service"),  # type: ignore[arg-type]
                           lambda a: None, None, warnings.append)  # type: ignore[arg-type]
    late, presettled = _Delivery("req-1", False), _Delivery("req-2", True)
    link = _ReplyLink([Incoming(late, 0), Incoming(presettled, 0)])
    requester.replies = link  # type: ignore[assignment]
    requester._give_back()
    assert (link.credit, link.released, link.flushed) == (0, [late], True)
    assert requester.s.given_back == 1
    assert "given back 1" in requester.s.text()
    assert warnings == [("1 pre-settled reply(ies) came once the run took no more: not "
                         "written, lost (the responder settled them as it sent them)")]
