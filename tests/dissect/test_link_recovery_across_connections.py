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

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_protocol_header
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


def _opened(client: str = "client-1") -> Script:
    """Header, open (the client's container-id `client`, the server's broker-1), begin."""
    s = Script()
    s.raw(C2S, encode_protocol_header("amqp")).raw(S2C, encode_protocol_header("amqp"))
    s.c(c.Open(container_id=client, hostname="broker")).s(c.Open(container_id="broker-1"))
    s.c(c.Begin(next_outgoing_id=0, incoming_window=1000, outgoing_window=1000))
    return s.s(c.Begin(remote_channel=0, next_outgoing_id=0, incoming_window=1000,
                       outgoing_window=1000))


def _credit(s: Script, delivery_count: int = 0) -> Script:
    return s.s(c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=0,
                      outgoing_window=1000, handle=0, delivery_count=delivery_count,
                      link_credit=10))


def _first(*, detach_closed: bool | None = None) -> Script:
    """L attached, CUT bytes of t0 sent, then the connection closes (after detaching L
    with `detach_closed`, if given)."""
    s = _opened()
    s.c(_attach("L", SENDER)).s(_attach("L", RECEIVER))
    _credit(s)
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0,
                   more=True), payload=WHOLE[:CUT])
    if detach_closed is not None:
        s.c(c.Detach(handle=0, closed=detach_closed)).s(c.Detach(handle=0,
                                                                 closed=detach_closed))
    return s.close()


def _again(client: str = "client-1", *, resume: bool = True) -> Script:
    """L attached again, both ends listing t0; the client sends the rest (`resume`) and
    the server accepts it, or the client sends nothing more."""
    s = _opened(client)
    s.c(_attach("L", SENDER, {b"t0": None})).s(_attach("L", RECEIVER, {b"t0": KEPT}))
    _credit(s, 1)
    if resume:
        s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", resume=True),
            payload=WHOLE[CUT:])
        s.dispose(0, c.Accepted())
    return s.close()


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
    # the steps of the first connection say so (their frame numbers are its own)
    assert [(e.kind, e.detail) for e in resumed.timeline] == [
        ("transfer", "(on c1)"), ("resume", "resumed as delivery-id 0"), ("disposition", "")]
    assert "[resumed from c1, 2 frames]" in delivery_line(resumed)
    assert delivery_json(resumed)["resumed-from"] == "c1"
    # both ends' maps are checked against what the capture saw on the first connection
    texts = [n.text for n in res.notices if "re-attach" in n.text]
    assert len(texts) == 2 and all("0 only in the attach, 0 only seen" in t for t in texts)
    assert not res.violations


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
    s = _opened()
    s.c(_attach("L", SENDER)).s(_attach("L", RECEIVER))
    _credit(s)
    s.transfer(0, "fresh", tag=b"t0")
    s.dispose(0, c.Accepted())
    res = _run(tmp_path, [_first(), s.close()])
    assert [(d.outcome, d.resumed_from) for d in res.deliveries] == [
        ("abandoned", None), ("accepted", None)]
    assert not [n for n in res.notices if "re-attach" in n.text]


def test_the_shelf_is_bounded() -> None:
    class _Link:
        def __init__(self) -> None:
            self.delivery_count = 0
            self.sender, self.receiver = "client", "server"
            self.unsettled: dict[str, dict[bytes, Any]] = {"client": {}, "server": {}}
            self.live: dict[bytes, Any] = {}

    shelf = LinkShelf(max_links=3)
    for i in range(5):
        shelf.put(("a", "b", f"L{i}"), _Link(), "c1")  # type: ignore[arg-type]
    assert len(shelf) == 3
    assert shelf.take(("a", "b", "L0")) is None
    assert shelf.take(("a", "b", "L4")) is not None
