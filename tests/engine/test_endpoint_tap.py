"""`Endpoint.set_tap`: a byte tap sees exactly what moves both ways, and costs nothing unset."""

from __future__ import annotations

from typing import Any

from amqpcli.engine import Endpoint, MessageReceived
from amqpcli.peer import PeerEndpoint
from tests.engine.harness import Pair


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, bytes, float | None]] = []

    def received(self, data: bytes, time: float) -> None:
        self.calls.append(("in", bytes(data), time))

    def sent(self, data: bytes) -> None:
        self.calls.append(("out", bytes(data), None))

    def bytes(self, way: str) -> bytes:
        return b"".join(d for w, d, _ in self.calls if w == way)


def _exchange(p: Pair) -> None:
    """Open, a sender with credit, three messages (one large enough to be split)."""
    link, _ = p.sender(credit=10)
    for body in (b"one", b"two", b"x" * 150_000):
        p.client.send(link, body, settled=False)
    p.pump()


def test_tap_sees_the_exact_bytes_both_ways() -> None:
    tap = Recorder()
    p = Pair(client={"tap": tap})
    _exchange(p)
    assert p.client.tap is tap
    assert tap.bytes("out") == b"".join(d for side, d, _ in p.wire if side == "client")
    assert tap.bytes("in") == b"".join(d for side, d, _ in p.wire if side == "server")
    assert tap.bytes("out").startswith(b"AMQP\x00\x01\x00\x00")  # from the protocol header on
    # Every chunk in order, each received one with the time it was given.
    received = [(d, t) for w, d, t in tap.calls if w == "in"]
    assert received == [(d, t) for side, d, t in p.wire if side == "server"]
    assert all(d for w, d, _ in tap.calls if w == "out")  # nothing empty is reported sent


def test_tapped_endpoint_behaves_as_an_untapped_one() -> None:
    plain, tapped = Pair(), Pair(client={"tap": Recorder()})
    _exchange(plain)
    _exchange(tapped)
    assert [(s, d) for s, d, _ in plain.wire] == [(s, d) for s, d, _ in tapped.wire]
    assert [type(e) for e in plain.client_events] == [type(e) for e in tapped.client_events]
    got = [e for e in tapped.peer_events if isinstance(e, MessageReceived)]
    assert [bytes(e.delivery.payload) for e in got] == [b"one", b"two", b"x" * 150_000]


def test_no_tap_leaves_the_class_methods() -> None:
    ep = Endpoint("client")
    assert ep.tap is None
    assert "receive_data" not in vars(ep) and "data_to_send" not in vars(ep)
    assert ep.receive_data.__func__ is Endpoint.receive_data  # type: ignore[attr-defined]
    ep.set_tap(Recorder())
    assert "receive_data" in vars(ep) and "data_to_send" in vars(ep)
    assert "receive_data" not in vars(Endpoint("client"))  # on that instance only
    ep.set_tap(None)
    assert "receive_data" not in vars(ep) and "data_to_send" not in vars(ep)
    assert ep.data_to_send.__func__ is Endpoint.data_to_send  # type: ignore[attr-defined]


def test_set_tap_later_and_remove() -> None:
    p = Pair(open=False)
    p.client.open()
    tap = Recorder()
    p.client.set_tap(tap)  # set before the first data_to_send: the header is seen
    p.pump()
    seen = len(tap.calls)
    assert tap.bytes("out").startswith(b"AMQP")
    p.client.set_tap(None)
    _exchange(p)
    assert len(tap.calls) == seen
    second = Recorder()
    p.client.set_tap(second)  # a new tap replaces the last
    s = p.client.begin()
    p.pump()
    assert s.channel
    assert second.calls and len(tap.calls) == seen


def test_tap_on_a_subclass_keeps_its_overrides() -> None:
    """`PeerEndpoint.data_to_send` runs `before_write` first; tapped, it still does."""
    tap = Recorder()
    peer = PeerEndpoint(tap=tap)
    writes: list[int] = []
    peer.before_write = lambda: writes.append(1)
    client = Endpoint("client")
    client.open()
    t = 0.0
    for _ in range(10):
        t += 0.001
        a = client.data_to_send()
        b = peer.data_to_send()
        if a:
            peer.receive_data(a, t)
        if b:
            client.receive_data(b, t)
        if not a and not b:
            break
    assert writes
    assert tap.bytes("in").startswith(b"AMQP") and tap.bytes("out").startswith(b"AMQP")
    assert client.is_open and peer.is_open


def test_received_bytes_come_with_their_time_sent_ones_at_the_engine_time() -> None:
    times: list[Any] = []

    class Clocked(Recorder):
        def sent(self, data: bytes) -> None:
            times.append(ep.now)

    ep = Endpoint("client", tap=Clocked())
    ep.set_time(12.5)
    ep.open()
    ep.data_to_send()
    assert times == [12.5]
    ep.receive_data(b"AMQP\x00\x01\x00\x00", 13.0)
    assert ep.tap.calls == [("in", b"AMQP\x00\x01\x00\x00", 13.0)]  # type: ignore[union-attr]


def test_a_frame_refused_for_its_size_is_an_error_item_of_the_tap_too() -> None:
    """The tap's reader holds to the endpoint's limits: the 8-byte header the endpoint
    refuses is a frame error on the watch too (a trace line), not a frame waited for."""
    from amqpcli.codec import composites as c
    from amqpcli.codec.frames import AMQP_HEADER, FrameError, encode_frame
    from amqpcli.engine import Violation
    from amqpcli.engine.frametap import FrameTap

    items: list[tuple[str, Any]] = []
    ep = Endpoint("client", max_frame_size=4096)
    ep.set_tap(FrameTap(ep, lambda side, item, t: items.append((side, item)),
                        incoming="in", outgoing="out"))
    ep.open()
    ep.data_to_send()
    evs = ep.receive_data(AMQP_HEADER + encode_frame(c.Open(container_id="p"))
                          + b"\x00\x00\x10\x01\x02\x00\x00\x00", 1.0)  # 4097 announced
    assert [e.kind for e in evs if isinstance(e, Violation)] == ["frame-too-large"]
    errors = [i for side, i in items if side == "in" and isinstance(i, FrameError)]
    assert len(errors) == 1 and errors[0].limit == 4096
    assert "at most 4096 (max-frame-size)" in str(errors[0])
