"""`amqp respond` stopped (Ctrl-C, SIGTERM), in-process: a stop that a wait let pass (as
`asyncio.wait_for` does before Python 3.12 when its awaitable completes as the
cancellation comes) still stops the run before the next requests are written, and what
the stop leaves is sorted: a request whose reply the peer accepted is accepted, the
others released, a pre-settled one lost."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.net.client import Incoming
from amqpcli.net.responding import RespondPlan, _Responder
from tests.net.requestlinks import FakeRequestLink as _Link


def _request(n: int, settled: bool = False) -> Incoming:
    return Incoming(SimpleNamespace(presettled=settled, sender_settled=False), n)


def _reply(state: Any) -> Any:
    return SimpleNamespace(done=state is not None, state=state, lost=False)


def test_a_stop_a_wait_let_pass_stops_the_run_before_the_next_write() -> None:
    written: list[Any] = []

    class Link(_Link):
        async def get(self, timeout: Any, idle: Any = None) -> Any:
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError:
                pass  # (the wait returns its result: the request came as the stop did)
            return _request(1)

    link = Link()

    class Client:
        async def open_receiver(self, address: str) -> Any:
            return link

        def offers(self, capability: str) -> bool:
            return False

    async def write(requests: Any, before_waiting: Any) -> None:
        written.extend(requests)

    r = _Responder(None, RespondPlan("service"), write, lambda text: None)  # type: ignore[arg-type]

    async def serve() -> None:
        await r._serve(Client())  # type: ignore[arg-type]

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(serve())
    assert written == []  # (a write the output may never take, not begun)


def test_what_a_stop_leaves_is_accepted_released_or_lost() -> None:
    warnings: list[str] = []
    r = _Responder(None, RespondPlan("service"), None, warnings.append)  # type: ignore[arg-type]
    link = _Link()
    r.requests = link  # type: ignore[assignment]
    r.s.requests = 4  # printed: 1 to 4; 5 taken, not printed
    for n, settled in ((1, False), (2, False), (3, True), (4, False), (5, True), (6, False)):
        r.in_hand[n] = _request(n, settled)
    r.replies_out[1] = _reply(c.Accepted())  # accepted as the stop came
    r.replies_out[2] = _reply(None)  # on its way
    r.replies_out[4] = _reply(c.Rejected())
    link.queue = [_request(0), _request(0, settled=True)]  # came, not taken
    r._stopped()
    assert link.flows == [0]  # (no more are taken)
    assert [(n, type(s).__name__) for n, s in link.settled] == [
        (1, "Accepted"), (2, "Released"), (4, "Released"), (6, "Released"), (0, "Released")]
    s = r.s
    assert (s.replied, s.released, s.lost, s.failed) == (1, 2, 1, 1)
    assert s.errors == [
        "request 3: stopped before its reply was accepted: lost (it came pre-settled)"]
    assert warnings == [("2 pre-settled request(s) lost: taken but not printed when the "
                         "run stopped (the peer settled them when it sent them)")]
    assert r.in_hand == {} and r.replies_out == {}


def test_a_stop_waits_for_the_outcomes_of_the_replies_on_their_way() -> None:
    """The stop comes while the answering waits for a reply's outcome: that wait ends,
    the reply's own does not, and the stop waits for it (a request whose reply the peer
    accepts is accepted, not released to be answered twice)."""
    from amqpcli.net.client import Pending
    from amqpcli.net.responding import _outcome

    delivery = SimpleNamespace(receiver_state=None)
    reply = Pending(delivery)
    r = _Responder(SimpleNamespace(connect_timeout=60), RespondPlan("service"),  # type: ignore[arg-type]
                   None, lambda text: None)  # type: ignore[arg-type]
    r.replies_out[1] = reply

    async def rounds() -> None:  # (the loop goes round: a wait begun meanwhile is waiting)
        for _ in range(10):
            await asyncio.sleep(0)

    async def accepted_later() -> None:
        await rounds()
        delivery.receiver_state = c.Accepted()
        reply._resolve()

    async def stopped() -> None:
        answering = asyncio.create_task(_outcome(reply, 60))
        await rounds()
        answering.cancel()
        with pytest.raises(asyncio.CancelledError):
            await answering
        peer = asyncio.create_task(accepted_later())
        await r._outcomes_on_their_way()
        await peer

    asyncio.run(stopped())
    assert reply.done and isinstance(reply.state, c.Accepted)


def test_an_outcome_already_here_is_taken_when_the_batchs_wait_is_spent() -> None:
    """The batch's earlier replies took its whole wait: a later reply the peer had
    accepted already is accepted, not held as 'no outcome' and answered twice."""
    from amqpcli.net.responding import _outcome

    accepted = SimpleNamespace(done=True, state=c.Accepted(), lost=False)
    for wait in (0.0, -3.0, 0.01):
        assert asyncio.run(_outcome(accepted, wait)) is None  # type: ignore[arg-type]


def test_pre_settled_requests_in_hand_when_the_connection_is_lost_are_lost() -> None:
    """They come pre-settled: the peer does not deliver them again. Said lost, and left
    out of the count of those it delivers again (and of the credit's shrinking)."""
    warnings: list[str] = []
    r = _Responder(None, RespondPlan("service"), None, warnings.append)  # type: ignore[arg-type]
    link = _Link()
    link.received = 3
    r.requests = link  # type: ignore[assignment]
    for n, settled in ((1, True), (2, True), (3, False)):
        r.in_hand[n] = _request(n, settled)
    r._lost()
    assert r.s.lost == 2
    assert r.s.errors == [
        f"request {n}: the connection was lost before its reply was accepted: lost (it came "
        "pre-settled)" for n in (1, 2)]
    assert warnings == [("1 request(s) not settled when the connection was lost: the peer "
                         "delivers them again; credit 1 from now on")]


@pytest.mark.parametrize("settled", [False, True], ids=["unsettled", "pre-settled"])
def test_the_request_a_stop_cut_short_is_settled_as_written(settled: bool) -> None:
    """Its cut line said what becomes of it: released (and counted so), or lost once
    (not said again among those taken and not printed)."""
    warnings: list[str] = []
    r = _Responder(None, RespondPlan("service"), None, warnings.append)  # type: ignore[arg-type]
    link = _Link()
    r.requests = link  # type: ignore[assignment]
    r.s.requests = 2  # 1 and 2 written; 3's line cut short
    for n in (1, 2, 3):
        r.in_hand[n] = _request(n, settled and n == 3)
    r.cut = 3
    r._stopped()
    s = r.s
    if settled:
        assert (s.released, s.lost) == (2, 1)
        assert warnings == [] and s.errors == []
    else:
        assert (s.released, s.lost) == (3, 0)
