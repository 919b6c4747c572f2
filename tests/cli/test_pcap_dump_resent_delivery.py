"""pcap-dump of a link re-attached whose receiver had no record of an unsettled delivery:
the sender sends the message again, same delivery-tag, no `resume` (Part 3 §3.4.6). That
is no violation (it was `delivery-id-in-use`, and the first sending went unreported):
both sendings are deliveries, the first abandoned (in doubt), saying why."""

from __future__ import annotations

from pathlib import Path

from amqpcli.codec import composites as c
from tests.dissect.helpers import dissect, write
from tests.engine.test_reattach_resent import reattached
from tests.net.clirun import amqp, json_lines


def _capture(tmp_path: Path) -> Path:
    s = reattached({b"t0": None})  # the server's re-attach does not list t1
    s.transfer(2, "again", tag=b"t1")
    s.dispose(2, c.Accepted()).dispose(0, c.Accepted())
    return write(tmp_path / "resent.pcapng", s.close())


def test_the_dissector_reports_both_sendings(tmp_path: Path) -> None:
    res = dissect(_capture(tmp_path))
    assert res.violations == []
    assert [(d.delivery_id, d.tag, d.outcome) for d in res.deliveries] == [
        (1, b"t1", "abandoned"), (2, b"t1", "accepted"), (0, b"t0", "accepted")]


def test_pcap_dump_json(tmp_path: Path) -> None:
    r = amqp("pcap-dump", str(_capture(tmp_path)), "--deliveries", "--json")
    assert (r.returncode, r.stderr) == (0, "")
    records = json_lines(r.stdout)
    assert [x for x in records if x["record"] == "violation"] == []
    first, again, t0 = [x for x in records if x["record"] == "delivery"]
    assert (first["delivery-id"], first["outcome"], first["timeline"][-1]["detail"]) == (
        1, "abandoned",
        "sent again as delivery-id 2 (the receiver's re-attach did not hold it)")
    assert (again["delivery-id"], again["outcome"], again["message"]["body"]) == (
        2, "accepted", {"value": "again"})
    assert (t0["delivery-id"], t0["outcome"]) == (0, "accepted")
