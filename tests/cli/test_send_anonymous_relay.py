"""`amqp send` with no address in the URL: each message to its `to`, through the peer's
anonymous relay (a sender link with a null target address)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.render.message import message_to_json
from tests.net.clirun import amqp, amqp_in_process
from tests.peers import Broker, DirectReceiver

pytestmark = pytest.mark.integration


def test_messages_reach_their_to(broker: Broker, tmp_path: Path) -> None:
    # "no address" before
    r = amqp("send", broker.url, "hi", "--to", "q{n}", "-c", "2", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["accepted"] == 2
    # --from: each replayed message goes to its own to; one without is refused at its
    # line, before anything of the file is sent
    f = tmp_path / "in.jsonl"
    f.write_text("".join(json.dumps(message_to_json(m)) + "\n" for m in (
        Message(b"a", properties=c.Properties(to="q2")), Message(b"b"))))
    r = amqp("send", broker.url, "--from", str(f))
    assert r.returncode == 2 and f"{f}:2: a message with no 'to'" in r.stderr, r.stderr
    assert (broker.queue_bodies("q1"), broker.queue_bodies("q2")) == ([b"hi"], [b"hi"])


def test_a_peer_that_does_not_offer_the_relay(
        direct_receiver: Callable[..., DirectReceiver]) -> None:
    rcv = direct_receiver()  # (takes any link, offers no ANONYMOUS-RELAY)
    r = amqp("send", rcv.url, "hi", "--to", "q")
    assert r.returncode == 4
    assert r.stderr.splitlines() == [(
        "amqp: error: no address, and the peer does not offer the anonymous relay "
        "(ANONYMOUS-RELAY in its open): give the address in the URL (--force-relay tries "
        "the relay anyway)")]
    assert not rcv.links()
    r = amqp("send", rcv.url, "hi", "--to", "q", "--force-relay")
    assert r.returncode == 0, r.stderr
    (got,) = rcv.wait_for_messages(1)
    assert rcv.links()[0].target is None and got.message.address == "q"


@pytest.mark.parametrize(("args", "said"), [
    (["hi"], "no address: give it in the URL"),
    (["hi", "--to", ""], "--to '': the anonymous relay needs a node name"),
])
def test_no_address_and_no_to_is_a_usage_error(args: list[str], said: str) -> None:
    code, _, err = amqp_in_process("send", "amqp://127.0.0.1:1", *args)
    assert code == 2 and said in err, err


def test_a_peer_that_refuses_the_relay_link(rabbitmq_url: str) -> None:
    # RabbitMQ 3.x offers no relay, and refuses a target with no address; (RabbitMQ 4
    # offers it: this test then needs its other half, the message arriving)
    r = amqp("send", rabbitmq_url, "hi", "--to", "/queue/anon", "--force-relay")
    assert r.returncode == 4
    (line,) = r.stderr.splitlines()
    assert line.startswith("amqp: error: the peer refused the link") and line.endswith(
        "(a link to the anonymous relay: give the address in the URL)")
