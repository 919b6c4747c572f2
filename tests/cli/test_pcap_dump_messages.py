"""`amqp pcap-dump --messages`: each message followed across connections by its bare
message — on RabbitMQ's traffic (a producer's connection into the queue, a consumer's out
of it), on crafted captures (a redelivery, a message holding a SASL secret, one a broker
gave a properties section), with filters."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import Described, Symbol
from amqpcli.dissect.journeys import Journeys
from tests.dissect.helpers import Script, dissect, write, write_connections
from tests.net.clirun import amqp_in_process as run
from tests.paths import CAPTURES_DIR, require

RABBIT = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"
SAMPLE = Path(__file__).parents[2] / "amqpcli" / "examples" / "serve-session.pcapng"


def _jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_rabbitmq_messages_in_and_out_of_the_queue() -> None:
    code, out, err = run("pcap-dump", str(require(RABBIT)), "--messages", "--json")
    assert code == 0, err
    messages = _jsonl(out)
    assert len(messages) == 20 and {m["record"] for m in messages} == {"message"}
    for m in messages:
        into, out_of = m["hops"]
        # the producer's delivery into the queue, then the queue's to the consumer
        assert (into["connection"], into["from"]) == ("c1", "client")
        assert (out_of["connection"], out_of["from"]) == ("c2", "server")
        assert into["address"] == out_of["address"] == "/queue/lab.cap.c"
        assert into["outcome"] == out_of["outcome"] == "accepted"
        assert m["transit"] == out_of["after"] > 0 and into["after"] == 0
    assert [m["message-id"] for m in messages] == [{"ulong": n} for n in range(20)]
    # the key is the bare-sha256 every delivery's message carries
    code, out, _ = run("pcap-dump", str(RABBIT), "--deliveries", "--json")
    assert code == 0
    hashes = {d["message"]["bare-sha256"] for d in _jsonl(out) if d["record"] == "delivery"}
    assert hashes == {m["bare-sha256"] for m in messages}


def test_text_lines_and_totals() -> None:
    code, out, err = run("pcap-dump", str(require(RABBIT)), "-m")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 21
    first = lines[0].split()
    assert first[1] == "6e5c021f" and first[4] == "id=ulong:0"
    assert " c1 -> /queue/lab.cap.c accepted; +" in lines[0]
    assert lines[0].endswith(" c2 <- /queue/lab.cap.c accepted")
    assert lines[-1].startswith("20 messages: 0 seen once, 20 on two or more deliveries; "
                                "first to last p50 ")


def test_a_filter_shows_the_messages_it_chose_with_all_their_hops() -> None:
    code, out, _ = run("pcap-dump", str(require(SAMPLE)), "-m", "--json", "--state",
                       "rejected")
    assert code == 0
    chosen = _jsonl(out)
    assert chosen and all(any(h["outcome"] == "rejected" for h in m["hops"]) for m in chosen)
    code, out, _ = run("pcap-dump", str(SAMPLE), "-m", "--json")
    assert code == 0
    every = _jsonl(out)
    assert len(chosen) < len(every)
    # all of a chosen message's hops, not only the rejected one
    by_hash = {m["bare-sha256"]: m for m in every}
    assert all(m == by_hash[m["bare-sha256"]] for m in chosen)


def _redelivered(tmp_path: Path) -> Path:
    """One message sent twice (a redelivery: the same bare message) and another once."""
    s = Script().open().sender_link(address="orders")
    s.transfer(0, "once").transfer(1, "again").at(0.5).transfer(2, "again")
    s.dispose(0, c.Accepted(), 2).close()
    return write(tmp_path / "again.pcapng", s)


def test_the_same_bare_message_twice_is_one_message(tmp_path: Path) -> None:
    code, out, err = run("pcap-dump", str(_redelivered(tmp_path)), "-m", "--json")
    assert code == 0, err
    once, again = _jsonl(out)
    assert [h["delivery-id"] for h in once["hops"]] == [0]
    assert [h["delivery-id"] for h in again["hops"]] == [1, 2]
    assert once["transit"] is None and again["transit"] == again["hops"][1]["after"]
    assert again["transit"] == pytest.approx(0.49, abs=0.001)


def test_a_message_holding_a_sasl_secret_is_neither_hashed_nor_named(tmp_path: Path) -> None:
    init = c.SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\0guest\0hunter2")
    payload = Message(body=init, properties=c.Properties(message_id="m-hunter2")).encode()
    s = Script().open().sender_link()
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t", message_format=0,
                   settled=True), payload=payload).close()
    path = write(tmp_path / "secret.pcapng", s)
    code, out, _ = run("pcap-dump", str(path), "-m", "--json")
    (m,) = _jsonl(out)
    assert m["redacted"] is True and "bare-sha256" not in m and "message-id" not in m
    code, out, _ = run("pcap-dump", str(path), "-m")
    assert out.split()[1] == "redacted" and "hunter2" not in out
    code, out, _ = run("pcap-dump", str(path), "-m", "--json", "--show-secrets")
    assert code == 0
    (m,) = _jsonl(out)
    assert m["message-id"] == "m-hunter2" and len(m["bare-sha256"]) == 64


def test_a_sasl_secret_under_a_descriptor_by_name_is_neither_hashed_nor_named(
        tmp_path: Path) -> None:
    """The descriptor by its symbolic name (`amqp:sasl-init:list`), which raw bytes do
    not show: judged as `recv --json` judges it."""
    init = Described(Symbol("amqp:sasl-init:list"), [Symbol("PLAIN"), b"\0me\0Tr0ub4dor"])
    payload = Message(body=init, properties=c.Properties(message_id="secretmsg")).encode()
    s = Script().open().sender_link()
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t", message_format=0,
                   settled=True), payload=payload).close()
    path = write(tmp_path / "named.pcapng", s)
    code, out, _ = run("pcap-dump", str(path), "-m", "--json")
    assert code == 0
    (m,) = _jsonl(out)
    assert m["redacted"] is True and "bare-sha256" not in m and "message-id" not in m
    code, out, _ = run("pcap-dump", str(path), "-d", "--json")
    assert code == 0 and _jsonl(out)[-1]["message"]["redacted"] is True  # (alike)


def test_transaction_control_is_no_message(tmp_path: Path) -> None:
    """Declares and discharges sent to a coordinator are the same bytes from every client:
    they were followed as one message across connections."""
    paths = []
    for i in range(2):
        s = Script().open()
        s.c(c.Attach(name="txn", handle=1, role=False, source=c.Source(),
                     target=c.Coordinator(), initial_delivery_count=0))
        s.s(c.Attach(name="txn", handle=1, role=True, source=c.Source(),
                     target=c.Coordinator()))
        s.s(c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=0,
                   outgoing_window=1000, handle=1, delivery_count=0, link_credit=10))
        s.c(c.Transfer(handle=1, delivery_id=0, delivery_tag=b"d", message_format=0),
            payload=Message(body=c.Declare()).encode())
        s.dispose(0, c.Declared(txn_id=b"t%d" % i))
        s.sender_link(handle=0).transfer(1, "in a txn").dispose(1, c.Accepted()).close()
        paths.append(str(write(tmp_path / f"txn{i}.pcapng", s, port=5672 + i)))
    code, out, err = run("pcap-dump", *paths, "-m", "--json")
    assert code == 0, err
    messages = _jsonl(out)
    # the one message each client sent (the same bytes: one message, two hops), no declare
    assert len(messages) == 1 and len(messages[0]["hops"]) == 2
    assert {h["link"] for h in messages[0]["hops"]} == {"sender"}


# --- a properties section a node added (RabbitMQ 3.10 gives one, with a subject, to a
# message sent without) -------------------------------------------------------------------


def _producer(bodies: list[Message]) -> Script:
    """A client sends each message to "q"; the broker accepts them (settling them after
    all were sent)."""
    s = Script().open().sender_link(address="q")
    for i, m in enumerate(bodies):
        s.c(c.Transfer(handle=0, delivery_id=i, delivery_tag=b"p%d" % i, message_format=0),
            payload=m.encode())
    return s.dispose(0, c.Accepted(), len(bodies) - 1).close()


def _consumer(bodies: list[Message]) -> Script:
    """The broker sends each message from "q" to a client, pre-settled."""
    s = Script().open()
    s.c(c.Attach(name="rx", handle=0, role=True, source=c.Source(address="q"),
                 target=c.Target()))
    s.s(c.Attach(name="rx", handle=0, role=False, source=c.Source(address="q"),
                 target=c.Target(), initial_delivery_count=0))
    s.c(c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=0,
               outgoing_window=1000, handle=0, delivery_count=0, link_credit=100))
    for i, m in enumerate(bodies):
        s.s(c.Transfer(handle=0, delivery_id=i, delivery_tag=b"c%d" % i, message_format=0,
                       settled=True), payload=m.encode())
    return s.close()


def _subject(m: Message) -> Message:
    """`m` as RabbitMQ 3.10 delivers one sent without properties: with a subject."""
    return Message(properties=c.Properties(subject="q"),
                   application_properties=m.application_properties, body=m.body)


SENT_BARE = Message(application_properties={"k": "v"}, body=b"sent bare")
# two messages sent with properties of their own and the same body: two messages still
OWN = [Message(properties=c.Properties(message_id=f"own-{n}"), body=b"own") for n in (1, 2)]


def _through_a_queue(tmp_path: Path) -> str:
    return write_connections(tmp_path / "queue.pcapng", [
        _producer([SENT_BARE, *OWN]), _consumer([_subject(SENT_BARE), *OWN])])


def _journeys(records: list) -> list[tuple[bytes, list[tuple[str, int | None, bool]]]]:
    journeys = Journeys()
    for rec in records:
        journeys.add(rec)
    return [(j.digest, [(h.conn, h.delivery_id, h.properties_added) for h in j.hops])
            for j in journeys]


def test_properties_a_node_added_whichever_delivery_ended_first(tmp_path: Path) -> None:
    """Records come as deliveries end: the consumer's may come before its producer's."""
    records = dissect(Path(_through_a_queue(tmp_path)), keep_payload=True).deliveries
    assert [r.conn.label for r in records] == ["c1"] * 3 + ["c2"] * 3
    as_sent = hashlib.sha256(SENT_BARE.bare_bytes).digest()
    own = [hashlib.sha256(m.bare_bytes).digest() for m in OWN]
    expected = [
        (as_sent, [("c1", 0, False), ("c2", 0, True)]),
        (own[0], [("c1", 1, False), ("c2", 1, False)]),
        (own[1], [("c1", 2, False), ("c2", 2, False)]),
    ]
    assert _journeys(records) == expected
    assert _journeys(records[::-1]) == expected
    assert _journeys([records[3], records[0], records[4], records[1]]) == expected[:2]


def test_properties_a_node_added_shown(tmp_path: Path) -> None:
    path = _through_a_queue(tmp_path)
    code, out, err = run("pcap-dump", path, "-m", "--json")
    assert code == 0, err
    bare, *own = _jsonl(out)
    # known as sent: its hash and size, no message-id; the consumer's hop says what changed
    assert bare["bare-sha256"] == hashlib.sha256(SENT_BARE.bare_bytes).hexdigest()
    assert bare["size"] == len(SENT_BARE.bare_bytes) and bare["message-id"] is None
    assert ["properties-added" in h for h in bare["hops"]] == [False, True]
    assert bare["hops"][1]["properties-added"] is True
    # sent with properties: matched exactly, each its own message
    assert [m["message-id"] for m in own] == ["own-1", "own-2"]
    assert all(len(m["hops"]) == 2 and not any("properties-added" in h for h in m["hops"])
               for m in own)
    code, out, _ = run("pcap-dump", path, "-m")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].endswith(" c1 -> q accepted; +1.000 s c2 <- q +properties settled")
    assert "+properties" not in "".join(lines[1:])
    assert lines[-1].startswith("3 messages: 0 seen once, 3 on two or more deliveries")


def test_properties_a_node_added_to_a_message_holding_a_secret(tmp_path: Path) -> None:
    """Redacted whichever form holds the secret: the one as sent and the one the node
    added properties to are one message, hidden as one."""
    init = c.SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\0guest\0hunter2")
    sent = Message(body=init)
    path = write_connections(tmp_path / "secret.pcapng",
                             [_producer([sent]), _consumer([_subject(sent)])])
    code, out, _ = run("pcap-dump", path, "-m", "--json")
    assert code == 0
    (m,) = _jsonl(out)
    assert m["redacted"] is True and "bare-sha256" not in m and "message-id" not in m
    assert len(m["hops"]) == 2 and m["hops"][1]["properties-added"] is True
    code, out, _ = run("pcap-dump", path, "-m")
    assert out.split()[1] == "redacted" and "hunter2" not in out
    code, out, _ = run("pcap-dump", path, "-m", "--json", "--show-secrets")
    (m,) = _jsonl(out)
    assert m["bare-sha256"] == hashlib.sha256(sent.bare_bytes).hexdigest()
