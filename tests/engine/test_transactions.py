"""Transactions (Part 4): coordinator link, declare, transactional send and accept,
discharge."""

from __future__ import annotations

from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.engine import (
    MessageReceived,
    TransactionDeclared,
    TransactionDischarged,
)

from .harness import Pair, of


def _coordinate(p: Pair, seen: list[Any], fail_discharge: bool = False) -> None:
    """The peer's side of a coordinator: declare gives txn-1, discharge is accepted."""
    for e in of(p.peer.take_events() + p.peer_events, MessageReceived):
        d = e.delivery
        if d in seen or not d.link.coordinator:
            continue
        seen.append(d)
        if isinstance(d.txn_request, c.Declare):
            p.peer.settle(d, c.Declared(txn_id=b"txn-1"))
        elif isinstance(d.txn_request, c.Discharge):
            if fail_discharge:
                p.peer.reject(d, c.Error(condition=Symbol("amqp:transaction:timeout")))
            else:
                p.peer.accept(d)


def _run(p: Pair, seen: list[Any], fail: bool = False) -> None:
    for _ in range(5):
        p.pump()
        _coordinate(p, seen, fail)


def test_declare_send_accept_commit() -> None:
    p = Pair()
    s = p.client.begin()
    coord = p.client.attach_coordinator(s)
    p.pump()
    assert coord.coordinator and p.peer_link(coord).coordinator
    p.peer.flow(p.peer_link(coord), 10)
    seen: list[Any] = []
    decl = p.client.declare(coord)
    _run(p, seen)
    declared = of(p.client_events, TransactionDeclared)
    assert declared and declared[0].txn_id == b"txn-1" and declared[0].delivery is decl
    assert p.client.connection.transactions[b"txn-1"] == "active"
    assert p.peer.connection.transactions[b"txn-1"] == "active"

    # transactional send
    link, plink = p.sender("tx-out", credit=5, session=s)
    d = p.client.send(link, b"in a transaction", txn_id=b"txn-1")
    p.pump()
    got = [e.delivery for e in of(p.peer_events, MessageReceived) if e.delivery.link is plink]
    assert got[0].txn_id == b"txn-1"
    assert isinstance(got[0].sender_state, c.TransactionalState)
    p.peer.dispose(got[0], c.TransactionalState(txn_id=b"txn-1", outcome=c.Accepted()),
                   settled=True)
    p.pump()
    assert d.outcome == "accepted" and d.txn_id == b"txn-1"

    # transactional accept of a message we receive
    rlink, rplink = p.receiver("tx-in", credit=5, session=s)
    p.peer.send(rplink, b"consume me")
    p.pump()
    rd = [e.delivery for e in of(p.client_events, MessageReceived) if e.delivery.link is rlink]
    p.client.accept_in(rd[0], b"txn-1")
    p.pump()
    pd = rd[0]
    assert pd.outcome == "accepted" and pd.txn_id == b"txn-1"
    assert pd.receiver_state.outcome == c.Accepted()

    # commit
    p.client.discharge(coord, b"txn-1")
    _run(p, seen)
    dis = of(p.client_events, TransactionDischarged)
    assert dis and dis[0].txn_id == b"txn-1" and dis[0].outcome == "committed"
    assert not dis[0].fail
    assert p.client.connection.transactions[b"txn-1"] == "committed"


def test_rollback_and_failed_discharge() -> None:
    p = Pair()
    s = p.client.begin()
    coord = p.client.attach_coordinator(s)
    p.pump()
    p.peer.flow(p.peer_link(coord), 10)
    seen: list[Any] = []
    p.client.declare(coord)
    _run(p, seen)
    p.client.discharge(coord, b"txn-1", fail=True)
    _run(p, seen)
    assert of(p.client_events, TransactionDischarged)[0].outcome == "rolled-back"

    p2 = Pair()
    s2 = p2.client.begin()
    coord2 = p2.client.attach_coordinator(s2)
    p2.pump()
    p2.peer.flow(p2.peer_link(coord2), 10)
    seen2: list[Any] = []
    p2.client.declare(coord2)
    _run(p2, seen2, fail=True)
    p2.client.discharge(coord2, b"txn-1")
    _run(p2, seen2, fail=True)
    out = of(p2.client_events, TransactionDischarged)[0].outcome
    assert out == "failed: amqp:transaction:timeout"


def test_transactional_acquisition() -> None:
    p = Pair()
    s = p.client.begin()
    coord = p.client.attach_coordinator(s)
    p.pump()
    p.peer.flow(p.peer_link(coord), 10)
    seen: list[Any] = []
    p.client.declare(coord)
    _run(p, seen)
    link, plink = p.receiver("acq", session=s)
    p.client.flow(link, 2, txn_id=b"txn-1")
    p.pump()
    assert plink.txn_id == b"txn-1" and link.txn_id == b"txn-1"
    # the sender marks what it sends under that credit with the transaction
    d = p.peer.send(plink, b"acquired", txn_id=plink.txn_id)
    p.pump()
    got = [e.delivery for e in of(p.client_events, MessageReceived) if e.delivery.link is link]
    assert got[0].txn_id == b"txn-1" and d.txn_id == b"txn-1"
    p.client.flow(link, 2)  # credit outside the transaction again
    p.pump()
    assert plink.txn_id is None
