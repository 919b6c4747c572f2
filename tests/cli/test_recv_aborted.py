"""`amqp recv` and `amqp browse` from a sender that aborts a delivery part way (Part 2
§2.6.14): the aborted delivery took a credit (the delivery-count moved on past it), so it
uses its window up as a message does. Counted only by the messages that came whole, the
window never ended: no more credit was granted and the run stalled (`--drain`, `--count`
short of its messages, every `--credit 1` window) or browse's copy check saw one message
fewer and said the peer had consumed it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from proton import Link, Message

from tests.net.clirun import amqp, json_lines
from tests.peers.net import PeerHandler, PeerThread, echo_source, echo_target, refuse

pytestmark = pytest.mark.integration

COUNT = 50  # messages the sender holds, "m1" .. "m50"
ABORTED = 2  # the delivery of each link sent in part, then aborted: "m2" never comes whole
WHOLE = [f"m{n}" for n in range(1, COUNT + 1) if n != ABORTED]


@dataclass(eq=False)
class _Out:
    sent: int = 0  # deliveries begun on the link
    part: Any = None  # the delivery sent in part, until it is aborted


class _AbortingSenderHandler(PeerHandler):
    def __init__(self) -> None:
        super().__init__()
        self.out: dict[Any, _Out] = {}
        self.aborted = 0

    def on_link_remote_open(self, event: Any) -> None:
        link = event.link
        if not link.state & Link.LOCAL_UNINIT:
            return
        if link.is_receiver:
            refuse(link, "amqp:not-implemented", "this peer only sends")
            return
        echo_source(link)
        echo_target(link)
        link.open()
        self.out[link] = _Out()

    def on_link_flow(self, event: Any) -> None:
        self._pump(event.link)

    def on_link_remote_detach(self, event: Any) -> None:
        event.link.detach()

    def _pump(self, link: Any) -> None:
        out = self.out.get(link)
        if out is None or out.part is not None:
            return
        while link.credit > 0 and out.sent < COUNT:
            out.sent += 1
            dlv = link.delivery(str(out.sent))
            data = Message(body=f"m{out.sent}").encode()
            if out.sent == ABORTED:
                link.send(data[:5])
                out.part = dlv
                self._abort_once_sent(link)
                return
            link.send(data)
            link.advance()
        if link.drain_mode and link.credit > 0 and out.sent == COUNT:
            link.drained()

    def _abort_once_sent(self, link: Any) -> None:
        """Abort the part once it is framed (proton drops a delivery aborted before any of
        it went out, giving its credit back: then nothing would be aborted on the wire)."""
        out = self.out[link]
        if out.part.pending:
            assert self.container is not None
            self.container.schedule(0.01, _Call(lambda: self._abort_once_sent(link)))
            return
        out.part.abort()
        out.part = None
        self.aborted += 1
        self._pump(link)


class _Call:
    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn

    def on_timer_task(self, event: Any) -> None:
        self.fn()


class AbortingSender(PeerThread):
    """Sends m1 .. m50 on every link a client attaches to receive, as its credit allows;
    m2 goes out in part and is then aborted. Answers drains once all went out."""

    handler: _AbortingSenderHandler

    def __init__(self) -> None:
        super().__init__(_AbortingSenderHandler())

    def aborted(self) -> int:
        return self.call(lambda: self.handler.aborted)


@pytest.fixture
def sender(peers: Callable[[PeerThread], Any]) -> AbortingSender:
    return peers(AbortingSender())  # type: ignore[no-any-return]


def _bodies(stdout: str) -> list[str]:
    return [m["body"]["value"] for m in json_lines(stdout)]


@pytest.mark.parametrize("credit", ["10", "1"])
def test_drain_gets_every_whole_message(sender: AbortingSender, credit: str) -> None:
    # (-t bounds the stall the old accounting ended in)
    r = amqp("recv", f"{sender.url}/q", "--credit", credit, "--drain", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert _bodies(r.stdout) == WHOLE
    assert sender.aborted() == 1


@pytest.mark.parametrize("options", [(), ("--credit", "1"), ("--rate", "1000")],
                         ids=["default-credit", "credit-1", "rate"])
def test_count_is_met_past_the_aborted_delivery(sender: AbortingSender,
                                                options: tuple[str, ...]) -> None:
    r = amqp("recv", f"{sender.url}/q", "-c", "5", "-t", "10", "--json", *options)
    assert r.returncode == 0, r.stderr
    assert _bodies(r.stdout) == ["m1", "m3", "m4", "m5", "m6"]
    assert sender.aborted() == 1


@pytest.mark.parametrize("credit", ["500", "1"])
def test_browse_lists_every_whole_message_and_sees_them_copied(
        sender: AbortingSender, credit: str) -> None:
    # The copy check's second link meets the aborted delivery too: it must still see all 49.
    r = amqp("browse", f"{sender.url}/q", "--credit", credit, "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert _bodies(r.stdout) == WHOLE
    summary = json.loads(r.stderr.splitlines()[-1])["browse"]
    assert summary["copy-consumed"] == 0, summary
    assert sender.aborted() == 2
