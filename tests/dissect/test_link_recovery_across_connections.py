"""Link recovery across connections (Part 2 §2.6.13): a link is known by its name and its
ends' container-ids. A connection that ends with a link attached leaves its unsettled
deliveries with the ends; a later connection between the same containers that attaches
the link again with an unsettled map resumes them. The first connection's record of
such a delivery stands (abandoned: its connection closed); the resumed one's record, on
the new connection, has its whole size, its frames and its latency from the first
sending, and says where it came from. Without a resume there is no second record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import UInt, ULong
from amqpcli.engine.shelf import LinkShelf
from amqpcli.render.deliveries import delivery_json, delivery_line
from tests.dissect.helpers import (
    C2S,
    RECEIVER,
    S2C,
    SENDER,
    Script,
    dissect,
    write_connections,
)

BODY = b"a message resumed on a new connection"
WHOLE = Message(body=BODY).encode()
CUT = 20
KEPT = c.Received(section_number=UInt(0), section_offset=ULong(CUT))


def _attach(name: str, role: bool, unsettled: Any = None) -> c.Attach:
    return c.Attach(name=name, handle=0, role=role, snd_settle_mode=0, rcv_settle_mode=0,
                    source=c.Source(address="client"), target=c.Target(address="q1"),
                    unsettled=unsettled, initial_delivery_count=None if role else 0)


def _credit(s: Script, delivery_count: int = 0) -> Script:
    return s.s(c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=0,
                      outgoing_window=1000, handle=0, delivery_count=delivery_count,
                      link_credit=10))


def _first(*, detach_closed: bool | None = None) -> Script:
    """L attached, CUT bytes of t0 sent, then the connection closes (after detaching L
    with `detach_closed`, if given)."""
    s = Script().open()
    s.c(_attach("L", SENDER)).s(_attach("L", RECEIVER))
    _credit(s)
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0,
                   more=True), payload=WHOLE[:CUT])
    if detach_closed is not None:
        s.c(c.Detach(handle=0, closed=detach_closed)).s(c.Detach(handle=0,
                                                                 closed=detach_closed))
    return s.close()


def _again(client: str = "client-1", *, tag: bytes = b"t0", resume: bool = True) -> Script:
    """L attached again, both ends listing `tag`; the client sends the rest (`resume`)
    and the server accepts it, or the client sends nothing more."""
    s = Script().open(client=client)
    s.c(_attach("L", SENDER, {tag: None})).s(_attach("L", RECEIVER, {tag: KEPT}))
    _credit(s, 1)
    if resume:
        s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=tag, resume=True),
            payload=WHOLE[CUT:])
        s.dispose(0, c.Accepted())
    return s.close()


_T0 = 1_700_000_000_000_000_000


def _run(tmp_path: Path, scripts: list[Script]) -> Any:
    return dissect(Path(write_connections(tmp_path / "r.pcapng", scripts)), keep_payload=True)


def test_a_delivery_resumed_on_a_new_connection_is_whole_there(tmp_path: Path) -> None:
    res = _run(tmp_path, [_first(), _again()])
    first, resumed = res.deliveries
    assert (first.conn.label, first.outcome) == ("c1", "abandoned")
    assert (resumed.conn.label, resumed.outcome) == ("c2", "accepted")
    assert (resumed.size, resumed.frames, resumed.resumed, resumed.resumed_from) == (
        len(WHOLE), 2, True, "c1")
    assert resumed.payload == WHOLE
    assert resumed.first_time == first.first_time  # its latency from the first sending
    assert resumed.latency is not None and resumed.latency > 1.0
    # a step marks where the first connection's steps end (their frame numbers are its own)
    assert [(e.kind, e.detail) for e in resumed.timeline] == [
        ("transfer", ""), ("carried", "carried over from c1"),
        ("resume", "resumed as delivery-id 0"), ("disposition", "")]
    assert "[resumed from c1, 2 frames]" in delivery_line(resumed)
    obj = delivery_json(resumed)
    assert obj["resumed-from"] == "c1"
    # each step of the first connection says so: its frame number is that connection's
    assert [(x["kind"], x.get("connection")) for x in obj["timeline"]] == [
        ("transfer", "c1"), ("carried", None), ("resume", None), ("disposition", None)]
    # both ends' maps are checked against what the capture saw on the first connection
    texts = [n.text for n in res.notices if "re-attach" in n.text]
    assert len(texts) == 2 and all(
        "0 only in the attach, 0 only seen, 0 with another state" in t for t in texts), texts
    assert not res.violations


def _settled_on_resume(*, whole: bool, held: Any) -> list[Script]:
    """t0 sent whole (or its first CUT bytes only), no disposition seen before the first
    connection ends; the receiver's re-attach holds `held`, and the sender settles the
    delivery with an empty resuming transfer (Part 2 §2.6.13)."""
    s = Script().open()
    s.c(_attach("L", SENDER)).s(_attach("L", RECEIVER))
    _credit(s)
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0,
                   more=not whole), payload=WHOLE if whole else WHOLE[:CUT])
    again = Script().open(client="client-1")
    again.c(_attach("L", SENDER, {b"t0": None})).s(_attach("L", RECEIVER, {b"t0": held}))
    _credit(again, 1)
    again.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", resume=True,
                       settled=True))
    return [s.close(), again.close()]


def test_the_outcome_the_receivers_attach_holds_is_the_deliverys(tmp_path: Path) -> None:
    """Its disposition went with the first connection: the receiver's re-attach says it
    accepted it, and the sender settles it on that (not a bare "settled")."""
    first, resumed = _run(tmp_path, _settled_on_resume(whole=True, held=c.Accepted())
                          ).deliveries
    assert first.outcome == "abandoned"
    assert (resumed.outcome, resumed.settled_by, resumed.size) == (
        "accepted", "sender", len(WHOLE))
    assert resumed.seen_whole and resumed.payload == WHOLE
    assert "accepted  by sender" in delivery_line(resumed)


def test_a_resume_that_settles_a_message_cut_off_does_not_make_it_whole(
        tmp_path: Path) -> None:
    """The receiver rejected it before its last transfer; the sender settles it with a
    resume that carries none of the rest: what was seen is not the message."""
    _, resumed = _run(tmp_path, _settled_on_resume(whole=False, held=c.Rejected())
                      ).deliveries
    assert (resumed.outcome, resumed.size, resumed.incomplete) == ("rejected", CUT, True)
    line = delivery_line(resumed)
    assert f"≥{CUT} B" in line and "bytes missing" in line, line
    assert delivery_json(resumed)["incomplete"] is True


def test_a_resume_met_without_its_first_sending_settles_as_the_receiver_held_it(
        tmp_path: Path) -> None:
    """The later connection alone (a capture that starts there, or the tables, which read
    each connection on its own): the resuming transfer that settles the delivery is its
    first; sent settled on a link whose sender-settle-mode is unsettled, it is no
    violation (its first sending was unsettled, elsewhere), and the receiver's attach
    says what became of it."""
    _, again = _settled_on_resume(whole=True, held=c.Accepted())
    res = _run(tmp_path, [again])
    (d,) = res.deliveries
    assert (d.outcome, d.resumed, d.settled_by) == ("accepted", True, "sender")
    assert not res.violations, res.violations


def test_other_containers_are_another_link(tmp_path: Path) -> None:
    """The same link name between other containers resumes nothing of the first."""
    res = _run(tmp_path, [_first(), _again("client-2")])
    first, second = res.deliveries
    assert first.outcome == "abandoned"
    assert (second.size, second.resumed_from) == (len(WHOLE) - CUT, None)
    texts = [n.text for n in res.notices if "re-attach" in n.text]
    assert texts and all("1 only in the attach" in t for t in texts)


def test_a_closed_link_is_not_carried_over(tmp_path: Path) -> None:
    """Detached with closed=true, the link's state is gone with it."""
    res = _run(tmp_path, [_first(detach_closed=True), _again()])
    assert [d.resumed_from for d in res.deliveries] == [None, None]


