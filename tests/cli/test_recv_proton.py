"""`amqp recv` from python-qpid-proton peers: lossless output, outcomes, selectors,
dynamic nodes, durable subscriptions, settle modes, and the write-before-settle rule."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from proton import Message

from amqpcli.codec.message import Message as AMessage
from amqpcli.render.message import message_bytes_from_json
from tests.net.clirun import amqp, json_lines
from tests.peers import Broker, DirectReceiver, DirectSender

pytestmark = pytest.mark.integration


def _proton_messages() -> list[Message]:
    return [
        Message(body="text", id=1, subject="s", properties={"k": 5, "u": uuid.UUID(int=1)}),
        Message(body=b"\x00\x01binary", correlation_id=b"\x01\x02", durable=True, priority=9),
        Message(body=[1, "two", 3.5], annotations={"x-opt-a": "b"}, instructions={"x-opt-i": 1}),
        Message(body={"m": {"nested": [True, None]}}, content_type="application/x"),
    ]


def test_what_proton_sends_is_printed_losslessly(direct_sender: Callable[..., DirectSender]) -> None:
    msgs = _proton_messages()
    snd = direct_sender(msgs)
    r = amqp("recv", f"{snd.url}/src", "-c", str(len(msgs)), "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    out = json_lines(r.stdout)
    assert len(out) == len(msgs)
    for obj, pm in zip(out, msgs, strict=True):
        raw = bytes(pm.encode())
        assert obj["bare-sha256"] == hashlib.sha256(AMessage.decode(raw).bare_bytes).hexdigest()
        # proton writes 32-bit lists: those sections keep their bytes, and only they
        assert "encoded" not in obj
        for key, kept in obj.get("encoded-sections", {}).items():
            attr = key.replace("-", "_")
            assert base64.b64decode(kept) == AMessage.decode(raw).section_bytes(attr)
        assert message_bytes_from_json(obj) == raw
    assert out[0]["body"] == {"value": "text"}
    assert out[0]["application-properties"]["k"] == 5
    assert [o.state.kind for o in snd.wait_for_outcomes(len(msgs))] == ["accepted"] * len(msgs)


def test_recv_then_send_from_reproduces_bare_messages(
    direct_sender: Callable[..., DirectSender],
    direct_receiver: Callable[..., DirectReceiver],
    tmp_path: Any,
) -> None:
    # Canonically encoded messages (what most clients send): the bare bytes must come back.
    from amqpcli.codec import composites as c
    from amqpcli.codec.types import Int, Symbol

    raws = [
        AMessage(c.AmqpValue(Int(i)), properties=c.Properties(message_id=f"id-{i}"),
                 application_properties=c.ApplicationProperties({"i": Int(i)}),
                 message_annotations=c.MessageAnnotations({Symbol("x-opt-q"): i})).encode()
        for i in range(5)
    ]
    snd = direct_sender(raws)
    out = tmp_path / "m.jsonl"
    r = amqp("recv", f"{snd.url}/src", "-c", "5", "-t", "10", "--json", "--out", str(out))
    assert r.returncode == 0, r.stderr
    rcv = direct_receiver()
    r = amqp("send", f"{rcv.url}/dst", "--from", str(out))
    assert r.returncode == 0, r.stderr
    got = rcv.wait_for_messages(5)
    assert [g.raw for g in got] == raws


def test_outcome_pattern_reaches_the_sender(direct_sender: Callable[..., DirectSender]) -> None:
    snd = direct_sender([b"\x00Sw\xa1\x01" + bytes([65 + i]) for i in range(4)])
    r = amqp("recv", f"{snd.url}/src", "-c", "4", "-t", "10",
             "--outcome", "accept,reject:amqp:not-allowed=no,release,modify:failed:undeliverable")
    assert r.returncode == 0, r.stderr
    seen = sorted(snd.wait_for_outcomes(4), key=lambda o: o.index)
    assert [o.state.kind for o in seen] == ["accepted", "rejected", "released", "modified"]
    assert seen[1].state.condition == ("amqp:not-allowed", "no")
    assert seen[3].state.failed and seen[3].state.undeliverable


def test_settle_mode_second(direct_sender: Callable[..., DirectSender]) -> None:
    snd = direct_sender([b"\x00Sw\xa1\x01a", b"\x00Sw\xa1\x01b"])
    r = amqp("recv", f"{snd.url}/src", "-c", "2", "-t", "10", "--settle-mode", "second")
    assert r.returncode == 0, r.stderr
    assert snd.links()[0].rcv_settle_mode == 1
    assert [o.state.kind for o in snd.wait_for_outcomes(2)] == ["accepted", "accepted"]


def test_selector_and_filter(peers: Callable[..., Any]) -> None:
    broker = peers(Broker())
    broker.put("q", *[Message(body=f"m{i}", properties={"n": i}) for i in range(6)])
    r = amqp("recv", f"{broker.url}/q", "--selector", "n > 3", "--drain", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert [m["body"]["value"] for m in json_lines(r.stdout)] == ["m4", "m5"]
    flt = json.dumps({"described": {"symbol": "apache.org:selector-filter:string"},
                      "value": "n = 1"})
    r = amqp("recv", f"{broker.url}/q", "--filter", f"my-filter={flt}", "--drain", "-t", "10",
             "--json")
    assert r.returncode == 0, r.stderr
    assert [m["body"]["value"] for m in json_lines(r.stdout)] == ["m1"]
    assert sorted(broker.queue_bodies("q")) == ["m0", "m2", "m3"]


def test_bad_selector_is_refused(peers: Callable[..., Any]) -> None:
    broker = peers(Broker())
    # (--selector would be refused before connecting: the peer gets it as a raw filter)
    flt = json.dumps({"described": {"symbol": "apache.org:selector-filter:string"},
                      "value": "n >>> 3"})
    r = amqp("recv", f"{broker.url}/q", "--filter", f"jms-selector={flt}", "-c", "1", "-t", "5")
    assert r.returncode == 4, r.stderr
    assert "amqp:invalid-field" in r.stderr


def test_dynamic_node(peers: Callable[..., Any]) -> None:
    broker = peers(Broker())
    r = amqp("recv", broker.url, "--dynamic", "-t", "1")
    assert r.returncode == 0, r.stderr
    assert "dynamic node address: amqpcli.tmp." in r.stderr


def test_durable_subscription(peers: Callable[..., Any]) -> None:
    broker = peers(Broker())
    url = f"{broker.url}//topic/news"
    sub = ["--subscription", "s1", "--container-id", "cli-sub-test"]
    r = amqp("recv", url, *sub, "-t", "1")  # create it
    assert r.returncode == 0, r.stderr
    assert amqp("send", url, "one").returncode == 0  # sent while we are away
    r = amqp("recv", url, *sub, "-c", "1", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert json_lines(r.stdout)[0]["body"] == {"data": [{"binary-text": "one"}]}
    r = amqp("recv", url, *sub, "--unsubscribe")
    assert r.returncode == 0, r.stderr
    assert amqp("send", url, "two").returncode == 0  # no subscriber now: dropped
    r = amqp("recv", url, *sub, "-c", "1", "-t", "2")
    assert r.returncode == 5  # a fresh subscription has nothing


def test_message_written_before_it_is_settled(
    direct_sender: Callable[..., DirectSender], tmp_path: Any
) -> None:
    # Output to /dev/full: the write fails (no space), so nothing may be accepted.
    snd = direct_sender([b"\x00Sw\xa1\x01a"])
    r = amqp("recv", f"{snd.url}/src", "-c", "1", "-t", "10", "--json", "--out", "/dev/full")
    assert r.returncode == 2 and "cannot write" in r.stderr
    assert [o.state.kind for o in snd.outcomes() if o.state.settled] == []


def test_dropped_filter_is_a_warning(peers: Callable[..., Any]) -> None:
    broker = peers(Broker())
    broker.put("q", Message(body="a"))
    flt = json.dumps({"described": {"symbol": "example.org:no-such-filter"}, "value": 1})
    r = amqp("recv", f"{broker.url}/q", "--filter", f"odd={flt}", "-c", "1", "-t", "10")
    assert r.returncode == 0, r.stderr
    warnings = [ln for ln in r.stderr.splitlines() if "warning" in ln]
    assert len(warnings) == 1 and "source.filter.odd" in warnings[0] and "dropped" in warnings[0]


def test_presettled_receive(direct_sender: Callable[..., DirectSender]) -> None:
    snd = direct_sender([b"\x00Sw\xa1\x01a", b"\x00Sw\xa1\x01b"])
    r = amqp("recv", f"{snd.url}/src", "-c", "2", "-t", "10", "--presettled")
    assert r.returncode == 0, r.stderr
    assert snd.links()[0].snd_settle_mode == 1
    assert "pre-settled 2" in r.stderr
