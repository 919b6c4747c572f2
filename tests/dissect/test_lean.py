"""The dissector's cheaper modes for views that need less (`delivery_records=False`,
`delivery_updates=False`, as `pcap-dump`'s frame view uses them): the same frame lines,
violations and notices as the full mode."""

from __future__ import annotations

from pathlib import Path

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol
from amqpcli.engine import DeliverySettled, DeliveryUpdated
from amqpcli.render.traffic import notice_line, record_line, violation_line
from tests.dissect.helpers import C2S, Script, dissect, write


def _script() -> Script:
    s = Script().sasl_plain().open().sender_link("a", "qa", 0)
    s.sender_link("b", "qb", 1, rcv_mode=1)
    s.transfer(0, "acc").dispose(0, c.Accepted())
    s.transfer(1, "rej").dispose(1, c.Rejected(error=c.Error(condition=Symbol("amqp:x"))))
    s.transfer(2, "rel").transfer(3, "mod").dispose(2, c.Released())
    s.dispose(3, c.Modified(delivery_failed=True))
    s.transfer(4, "pre", settled=True)
    # mode second: accepted unsettled, the sender settles, then the receiver
    s.transfer(5, "two", handle=1)
    s.dispose(5, c.Accepted(), settled=False)
    s.dispose(5, c.Accepted(), settled=True, side=C2S)
    s.dispose(5, None, settled=True)
    # a multi-frame delivery and an aborted one
    msg = Message(body="z" * 300).encode()
    s.c(c.Transfer(handle=0, delivery_id=6, delivery_tag=b"m", message_format=0, more=True),
        payload=msg[:100])
    s.c(c.Transfer(handle=0, more=True), payload=msg[100:200])
    s.c(c.Transfer(handle=0), payload=msg[200:])
    s.dispose(6, c.Accepted())
    s.c(c.Transfer(handle=0, delivery_id=7, delivery_tag=b"x", message_format=0, more=True),
        payload=msg[:100])
    s.c(c.Transfer(handle=0, aborted=True))
    # a range of dispositions, one for an unknown delivery (a violation), one left open
    s.transfer(8).transfer(9).dispose(8, c.Accepted(), last=9)
    s.dispose(40, c.Accepted())
    s.transfer(10)
    return s


def _lines(res) -> list[str]:
    out = [record_line(f, show_secrets=False, bodies=True) for f in res.frames]
    out += [violation_line(v) for v in res.violations]
    out += [notice_line(n) for n in res.notices]
    return out


def test_lean_modes_give_the_same_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "l.pcapng", _script(), fin=False, mss=60)
    full = dissect(path)
    lean = dissect(path, delivery_records=False, delivery_updates=False)
    assert full.deliveries and not lean.deliveries
    assert full.violations and _lines(lean) == _lines(full)
    assert [(f.frame_no, f.packet, f.time, f.side) for f in lean.frames] == [
        (f.frame_no, f.packet, f.time, f.side) for f in full.frames]
    # the frames' events: the same but DeliveryUpdated and (no records) DeliverySettled
    assert any(e.__class__ is DeliveryUpdated for f in full.frames for e in f.events)
    left_out = (DeliveryUpdated, DeliverySettled)
    for a, b in zip(full.frames, lean.frames, strict=True):
        assert [type(e) for e in a.events if type(e) not in left_out] == [
            type(e) for e in b.events]
    # started deliveries are counted either way; the per-link delivery figures only with
    # delivery records
    fc, lc = full.dissector.conns[0], lean.dissector.conns[0]
    assert (lc.deliveries, lc.violations, lc.frames) == (fc.deliveries, fc.violations,
                                                         fc.frames)
    assert [ls.deliveries for ls in lc.links] == [ls.deliveries for ls in fc.links]
    assert sum(ls.settled for ls in fc.links) == len(full.deliveries)
    assert sum(ls.settled for ls in lc.links) == 0


def test_without_records_but_with_updates(tmp_path: Path) -> None:
    """delivery_records=False alone (a link filter on the frame view): the frames'
    events are all there."""
    path = write(tmp_path / "u.pcapng", _script(), fin=False)
    full = dissect(path)
    lean = dissect(path, delivery_records=False)
    assert not lean.deliveries and _lines(lean) == _lines(full)
    for a, b in zip(full.frames, lean.frames, strict=True):
        assert [type(e) for e in a.events] == [type(e) for e in b.events]


def test_records_without_updates_are_the_same(tmp_path: Path) -> None:
    """delivery_updates=False alone: the delivery records do not change."""
    path = write(tmp_path / "r.pcapng", _script(), fin=False)
    full = dissect(path, keep_payload=True)
    lean = dissect(path, keep_payload=True, delivery_updates=False)

    def key(d):
        return (d.link, d.delivery_id, d.tag, d.outcome, d.settled_by, d.presettled,
                d.second_mode, d.frames, d.size, d.at_end, d.payload,
                [(e.kind, e.side, e.frame_no, e.settled) for e in d.timeline])

    assert [key(d) for d in lean.deliveries] == [key(d) for d in full.deliveries]
    outcomes = {d.delivery_id: d.outcome for d in full.deliveries}
    assert outcomes == {0: "accepted", 1: "rejected", 2: "released", 3: "modified",
                        4: "settled", 5: "accepted", 6: "accepted", 7: "aborted",
                        8: "accepted", 9: "accepted", 10: "unsettled"}
    assert sum(1 for f in full.frames for e in f.events
               if e.__class__ is DeliverySettled) == len(full.deliveries) - 1  # 10: at end
