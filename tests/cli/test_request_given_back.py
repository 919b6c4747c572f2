"""`amqp request`: replies that come once the run takes no more of them (a second reply
to a request already answered, a late reply after --timeout) are given back: released,
never written, and counted in the summary (`given back N`, JSON `"given-back"`).

The scripted responder sends the reply it holds back when the requester detaches its
request link, which it does only once it has stopped taking replies: the order is the
run's own, not a matter of time."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.engine import DeliveryUpdated, Event, LinkAttached, LinkDetached, MessageReceived
from tests.net.clirun import amqp, json_lines
from tests.net.onepeer import HANG_GUARD, PeerConnection, engine_peer

pytestmark = pytest.mark.integration


def _responder(at_once: bool) -> tuple[int, threading.Thread, dict[str, Any]]:
    """Accepts the one request; replies to it at once when `at_once`, and (again, or for
    the first time) when the requester detaches its request link. What the requester
    settled each reply with is kept in `seen["outcomes"]` (reply body -> state name)."""
    seen: dict[str, Any] = {"outcomes": {}}

    def reply(peer: PeerConnection, body: str) -> None:
        msg = Message(c.AmqpValue(body), properties=c.Properties(
            correlation_id=seen["request-id"]))
        seen[peer.ep.send(seen["replies"], msg.encode()).tag] = body

    def script(peer: PeerConnection, e: Event) -> None:
        ep = peer.ep
        if isinstance(e, LinkAttached) and e.side == ep.remote:
            if e.link.sender == ep.local:
                seen["replies"] = e.link
            else:
                seen["requests"] = e.link
                ep.flow(e.link, 10)
        elif isinstance(e, MessageReceived):
            ep.settle(e.delivery, c.Accepted())
            seen["request-id"] = e.message.properties.message_id
            if at_once:
                reply(peer, "first")
        elif (isinstance(e, LinkDetached) and e.side == ep.remote
              and e.link is seen.get("requests")):
            reply(peer, "second" if at_once else "late")
        elif (isinstance(e, DeliveryUpdated) and e.entry.side == ep.remote
              and e.delivery.link is seen.get("replies")):
            seen["outcomes"][seen[e.delivery.tag]] = type(e.entry.state).__name__

    port, th = engine_peer(script)
    return port, th, seen


def test_a_second_reply_after_the_last_request_is_given_back() -> None:
    port, th, seen = _responder(at_once=True)
    r = amqp("request", f"amqp://127.0.0.1:{port}/service", "x", "--sasl-mechanism", "none",
             "-t", "30", timeout=HANG_GUARD)
    th.join(HANG_GUARD)
    assert r.returncode == 0, r.stderr
    assert "first" in r.stdout and "second" not in r.stdout
    assert "requests sent 1, accepted 1, replies 1, given back 1," in r.stderr
    assert seen["outcomes"] == {"first": "Accepted", "second": "Released"}


def test_a_reply_after_the_timeout_is_given_back() -> None:
    port, th, seen = _responder(at_once=False)
    r = amqp("request", f"amqp://127.0.0.1:{port}/service", "x", "--sasl-mechanism", "none",
             "-t", "0.5", "--json", timeout=HANG_GUARD)
    th.join(HANG_GUARD)
    assert r.returncode == 5, r.stderr
    assert json_lines(r.stdout) == []
    (line,) = [ln for ln in r.stderr.splitlines() if ln.startswith('{"request"')]
    summary = json.loads(line)["request"]
    assert (summary["replies"], summary["missing"], summary["given-back"]) == (0, 1, 1)
    assert seen["outcomes"] == {"late": "Released"}
