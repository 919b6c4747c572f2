"""Browse's copy check compares which messages its second link sees, not how many: messages
added to the node meanwhile are not copies (RabbitMQ 3.10 consumes on copy, and with a
producer running the second link sees only the new ones)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from proton import Message

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers
from tests.peers import Broker
from tests.peers.broker import BrokerHandler

pytestmark = pytest.mark.integration


class ArrivalsOnSecondLink(BrokerHandler):
    """Puts `arrivals` new messages in the queue when the second copy link on it attaches
    (the copy check's, after the listing ended), so that link is certain to see them.
    With `consume`, copy links are echoed as copy but acquire, as RabbitMQ 3.10 does."""

    def __init__(self, arrivals: int, consume: bool) -> None:
        super().__init__()
        self.arrivals = arrivals
        self.consume = consume
        self.copy_links = 0

    def _attach_out(self, link: Any) -> None:
        super()._attach_out(link)
        out = self.out_links.get(link)
        if out is None or not out.consumer.browse:
            return
        self.copy_links += 1
        if self.consume:
            out.consumer.browse = False  # still says copy in its attach
        if self.copy_links == 2:
            for i in range(self.arrivals):
                out.queue.put(bytes(Message(body=f"new{i}").encode()))


class ArrivalsBroker(Broker):
    def __init__(self, arrivals: int, consume: bool) -> None:
        super().__init__()
        self.handler = ArrivalsOnSecondLink(arrivals, consume)
        self.handler.max_frame_size = self.handler.idle_timeout = None


def _browse(url: str) -> tuple[list[Any], dict[str, Any], str]:
    r = amqp("browse", url, "--json")
    assert r.returncode == 0, r.stderr
    return json_lines(r.stdout), json.loads(r.stderr.strip().splitlines()[-1])["browse"], r.stderr


def test_new_messages_on_a_consuming_peer_are_not_copies(peers: Callable[..., Any]) -> None:
    # More arrivals than messages listed: a count would have said "copied".
    broker = peers(ArrivalsBroker(arrivals=3, consume=True))
    broker.put("q", Message(body="a"), Message(body="b"))
    shown, summary, err = _browse(f"{broker.url}/q")
    assert [m["body"]["value"] for m in shown] == ["a", "b"]
    assert summary["copy-consumed"] == 2
    assert ("second browse saw 0 of the 2 messages listed (and 2 others it had not listed, "
            "which are not copies): it delivered them as consumed") in err


def test_new_messages_on_a_copying_peer_pass_the_check(peers: Callable[..., Any]) -> None:
    broker = peers(ArrivalsBroker(arrivals=3, consume=False))
    broker.put("q", Message(body="a"), Message(body="b"))
    shown, summary, err = _browse(f"{broker.url}/q")
    assert [m["body"]["value"] for m in shown] == ["a", "b"]
    assert summary["copy-consumed"] == 0 and "warning" not in err


def test_serve_copies(serve: ServePeers) -> None:
    url = serve()
    assert amqp("send", f"{url}/cc", "x", "--count", "4", "--message-id", "{n}").returncode == 0
    shown, summary, err = _browse(f"{url}/cc")
    assert len(shown) == 4 and summary["copy-consumed"] == 0 and "warning" not in err


def test_a_second_listing_cut_short_by_silence_is_not_a_consume(
        peers: Callable[..., Any]) -> None:
    """The second link saw only copies, then the peer stopped answering (a long queue
    listed slowly, a drain not answered in time): not checked, not "consumed"."""
    from tests.peers import DirectSender

    sender = peers(DirectSender([Message(body=f"m{i}") for i in range(5)], answer_drain=1,
                                shown=[None, 2]))
    r = amqp("browse", f"{sender.url}/q", "--json", "-t", "1")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stderr.strip().splitlines()[-1])["browse"]
    assert summary["received"] == 5
    assert "copy-consumed" not in summary or summary["copy-consumed"] is None, r.stderr
    assert summary["copy-not-checked"].startswith("a second browse saw 2 of the 5 messages")
    assert "as consumed" not in r.stderr