def test_a_link_detached_not_closed_is_carried_over(tmp_path: Path) -> None:
    res = _run(tmp_path, [_first(detach_closed=False), _again()])
    assert res.deliveries[-1].resumed_from == "c1"
    assert res.deliveries[-1].size == len(WHOLE)


def test_carried_over_but_not_resumed_is_reported_once(tmp_path: Path) -> None:
    """The second connection attaches the link again and ends without resuming t0: t0's
    one record is the first connection's; a third that resumes it still can."""
    res = _run(tmp_path, [_first(), _again(resume=False), _again()])
    assert [(d.conn.label, d.outcome, d.resumed_from) for d in res.deliveries] == [
        ("c1", "abandoned", None), ("c3", "accepted", "c1")]


def test_an_attach_without_an_unsettled_map_starts_the_link_afresh(tmp_path: Path) -> None:
    """A client that does not resume (most do not) attaches the name again with no map:
    no carry-over and no notice about what it did not carry."""
    s = Script().open()
    s.c(_attach("L", SENDER)).s(_attach("L", RECEIVER))
    _credit(s)
    s.transfer(0, "fresh", tag=b"t0")
    s.dispose(0, c.Accepted())
    res = _run(tmp_path, [_first(), s.close()])
    assert [(d.outcome, d.resumed_from) for d in res.deliveries] == [
        ("abandoned", None), ("accepted", None)]
    assert not [n for n in res.notices if "re-attach" in n.text]


