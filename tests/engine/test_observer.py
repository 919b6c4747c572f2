"""The observer fed both directions of a recorded client↔peer conversation builds the
same picture as the two endpoints did."""

from __future__ import annotations

from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.engine import (
    DeliverySettled,
    LinkRefused,
    MessageReceived,
    TerminusMismatch,
    Violation,
)
from amqpcli.engine.delivery import Delivery, state_name

from .harness import Pair, of, plain


def _key(d: Delivery) -> tuple[Any, ...]:
    steps = tuple((e.kind, e.side, e.settled, e.more, e.size, state_name(e.state))
                  for e in d.timeline)
    return (d.link.name, d.delivery_id, d.tag, d.phase, d.outcome, d.settled_by,
            d.sender, d.frames, d.size, steps)


def _settled(events: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(_key(e.delivery) for e in of(events, DeliverySettled))


def _conversation() -> Pair:
    from amqpcli.engine.sasl import SaslConfig

    p = Pair(client={"sasl": plain(), "max_frame_size": 4096},
             peer={"sasl": SaslConfig(), "max_frame_size": 600, "link_policy": "manual"})
    s = p.client.begin()
    # a sender with multi-frame messages and every outcome
    out = p.client.attach_sender(s, "out", c.Source(), c.Target(address="q"))
    p.pump()
    pout = p.peer_link(out)
    p.peer.accept_link(pout)
    p.pump()
    p.peer.flow(pout, 20)
    p.pump()
    ds = [p.client.send(out, bytes([i]) * (100 + 700 * (i % 2))) for i in range(6)]
    p.pump()
    got = [e.delivery for e in of(p.peer_events, MessageReceived)]
    p.peer.accept(got[0:2])
    p.peer.reject(got[2], c.Error(condition=Symbol("amqp:internal-error")))
    p.peer.release(got[3])
    p.peer.modify(got[4], delivery_failed=True)
    p.pump()
    # an aborted one
    a = p.client.start_delivery(out)
    p.client.send_more(a, b"z" * 1500)
    p.pump()
    p.client.abort(a)
    p.pump()
    # a receiver with drain, mode second and a presettled message
    inn = p.client.attach_receiver(s, "in", c.Source(address="q"), c.Target(),
                                   rcv_settle_mode=1)
    p.pump()
    pin = p.peer_link(inn)
    p.peer.accept_link(pin, rcv_settle_mode=1)
    p.pump()
    p.client.flow(inn, 5)
    p.pump()
    p.peer.send(pin, b"one")
    p.peer.send(pin, b"two", settled=True)
    p.pump()
    first = [e.delivery for e in of(p.client_events, MessageReceived) if e.delivery.link is inn]
    p.client.accept(first[0], settled=False)
    p.pump()
    p.peer.settle(list(pin.live.values()))
    p.pump()
    p.client.drain(inn)
    p.pump()
    # a refused link and a mismatched one
    bad = p.client.attach_receiver(s, "bad", c.Source(address="nope"), c.Target())
    p.pump()
    p.peer.refuse_link(p.peer_link(bad), c.Error(condition=Symbol("amqp:not-found")))
    sub = p.client.attach_receiver(s, "sub", c.Source(address="t", durable=2), c.Target())
    p.pump()
    p.peer.accept_link(p.peer_link(sub), source=c.Source(address="t", durable=0))
    p.pump()
    assert ds[5].phase == "unsettled"  # left open on purpose
    return p


def test_observer_agrees_with_both_endpoints() -> None:
    p = _conversation()
    obs, events = p.observe()
    assert not of(events, Violation)
    assert not of(p.client_events + p.peer_events, Violation)
    o = _settled(events)
    assert o == _settled(p.client_events) == _settled(p.peer_events)
    assert len(o) == 8  # 5 disposed on "out", 1 aborted, 2 on "in"
    # the refused link and the mismatch were seen the same way
    assert [e.link.name for e in of(events, LinkRefused)] == ["bad"]
    mm = of(events, TerminusMismatch)
    assert [d.field for d in mm[0].differences] == ["source.durable"]
    # live state: the open delivery is in the unsettled maps everywhere
    oc = obs.connection
    olink = next(ln for s in oc.sessions for ln in s.links.values() if ln.name == "out")
    clink = next(ln for s in p.client.connection.sessions for ln in s.links.values()
                 if ln.name == "out")
    plink = next(ln for s in p.peer.connection.sessions for ln in s.links.values()
                 if ln.name == "out")
    for side in ("client", "server"):
        assert list(olink.unsettled[side]) == list(clink.unsettled[side]) == list(
            plink.unsettled[side]) == [b"6"]
    assert (olink.link_credit, olink.delivery_count) == (
        clink.link_credit, clink.delivery_count) == (plink.link_credit, plink.delivery_count)
    assert olink.outcomes == clink.outcomes == plink.outcomes
    # timelines are in time order
    for e in of(events, DeliverySettled):
        times = [x.time for x in e.delivery.timeline]
        assert times == sorted(times)


def test_observer_drops_settled_deliveries_and_keeps_counters() -> None:
    p = Pair()
    link, _ = p.sender(credit=100, snd_settle_mode=1)
    for i in range(50):
        p.client.send(link, b"%d" % i)
    p.pump()
    obs, events = p.observe()
    olink = next(ln for s in obs.connection.sessions for ln in s.links.values())
    assert olink.deliveries == 50 and olink.settled_count == 50
    assert not olink.live and not any(s.inflight["client"] for s in obs.connection.sessions)
    assert len(of(events, DeliverySettled)) == 50


def test_observer_without_payloads() -> None:
    p = Pair()
    link, _ = p.sender(credit=1, snd_settle_mode=1)
    p.client.send(link, b"secret payload")
    p.pump()
    from amqpcli.engine import Observer

    obs = Observer(keep_payload=False)
    evs: list[Any] = []
    for side, data, t in p.wire:
        evs += obs.feed_bytes(side, data, t)
    d = of(evs, DeliverySettled)[0].delivery
    assert d.size == len(b"secret payload") and d.payload == b""


def test_midstream_capture() -> None:
    from amqpcli.codec.frames import Frame, FrameReader
    from amqpcli.engine import Observer

    p = Pair()
    link, _plink = p.sender(credit=50)
    _rlink, rplink = p.receiver(credit=50)
    early = [p.client.send(link, b"early %d" % i) for i in range(3)]
    p.pump()
    p.peer.send(rplink, b"early from the peer")
    p.pump()
    late = [p.client.send(link, b"late %d" % i) for i in range(4)]
    p.pump()
    got = [e.delivery for e in of(p.peer_events, MessageReceived)]
    p.peer.accept(got)  # early and late, in one disposition
    mine = [e.delivery for e in of(p.client_events, MessageReceived)]
    p.client.accept(mine)
    p.pump()
    # every frame of the conversation, in wire order; cut after the early transfers
    readers = {"client": FrameReader(), "server": FrameReader()}
    items = [(side, it, t) for side, data, t in p.wire for it in readers[side].feed(data)
             if isinstance(it, Frame)]
    cut = next(i for i, (side, it, _) in enumerate(items)
               if it.body is not None and it.body.NAME == "transfer"
               and it.payload == b"late 0")
    obs = Observer(midstream=True)
    events: list[Any] = []
    for side, it, t in items[cut:]:
        events += obs.feed(side, it, t)
    assert not of(events, Violation)
    settled = {e.delivery.tag: e.delivery for e in of(events, DeliverySettled)}
    assert sorted(settled) == sorted(d.tag for d in late)
    assert all(d.outcome == "accepted" and d.settled_by == "server" for d in settled.values())
    assert early[0].outcome == "accepted"
    # the same cut without midstream is full of complaints
    strict = Observer()
    sevents: list[Any] = []
    for side, it, t in items[cut:]:
        sevents += strict.feed(side, it, t)
    assert of(sevents, Violation)


def test_observer_sees_an_idle_timeout_broken() -> None:
    from amqpcli.codec.frames import encode_frame
    from amqpcli.engine import Heartbeat

    p = Pair(client={"idle_timeout": 20.0})  # advertised: 10 s
    obs, _ = p.observe()
    t = p.t
    # the server sends heartbeats within the client's 10 s: fine
    evs = obs.feed_bytes("server", encode_frame(None), t + 9.0)
    assert of(evs, Heartbeat) and not of(evs, Violation)
    # silent for 12 s: later than it was asked, within the 20 s threshold the 10 s stand
    # for (Part 2 §2.4.5: the value sent is half the threshold): nothing broken
    evs = obs.feed_bytes("server", encode_frame(None), t + 21.0)
    assert not of(evs, Violation)
    # then silent for 22 s: past the threshold
    evs = obs.feed_bytes("server", encode_frame(None), t + 43.0)
    v = of(evs, Violation)
    assert [(x.kind, x.side) for x in v] == [("idle-timeout", "server")]
    assert v[0].detail == ("server was silent for 22.000 s; client's idle-timeout of 10 s "
                           "stands for a 20 s threshold")
    # the client, which declared nothing for the server to enforce, may be silent
    assert not of(obs.feed_bytes("client", encode_frame(None), t + 100.0), Violation)


def test_a_silence_is_judged_at_the_close_or_drop_it_caused() -> None:
    """The usual end of a broken idle-timeout: the side that timed out closes (or drops
    the connection), and the silent side never sends again. Its silence up to that close
    is the violation, once: not again at its own answer."""
    from amqpcli.codec.frames import encode_frame

    def run(end: str) -> list[Any]:
        p = Pair(client={"idle_timeout": 20.0})  # advertised: 10 s, a 20 s threshold
        obs, _ = p.observe()
        t = p.t
        evs = obs.feed_bytes("server", encode_frame(None), t + 9.0)  # a heartbeat in time
        if end == "close":
            close = c.Close(error=c.Error(condition=Symbol("amqp:resource-limit-exceeded")))
            evs += obs.feed_bytes("client", encode_frame(close), t + 30.0)
            evs += obs.feed_bytes("server", encode_frame(c.Close()), t + 30.5)
        else:
            evs += obs.transport_closed("client", t + 30.0, end)
            evs += obs.transport_closed("server", t + 30.1, end)
        return of(evs, Violation)

    for end in ("close", "fin", "rst"):
        v = run(end)
        assert [(x.kind, x.side) for x in v] == [("idle-timeout", "server")], end
        assert v[0].detail.startswith("server was silent for 21.000 s;"), end
    # the end of a capture is no evidence of anything
    assert run("end") == []


def test_read_gives_each_item_with_the_events_feed_bytes_gives() -> None:
    from amqpcli.codec.frames import FrameReader
    from amqpcli.engine import Observer

    p = _conversation()
    by_bytes, by_read = Observer(), Observer()
    events: list[Any] = []
    paired: list[Any] = []
    items: list[Any] = []
    for side, data, t in p.wire:
        events += by_bytes.feed_bytes(side, data, t)
        for item, evs in by_read.read(side, data, t):
            items.append(item)
            paired += evs
    assert [type(e) for e in paired] == [type(e) for e in events]
    assert _settled(paired) == _settled(events)
    readers = {"client": FrameReader(), "server": FrameReader()}
    plain_items = [it for side, data, _ in p.wire for it in readers[side].feed(data)]
    assert [type(i) for i in items] == [type(i) for i in plain_items]
    assert len(items) > 10 and paired


def test_read_tail_reports_a_frame_cut_short_once() -> None:
    """The end of a stream inside a frame whose start is sound cut it short: a
    `CutShort`, no frame error (as pcap-dump judges it)."""
    from amqpcli.codec.frames import encode_frame
    from amqpcli.codec.framestart import CutShort
    from amqpcli.engine import Observer

    obs = Observer()
    data = encode_frame(c.Open(container_id="x"))
    obs.read("client", b"AMQP\x00\x01\x00\x00", 1.0)
    assert obs.read("client", data[:-3], 1.0) == []  # incomplete: nothing yet
    tail = obs.read_tail("client", 2.0)
    assert tail == [(CutShort(len(data) - 3, len(data), False, None), [])]
    assert obs.read_tail("client", 2.0) == []
    assert obs.connection.violations == 0
    assert obs.transport_closed("client", 2.0)  # the end is still reported


def test_read_tail_of_bytes_that_cannot_start_a_frame_is_a_frame_error() -> None:
    from amqpcli.codec.frames import FrameError
    from amqpcli.engine import Observer, Violation

    obs = Observer()
    obs.read("client", b"AMQP\x00\x01\x00\x00", 1.0)
    obs.read("client", b"\x00\x00\x01\x00\x00\x00\x00\x00" + b"\xee" * 20, 1.0)  # doff 0
    [(item, events)] = obs.read_tail("client", 2.0)
    assert isinstance(item, FrameError)
    assert [e.kind for e in events if isinstance(e, Violation)] == ["framing-error"]


def test_a_cut_frame_larger_than_its_receiver_takes_is_a_violation() -> None:
    from amqpcli.codec.frames import encode_frame, encode_protocol_header
    from amqpcli.codec.framestart import CutShort
    from amqpcli.engine import Observer, Violation

    obs = Observer()
    for side in ("client", "server"):
        obs.read(side, encode_protocol_header("amqp") + encode_frame(
            c.Open(container_id=side, max_frame_size=512)), 1.0)
    big = encode_frame(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t"), 0,
                       b"\x00Sw\xb0" + b"\0" * 1000)
    obs.read("client", big[:300], 1.0)
    [(item, events)] = obs.read_tail("client", 2.0)
    assert isinstance(item, CutShort)
    [v] = [e for e in events if isinstance(e, Violation)]
    assert (v.kind, v.detail) == ("frame-too-large",
                                  f"{len(big)}-byte frame > max-frame-size 512")


def test_observer_without_updates_differs_only_by_them() -> None:
    """`Observer(updates=False)`: the same events but DeliveryUpdated, the same model."""
    from amqpcli.engine import DeliveryUpdated, Observer

    p = _conversation()
    full, events = p.observe()
    lean = Observer(updates=False)
    lean_events: list[Any] = []
    for side, data, t in p.wire:
        lean_events += lean.feed_bytes(side, data, t)
    assert of(events, DeliveryUpdated) and not of(lean_events, DeliveryUpdated)
    assert [type(e) for e in lean_events] == [
        type(e) for e in events if type(e) is not DeliveryUpdated]
    assert _settled(lean_events) == _settled(events)
    lo, fo = lean.connection, full.connection
    assert (lo.frame_no, lo.violations, lo.transactions) == (
        fo.frame_no, fo.violations, fo.transactions)


def test_one_frame_deliveries_have_every_slot_set() -> None:
    """The one-frame path builds its Delivery without __init__: every slot is set, to
    what the general path would leave."""
    p = Pair()
    link, _ = p.sender(credit=10)
    p.client.send(link, b"unsettled")
    p.pump()
    link2, _ = p.sender("out2", credit=10, snd_settle_mode=1)
    p.client.send(link2, b"settled")
    p.pump()
    _obs, events = p.observe()
    from amqpcli.engine import DeliveryStarted

    ds = [e.delivery for e in of(events, DeliveryStarted)]
    assert len(ds) == 2
    for d in ds:
        for name in Delivery.__slots__:
            if name != "__weakref__":
                assert hasattr(d, name), name
        assert d.frames == 1 and d.payload_ready and not d.resumed and not d.aborted
        assert d.txn_id is None and d.rcv_settle_mode is None and d.sender_state is None
    un, st = ds
    assert (un.phase, un.presettled, un.settled_by, un.settled_time) == (
        "unsettled", False, None, None)
    assert un.payload == b"" or un.size == len(un.payload)
    assert (st.phase, st.presettled, st.settled_by, st.outcome) == (
        "settled", True, "client", "settled")
    assert st.settled_time == st.first_time


def test_observer_without_settled_events() -> None:
    """`Observer(updates=False, settled=False)`: neither event, the same model."""
    from amqpcli.engine import DeliveryUpdated, Observer

    p = _conversation()
    full, events = p.observe()
    lean = Observer(updates=False, settled=False)
    lean_events: list[Any] = []
    for side, data, t in p.wire:
        lean_events += lean.feed_bytes(side, data, t)
    assert not of(lean_events, DeliverySettled) and not of(lean_events, DeliveryUpdated)
    assert [type(e) for e in lean_events] == [
        type(e) for e in events if type(e) not in (DeliveryUpdated, DeliverySettled)]

    def links(o: Observer) -> list[tuple[Any, ...]]:
        return sorted((ln.name, ln.deliveries, ln.settled_count, sorted(ln.outcomes.items()),
                       ln.link_credit, ln.delivery_count)
                      for s in o.connection.sessions for ln in s.links.values())

    assert links(lean) == links(full)
