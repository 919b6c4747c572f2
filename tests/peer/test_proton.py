"""`amqp serve` seen from python-qpid-proton: fault injection observable by a proton
client, and interop as the node between proton senders and receivers."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqpcli.codec.message import Message as AMessage
from tests.net.clirun import amqp, json_lines, queue_name
from tests.peer.proton_clients import receive_raw, send_all

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]


def _msgs(n: int) -> list[Message]:
    return [Message(body=f"m{i}", id=i + 1) for i in range(n)]


def test_outcomes_seen_by_a_proton_sender(serve: Serve) -> None:
    s = serve("--reject", "at:2", "--release", "at:3", "--modify", "at:4")
    report = send_all(s.url, queue_name(), _msgs(5))
    assert not report.timed_out and report.link_error is None
    assert [o.state for o in report.outcomes] == ["accepted", "rejected", "released", "modified", "accepted"]
    assert report.outcomes[1].condition == "amqp:precondition-failed"
    assert report.outcomes[3].failed and not report.outcomes[3].undeliverable
    s.wait_log(r"message 2 rejected \(amqp:precondition-failed\)")


def test_share_rule_with_seed_is_repeatable(serve: Serve) -> None:
    runs = []
    for _ in range(2):
        s = serve("--reject", "0.5", "--seed", "7")
        report = send_all(s.url, "q", _msgs(20))
        runs.append([o.state for o in report.outcomes])
        s.stop()
    assert runs[0] == runs[1]
    assert 0 < runs[0].count("rejected") < 20


def test_settle_delay_still_settles(serve: Serve) -> None:
    s = serve("--settle-delay", "300")
    report = send_all(s.url, "q", _msgs(3))
    assert [o.state for o in report.outcomes] == ["accepted"] * 3


def test_no_credit_stalls_a_proton_sender(serve: Serve) -> None:
    from proton import Timeout

    s = serve("--credit", "0")
    conn = BlockingConnection(s.url, timeout=10)
    try:
        sender = conn.create_sender("stalled")
        assert sender.link.credit == 0
        with pytest.raises(Timeout):
            sender.send(Message(body="never"), timeout=2)
    finally:
        conn.close()
    r = amqp("browse", f"{s.url}/stalled")
    assert "0 messages" in r.stderr


def test_small_credit_window_still_gets_everything_through(serve: Serve) -> None:
    s = serve("--credit", "1")
    report = send_all(s.url, "q", _msgs(10))
    assert [o.state for o in report.outcomes] == ["accepted"] * 10
    assert report.credit <= 1


def test_refused_link_seen_by_proton(serve: Serve) -> None:
    s = serve("--refuse", "secret.*")
    report = send_all(s.url, "secret.orders", _msgs(1), timeout=10)
    assert report.link_error == "amqp:not-found"
    assert report.outcomes == []
    # other addresses work
    assert [o.state for o in send_all(s.url, "public", _msgs(1)).outcomes] == ["accepted"]


def test_detach_after_seen_by_proton(serve: Serve) -> None:
    s = serve("--detach-after", "2")
    report = send_all(s.url, "q", _msgs(5), timeout=10)
    assert report.link_error == "amqp:link:detach-forced"
    assert [o.state for o in report.outcomes][:2] == ["accepted", "accepted"]
    s.wait_log(r"detaching .* after 2 deliveries")


def test_close_after_seen_by_proton(serve: Serve) -> None:
    s = serve("--close-after", "3")
    report = send_all(s.url, "q", _msgs(5), timeout=10)
    assert report.connection_error == "amqp:connection:forced"
    assert [o.state for o in report.outcomes][:3] == ["accepted"] * 3
    # a blocking client hears it as ConnectionClosed (with the third outcome, or on the
    # next send: both arrive together), and exactly three messages were stored
    from proton.utils import ConnectionClosed

    conn = BlockingConnection(s.url, timeout=10)
    sender = conn.create_sender("q2")
    with pytest.raises(ConnectionClosed) as info:
        for m in _msgs(5):
            sender.send(m)
    assert info.value.condition == "amqp:connection:forced"
    s.wait_log(r"-> 'q2': message 3 accepted")
    s.wait_log(r"c2 disconnected")
    assert "-> 'q2': message 4" not in s.log


def test_detach_after_on_a_receiving_link(serve: Serve) -> None:
    s = serve("--detach-after", "2")
    address = queue_name()
    assert [o.state for o in send_all(s.url, address, _msgs(1)).outcomes] == ["accepted"]
    assert [o.state for o in send_all(s.url, address, _msgs(1)).outcomes] == ["accepted"]
    assert [o.state for o in send_all(s.url, address, _msgs(1)).outcomes] == ["accepted"]
    r = amqp("recv", f"{s.url}/{address}", "-c", "3", "-t", "10")
    assert r.returncode == 4, r.stderr  # the link was ended under it
    assert "amqp:link:detach-forced" in r.stderr


def _varied() -> list[Message]:
    return [
        Message(body="text", id=1, subject="s", properties={"k": 5, "u": uuid.UUID(int=1)}),
        Message(body=b"\x00\x01binary", correlation_id=b"\x01\x02", durable=True, priority=9),
        Message(body=[1, "two", 3.5], annotations={"x-opt-a": "b"}, instructions={"x-opt-i": 1}),
        Message(body={"m": {"nested": [True, None]}}, content_type="application/x", ttl=60),
        Message(body=None, address="somewhere", reply_to="back", group_id="g", group_sequence=3),
    ]


def test_proton_to_proton_through_serve_is_byte_identical(serve: Serve) -> None:
    s = serve()
    address = queue_name()
    msgs = _varied()
    report = send_all(s.url, address, msgs)
    assert [o.state for o in report.outcomes] == ["accepted"] * len(msgs)
    raws = receive_raw(s.url, address, len(msgs))
    assert raws == [bytes(m.encode()) for m in msgs]


def test_proton_sender_to_our_receiver(serve: Serve) -> None:
    s = serve()
    address = queue_name()
    msgs = _varied()
    assert len(send_all(s.url, address, msgs).outcomes) == len(msgs)
    r = amqp("recv", f"{s.url}/{address}", "-c", str(len(msgs)), "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)
    for obj, pm in zip(out, msgs, strict=True):
        raw = bytes(pm.encode())
        assert obj["bare-sha256"] == hashlib.sha256(AMessage.decode(raw).bare_bytes).hexdigest()


def test_our_sender_to_a_proton_receiver(serve: Serve, tmp_path: Any) -> None:
    from amqpcli.codec import composites as c
    from amqpcli.codec.types import Int

    s = serve()
    address = queue_name()
    raws = [AMessage(c.AmqpValue(Int(i)), properties=c.Properties(message_id=f"id-{i}"),
                     application_properties=c.ApplicationProperties({"i": Int(i)})).encode()
            for i in range(3)]
    # what `amqp recv --json` writes, `amqp send --from` replays
    src = queue_name()
    assert [o.state for o in send_all(s.url, src, [_decode(r) for r in raws]).outcomes] == ["accepted"] * 3
    out = tmp_path / "m.jsonl"
    r = amqp("recv", f"{s.url}/{src}", "-c", "3", "-t", "10", "--json", "--out", str(out))
    assert r.returncode == 0, r.stderr
    r = amqp("send", f"{s.url}/{address}", "--from", str(out))
    assert r.returncode == 0, r.stderr
    got = receive_raw(s.url, address, 3)
    # The queue held what proton sent (it re-encodes application-properties as a map32);
    # recv --json kept those bytes and send --from replayed them exactly.
    sent_by_proton = [AMessage.decode(bytes(_decode(r).encode())).bare_bytes for r in raws]
    assert sent_by_proton != [AMessage.decode(r).bare_bytes for r in raws]
    assert [AMessage.decode(bytes(g)).bare_bytes for g in got] == sent_by_proton
    r = amqp("send", f"{s.url}/{address}", "plain", "--subject", "subj", "-P", "k:int=5")
    assert r.returncode == 0, r.stderr
    m = _decode(bytes(receive_raw(s.url, address, 1)[0]))
    assert (m.body, m.subject, m.properties) == (b"plain", "subj", {"k": 5})


def _decode(raw: bytes) -> Message:
    m = Message()
    m.decode(raw)
    return m


def test_sasl_plain_with_proton(serve: Serve) -> None:
    s = serve("--user", "bob", "--password", "pw")
    report = send_all(s.url, "q", _msgs(1), user="bob", password="pw")
    assert [o.state for o in report.outcomes] == ["accepted"]
    bad = send_all(s.url, "q", _msgs(1), user="bob", password="nope", timeout=10)
    assert bad.outcomes == [] and bad.connection_error is not None
    s.wait_log(r"open from .* as 'bob'")


def test_unsettled_messages_come_back_when_a_proton_receiver_goes(serve: Serve) -> None:
    s = serve()
    address = queue_name()
    assert len(send_all(s.url, address, _msgs(3)).outcomes) == 3
    conn = BlockingConnection(s.url, timeout=10)
    rcv = conn.create_receiver(address, credit=3)
    got = [rcv.receive(timeout=10).body for _ in range(2)]  # never accepted
    assert got == ["m0", "m1"]
    conn.close()
    r = amqp("recv", f"{s.url}/{address}", "--drain", "-t", "10", "--json")
    assert [m["body"]["value"] for m in json_lines(r.stdout)] == ["m0", "m1", "m2"]


def test_a_proton_receiver_gets_nothing_over_its_max_message_size(serve: Serve) -> None:
    """A receiver's max-message-size (Part 2 §2.7.3) holds: the large message stays queued
    for a receiver that can take it; this one gets the small one."""
    from proton.reactor import LinkOption

    class _Limit(LinkOption):
        def apply(self, link: Any) -> None:
            link.max_message_size = 200

    s = serve()
    address = queue_name()
    assert len(send_all(s.url, address, [Message(body=b"x" * 1000),
                                          Message(body=b"small")]).outcomes) == 2
    conn = BlockingConnection(s.url, timeout=10)
    rcv = conn.create_receiver(address, credit=2, options=[_Limit()])
    got = rcv.receive(timeout=10)
    rcv.accept()
    assert got.body == b"small"
    # and the log says why this receiver did not get the large one
    s.wait_log(rf"<- '{address}': a message of \d+ bytes is over the link's "
               r"max-message-size 200: not sent to it, kept in the queue")
    conn.close()
    r = amqp("recv", f"{s.url}/{address}", "--drain", "-t", "10", "--json")
    (left,) = json_lines(r.stdout)  # the large one, kept for another receiver
    assert left["body"] == {"value": {"binary-text": "x" * 1000}}  # (proton: amqp-value)