class _Link:
    """What the shelf reads of a link."""

    def __init__(self, deliveries: int = 0, size: int = 0) -> None:
        self.sender, self.receiver = "client", "server"
        self.unsettled: dict[str, dict[bytes, Any]] = {"client": {}, "server": {}}
        self.live: dict[bytes, Any] = {}
        for i in range(deliveries):
            self.live[b"%d" % i] = _Delivery(size)


class _Delivery:
    def __init__(self, size: int) -> None:
        self.timeline: list[Any] = []
        self._chunks = [b"x" * size] if size else []
        self.origin: str | None = None
        self.link = self.session = None


def test_the_shelf_is_bounded() -> None:
    shelf = LinkShelf(max_links=3, max_deliveries=10, max_bytes=1000)
    for i in range(5):
        shelf.put(("a", "b", f"L{i}"), _Link(), "c1", None)  # type: ignore[arg-type]
    assert len(shelf) == 3
    assert shelf.take(("a", "b", "L0")) is None
    assert shelf.take(("a", "b", "L4")) is not None
    # a link larger than the shelf alone is not kept, in deliveries or in bytes
    shelf.put(("a", "b", "many"), _Link(deliveries=11), "c1", None)  # type: ignore[arg-type]
    shelf.put(("a", "b", "big"), _Link(deliveries=1, size=1001), "c1", None)  # type: ignore[arg-type]
    assert shelf.take(("a", "b", "many")) is None and shelf.take(("a", "b", "big")) is None
    # and the bytes of those kept count: the oldest goes
    shelf.put(("a", "b", "x"), _Link(deliveries=1, size=600), "c1", None)  # type: ignore[arg-type]
    shelf.put(("a", "b", "y"), _Link(deliveries=1, size=600), "c1", None)  # type: ignore[arg-type]
    assert shelf.take(("a", "b", "x")) is None and shelf.take(("a", "b", "y")) is not None


