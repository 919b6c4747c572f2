"""A session we end before the peer's begin has answered ours: the answer was in flight
(Part 2 §2.5: a begin and an end cross on the wire) and arrives naming a channel we have
already ended. It maps the session, is not answered, and is no violation; after an end
with an error what the peer sends on the session until its end is discarded (§2.5.5,
DISCARDING). The endpoint closed the connection (amqp:invalid-field, "begin answers
unknown channel 0").

The peer is scripted: its frames are written by the test and injected into the client."""

from __future__ import annotations

from typing import Any

from amqpcli.codec import composites as c
from amqpcli.engine import (
    ConnectionClosed,
    LinkAttached,
    SessionBegun,
    SessionEnded,
    Violation,
)

from .harness import Pair, of

_ERROR = c.Error(condition=c.Symbol("amqp:internal-error"), description="gave up")


def _begin_answering(channel: int) -> Any:
    return c.Begin(remote_channel=channel, next_outgoing_id=0, incoming_window=10,
                   outgoing_window=10)


def _early_end(error: Any) -> tuple[Pair, Any]:
    """The client begins a session and ends it before the peer's begin comes; the peer
    (scripted) has not seen either yet."""
    p = Pair()
    s = p.client.begin()
    p.client.end(s, error)
    p.client.data_to_send()  # the begin and the end, on their way to the peer
    p.client_events += p.client.take_events()
    return p, s


def test_a_late_begin_after_our_end_with_an_error() -> None:
    p, s = _early_end(_ERROR)
    ch = s.channel["client"]
    sent_before_it_saw_our_end = [
        _begin_answering(ch),
        c.Attach(name="late", handle=0, role=False, source=c.Source(), target=c.Target(),
                 initial_delivery_count=0),
        c.Flow(next_incoming_id=0, incoming_window=10, next_outgoing_id=0,
               outgoing_window=10, handle=0, delivery_count=0, link_credit=0, echo=True),
    ]
    for body in sent_before_it_saw_our_end:
        evs = p.inject("client", body, 3)  # the peer's own channel for it
        assert not of(evs, Violation), evs
        assert p.client.data_to_send() == b"", body  # nothing answers them
    assert of(p.client_events, SessionBegun)[-1].side == "server"
    assert s.channel == {"client": ch, "server": 3} and s.state == "ending"
    assert not of(p.client_events, LinkAttached)  # the attach was discarded
    # the peer's end, once it saw ours, ends the session
    evs = p.inject("client", c.End(), 3)
    assert [e.side for e in of(evs, SessionEnded)] == ["server"]
    assert s.state == "ended" and s not in p.client.connection.sessions
    assert p.client.data_to_send() == b""
    assert not of(p.client_events, ConnectionClosed)
    assert p.client.connection.violations == 0


def test_a_late_begin_after_a_clean_end_is_read_and_not_answered() -> None:
    p, s = _early_end(None)
    ch = s.channel["client"]
    evs = p.inject("client", _begin_answering(ch), 0)
    assert [e.side for e in of(evs, SessionBegun)] == ["server"]
    evs = p.inject("client", c.Attach(name="late", handle=0, role=False, source=c.Source(),
                                      target=c.Target(), initial_delivery_count=0), 0)
    assert [e.side for e in of(evs, LinkAttached)] == ["server"]  # read: not DISCARDING
    assert p.client.data_to_send() == b""  # but not answered: our end is out
    p.inject("client", c.End(), 0)
    assert s.state == "ended"
    assert not of(p.client_events, ConnectionClosed)
    assert p.client.connection.violations == 0


def test_the_channel_is_not_begun_again_until_the_late_begin_came() -> None:
    # a new session on the same channel would make the late begin ambiguous
    p, s = _early_end(_ERROR)
    s2 = p.client.begin()
    assert s2.channel["client"] != s.channel["client"]
    p.inject("client", _begin_answering(s.channel["client"]), 0)
    p.inject("client", _begin_answering(s2.channel["client"]), 1)
    assert s.channel["server"] == 0 and s2.channel["server"] == 1
    assert s2.state == "mapped"
    assert p.client.connection.violations == 0
    p.inject("client", c.End(), 0)
    s3 = p.client.begin()  # once answered and ended, the channel is free again
    assert s3.channel["client"] == s.channel["client"]


def test_two_engines_and_an_observer_of_their_conversation() -> None:
    # the frames crossing for real: the peer answers the begin before it reads the end
    p = Pair()
    s = p.client.begin()
    begin = p.client.data_to_send()
    p.client.end(s, _ERROR)
    end = p.client.data_to_send()
    t = p.tick()
    p.wire.append(("client", begin + end, t))  # as a capture by the client would see it
    p.peer_events += p.peer.receive_data(begin, t)
    answer = p.peer.data_to_send()  # its begin, written before it read our end
    p.peer_events += p.peer.receive_data(end, t)
    answer += p.peer.data_to_send()  # and its end, answering ours
    t = p.tick()
    p.wire.append(("server", answer, t))
    p.client_events += p.client.receive_data(answer, t)
    p.pump()
    assert s.state == "ended" and s not in p.client.connection.sessions
    assert p.client.connection.violations == 0 and p.peer.connection.violations == 0
    assert not of(p.client_events + p.peer_events, ConnectionClosed)
    assert p.client.is_open and p.peer.is_open
    obs, evs = p.observe()
    assert not of(evs, Violation) and obs.connection.violations == 0
    assert [(e.side, e.error is not None) for e in of(evs, SessionEnded)] == [
        ("client", True), ("server", False)]
