"""`amqp send` to a receiver that drains (python-qpid-proton's `Receiver.drain(n)`): the
messages we have go first, up to the credit, and only then is the drain answered, the
credit left unused given back (Part 2 §2.6.7: the sender uses up the credit "after
sending all available messages"). With nothing to send (the last message gone, a pipe
with no line yet) the drain is answered at once. And a run that fails for want of credit
or outcomes closes the connection (close, not a dropped socket)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from proton import Delivery, Link

from tests.net.clirun import amqp
from tests.net.servepeer import cli_env
from tests.paths import REPO_ROOT
from tests.peers import DirectReceiver, Hold
from tests.peers.net import PeerHandler, PeerThread, echo_source, echo_target
from tests.peers.sections import decode

pytestmark = pytest.mark.integration


class _DrainingHandler(PeerHandler):
    """Takes sender links and grants credit on attach: `credit` with drain, or without
    (`drain=False`); `again`: drain(1) after each message. Records each message's body and
    the receiver's credit and draining state after each flow from the client; `hold`
    keeps the outcomes back until `accept_held()`."""

    def __init__(self, credit: int, drain: bool, again: bool, hold: bool) -> None:
        super().__init__()
        self.credit = credit
        self.drain = drain
        self.again = again
        self.hold = hold
        self.links: list[Any] = []
        self.bodies: list[bytes] = []
        self.flows: list[tuple[int, bool]] = []  # (credit, draining) after each flow
        self.held: list[Any] = []

    def on_link_remote_open(self, event: Any) -> None:
        link = event.link
        if not link.state & Link.LOCAL_UNINIT:
            return
        echo_source(link)
        echo_target(link)
        link.open()
        self.links.append(link)
        if self.credit:
            if self.drain:
                link.drain(self.credit)
            else:
                link.flow(self.credit)

    def on_link_flow(self, event: Any) -> None:
        link = event.link
        if link.is_receiver:
            self.flows.append((link.credit, link.draining()))

    def on_delivery(self, event: Any) -> None:
        dlv = event.delivery
        link = dlv.link
        if not link.is_receiver or not dlv.readable or dlv.partial:
            return
        message = decode(bytes(link.recv(dlv.pending)))
        self.bodies.append(bytes(message.body))  # (a copy: proton's is a view into it)
        link.advance()
        if self.hold:
            self.held.append(dlv)
        else:
            dlv.update(Delivery.ACCEPTED)
            dlv.settle()
        if self.again:
            link.drain(1)

    def accept_held(self) -> None:
        for dlv in self.held:
            dlv.update(Delivery.ACCEPTED)
            dlv.settle()
        self.held.clear()


class _Draining(PeerThread):
    handler: _DrainingHandler

    def __init__(self, credit: int, *, drain: bool = True, again: bool = False,
                 hold: bool = False) -> None:
        super().__init__(_DrainingHandler(credit, drain, again, hold))

    def received(self) -> int:
        return self.call(lambda: len(self.handler.bodies))

    def bodies(self) -> list[bytes]:
        return self.call(lambda: list(self.handler.bodies))

    def flows(self) -> list[tuple[int, bool]]:
        return self.call(lambda: list(self.handler.flows))


Peers = Callable[[PeerThread], Any]


def _grant(link: Any, credit: int) -> None:
    """Credit without drain (proton keeps a receiver's drain mode until it is unset)."""
    link.drain_mode = False
    link.flow(credit)

# our flow on the link, as --trace writes it
_FLOW = re.compile(r"-> \[0\]  flow +handle=0 delivery-count=(\d+) link-credit=(\d+)( drain)?")


def _our_flows(stderr: str) -> list[tuple[int, int, bool]]:
    return [(int(m[1]), int(m[2]), bool(m[3])) for m in _FLOW.finditer(stderr)]


def test_a_drain_waits_for_the_messages_then_gives_back_the_rest(peers: Peers) -> None:
    peer = peers(_Draining(10))
    r = amqp("send", f"{peer.url}/q", "hi", "-c", "3", "--trace")
    assert r.returncode == 0, r.stderr
    assert peer.bodies() == [b"hi"] * 3
    # one flow answers the drain, after the three transfers: delivery-count 10 (the 7
    # unused given back), credit 0
    assert _our_flows(r.stderr) == [(10, 0, True)]
    assert r.stderr.index("-> [0]  flow") > r.stderr.rindex("-> [0]  transfer")
    assert peer.flows()[-1] == (0, False)  # the receiver's drain is over


@pytest.mark.parametrize("args", [[], ["--rate", "1000"]], ids=["runs", "rate"])
def test_a_drain_of_one_after_each_message(peers: Peers, args: list[str]) -> None:
    # a receiver that fetches one message at a time: each drain(1) gets a message (and
    # its transfer answers the drain), none is given back
    peer = peers(_Draining(1, again=True))
    r = amqp("send", f"{peer.url}/q", "x", "-c", "5", *args)
    assert r.returncode == 0, r.stderr
    assert peer.received() == 5


def test_credit_the_messages_use_up_ends_the_run_at_once(peers: Peers) -> None:
    # as much credit as messages, and no more: once the last has gone there is nothing to
    # wait for credit for (the run waited for more until --timeout, then failed)
    peer = peers(_Draining(3, drain=False))
    r = amqp("send", f"{peer.url}/q", "x", "-c", "3", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    assert peer.received() == 3


def test_a_drain_after_the_last_message_is_answered_at_once(peers: Peers) -> None:
    # credit without drain; the outcomes are held, so the run is still waiting for them
    # when the drain comes
    peer = peers(_Draining(10, drain=False, hold=True))
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "send", f"{peer.url}/q", "x", "-c", "3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env=cli_env())
    try:
        peer.wait_for(lambda: len(peer.handler.bodies) == 3)
        peer.call(lambda: peer.handler.links[0].drain(0))
        # the 7 left come back: the receiver's credit is 0 and it no longer drains
        peer.wait_for(lambda: peer.handler.flows and peer.handler.flows[-1] == (0, False))
        peer.call(peer.handler.accept_held)
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 0, err
    assert out.startswith("sent 3, accepted 3,"), out


def test_a_pipe_with_no_line_yet_answers_a_drain_at_once(peers: Peers) -> None:
    peer = peers(_Draining(10))
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "send", f"{peer.url}/q", "--lines"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=REPO_ROOT, env=cli_env())
    try:
        # nothing to send yet: the credit comes back while the producer is silent
        peer.wait_for(lambda: peer.handler.flows and peer.handler.flows[-1] == (0, False))
        assert peer.received() == 0
        peer.call(lambda: _grant(peer.handler.links[0], 1))
        _, err = p.communicate("late\n", timeout=60)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 0, err
    assert peer.bodies() == [b"late"]


def test_lines_already_in_a_pipe_go_before_the_drain_is_answered(peers: Peers) -> None:
    peer = peers(_Draining(10))
    r = amqp("send", f"{peer.url}/q", "--lines", input=b"a\nb\nc\n")
    assert r.returncode == 0, r.stderr
    assert peer.bodies() == [b"a", b"b", b"c"]


@pytest.mark.parametrize("why", ["no credit", "no outcome"])
def test_a_run_that_times_out_closes_the_connection(
        direct_receiver: Callable[..., DirectReceiver], why: str) -> None:
    rcv = direct_receiver(credit=0) if why == "no credit" else direct_receiver(outcome=Hold())
    r = amqp("send", f"{rcv.url}/q", "x", "--timeout", "1")
    assert r.returncode == (5 if why == "no credit" else 7), r.stderr
    assert why in r.stderr
    # proton says "connection aborted" of a socket dropped without a close
    assert rcv.transport_errors() == []
