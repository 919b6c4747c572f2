"""A TCP gap inside a multi-frame delivery: the transfers the capture lost are missing
from it, so it says it is incomplete (its record, its delivery line, its JSON, the
summary and the deliveries table), while its outcome and latency stay what was seen.
A gap between whole deliveries, or in the other direction, marks none."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.capture.tcp import S2C
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.message import Message
from amqpcli.dissect import Summary
from amqpcli.render.deliveries import delivery_json, delivery_line
from amqpcli.render.summary import summary_json, summary_lines
from tests.dissect.helpers import RECEIVER, Script, dissect, write

FRAME = 1000  # payload bytes per transfer frame


def _big(s: Script, did: int, size: int) -> list[int]:
    """Delivery `did` of `size` message bytes or so in transfers of FRAME payload bytes;
    the step indices of its transfers."""
    payload = Message(body=b"x" * size).encode()
    chunks = [payload[i:i + FRAME] for i in range(0, len(payload), FRAME)]
    steps = []
    for k, chunk in enumerate(chunks):
        first = k == 0
        steps.append(len(s.steps))
        s.c(c.Transfer(handle=0, delivery_id=did if first else None,
                       delivery_tag=b"t%d" % did if first else None,
                       message_format=0 if first else None,
                       more=k < len(chunks) - 1), payload=chunk)
    return steps


WHOLE = len(Message(body=b"x" * 10_000).encode())  # the message bytes of each delivery


def _script() -> tuple[Script, list[list[int]]]:
    """Three 10 kB deliveries (11 transfers each), then their dispositions."""
    s = Script().open().sender_link()
    steps = [_big(s, i, 10_000) for i in range(3)]
    for i in range(3):
        s.dispose(i, c.Accepted())
    return s.close(), steps


def gap_capture(path: Path) -> Path:
    """Three 10 kB deliveries, the middle one with a segment of its fifth transfer lost."""
    s, steps = _script()
    return write(path, s, mss=300, drop=[(steps[1][4], 1)])


def _summary(res) -> Summary:
    summ = Summary()
    for r in res.frames + res.deliveries + res.violations + res.notices:
        summ.add(r)
    summ.finish(res.dissector.conns)
    return summ


def test_a_gap_inside_a_delivery_marks_it_incomplete(tmp_path: Path) -> None:
    res = dissect(gap_capture(tmp_path / "gap.pcapng"))
    assert "gap" in [n.kind for n in res.notices]
    d0, d1, d2 = res.deliveries
    assert [d.delivery_id for d in res.deliveries] == [0, 1, 2]
    assert (d0.incomplete, d1.incomplete, d2.incomplete) == (False, True, False)
    assert d0.size == d2.size == WHOLE and d0.frames == d2.frames == 11
    assert d1.size < WHOLE and d1.frames == 10
    # what was seen stays true: its outcome, who settled it, first seen to settled
    assert d1.outcome == "accepted" and d1.settled_by == "receiver"
    assert d1.latency == pytest.approx(d1.settled_time - d1.first_time)
    assert d1.latency is not None and d1.latency > 0
    assert res.dissector.conns[0].links[0].latencies[1] == pytest.approx(d1.latency)
    # the timeline says where the bytes went missing
    kinds = [e.kind for e in d1.timeline]
    assert kinds.count("gap") == 1 and kinds.index("gap") == 4
    assert "gap" not in [e.kind for e in d0.timeline + d2.timeline]

    line = delivery_line(d1)
    assert f"≥{d1.size} B" in line and "bytes missing" in line and "accepted" in line
    plain = delivery_line(d0)
    assert "bytes missing" not in delivery_line(d2) and "≥" not in plain
    # aligned like the others: the outcome starts in the same column
    assert line.index("accepted") == plain.index("accepted")
    assert line.index("by receiver") == plain.index("by receiver")

    j1, j0 = delivery_json(d1), delivery_json(d0)
    assert j1["incomplete"] is True and j1["size"] == d1.size
    assert j1["latency"] == pytest.approx(d1.latency)
    assert "incomplete" not in j0
    assert [e["kind"] for e in j1["timeline"]].count("gap") == 1

    summ = _summary(res)
    assert summ.incomplete == 1
    text = summary_lines(summ)
    assert "  incomplete (message not seen whole): 1" in text
    assert summary_json(summ)["incomplete"] == 1


def test_a_gap_that_takes_the_last_transfers_keeps_the_rest(tmp_path: Path) -> None:
    """The gap swallows the end of delivery 1 and the start of delivery 2: delivery 1
    is incomplete; the continuations of delivery 2 (no delivery-id) cannot be told
    from the rest of delivery 1, so they end it. Delivery 2 itself is not known."""
    s, steps = _script()
    drop = [(i, seg) for i in steps[1][6:] + steps[2][:1] for seg in range(4)]
    res = dissect(write(tmp_path / "gap.pcapng", s, mss=300, drop=drop))
    assert [(d.delivery_id, d.incomplete) for d in res.deliveries] == [(0, False), (1, True)]
    assert res.deliveries[1].outcome == "accepted"
    assert not res.violations


def test_a_gap_that_takes_the_first_transfer_loses_that_delivery(tmp_path: Path) -> None:
    """A continuation without a delivery-id after the gap, no delivery in progress: it
    belongs to a delivery the capture lost the start of, which is not reported."""
    s, steps = _script()
    drop = [(steps[1][0], seg) for seg in range(4)]
    res = dissect(write(tmp_path / "gap.pcapng", s, mss=300, drop=drop))
    assert [(d.delivery_id, d.incomplete) for d in res.deliveries] == [(0, False), (2, False)]
    assert all(d.size == WHOLE for d in res.deliveries)
    assert not res.violations


def test_a_gap_between_whole_deliveries_marks_neither(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    a = _big(s, 0, 10_000)
    s.transfer(1, "lost in the gap")
    b = _big(s, 2, 10_000)
    for i in range(3):
        s.dispose(i, c.Accepted())
    s.close()
    lost = b[0] - 1
    assert lost == a[-1] + 1
    res = dissect(write(tmp_path / "gap.pcapng", s, drop=[(lost, 0)]))
    assert "gap" in [n.kind for n in res.notices]
    assert [(d.delivery_id, d.incomplete) for d in res.deliveries] == [(0, False), (2, False)]
    assert all(d.size == WHOLE and d.frames == 11 for d in res.deliveries)
    summ = _summary(res)
    assert summ.incomplete == 0
    assert not [ln for ln in summary_lines(summ) if "incomplete" in ln]
    assert summary_json(summ)["incomplete"] == 0


def test_a_gap_in_the_other_direction_marks_no_transfer(tmp_path: Path) -> None:
    """The server's bytes go missing (a disposition) while the client is in the middle
    of a delivery: that delivery has every byte."""
    s = Script().open().sender_link()
    s.transfer(0, "first")
    d1 = _big(s, 1, 10_000)
    # the server's disposition for delivery 0 comes between two transfers of delivery 1
    disp = encode_frame(c.Disposition(role=RECEIVER, first=0, settled=True,
                                      state=c.Accepted()))
    s.steps.insert(d1[3], (S2C, disp + encode_frame(c.Flow(
        next_incoming_id=0, incoming_window=1000, next_outgoing_id=0, outgoing_window=1000,
        handle=0, delivery_count=1, link_credit=100)), s.steps[d1[3]][2]))
    s.dispose(1, c.Accepted())
    s.dispose(0, c.Accepted())  # delivery 0 again: its first settlement was lost
    s.close()
    res = dissect(write(tmp_path / "gap.pcapng", s, mss=40, drop=[(d1[3], 0)]))
    gaps = [n for n in res.notices if n.kind == "gap"]
    assert gaps and {n.side for n in gaps} == {"server"}
    by_id = {d.delivery_id: d for d in res.deliveries}
    assert by_id[1].size == WHOLE and by_id[1].frames == 11
    assert not any(d.incomplete for d in res.deliveries)


def test_the_deliveries_line_and_summary_of_pcap_dump(tmp_path: Path) -> None:
    import json

    from tests.net.clirun import amqp_in_process as run

    cap = str(gap_capture(tmp_path / "gap.pcapng"))
    code, out, _ = run("pcap-dump", cap, "--deliveries")
    assert code == 0
    lines = [ln for ln in out.splitlines() if " -> " in ln]  # (the notices say the gap)
    assert len(lines) == 3
    assert "bytes missing" in lines[1] and "≥" in lines[1]
    assert "bytes missing" not in lines[0] + lines[2]
    code, out, _ = run("pcap-dump", cap, "--deliveries", "--json")
    recs = [json.loads(ln) for ln in out.splitlines()]
    assert [r.get("incomplete") for r in recs if r["record"] == "delivery"] == [
        None, True, None]
    code, out, _ = run("pcap-dump", cap, "--summary")
    assert "  incomplete (message not seen whole): 1" in out.splitlines()
