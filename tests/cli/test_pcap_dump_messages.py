"""`amqp pcap-dump --messages`: each message followed across connections by its bare
message — on RabbitMQ's traffic (a producer's connection into the queue, a consumer's out
of it), on crafted captures (a redelivery, a message holding a SASL secret), with
filters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import Described, Symbol
from tests.dissect.helpers import Script, write
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
