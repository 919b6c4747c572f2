"""Credit stalls: a link without credit for the threshold or more counts only while its
sender had something to send: it said so with `available` (less what it sent since that
flow), or it sent the moment credit came back. A consumer that grants credit again while
its queue sits empty (the broker says available=0, or says nothing and sends nothing) has
no stall."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from tests.dissect.helpers import RECEIVER, SENDER, Script, dissect, write


def _flow(delivery_count: int, credit: int, available: int | None = None,
          handle: int = 0) -> c.Flow:
    return c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=0,
                  outgoing_window=1000, handle=handle, delivery_count=delivery_count,
                  link_credit=credit, available=available)


def _consumer(credit: int, start: float = 0.0) -> Script:
    """The client attaches a receiving link from queue `qr` and grants `credit`, from
    `start` seconds on."""
    s = Script(t=start).open()
    s.c(c.Attach(name="R", handle=0, role=RECEIVER, source=c.Source(address="qr"),
                 target=c.Target()))
    s.s(c.Attach(name="R", handle=0, role=SENDER, source=c.Source(address="qr"),
                 target=c.Target(), initial_delivery_count=0))
    return s.c(_flow(0, credit))


def _deliver(s: Script, did: int) -> Script:
    """The server sends delivery `did` on the consumer's link."""
    return s.s(c.Transfer(handle=0, delivery_id=did, delivery_tag=b"r%d" % did,
                          message_format=0), payload=Message(body="r").encode())


def _stalls(tmp_path: Path, s: Script, rtt: float = 0.0) -> list[tuple[float, float]]:
    res = dissect(write(tmp_path / "c.pcapng", s, rtt=rtt))
    (ls,) = res.dissector.conns[0].links
    return [(round(a - 1_700_000_000, 3), round(d, 3)) for a, d in ls.stalls]


@pytest.mark.parametrize("says", [0, None], ids=["available-0", "nothing"])
def test_consumer_granting_again_on_an_empty_queue_has_no_stall(
        tmp_path: Path, says: int | None) -> None:
    """The broker sends 2 messages, its credit used up, and says available=0 (or says
    nothing); the consumer grants 5 more 1.5 s later and nothing comes: no stall (it was
    counted as one: a grant on a link that had carried deliveries was taken for a sender
    that waited)."""
    s = _consumer(2).at(0.1)
    _deliver(s, 0)
    _deliver(s, 1)
    if says is not None:
        s.s(_flow(2, 0, available=says))
    s.c(c.Disposition(role=RECEIVER, first=0, last=1, settled=True, state=c.Accepted()))
    s.at(s.t + 1.5).c(_flow(2, 5))
    s.at(s.t + 0.3).close()
    assert _stalls(tmp_path, s) == []


def test_sender_that_sent_all_it_said_it_had_waits_no_more(tmp_path: Path) -> None:
    """A sender says available=2 without credit; credit 2 comes 1.5 s later and it sends
    both: one stall of 1.5 s. Then, without credit and with nothing left (its `available`
    used up by the 2 transfers), the connection closes 1 s later: no second stall."""
    s = Script().open().sender_link(credit=0)
    start = s.t - 0.001  # (the server's flow of no credit)
    s.c(_flow(0, 0, available=2))
    s.at(s.t + 1.5).s(_flow(0, 2))
    granted = s.t - 0.001
    s.transfer(0).transfer(1).dispose(0, c.Accepted(), last=1)
    s.at(s.t + 1.0).close()
    assert _stalls(tmp_path, s) == [(round(start, 3), round(granted - start, 3))]


def test_sender_with_more_than_it_sent_is_stalled_without_sending(tmp_path: Path) -> None:
    """A sender says available=5 with credit 2, and sends 2: 3 wait. Credit comes 1.5 s
    after the second transfer; the sender sends nothing then, yet it had said it had
    more: a stall."""
    s = Script().open().sender_link(credit=2)
    s.c(_flow(0, 2, available=5))
    s.transfer(0)
    s.transfer(1)
    start = s.t - 0.001
    s.dispose(0, c.Accepted(), last=1)
    s.at(start + 1.5).s(_flow(2, 2))
    s.at(s.t + 0.5).close()
    assert _stalls(tmp_path, s) == [(round(start, 3), 1.5)]


@pytest.mark.parametrize(("after", "stalled"), [(0.005, True), (0.5, False)])
def test_a_delivery_the_moment_credit_comes_back_shows_the_sender_waited(
        tmp_path: Path, after: float, stalled: bool) -> None:
    """Without a word of `available`: the broker sends at once when the consumer grants
    credit again 1.5 s after its last credit went (it was waiting: a stall); a message
    0.5 s after the grant came to an empty queue in the meantime (no stall)."""
    s = _consumer(1).at(0.1)
    _deliver(s, 0)
    start = s.t - 0.001
    s.at(start + 1.5).c(_flow(1, 1))
    _deliver(s.at(s.t - 0.001 + after), 1)
    s.at(s.t + 0.3).close()
    assert _stalls(tmp_path, s) == ([(round(start, 3), 1.5)] if stalled else [])


@pytest.mark.parametrize(("after", "stalled"), [(0.4, True), (0.8, False)])
def test_the_moment_credit_comes_back_is_twice_the_handshakes_round_trip(
        tmp_path: Path, after: float, stalled: bool) -> None:
    """The TCP handshake took 0.3 s (SYN to the client's ACK, as the capture saw it): a
    grant reaches the broker and its transfer comes back through the capture point no
    sooner. A message 0.4 s after the grant was sent the moment it came (a stall); one
    0.8 s after, more than twice the round trip, came to an empty queue (none)."""
    s = _consumer(1, start=1.0).at(1.1)  # (after the handshake)
    _deliver(s, 0)
    start = s.t - 0.001
    s.at(start + 1.5).c(_flow(1, 1))
    _deliver(s.at(s.t - 0.001 + after), 1)
    s.at(s.t + 0.3).close()
    assert _stalls(tmp_path, s, rtt=0.3) == ([(round(start, 3), 1.5)] if stalled else [])


def test_a_flow_that_leaves_available_out_does_not_say_it_again(tmp_path: Path) -> None:
    """A sender says available=2 with credit 2 and sends both; its next flow (credit 0)
    leaves `available` out, which says nothing of what it has: credit 1.5 s later, nothing
    sent, is no stall (the link's `available` still held the first flow's 2)."""
    s = Script().open().sender_link(credit=2)
    s.c(_flow(0, 2, available=2))
    s.transfer(0).transfer(1).dispose(0, c.Accepted(), last=1)
    s.c(_flow(2, 0))
    s.at(s.t + 1.5).s(_flow(2, 2))
    s.at(s.t + 0.3).close()
    assert _stalls(tmp_path, s) == []