def test_an_end_seen_after_a_later_attach_leaves_nothing(tmp_path: Path) -> None:
    """c1 goes quiet (half-open) and the client attaches L on c2 before the capture
    shows c1's end: c1's end is not the link's latest state. c2 ends with t1 cut short
    and c3 resumes it from c2, its maps checked against what c2 left."""
    c1 = Script().open()
    c1.c(_attach("L", SENDER)).s(_attach("L", RECEIVER))
    _credit(c1)
    c1.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0,
                    more=True), payload=WHOLE[:CUT])
    c2 = Script().open()
    c2.c(_attach("L", SENDER)).s(_attach("L", RECEIVER))
    _credit(c2)
    c2.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t1", message_format=0,
                    more=True), payload=WHOLE[:CUT])
    c2.close()
    c3 = _again(tag=b"t1")
    path = tmp_path / "stale.pcapng"
    with CaptureWriter(path) as w:
        convs = [TcpConversation(w, client=("10.0.0.1", 40000 + i), server=("10.0.0.2", 5672),
                                 start_ns=_T0 + i) for i in range(3)]
        for conv in convs:
            conv.handshake()
        for i, script in ((0, c1), (1, c2)):
            for d, data, _t in script.steps:
                convs[i].send(d, data, time_ns=_T0 + 1000 * i)
        for d, data in ((C2S, encode_frame(c.Close())), (S2C, encode_frame(c.Close()))):
            convs[0].send(d, data, time_ns=_T0 + 3_000_000_000)  # c1's end, seen late
        for d, data, _t in c3.steps:
            convs[2].send(d, data, time_ns=_T0 + 5_000_000_000)
        for conv in convs:
            conv.close()
    res = dissect(path, keep_payload=True)
    last = res.deliveries[-1]
    assert (last.conn.label, last.tag, last.resumed_from, last.size) == (
        "c3", b"t1", "c2", len(WHOLE))
    texts = [n.text for n in res.notices if n.conn.label == "c3" and "re-attach" in n.text]
    assert len(texts) == 2 and all("0 only in the attach, 0 only seen" in t for t in texts)


def test_the_tui_follows_the_link_across_connections() -> None:
    """The TUI's connections share one shelf, as the dissector's do: the resumed delivery
    it keeps for viewing is the whole one."""
    from amqpcli.codec.frames import FrameReader
    from amqpcli.tui.watch import Watch
    from tests.dissect.helpers import C2S

    watch = Watch()
    for key, script in (("k1", _first()), ("k2", _again())):
        cw = watch.conn(key, "c1" if key == "k1" else "c2")
        readers = {C2S: FrameReader(), S2C: FrameReader()}
        for direction, data, t in script.steps:
            for item in readers[direction].feed(data):
                cw.feed("client" if direction == C2S else "server", item, t)
    resumed = [d for d in watch.conn("k2").settled if d.resumed]
    assert [(d.origin, d.size, d.outcome) for d in resumed] == [("k1", len(WHOLE), "accepted")]
    # its timeline names each step's frame by its own connection (`g k1:8` goes there)
    from amqpcli.tui.adapter import delivery_detail

    cw = watch.conn("k2")
    rows = delivery_detail(cw, resumed[0], "k2").timeline
    assert [r.detail.rsplit("  ", 1)[-1].split(" frame ")[0] for r in rows] == [
        "k1", "k2", "k2", "k2"]


def test_a_reattach_on_the_earlier_connection_takes_the_link_back() -> None:
    """c1 attaches L, c2 attaches L too, then c1 detaches L (not closed) and attaches it
    again: c1's attachment is the latest, so its end, not c2's, leaves L's state."""
    from amqpcli.engine import DeliverySettled, Observer

    shelf = LinkShelf()
    models = []
    for label in ("c1", "c2", "c3"):
        o = Observer(keep_payload=True)
        o.connection.shelf, o.connection.label = shelf, label
        models.append(o)

    def feed(o: Observer, s: Script) -> list[Any]:
        out: list[Any] = []
        for direction, data, t in s.steps:
            out += o.feed_bytes("client" if direction == C2S else "server", data, t)
        s.steps.clear()
        return out

    c1, c2, c3 = models
    s1 = Script().open()
    s1.c(_attach("L", SENDER)).s(_attach("L", RECEIVER))
    feed(c1, s1)
    s2 = Script().open()
    s2.c(_attach("L", SENDER)).s(_attach("L", RECEIVER))
    feed(c2, s2)
    s1.c(c.Detach(handle=0, closed=False)).s(c.Detach(handle=0, closed=False))
    s1.c(_attach("L", SENDER)).s(_attach("L", RECEIVER))
    _credit(s1)
    s1.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t1", message_format=0,
                    more=True), payload=WHOLE[:CUT])
    feed(c1, s1)
    feed(c2, Script().close())  # (c2 ends first, its attachment superseded)
    feed(c1, Script().close())
    events = feed(c3, _again(tag=b"t1"))
    (d,) = [e.delivery for e in events if isinstance(e, DeliverySettled)]
    assert (d.origin, d.size) == ("c1", len(WHOLE))

