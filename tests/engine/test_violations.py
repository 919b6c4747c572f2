"""Each violation kind: detected with the side and frame number, and answered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.engine import (
    KINDS,
    ConnectionClosed,
    LinkAttached,
    LinkDetached,
    Observer,
    SessionBegun,
    SessionEnded,
    Violation,
)

from .harness import Pair, of

T = c.Transfer


def _one(p: Pair, evs: list[Any], kind: str, frame_no: int) -> Violation:
    vs = of(evs, Violation)
    assert [v.kind for v in vs] == [kind], vs
    v = vs[0]
    assert v.side == "client" and v.frame_no == frame_no
    assert str(v).startswith(f"frame {frame_no}: client broke the protocol ({kind})")
    return v


def _inject(p: Pair, kind: str, body: Any, channel: int = 0, payload: bytes = b"") -> Violation:
    n = p.peer.connection.frame_no + 1
    evs = p.inject("peer", body, channel, payload)
    return _one(p, evs, kind, n)


def _closed_with(p: Pair, condition: str) -> None:
    closed = [e for e in of(p.peer_events, ConnectionClosed) if e.side == "server"]
    assert closed and str(closed[-1].error.condition) == condition


def _ended_with(p: Pair, condition: str) -> None:
    ended = [e for e in of(p.peer_events, SessionEnded) if e.side == "server"]
    assert ended and str(ended[-1].error.condition) == condition


def _detached_with(p: Pair, condition: str) -> None:
    det = [e for e in of(p.peer_events, LinkDetached) if e.side == "server"]
    assert det and str(det[-1].error.condition) == condition and det[-1].closed


def _transfer(link: Any, did: int, tag: bytes = b"t", **kw: Any) -> Any:
    return T(handle=link.handle["client"], delivery_id=did, delivery_tag=tag, **kw)


def test_frame_too_large() -> None:
    p = Pair(peer={"max_frame_size": 512})
    link, _ = p.sender(credit=1)
    ch = link.session.channel["client"]
    _inject(p, "frame-too-large", _transfer(link, 0), ch, b"x" * 600)
    _closed_with(p, "amqp:connection:framing-error")


def test_second_open_is_out_of_order() -> None:
    p = Pair()
    _inject(p, "out-of-order", c.Open(container_id="again"))
    _closed_with(p, "amqp:illegal-state")


def test_begin_before_open_is_out_of_order() -> None:
    p = Pair(open=False)
    p.inject_bytes("peer", b"AMQP\x00\x01\x00\x00")
    n = p.peer.connection.frame_no + 1
    evs = p.inject("peer", c.Begin(next_outgoing_id=0, incoming_window=1, outgoing_window=1))
    _one(p, evs, "out-of-order", n)


def test_unknown_channel() -> None:
    p = Pair()
    _inject(p, "unknown-channel", c.Flow(incoming_window=1, next_outgoing_id=0,
                                         outgoing_window=1), channel=7)
    _closed_with(p, "amqp:invalid-field")


def test_channel_in_use_and_channel_max() -> None:
    p = Pair(peer={"channel_max": 3})
    p.client.begin()
    p.pump()
    _inject(p, "channel-in-use", c.Begin(next_outgoing_id=0, incoming_window=1,
                                         outgoing_window=1), channel=0)
    p = Pair(peer={"channel_max": 3})
    _inject(p, "channel-max-exceeded", c.Begin(next_outgoing_id=0, incoming_window=1,
                                               outgoing_window=1), channel=4)


def test_unknown_handle_ends_the_session() -> None:
    p = Pair()
    link, _ = p.sender(credit=1)
    ch = link.session.channel["client"]
    _inject(p, "unknown-handle", T(handle=9, delivery_id=0, delivery_tag=b"x"), ch, b"x")
    _ended_with(p, "amqp:session:unattached-handle")


def test_handle_in_use() -> None:
    p = Pair()
    link, _ = p.sender()
    ch = link.session.channel["client"]
    _inject(p, "handle-in-use", c.Attach(name="other", handle=0, role=False,
                                         source=c.Source(), target=c.Target()), ch)
    _ended_with(p, "amqp:session:handle-in-use")
    assert not [e for e in of(p.peer_events, ConnectionClosed) if e.side == "server"]


def test_handle_max_exceeded_closes_the_connection_with_framing_error() -> None:
    # Part 2 §2.7.2, begin's handle-max: "A peer that receives a handle outside the
    # supported range MUST close the connection with the framing-error error-code."
    # (There is no session error for it; handle-in-use is for a handle already attached.)
    p = Pair()
    s = p.client.begin()
    p.pump()
    p.peer.connection.channels["server"][0].handle_max["server"] = 1  # as if it said so
    _inject(p, "handle-max-exceeded", c.Attach(name="x", handle=5, role=False,
                                               source=c.Source(), target=c.Target()),
            s.channel["client"])
    _closed_with(p, "amqp:connection:framing-error")
    assert not [e for e in of(p.peer_events, SessionEnded) if e.side == "server"]


def test_a_client_that_set_handle_max_closes_on_a_handle_above_it() -> None:
    # the same from the other role, with handle-max set in the client's own begin
    p = Pair()
    s = p.client.begin(handle_max=1)
    p.pump()
    ps = p.peer_session(s)
    assert ps.handle_max["client"] == 1
    evs = p.inject("client", c.Attach(name="x", handle=2, role=True, source=c.Source(),
                                      target=c.Target()), ps.channel["server"])
    assert [v.kind for v in of(evs, Violation)] == ["handle-max-exceeded"]
    closed = [e for e in of(p.client_events, ConnectionClosed) if e.side == "client"]
    assert closed and str(closed[-1].error.condition) == "amqp:connection:framing-error"
    assert "handle 2 > handle-max 1" in closed[-1].error.description


def test_transfer_beyond_credit_detaches_the_link() -> None:
    p = Pair()
    link, _ = p.sender(credit=0)
    v = _inject(p, "transfer-beyond-credit", _transfer(link, 0), link.session.channel["client"],
                b"x")
    assert v.link is not None and v.link.name == "out"
    _detached_with(p, "amqp:link:transfer-limit-exceeded")


def test_a_settled_first_transfer_in_mode_unsettled() -> None:
    """Part 2 §2.8.2: a sender in mode unsettled sends every delivery unsettled first;
    one sent settled is noted (nothing is ended for it), the next unsettled one is not."""
    p = Pair()
    link, _ = p.sender(credit=2, snd_settle_mode=0)
    ch = link.session.channel["client"]
    v = _inject(p, "settle-mode", _transfer(link, 0, b"a", settled=True), ch, b"x")
    assert v.side == "client" and v.link is not None and v.link.name == "out"
    assert "delivery 0 sent settled on 'out'" in v.detail
    evs = p.inject("peer", _transfer(link, 1, b"b"), ch, b"y")
    assert not of(evs, Violation)
    # in mode mixed (the default) either is fine
    q = Pair()
    mixed, _ = q.sender(credit=1)
    evs = q.inject("peer", _transfer(mixed, 0, b"a", settled=True),
                   mixed.session.channel["client"], b"x")
    assert not of(evs, Violation)


def test_message_size_exceeded() -> None:
    p = Pair(peer={"link_policy": "manual"})
    s = p.client.begin()
    link = p.client.attach_sender(s, "small", c.Source(), c.Target(address="q"))
    p.pump()
    plink = p.peer_link(link)
    p.peer.accept_link(plink, max_message_size=10)
    p.pump()
    p.peer.flow(plink, 1)
    p.pump()
    _inject(p, "message-size-exceeded", _transfer(link, 0), s.channel["client"], b"x" * 11)
    _detached_with(p, "amqp:link:message-size-exceeded")


def test_transfer_from_the_receiver() -> None:
    p = Pair()
    link, _ = p.receiver(credit=1)
    _inject(p, "wrong-role", _transfer(link, 0), link.session.channel["client"], b"x")


def test_missing_delivery_id_on_first_transfer() -> None:
    p = Pair()
    link, _ = p.sender(credit=1)
    _inject(p, "missing-field", T(handle=0, delivery_tag=b"x"),
            link.session.channel["client"], b"x")


def test_delivery_id_in_use_and_transfer_mismatch() -> None:
    p = Pair()
    link, _ = p.sender(credit=5)
    ch = link.session.channel["client"]
    assert not of(p.inject("peer", _transfer(link, 0, b"a"), ch, b"x"), Violation)
    _inject(p, "delivery-id-in-use", _transfer(link, 0, b"b"), ch, b"x")
    p = Pair()
    link, _ = p.sender(credit=5)
    ch = link.session.channel["client"]
    p.inject("peer", _transfer(link, 0, b"a", more=True), ch, b"x")
    _inject(p, "transfer-mismatch", _transfer(link, 1, b"a"), ch, b"y")


def test_transfer_beyond_session_window() -> None:
    # An endpoint re-opens its window as it fills, so the check is shown on an observer.
    obs = Observer()
    for side, h in (("client", b"AMQP\x00\x01\x00\x00"), ("server", b"AMQP\x00\x01\x00\x00")):
        obs.feed_bytes(side, h, 0.0)
    feed = [
        ("client", c.Open(container_id="a"), 0),
        ("server", c.Open(container_id="b"), 0),
        ("client", c.Begin(next_outgoing_id=0, incoming_window=10, outgoing_window=10), 0),
        ("server", c.Begin(remote_channel=0, next_outgoing_id=0, incoming_window=1,
                           outgoing_window=10), 0),
        ("client", c.Attach(name="l", handle=0, role=False, source=c.Source(),
                            target=c.Target(), initial_delivery_count=0), 0),
        ("server", c.Attach(name="l", handle=0, role=True, source=c.Source(),
                            target=c.Target()), 0),
        ("server", c.Flow(next_incoming_id=0, incoming_window=1, next_outgoing_id=0,
                          outgoing_window=10, handle=0, delivery_count=0, link_credit=5), 0),
        ("client", T(handle=0, delivery_id=0, delivery_tag=b"a", settled=True), 0),
        ("client", T(handle=0, delivery_id=1, delivery_tag=b"b", settled=True), 0),
    ]
    evs: list[Any] = []
    for side, body, ch in feed:
        evs += obs.feed_bytes(side, encode_frame(body, ch, b"p" if body.NAME == "transfer"
                                                 else b""), 1.0)
    vs = of(evs, Violation)
    assert [(v.kind, v.side, v.frame_no) for v in vs] == [("transfer-beyond-window", "client", 9)]
    assert vs[0].scope == "session"


def test_disposition_for_unknown_delivery() -> None:
    p = Pair()
    link, _ = p.receiver()
    _inject(p, "unknown-delivery", c.Disposition(role=True, first=42, settled=True),
            link.session.channel["client"])


def test_settled_twice() -> None:
    p = Pair()
    link, plink = p.receiver(credit=2)
    p.peer.send(plink, b"x")
    p.pump()
    ch = link.session.channel["client"]
    p.inject("peer", c.Disposition(role=True, first=0, settled=False, state=c.Accepted()), ch)
    p.inject("peer", c.Disposition(role=True, first=0, settled=True, state=c.Accepted()), ch)
    # the delivery is gone; settling it again is a second settlement by the same side
    _inject(p, "already-settled", c.Disposition(role=True, first=0, settled=True), ch)


def test_outcome_changed_and_conflicting_outcome() -> None:
    p = Pair()
    link, plink = p.receiver(credit=2)
    p.peer.send(plink, b"x")
    p.pump()
    ch = link.session.channel["client"]
    p.inject("peer", c.Disposition(role=True, first=0, state=c.Accepted()), ch)
    _inject(p, "outcome-changed", c.Disposition(role=True, first=0, state=c.Released()), ch)
    # the receiver (client) said released last; the sender (peer) settles as accepted
    n = p.peer.connection.frame_no + 1
    p.peer.dispose(list(plink.live.values()), c.Accepted(), settled=True)
    vs = of(p.peer.take_events(), Violation)
    assert [(v.kind, v.side, v.frame_no) for v in vs] == [("conflicting-outcome", "server", n)]


def test_receiver_settling_first_in_mode_second() -> None:
    p = Pair()
    link, plink = p.receiver(credit=1, rcv_settle_mode=1)
    p.peer.send(plink, b"x")
    p.pump()
    _inject(p, "early-settle", c.Disposition(role=True, first=0, settled=True,
                                             state=c.Accepted()),
            link.session.channel["client"])


def test_garbage_frame_is_a_framing_error() -> None:
    p = Pair()
    n = p.peer.connection.frame_no
    evs = p.inject_bytes("peer", encode_frame(c.Source(address="not a performative")))
    vs = of(evs, Violation)
    assert vs and vs[0].kind == "framing-error" and vs[0].side == "client"
    assert vs[0].frame_no == n + 1  # a frame that does not decode is still a frame
    _closed_with(p, "amqp:connection:framing-error")


# --- a session ended with an error: what the peer sent before it saw our end ---------------


def _dup_ended(peer: dict[str, Any] | None = None) -> tuple[Pair, Any, int]:
    """A client sender 'dup', answered, then a second attach of that name on its session:
    the peer ends the session. Returns the pair, the client's link and the client's
    channel. (Before the answer a second attach waits for it: test_reattach_pipelined.)"""
    p = Pair(peer=peer)
    link, plink = p.sender("dup")
    if "server" not in plink.attach:  # a manual peer
        p.peer.accept_link(plink)
        p.pump()
    ch = link.session.channel["client"]
    v = _inject(p, "link-name-in-use", c.Attach(name="dup", handle=1, role=False,
                                                source=c.Source(), target=c.Target()), ch)
    assert v.detail == "link name 'dup' is already attached on this session"
    return p, link, ch


def test_link_name_in_use_ends_the_session_with_not_allowed() -> None:
    # Part 2 §2.6.1: names are unique per direction; the attach's handle (1) is free, so
    # handle-in-use (an attach on a handle in use) is not the condition
    p, _, _ = _dup_ended()
    ended = [e for e in of(p.peer_events, SessionEnded) if e.side == "server"]
    assert str(ended[-1].error.condition) == "amqp:not-allowed"
    assert str(ended[-1].error.description) == (
        "link name 'dup' is already attached on this session")


def test_frames_on_a_session_ended_with_an_error_are_discarded_until_its_end() -> None:
    # Part 2 §2.5.5 DISCARDING. The peer answers every attach it hears of, as `amqp serve`
    # does: a frame read after the end would get an attach on the ended session.
    p, link, ch = _dup_ended(peer={"link_policy": "manual"})
    p.peer.data_to_send()
    n = p.peer.connection.frame_no
    late = [
        c.Attach(name="other", handle=2, role=False, source=c.Source(), target=c.Target(),
                 initial_delivery_count=0),
        c.Flow(next_incoming_id=0, incoming_window=10, next_outgoing_id=0, outgoing_window=10,
               handle=0, delivery_count=0, link_credit=0, echo=True),
        _transfer(link, 0),  # beyond credit, on a link the end detached
        c.Disposition(role=False, first=7, settled=True),  # no such delivery
        c.Detach(handle=9, closed=True),  # no such handle
    ]
    for body in late:
        evs = p.inject("peer", body, ch, b"x" if body.NAME == "transfer" else b"")
        assert evs == [], body
        for e in of(evs, LinkAttached):
            p.peer.accept_link(e.link)
        assert p.peer.data_to_send() == b""
    assert p.peer.connection.frame_no == n + len(late)  # counted as frames all the same
    assert p.peer.connection.violations == 1  # the duplicate name's only
    # the client's end frees the channel: a new session may begin on it
    evs = p.inject("peer", c.End(), ch)
    assert [e.side for e in of(evs, SessionEnded)] == ["client"]
    assert p.peer.data_to_send() == b""
    p.inject("peer", c.Begin(next_outgoing_id=0, incoming_window=10, outgoing_window=10), ch)
    assert of(p.peer_events, SessionBegun)[-1].side == "server"
    assert not of(p.peer_events, ConnectionClosed)


def test_after_a_clean_end_frames_are_read_and_not_answered() -> None:
    # Without an error our end is not DISCARDING: the peer's frames are read (a late
    # disposition still settles), but nothing goes out on the session, whoever asks.
    p = Pair(peer={"link_policy": "manual"})
    s = p.client.begin()
    p.pump()
    ps = p.peer_session(s)
    p.peer.end(ps)
    p.peer.data_to_send()
    evs = p.inject("peer", c.Attach(name="late", handle=0, role=False, source=c.Source(),
                                    target=c.Target(), initial_delivery_count=0),
                   s.channel["client"])
    (att,) = of(evs, LinkAttached)
    p.peer.accept_link(att.link)
    p.peer.flow(att.link, 10)  # the link went with the session: nothing to grant
    assert p.peer.data_to_send() == b""
    assert not of(p.peer_events, ConnectionClosed)


def test_descriptions_show_plain_numbers() -> None:
    # the handle and delivery-ids come decoded as the codec's UInt: the text a peer reads
    # (and a log line) says 7, not UInt(7)
    p = Pair()
    link, _ = p.sender(credit=1)
    ch = link.session.channel["client"]
    v = _inject(p, "unknown-delivery", c.Disposition(role=True, first=40, last=41), ch)
    assert v.detail == "disposition for unknown delivery 40..41"
    v = _inject(p, "unknown-handle", T(handle=7, delivery_id=3, delivery_tag=b"x"), ch, b"x")
    assert v.detail == "transfer on handle 7"
    p.pump()
    _, evs = p.observe()  # the end as it went out on the wire
    (ended,) = [e for e in of(evs, SessionEnded) if e.side == "server"]
    assert ended.error.description == "transfer on handle 7"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_is_exercised(kind: str) -> None:
    here = Path(__file__).parent
    src = "".join(f.read_text() for f in sorted(here.glob("test_*.py")) if f.name != Path(
        __file__).name) + Path(__file__).read_text().split("def test_every_kind")[0]
    # a test names the kind where it expects the violation
    assert f'"{kind}",' in src or f'"{kind}")' in src or f'== "{kind}"' in src
