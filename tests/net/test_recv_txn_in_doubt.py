"""`amqp recv --txn-size`: a commit the peer never answers leaves its messages in doubt
(exit 7, as for send), written all the same; one never sent (the connection dropped
before the transaction was full) leaves them to come again, with a warning."""

from __future__ import annotations

import json
import threading

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.engine import DeliveryUpdated, Event, LinkAttached, MessageReceived
from tests.net.clirun import amqp, json_lines
from tests.net.onepeer import HANG_GUARD, PeerConnection, engine_peer

pytestmark = pytest.mark.integration


def _peer(drop_on: str) -> tuple[int, threading.Thread]:
    """Holds two messages for the receiver, declares transactions, and drops the
    connection when the first discharge comes (`discharge`) or after the second
    message's disposition (`disposition`), answering neither."""
    disposed = 0

    def script(peer: PeerConnection, e: Event) -> None:
        nonlocal disposed
        ep = peer.ep
        if isinstance(e, LinkAttached) and e.side == ep.remote:
            if e.link.coordinator:
                ep.flow(e.link, 10)
            elif e.link.sender == ep.local:
                for i in (1, 2):
                    ep.send(e.link, Message(c.AmqpValue(f"m{i}")).encode())
        elif isinstance(e, MessageReceived) and e.delivery.link.coordinator:
            req = e.delivery.txn_request
            if isinstance(req, c.Declare):
                ep.settle(e.delivery, c.Declared(txn_id=b"t1"))
            elif drop_on == "discharge":
                peer.hang_up()
        elif (isinstance(e, DeliveryUpdated) and e.entry.side == ep.remote
              and not e.delivery.link.coordinator):
            disposed += 1
            if drop_on == "disposition" and disposed == 2:
                peer.hang_up()

    return engine_peer(script)


def test_a_commit_not_answered_leaves_its_messages_in_doubt() -> None:
    port, th = _peer("discharge")
    r = amqp("recv", f"amqp://127.0.0.1:{port}/q", "--sasl-mechanism", "none",
             "--txn-size", "2", "-c", "2", "-t", "30", "--json", timeout=HANG_GUARD)
    th.join(HANG_GUARD)
    assert r.returncode == 7, r.stderr
    assert [m["body"] for m in json_lines(r.stdout)] == [{"value": "m1"}, {"value": "m2"}]
    assert "2 message(s) in doubt" in r.stderr
    assert "in doubt 2" in r.stderr  # the summary's counter


def test_the_json_summary_gives_the_exit_code_the_run_ends_with() -> None:
    """In doubt wins over the lost connection behind it: the JSON summary said exit 3."""
    port, th = _peer("discharge")
    r = amqp("recv", f"amqp://127.0.0.1:{port}/q", "--sasl-mechanism", "none",
             "--txn-size", "2", "-c", "2", "-t", "30", "--json-summary", timeout=HANG_GUARD)
    th.join(HANG_GUARD)
    assert r.returncode == 7, r.stderr
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("{")]
    summary = json.loads(line)["recv"]
    assert summary["exit"] == 7 and summary["error"].startswith("2 message(s) in doubt")
    assert summary["in-doubt"] == 2


def test_a_transaction_cut_before_its_discharge_leaves_the_messages_to_come_again() -> None:
    port, th = _peer("disposition")
    r = amqp("recv", f"amqp://127.0.0.1:{port}/q", "--sasl-mechanism", "none",
             "--txn-size", "3", "-t", "30", "--json", timeout=HANG_GUARD)
    th.join(HANG_GUARD)
    assert r.returncode == 3, r.stderr  # the connection lost: nothing is in doubt
    assert len(json_lines(r.stdout)) == 2
    assert "2 message(s) written in a transaction that was not committed" in r.stderr
    assert "in doubt" not in r.stderr
