"""Transactions in a capture (AMQP 1.0 Part 4): a delivery's transactional outcome takes
effect only if its transaction commits. The dissector follows the coordinator link
(declare → declared, discharge with `fail` and the discharge's own outcome) and says of
each delivery in a transaction whether it was committed, rolled back or left undecided;
the coordinator's requests are no messages, counted apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol
from amqpcli.dissect import Dissector
from amqpcli.dissect.stats import Summary
from amqpcli.render.deliveries import delivery_json, delivery_line, link_lines
from amqpcli.render.summary import summary_json, summary_lines
from tests.dissect.helpers import RECEIVER, SENDER, Script, dissect, write


def _coordinator(s: Script, handle: int = 1) -> Script:
    s.c(c.Attach(name="txn", handle=handle, role=SENDER, snd_settle_mode=2, rcv_settle_mode=0,
                 source=c.Source(), target=c.Coordinator(
                     capabilities=[Symbol("amqp:local-transactions")]),
                 initial_delivery_count=0))
    s.s(c.Attach(name="txn", handle=handle, role=RECEIVER, snd_settle_mode=2,
                 rcv_settle_mode=0, source=c.Source(), target=c.Coordinator(
                     capabilities=[Symbol("amqp:local-transactions")])))
    return s.s(c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=0,
                      outgoing_window=1000, handle=handle, delivery_count=0, link_credit=100))


def _request(s: Script, did: int, value: Any, handle: int = 1) -> Script:
    return s.c(c.Transfer(handle=handle, delivery_id=did, delivery_tag=b"x%d" % did,
                          message_format=0),
               payload=Message(body=c.AmqpValue(value)).encode())


def _txn_transfer(s: Script, did: int, txn: bytes) -> Script:
    """A message sent in transaction `txn` (the transfer carries a transactional-state)."""
    return s.c(c.Transfer(handle=0, delivery_id=did, delivery_tag=b"t%d" % did,
                          message_format=0, state=c.TransactionalState(txn_id=txn)),
               payload=Message(body=f"m{did}").encode())


def _in_txn(txn: bytes) -> Any:
    return c.TransactionalState(txn_id=txn, outcome=c.Accepted())


def capture(path: Path) -> Path:
    """Four transactions on one connection: txn-a rolled back (discharge fail=true,
    accepted), txn-b committed, txn-c's discharge rejected (transaction-rollback),
    txn-d never discharged; a message in each (two in txn-a), and one outside."""
    s = Script().open().sender_link()
    _coordinator(s)
    did = 0  # the session's delivery-ids, both links
    for txn in (b"txn-a", b"txn-b", b"txn-c", b"txn-d"):
        _request(s, did, c.Declare())
        s.dispose(did, c.Declared(txn_id=txn))
        did += 1
        for _ in range(2 if txn == b"txn-a" else 1):
            _txn_transfer(s, did, txn)
            s.dispose(did, _in_txn(txn))
            did += 1
        if txn == b"txn-d":
            break
        _request(s, did, c.Discharge(txn_id=txn, fail=txn == b"txn-a"))
        if txn == b"txn-c":
            s.dispose(did, c.Rejected(error=c.Error(
                condition=Symbol("amqp:transaction:rollback"))))
        else:
            s.dispose(did, c.Accepted())
        did += 1
    s.transfer(did, "plain")
    s.dispose(did, c.Accepted())
    return write(path, s.close())


def test_outcomes_follow_the_transaction(tmp_path: Path) -> None:
    r = dissect(capture(tmp_path / "txn.pcapng"))
    msgs = [d for d in r.deliveries if d.coordinator is None]
    got = [(d.txn_id, d.outcome, d.txn_result) for d in msgs]
    assert got == [
        (b"txn-a", "rolled-back", "rolled-back"),
        (b"txn-a", "rolled-back", "rolled-back"),
        (b"txn-b", "accepted", "committed"),
        (b"txn-c", "rolled-back", "failed: amqp:transaction:rollback"),
        (None, "accepted", None),
        (b"txn-d", "undecided", "undecided"),
    ]
    reqs = [(d.coordinator, d.txn_id, d.outcome) for d in r.deliveries if d.coordinator]
    assert reqs == [
        ("declare", b"txn-a", "declared"), ("discharge", b"txn-a", "accepted"),
        ("declare", b"txn-b", "declared"), ("discharge", b"txn-b", "accepted"),
        ("declare", b"txn-c", "declared"), ("discharge", b"txn-c", "rejected"),
        ("declare", b"txn-d", "declared"),
    ]


def test_records_wait_for_the_discharge(tmp_path: Path) -> None:
    """A delivery settled inside a transaction is handed out once the transaction is
    discharged (after the discharge's disposition), not as committed before it is."""
    dis = Dissector()
    recs = list(dis.read(str(capture(tmp_path / "txn.pcapng"))))
    kinds = [(type(x).__name__, getattr(x, "coordinator", None), getattr(x, "txn_id", None))
             for x in recs if type(x).__name__ == "DeliveryRecord"]
    # txn-a's two messages come after its discharge
    assert kinds[:4] == [("DeliveryRecord", "declare", b"txn-a"),
                         ("DeliveryRecord", "discharge", b"txn-a"),
                         ("DeliveryRecord", None, b"txn-a"),
                         ("DeliveryRecord", None, b"txn-a")]


def test_views(tmp_path: Path) -> None:
    r = dissect(capture(tmp_path / "txn.pcapng"))
    by_txn = {d.txn_id: d for d in r.deliveries if d.coordinator is None}
    assert ' rolled-back (accepted in txn b"txn-a") ' in delivery_line(by_txn[b"txn-a"])
    assert ' accepted in txn b"txn-b" ' in delivery_line(by_txn[b"txn-b"])
    assert (' rolled-back (accepted in txn b"txn-c"; discharge failed: '
            'amqp:transaction:rollback) ') in delivery_line(by_txn[b"txn-c"])
    assert (' undecided (accepted in txn b"txn-d", not discharged) '
            in delivery_line(by_txn[b"txn-d"]))
    j = delivery_json(by_txn[b"txn-a"])
    assert (j["outcome"], j["txn-result"]) == ("rolled-back", "rolled-back")
    assert j["state"] == {"transactional-state": {"txn-id": {"binary-text": "txn-a"},
                                                  "outcome": {"accepted": {}}}}
    discharge = next(d for d in r.deliveries if d.coordinator == "discharge")
    assert ' accepted (discharge b"txn-a": rolled back) ' in delivery_line(discharge)
    assert delivery_json(discharge)["coordinator"] == "discharge"

    s = Summary()
    for rec in r.deliveries:
        s.add(rec)
    conns = r.dissector.conns
    s.finish(conns)
    assert s.deliveries == 6
    assert s.by_outcome == {"rolled-back": 3, "accepted": 2, "undecided": 1}
    assert s.transactions == {"declared": 4, "rolled-back": 1, "committed": 1, "failed": 1}
    text = "\n".join(summary_lines(s))
    assert "  by outcome: rolled-back 3, accepted 2, undecided 1" in text
    assert ("transactions (coordinator requests): declared 4, committed 1, rolled back 1, "
            "failed 1") in text
    js = json.loads(json.dumps(summary_json(s)))
    coord = next(ln for ln in js["links"] if ln["name"] == "txn")
    assert coord["outcomes"] == {}
    assert coord["transactions"] == {"declared": 4, "rolled-back": 1, "committed": 1,
                                     "failed": 1}
    sender = next(ln for ln in js["links"] if ln["name"] == "sender")
    assert sender["outcomes"] == {"rolled-back": 3, "accepted": 2, "undecided": 1}
    ls = next(x for x in conns[0].links if x.name == "txn")
    assert ("deliveries 7 (" in link_lines(conns[0], ls)[1]
            and "): transactions declared 4, committed 1, rolled back 1, failed 1;"
            in link_lines(conns[0], ls)[1])


def test_without_kept_payloads(tmp_path: Path) -> None:
    """`-d` keeps no payloads: the coordinator's requests are read all the same."""
    r = dissect(capture(tmp_path / "txn.pcapng"), keep_payload=False)
    assert [d.outcome for d in r.deliveries if d.txn_id == b"txn-a"
            and d.coordinator is None] == ["rolled-back"] * 2


def test_links_draw_the_coordinator_target(tmp_path: Path) -> None:
    """`--links` draws a coordinator target as the attach's frame line does
    (`target=@coordinator`), not as a terminus with no address."""
    r = dissect(capture(tmp_path / "txn.pcapng"))
    conn = r.dissector.conns[0]
    ls = next(x for x in conn.links if x.name == "txn")
    first = link_lines(conn, ls)[0]
    assert " target=@coordinator caps=amqp:local-transactions " in first
    assert "(no address) caps" not in first


def test_a_selector_passes_over_the_coordinators_requests(tmp_path: Path) -> None:
    """A declare or discharge is a request to the coordinator, no message: a selector
    that every message passes (`color IS NULL`) selects none of them, as deliveries or
    as transfer frames."""
    from tests.net.clirun import amqp

    path = capture(tmp_path / "txn.pcapng")
    r = amqp("pcap-dump", str(path), "-d", "--json", "-s", "color IS NULL")
    assert r.returncode == 0, r.stderr
    recs = [json.loads(x) for x in r.stdout.splitlines()]
    deliveries = [x for x in recs if x.get("record") == "delivery"]
    assert len(deliveries) == 6 and not any("coordinator" in x for x in deliveries)
    r = amqp("pcap-dump", str(path), "--json", "-s", "color IS NULL")
    transfers = [x for x in (json.loads(y) for y in r.stdout.splitlines())
                 if "transfer" in (x.get("performative") or {})]
    assert [t["performative"]["transfer"]["handle"] for t in transfers] == [0] * 6


def test_state_names_what_the_transaction_made_of_it(tmp_path: Path) -> None:
    """`--state rolled-back` and `undecided` name what a transaction made of a delivery
    (they were usage errors); `accepted` no longer picks the rolled-back acceptances (a
    discharge the coordinator accepted is still one)."""
    from tests.net.clirun import amqp

    path = capture(tmp_path / "txn.pcapng")
    for state, n in (("rolled-back", 3), ("undecided", 1), ("accepted", 2)):
        r = amqp("pcap-dump", str(path), "-d", "--json", "--state", state)
        assert r.returncode == 0, r.stderr
        got = [json.loads(x) for x in r.stdout.splitlines()]
        assert [x["outcome"] for x in got
                if x.get("record") == "delivery" and "coordinator" not in x] == [state] * n


def test_a_committed_outcome_nothing_settled_holds(tmp_path: Path) -> None:
    """A transactional outcome takes effect at the commit, settled or not (Part 4 §4.4.2):
    the link closing before anyone settled it leaves it accepted, not abandoned; in a
    transaction rolled back, it is rolled back."""
    s = Script().open().sender_link()
    _coordinator(s)
    did = 0
    for txn, fail in ((b"txn-a", False), (b"txn-b", True)):
        _request(s, did, c.Declare())
        s.dispose(did, c.Declared(txn_id=txn))
        _txn_transfer(s, did + 1, txn)
        s.dispose(did + 1, _in_txn(txn), settled=False)
        _request(s, did + 2, c.Discharge(txn_id=txn, fail=fail))
        s.dispose(did + 2, c.Accepted())
        did += 3
    s.c(c.Detach(handle=0, closed=True)).s(c.Detach(handle=0, closed=True))
    r = dissect(write(tmp_path / "unsettled-txn.pcapng", s.close()))
    got = [(d.txn_id, d.outcome, d.txn_result) for d in r.deliveries if d.coordinator is None]
    assert got == [(b"txn-a", "accepted", "committed"),
                   (b"txn-b", "rolled-back", "rolled-back")]
