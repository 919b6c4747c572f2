"""`amqp send` to python-qpid-proton peers: proton receives exactly the bytes we meant."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from proton import Message

from amqpcli.codec import composites as c
from amqpcli.codec.encode import encode
from amqpcli.codec.message import Message as AMessage
from amqpcli.codec.types import Int, Symbol, UByte, UInt
from tests.net.clirun import amqp
from tests.peers import Accept, Broker, DirectReceiver, Hold, Reject, Release

pytestmark = pytest.mark.integration


def test_every_section_byte_identical(direct_receiver: Callable[..., DirectReceiver]) -> None:
    rcv = direct_receiver()
    uid = uuid.UUID("12345678-1234-5678-1234-567812345678")
    r = amqp(
        "send", f"{rcv.url}/target", "--body-type", "value", "int:7",
        "--durable", "--priority", "3", "--ttl", "1000",
        "--message-id", f"uuid:{uid}", "--subject", "s", "--to", "t",
        "-P", "k:int=5", "-A", "x-opt-a=b", "--delivery-annotation", "x-opt-d:uint=9",
        "--footer", "x-opt-f=g", "--json",
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["accepted"] == 1
    (got,) = rcv.wait_for_messages(1)
    # The same message built independently with the codec's Message model.
    want = AMessage(
        c.AmqpValue(Int(7)),
        header=c.Header(durable=True, priority=UByte(3), ttl=UInt(1000)),
        delivery_annotations=c.DeliveryAnnotations({Symbol("x-opt-d"): UInt(9)}),
        message_annotations=c.MessageAnnotations({Symbol("x-opt-a"): "b"}),
        properties=c.Properties(message_id=uid, to="t", subject="s"),
        application_properties=c.ApplicationProperties({"k": Int(5)}),
        footer=c.Footer({Symbol("x-opt-f"): "g"}),
    )
    assert got.raw == want.encode()
    m = got.message  # and proton reads it the same way
    assert m.body == 7 and m.id == uid and m.subject == "s" and m.durable and m.priority == 3
    assert m.properties == {"k": 5}
    assert m.annotations == {"x-opt-a": "b"} and m.instructions == {"x-opt-d": 9}


def test_data_and_sequence_bodies(direct_receiver: Callable[..., DirectReceiver]) -> None:
    rcv = direct_receiver()
    assert amqp("send", f"{rcv.url}/q", "raw bytes").returncode == 0
    assert amqp("send", f"{rcv.url}/q", "--body-type", "sequence", '[1, "a"]').returncode == 0
    a, b = rcv.wait_for_messages(2)
    assert a.bare == encode(c.Data(b"raw bytes"))
    assert b.bare == encode(c.AmqpSequence([1, "a"]))


def test_replay_is_byte_identical_for_non_canonical_encodings(
    direct_receiver: Callable[..., DirectReceiver], tmp_path: Any
) -> None:
    # Proton encodes with its own choices (str32 strings, list32s, …); a replayed message
    # must keep them.
    pm = Message(body={"a": [1, 2.5, None]}, id="m-1", subject="subj",
                 properties={"x": 1}, annotations={"x-opt-z": "z"})
    raw = bytes(pm.encode())
    from amqpcli.render.message import message_to_json

    line = json.dumps(message_to_json(AMessage.decode(raw)))
    f = tmp_path / "in.jsonl"
    f.write_text(line + "\n" + line + "\n")
    rcv = direct_receiver()
    r = amqp("send", f"{rcv.url}/q", "--from", str(f), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["accepted"] == 2
    got = rcv.wait_for_messages(2)
    assert [g.raw for g in got] == [raw, raw]


def test_outcomes_counted_and_exit_code(direct_receiver: Callable[..., DirectReceiver]) -> None:
    outcomes = [Reject("amqp:precondition-failed", "nope"), Release()]
    rcv = direct_receiver(outcome=lambda rec: outcomes[rec.index] if rec.index < 2 else Accept())
    r = amqp("send", f"{rcv.url}/q", "x", "--count", "3", "--json")
    s = json.loads(r.stdout)
    assert r.returncode == 6, r.stderr  # REJECTED
    assert (s["rejected"], s["released"], s["accepted"]) == (1, 1, 1)
    assert s["outcome-details"] == [{"state": {"rejected": {"error": {"error": {
        "condition": "amqp:precondition-failed", "description": "nope"}}}},
        "count": 1, "messages": [1]}]


def test_presettled_and_window(direct_receiver: Callable[..., DirectReceiver]) -> None:
    rcv = direct_receiver(credit=50)
    r = amqp("send", f"{rcv.url}/q", "x", "--count", "200", "--presettled", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["settled"] == 200
    got = rcv.wait_for_messages(200)
    assert all(g.presettled for g in got)


def test_timeout_waiting_for_outcomes_leaves_them_in_doubt(
    direct_receiver: Callable[..., DirectReceiver],
) -> None:
    rcv = direct_receiver(outcome=Hold())
    r = amqp("send", f"{rcv.url}/q", "x", "--count", "2", "--message-id", "h{n}",
             "--timeout", "1", "--json")
    assert r.returncode == 7, r.stderr  # IN_DOUBT
    s = json.loads(r.stdout)
    assert [d["message-id"] for d in s["in-doubt-messages"]] == ["h1", "h2"]
    assert "no outcome for 2 message(s)" in r.stderr


def test_transactions_commit_and_rollback(peers: Callable[..., Any]) -> None:
    broker = peers(Broker())
    r = amqp("send", f"{broker.url}/txq", "t", "--count", "5", "--txn-size", "2", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["transactions"]["committed"] == 3 and s["accepted"] == 5
    assert len(broker.queue_bodies("txq")) == 5
    r = amqp("send", f"{broker.url}/txq", "t", "--count", "4", "--txn-size", "2",
             "--rollback", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["transactions"] == {"committed": 0, "rolled-back": 2, "rolled-back-messages": 4}
    assert len(broker.queue_bodies("txq")) == 5
    assert broker.transactions()["committed"] == 3 and broker.transactions()["rolled_back"] == 2


def test_refused_link_is_exit_4(direct_receiver: Callable[..., DirectReceiver]) -> None:
    rcv = direct_receiver()
    r = amqp("send", f"{rcv.url}", "x")  # no address
    assert r.returncode == 2 and "no address" in r.stderr


def test_presettled_sends_wait_for_credit(direct_receiver: Callable[..., DirectReceiver]) -> None:
    # 5 credits and no more: "sent" must mean framed, never queued behind missing credit.
    rcv = direct_receiver(credit=5, replenish=False)
    r = amqp("send", f"{rcv.url}/q", "x", "--count", "20", "--presettled", "--timeout", "1",
             "--json")
    assert r.returncode == 5, r.stderr  # TIMEOUT
    s = json.loads(r.stdout)
    assert s["sent"] == 5 and s["settled"] == 5
    assert "no credit from the peer for 1s" in r.stderr
    assert len(rcv.wait_for_messages(5)) == 5


def test_replayed_messages_in_doubt_by_message_id(
    direct_receiver: Callable[..., DirectReceiver], tmp_path: Any
) -> None:
    from amqpcli.render.message import message_to_json

    lines = [
        json.dumps(message_to_json(AMessage(c.AmqpValue(i), properties=c.Properties(message_id=f"r{i}"))))
        for i in range(2)
    ]
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(lines) + "\n")
    rcv = direct_receiver(outcome=Hold())
    r = amqp("send", f"{rcv.url}/q", "--from", str(f), "--timeout", "1", "--json")
    assert r.returncode == 7, r.stderr
    s = json.loads(r.stdout)
    assert s["in-doubt-messages"] == [{"number": 1, "message-id": "r0"},
                                      {"number": 2, "message-id": "r1"}]
