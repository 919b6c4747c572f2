"""`amqp request --reconnect`, against `amqp serve` with a proton responder as its other
client (tests/peers/responder.py), the request connection cut at a protocol step
(tests/net/framecut.py):

* a request the peer had accepted and not answered when the connection went is in doubt
  (the service may have acted on it): said at once, listed in the summary, exit 7, not
  sent again; the next requests go on a new connection, their reply-to the new dynamic
  node. Without --reconnect the same request is in doubt too (it was "missing", exit 3).
* a request with no outcome when the connection went is sent again, as `amqp send` does
  with a message whose outcome did not come, its reply-to the new node; said, and counted
  as resent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.framecut import DISPOSITION, FrameCut
from tests.net.servepeer import ServePeers
from tests.peers import PeerThread
from tests.peers.responder import ResponderClient

pytestmark = pytest.mark.integration

TRANSFER = 0x14
Start = Callable[[PeerThread], Any]


def _summary(stderr: str) -> dict[str, Any]:
    (line,) = [ln for ln in stderr.splitlines() if ln.startswith('{"request"')]
    return json.loads(line)["request"]  # type: ignore[no-any-return]


def _bodies(stdout: str) -> list[str]:
    return [o["body"]["value"]["binary-text"] for o in json_lines(stdout)]


@pytest.mark.parametrize("reconnect", [True, False])
def test_an_accepted_request_without_its_reply_is_in_doubt(
        serve: ServePeers, peers: Start, reconnect: bool) -> None:
    url = serve("-q")
    rc: ResponderClient = peers(ResponderClient(url, "service", drop=[2]))
    rc.wait_attached()
    port = int(url.rsplit(":", 1)[1])
    # the connection goes just after the peer's acceptance of request 2 (its second
    # disposition): request 2 was accepted, and its reply never comes
    again = ["--reconnect", "3"] if reconnect else []
    with FrameCut("127.0.0.1", port, direction="down", nth=2, forward=True) as cut:
        p = amqp("request", f"amqp://127.0.0.1:{cut.port}/service", "a", "b", "c",
                 "--message-id", "req-{n}", "-t", "10", "--json", *again)
    assert cut.cut.is_set()
    assert p.returncode == 7, p.stderr
    s = _summary(p.stderr)
    assert s["in-doubt-messages"] == [{"number": 2, "message-id": "req-2"}], s
    assert s["missing"] == 0, s
    if not reconnect:
        assert (s["requests"], s["replies"], s["not-sent"]) == (2, 1, 1), s
        assert "connection reset" in s["error"], s
        return
    assert (s["requests"], s["accepted"], s["replies"], s["reconnects"]) == (3, 3, 2, 1), s
    assert "resent" not in s, s
    assert s["warnings"][-1] == (
        "request 2 (message-id 'req-2'): accepted, no reply when the connection was lost: "
        "in doubt (the service may have acted on it); not sent again"), s
    assert p.stderr.count("amqp: warning: request 2 ") == 1, p.stderr
    assert s["error"] == "1 message(s) in doubt", s
    assert _bodies(p.stdout) == ["A", "C"]
    # request 2 went once; request 3 named the second connection's reply node
    reqs = rc.requests()
    assert [q.message.id for q in reqs] == ["req-1", "req-2", "req-3"]
    first, _, second = (q.message.reply_to for q in reqs)
    assert reqs[1].message.reply_to == first != second == s["reply-to"]


def test_a_request_without_its_outcome_is_sent_again(serve: ServePeers, peers: Start) -> None:
    url = serve("-q")
    rc: ResponderClient = peers(ResponderClient(url, "service"))
    rc.wait_attached()
    port = int(url.rsplit(":", 1)[1])
    # request 2's transfer never reaches the peer, and the connection goes
    with FrameCut("127.0.0.1", port, direction="up", nth=2, performative=TRANSFER) as cut:
        p = amqp("request", f"amqp://127.0.0.1:{cut.port}/service", "a", "b", "c",
                 "--message-id", "req-{n}", "-t", "10", "--json", "--reconnect", "3")
    assert cut.cut.is_set()
    assert p.returncode == 0, p.stderr
    s = _summary(p.stderr)
    assert (s["requests"], s["accepted"], s["replies"], s["resent"], s["reconnects"],
            s["in-doubt"]) == (3, 3, 3, 1, 1, 0), s
    assert s["warnings"][-1] == (
        "request 2 (message-id 'req-2'): no outcome when the connection was lost: sent "
        "again (the service may get it twice)"), s
    assert _bodies(p.stdout) == ["A", "B", "C"], p.stdout
    reqs = rc.requests()
    assert [q.message.id for q in reqs] == ["req-1", "req-2", "req-3"]
    first, resent, third = (q.message.reply_to for q in reqs)
    assert first != resent == third == s["reply-to"]


def test_the_summary_line_says_resent_and_reconnects(serve: ServePeers, peers: Start) -> None:
    url = serve("-q")
    rc: ResponderClient = peers(ResponderClient(url, "service"))
    rc.wait_attached()
    port = int(url.rsplit(":", 1)[1])
    with FrameCut("127.0.0.1", port, direction="up", nth=1, performative=TRANSFER) as cut:
        p = amqp("request", f"amqp://127.0.0.1:{cut.port}/service", "a", "-t", "10",
                 "--reconnect", "3")
    assert p.returncode == 0, p.stderr
    assert p.stderr.splitlines()[-1].startswith(
        "amqp: requests sent 1, accepted 1, replies 1, resent 1, 1 reconnect(s), round trip"
    ), p.stderr
    assert DISPOSITION  # (the cut's default, used above)
