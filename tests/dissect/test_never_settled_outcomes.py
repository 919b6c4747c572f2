"""A delivery nothing settled is in doubt, whatever state the receiver had reached: a
receiver's `accepted` the sender never settled is not final at the sender (on a resume
the sender applies it or says which outcome it applied instead, Part 3 §3.4.6; its
link closed, it may give the message out again). Its link closed, it is `abandoned`
in every view, the outcome it was given in parentheses; the capture ending first, it
is `unsettled`. One the sender settled is final at the sender: its outcome holds."""

from __future__ import annotations

import json
from pathlib import Path

from amqpcli.codec import composites as c
from tests.dissect.helpers import C2S, Script, write
from tests.net.clirun import amqp_in_process


def _lines(*args: str) -> list[str]:
    code, out, err = amqp_in_process("pcap-dump", *args)
    assert code == 0, err
    return out.splitlines()


def _accepted_received_and_nothing(s: Script) -> Script:
    """Three deliveries: the receiver accepts #0 and says #1 received, neither settled;
    #2 has no answer."""
    s.transfer(0).transfer(1).transfer(2)
    s.dispose(0, c.Accepted(), settled=False)
    return s.dispose(1, c.Received(section_number=0, section_offset=0), settled=False)


def test_accepted_but_never_settled_when_its_link_closes_is_abandoned(tmp_path: Path) -> None:
    s = _accepted_received_and_nothing(Script().open().sender_link())
    s.c(c.Detach(handle=0, closed=True)).s(c.Detach(handle=0, closed=True))
    cap = str(write(tmp_path / "closed.pcapng", s.close()))
    lines = _lines("--deliveries", cap)
    assert [x.split(" B ")[1].split("  ")[0] for x in lines] == [
        "abandoned (accepted, never settled) -", "abandoned -", "abandoned -"]
    recs = [json.loads(x) for x in _lines("--deliveries", "--json", cap)]
    assert [(r["outcome"], r["settled-by"], r.get("state")) for r in recs] == [
        ("abandoned", None, {"accepted": {}}),
        ("abandoned", None, {"received": {"section-number": 0, "section-offset": 0}}),
        ("abandoned", None, None)]
    summary = _lines("--summary", cap)
    assert "  by outcome: abandoned 3" in summary
    assert "    deliveries 3 (30 B): abandoned=3; latency -" in _lines("--links", cap)


def test_accepted_but_unsettled_when_the_capture_ends_is_unsettled(tmp_path: Path) -> None:
    s = _accepted_received_and_nothing(Script().open().sender_link())
    cap = str(write(tmp_path / "cut.pcapng", s, fin=False))
    lines = _lines("--deliveries", cap)
    assert [x.split(" B ")[1].split("  ")[0] for x in lines] == [
        "unsettled (accepted) unsettled at end", "unsettled unsettled at end",
        "unsettled unsettled at end"]
    recs = [json.loads(x) for x in _lines("--deliveries", "--json", cap)]
    assert [(r["outcome"], r.get("unsettled-at-end")) for r in recs] == [
        ("unsettled", True)] * 3
    summary = _lines("--summary", cap)
    assert "  by outcome: unsettled 3" in summary
    assert "  unsettled when the capture ended: 3" in summary


def test_settled_by_the_sender_its_outcome_holds_without_the_receivers_settle(
        tmp_path: Path) -> None:
    """Receiver-settle-mode second: the sender settled the accepted delivery (its outcome
    is final there); the link closed before the receiver's own settle."""
    s = Script().open().sender_link(rcv_mode=1).transfer(0)
    s.dispose(0, c.Accepted(), settled=False).dispose(0, c.Accepted(), side=C2S)
    s.c(c.Detach(handle=0, closed=True)).s(c.Detach(handle=0, closed=True))
    cap = str(write(tmp_path / "second.pcapng", s.close()))
    (rec,) = [json.loads(x) for x in _lines("--deliveries", "--json", cap)]
    assert (rec["outcome"], rec["settled-by"]) == ("accepted", "sender")
