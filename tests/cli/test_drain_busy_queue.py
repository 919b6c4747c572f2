"""`amqp browse` and `amqp recv --drain` on a peer that cannot drain (RabbitMQ before 4.0)
end with what the node held when they started, however busy the queue is: a producer
adding messages faster than the quiet period (one second without a message) no longer
keeps them going for as long as it produces. The node says how many it holds in the flow
that answers the receiver's (`available`); a peer that does not say it still sees the drain
end, once `--timeout` has passed, with a warning that the node may hold more."""

from __future__ import annotations

import itertools
import json
import re
import select
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from proton import Link, symbol

from tests.net.clirun import amqp, json_lines, queue_name
from tests.net.servepeer import cli_env
from tests.paths import REPO_ROOT
from tests.peers.net import PeerHandler, PeerThread, echo_source, echo_target

pytestmark = pytest.mark.integration

BEFORE = 100  # messages on the queue before the producer starts
# A bounded wait: a run that never ends fails the test (it never took this long).
NEVER_ENDS = 90


@contextmanager
def _producer(url: str) -> Iterator[None]:
    """A `send --rate 100` to `url` in the background for the whole block (far more messages
    than the block lasts), there once it has reported its first figures."""
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "send", url, "late", "--count", "1000000",
         "--rate", "100", "--message-id", "late-{n}", "--report-every", "0.2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env=cli_env(),
    )
    try:
        assert p.stderr is not None
        ready, _, _ = select.select([p.stderr], [], [], 60)
        assert ready and p.stderr.readline(), "the producer did not start"
        threading.Thread(target=p.stderr.read, daemon=True).start()  # (a full pipe stalls it)
        yield
    finally:
        p.terminate()
        p.wait(30)


def _node_held(trace: str) -> int:
    """How many messages the node said it held in its first flow on the receiving link."""
    m = re.search(r"<- \[0\]\s+flow\s+handle=0 .*?available=(\d+)", trace)
    assert m, trace
    return int(m.group(1))


@pytest.mark.parametrize("command", [("browse",), ("recv", "--drain", "--json-summary")])
def test_a_drain_of_a_busy_rabbitmq_queue_ends_with_what_it_held(
        rabbitmq_url: str, command: tuple[str, ...]) -> None:
    url = f"{rabbitmq_url}//queue/{queue_name('busy')}"
    r = amqp("send", url, "before", "--count", str(BEFORE), "--message-id", "{n}", "-q")
    assert r.returncode == 0, r.stderr
    with _producer(url):
        r = amqp(*command, url, "-t", "3", "--json", "--trace", timeout=NEVER_ENDS)
    assert r.returncode == 0, r.stderr
    held = _node_held(r.stderr)
    assert held >= BEFORE
    # Exactly the messages the node held, in its order: those sent before, then the
    # producer's that were there when the run started.
    order = ([str(n) for n in range(1, BEFORE + 1)]
             + [f"late-{n}" for n in range(1, held - BEFORE + 1)])
    got = [m["properties"]["message-id"] for m in json_lines(r.stdout)]
    assert got == order[:held], r.stderr
    summary = json.loads(next(x for x in r.stderr.splitlines() if x.startswith("{")))
    assert summary[command[0]]["received"] == held


class _EndlessOldRabbitHandler(PeerHandler):
    """Opens as RabbitMQ 3.10 (whose drain is broken: the client drains by a quiet period)
    and sends as long as it has credit, never saying how many messages it holds (it
    answers no flow): a node that never falls quiet."""

    def __init__(self) -> None:
        super().__init__()
        self.tags = itertools.count(1)

    def on_connection_bound(self, event: Any) -> None:
        super().on_connection_bound(event)
        event.connection.properties = {symbol("product"): "RabbitMQ",
                                       symbol("version"): "3.10.8"}

    def on_link_remote_open(self, event: Any) -> None:
        link = event.link
        if not link.state & Link.LOCAL_UNINIT:
            return
        echo_source(link)
        echo_target(link)
        link.open()

    def on_link_flow(self, event: Any) -> None:
        link = event.link
        while link.is_sender and link.credit > 0:
            link.delivery(str(next(self.tags)))
            link.send(b"\x00Sw\xa1\x04more")  # amqp-value "more"
            link.advance()

    def on_delivery(self, event: Any) -> None:
        if event.delivery.remote_state or event.delivery.settled:
            event.delivery.settle()


def test_a_drain_never_told_how_many_ends_after_the_timeout(
        peers: Callable[..., Any], tmp_path: Path) -> None:
    peer = peers(PeerThread(_EndlessOldRabbitHandler()))
    r = amqp("recv", f"{peer.url}/q", "--drain", "-t", "1", "--json-summary",
             "--out", str(tmp_path / "out"), timeout=NEVER_ENDS)
    assert r.returncode == 0, r.stderr
    assert ("warning: messages kept coming, and the peer can neither drain nor said how many "
            "it held: the drain asked for no more after 1s (--timeout); the node may hold more"
            in r.stderr)
    summary = json.loads(next(x for x in r.stderr.splitlines() if x.startswith("{")))["recv"]
    assert summary["received"] == summary["outcomes"]["accept"] > 0
    r = amqp("browse", f"{peer.url}/q", "-t", "1", "--json", timeout=NEVER_ENDS)
    assert r.returncode == 5, r.stderr
    assert "the drain asked for no more after 1s" in r.stderr
    assert "error: the peer did not answer the drain in 1s: the listing may be incomplete" \
        in r.stderr
