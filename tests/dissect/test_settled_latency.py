"""A delivery's settlement latency runs from its first transfer frame to the frame that
settled it first, the one `settled by` names: every view (`-d`, `--json`, the summary's
and the links' percentiles, the tables) gives the same time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.render.deliveries import delivery_json, delivery_line
from amqpcli.render.traffic import iso
from tests.dissect.helpers import Script, dissect, presettled_capture, second_mode_capture, write
from tests.net.clirun import amqp_in_process


def _views(path: Path, tmp_path: Path) -> dict[str, Any]:
    """What the views say of the capture's one delivery: its JSON record, the summary's
    link latency, and the tables' row."""
    from amqpcli.pipeline.output import read_table

    code, out, err = amqp_in_process("pcap-dump", str(path), "-d", "--json", "--summary")
    assert code == 0, err
    recs = [json.loads(x) for x in out.splitlines()]
    (d,) = [r for r in recs if r["record"] == "delivery"]
    (s,) = [r for r in recs if r["record"] == "summary"]
    (link,) = s["links"]
    tables = tmp_path / "tables"
    code, _out, err = amqp_in_process("pcap-dump", str(path), "--out", str(tables))
    assert code == 0, err
    (row,) = read_table(str(tables), "deliveries").to_pylist()
    (lrow,) = read_table(str(tables), "links").to_pylist()
    return {"json": d, "summary": link["latency"], "row": row, "link": lrow}


def test_settle_mode_second_latency_is_to_the_first_settlement(tmp_path: Path) -> None:
    """Receiver-settle-mode second: the receiver answers accepted unsettled (10 ms), the
    sender settles (20 ms), the receiver settles last (50 ms). Settled first by the
    sender, 20 ms after the transfer (it said `by sender (second)` with the receiver's
    50 ms)."""
    path = second_mode_capture(tmp_path / "second.pcapng")
    (rec,) = dissect(path).deliveries
    assert rec.second_mode and rec.settled_by == "sender"
    assert rec.latency == pytest.approx(0.020, abs=1e-6)
    assert rec.settled_time == pytest.approx(rec.first_time + 0.020, abs=1e-6)
    assert delivery_line(rec).endswith(" accepted  by sender (second)  20.000 ms")
    assert delivery_json(rec)["latency"] == pytest.approx(0.020, abs=1e-6)
    v = _views(path, tmp_path)
    assert v["json"]["settled-by"] == "sender"
    assert v["json"]["latency"] == pytest.approx(0.020, abs=1e-6)
    assert v["json"]["settled-time"] == iso(rec.settled_time)
    assert v["summary"]["max"] == pytest.approx(0.020, abs=1e-6)
    assert v["row"]["latency"] == pytest.approx(0.020, abs=1e-6)
    assert v["row"]["settled_by"] == "sender"
    assert v["link"]["latency_max"] == pytest.approx(0.020, abs=1e-6)


def test_a_receiver_that_settles_mid_transfer_settles_it_then(tmp_path: Path) -> None:
    """Settled by the receiver while the message is still being transferred: its
    disposition is the settling frame, not the last transfer after it."""
    s = Script().open().sender_link()
    s.at(1.0).c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0,
                           more=True), payload=b"\x00Sw\xa1\x05hel")
    s.at(1.010).dispose(0, c.Accepted())
    s.at(1.030).c(c.Transfer(handle=0, more=False), payload=b"lo")
    (rec,) = dissect(write(tmp_path / "early.pcapng", s.at(2.0).close())).deliveries
    assert rec.settled_by == "receiver" and rec.frames == 2
    assert rec.latency == pytest.approx(0.010, abs=1e-6)


def test_presettled_in_several_frames_is_settled_at_its_first_transfer(
        tmp_path: Path) -> None:
    """A pre-settled delivery is settled by its first transfer, which says so: in three
    frames as in one, its latency is 0 and its settled-time that of its first frame (it
    showed the time to its last frame, `presettled 20.000 ms [3 frames]`)."""
    path = presettled_capture(tmp_path / "pre.pcapng")
    one, three = dissect(path).deliveries
    assert one.presettled and three.presettled and three.frames == 3
    for rec in (one, three):
        assert rec.latency == 0.0 and rec.settled_time == rec.first_time
        assert " settled   presettled         0.000 ms" in delivery_line(rec)
        assert delivery_json(rec)["latency"] == 0.0
    code, out, err = amqp_in_process("pcap-dump", str(path), "-d", "--json", "-m")
    assert code == 0, err
    recs = [json.loads(x) for x in out.splitlines()]
    assert [r["latency"] for r in recs if r["record"] == "delivery"] == [0.0, 0.0]
    assert [h["latency"] for r in recs if r["record"] == "message" for h in r["hops"]] == [
        0.0, 0.0]
    tables = tmp_path / "tables"
    code, _out, err = amqp_in_process("pcap-dump", str(path), "--out", str(tables))
    assert code == 0, err
    from amqpcli.pipeline.output import read_table

    rows = read_table(str(tables), "deliveries").to_pylist()
    assert [(r["latency"], r["settled_time"] == r["first_time"]) for r in rows] == [
        (0.0, True), (0.0, True)]


def test_views_that_print_no_link_latency_keep_none(tmp_path: Path) -> None:
    # (8 bytes a settled delivery, for the links' percentiles: only --links and
    # --summary print them) each delivery keeps its own
    path = second_mode_capture(tmp_path / "second.pcapng")
    res = dissect(path, latencies=False)
    (ls,) = res.dissector.conns[0].links
    assert len(ls.latencies) == 0 and ls.settled == 1
    assert res.deliveries[0].latency == pytest.approx(0.020, abs=1e-6)
    assert len(dissect(path).dissector.conns[0].links[0].latencies) == 1
