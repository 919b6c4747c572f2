"""`amqp respond` against a scripted peer, for what `amqp serve` does not do: requests sent
pre-settled, bytes that are no message, replies held without an outcome while the run is
stopped, and reply links past `REPLY_LINKS` addresses where the peer has no anonymous
relay."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.encode import encode
from amqpcli.codec.message import Message
from amqpcli.codec.types import Described, Symbol, ULong
from amqpcli.engine import Event, LinkAttached, LinkDetached, MessageReceived
from amqpcli.errors import Exit
from amqpcli.net.responding import REPLY_LINKS
from tests.net.clirun import amqp, amqp_stopped
from tests.net.onepeer import PeerConnection, engine_peer

pytestmark = pytest.mark.integration


def request(message_id: str, reply_to: Any = "back") -> bytes:
    return Message(b"ping", properties=c.Properties(message_id=message_id,
                                                     reply_to=reply_to)).encode()


class RequestPeer:
    """Offers `requests` ((bytes, pre-settled) each) on the link `amqp respond` receives
    on, takes its replies on the links it opens (offering the anonymous relay when
    `relay`) and settles each with `answer(reply)` (None: never). Records the replies,
    the reply links' target addresses as they attach and detach, and, once the
    connection is over (`done()`), what became of each request."""

    def __init__(self, requests: list[tuple[bytes, bool]], *, relay: bool = True,
                 answer: Callable[[Message], Any] = lambda reply: c.Accepted()) -> None:
        self.replies: list[Message] = []
        self.reply_links: list[tuple[str, str]] = []  # ("attach" | "detach", address)
        self.most_reply_links = 0  # reply links attached at once, at most
        self.replied = threading.Event()  # set at each reply
        self._requests = requests
        self._deliveries: list[Any] = []
        self._open: set[Any] = set()

        def script(peer: PeerConnection, e: Event) -> None:
            ep = peer.ep
            if isinstance(e, LinkAttached) and e.side == ep.remote:
                if e.link.sender == ep.local:  # the responder's request link
                    self._deliveries = [ep.send(e.link, payload, settled=settled)
                                        for payload, settled in requests]
                else:
                    self._open.add(e.link)
                    self.most_reply_links = max(self.most_reply_links, len(self._open))
                    self.reply_links.append(("attach", _target(e.link, ep.remote)))
                    ep.flow(e.link, 1000)
            elif isinstance(e, LinkDetached) and e.side == ep.remote and e.link in self._open:
                self._open.discard(e.link)
                self.reply_links.append(("detach", _target(e.link, ep.remote)))
            elif isinstance(e, MessageReceived):
                reply = e.delivery.message()
                self.replies.append(reply)
                outcome = answer(reply)
                if outcome is not None:
                    ep.settle(e.delivery, outcome)
                self.replied.set()

        kwargs: dict[str, Any] = {}
        if relay:
            kwargs["offered_capabilities"] = [Symbol("ANONYMOUS-RELAY")]
        port, self._thread = engine_peer(script, **kwargs)
        self.url = f"amqp://127.0.0.1:{port}/service"

    def done(self) -> list[tuple[str, Any]]:
        """Once the responder has gone: each request's outcome and the state it was
        given (abandoned: none, left unsettled with the connection)."""
        self._thread.join(30)
        assert not self._thread.is_alive()
        return [(d.outcome, d.receiver_state) for d in self._deliveries]


def _target(link: Any, side: str) -> str:
    return str(link.attach[side].target.address)


def _summary(err: str) -> dict[str, Any]:
    (line,) = [ln for ln in err.splitlines() if ln.startswith('{"respond"')]
    return json.loads(line)["respond"]  # type: ignore[no-any-return]


def _respond(*args: str) -> Any:
    return ["respond", *args, "--sasl-mechanism", "none"]


# A stop waits for the outcomes of the replies on their way as long as a close may take
# (--connect-timeout): here one never comes.
_STOP_WAIT = ("--connect-timeout", "3")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_releases_the_requests_taken_and_not_answered(sig: signal.Signals) -> None:
    """Stopped while the reply to the second request waits for its outcome (which never
    comes): the first, whose reply was accepted, is accepted; the second is released (not
    delivered: for another responder), not left unsettled with the connection; the run
    exits with the interrupt's code and its summary counts it."""
    peer = RequestPeer([(request("r1"), False), (request("r2"), False)],
                       answer=lambda reply: c.Accepted() if reply.properties.correlation_id
                       == "r1" else None)
    code, err = amqp_stopped(_respond(peer.url, "--json", *_STOP_WAIT),
                             lambda: len(peer.replies) == 2, sig)
    outcomes = peer.done()
    assert code == Exit.INTERRUPTED, err
    assert [o for o, _ in outcomes] == ["accepted", "released"], err
    s = _summary(err)
    assert (s["requests"], s["replied"], s["failed"], s["released"]) == (2, 1, 0, 1), s
    assert s["error"] == "interrupted (after 2 request(s))"
    assert "Traceback" not in err


def test_a_stop_loses_a_pre_settled_request_and_says_so() -> None:
    peer = RequestPeer([(request("p1"), True)], answer=lambda reply: None)
    code, err = amqp_stopped(_respond(peer.url, *_STOP_WAIT), peer.replied.is_set,
                             signal.SIGINT)
    peer.done()
    assert code == Exit.INTERRUPTED, err
    assert err.splitlines()[:2] == [
        "amqp: requests 1 (1 pre-settled), replied 0, failed 1 (lost 1) in "
        + err.split(" in ", 1)[1].splitlines()[0],
        "amqp: request 1: stopped before its reply was accepted: lost (it came pre-settled)"]


def test_pre_settled_requests_are_answered_and_counted() -> None:
    """The requester settled them when it sent them: each is answered all the same (it
    exists nowhere else), nothing is settled back, and the summary says how many came
    so; one whose reply is refused cannot be given back: lost."""
    peer = RequestPeer([(request("p1"), True), (request("p2"), True), (request("u3"), False)],
                       answer=lambda reply: c.Rejected(error=c.Error(
                           condition=Symbol("amqp:not-found"))) if
                       reply.properties.correlation_id == "p2" else c.Accepted())
    p = amqp(*_respond(peer.url, "-c", "3", "-t", "30"))
    outcomes = peer.done()
    assert p.returncode == Exit.REJECTED, p.stderr
    assert [str(r.properties.correlation_id) for r in peer.replies] == ["p1", "p2", "u3"]
    assert [o for o, _ in outcomes] == ["settled", "settled", "accepted"]
    lines = p.stderr.splitlines()
    assert lines[0].startswith("amqp: requests 3 (2 pre-settled), replied 2, failed 1 "
                               "(lost 1) in "), p.stderr
    assert lines[1] == ("amqp: request 2: reply not sent (rejected: amqp:not-found): lost "
                        "(it came pre-settled)")
    # each printed as a request, numbered as the summary numbers it
    assert [ln.split("  (")[0] for ln in p.stdout.splitlines()
            if not ln.startswith(" ")] == ["request 1", "request 2", "request 3"]


def test_a_request_that_is_no_message_is_rejected_with_decode_error() -> None:
    """Bytes that do not decode, and a reply-to that is no address (a ulong): rejected
    (amqp:decode-error, saying why), never answered; the first is printed as recv prints
    what does not decode, the warning naming it a request."""
    bad_reply_to = encode(Described(ULong(0x73), ["m2", None, None, None, ULong(5)]))
    peer = RequestPeer([(b"\x00\x53\x73\xc0\xff\x01", False),
                        (bad_reply_to + encode(c.Data(b"x")), False),
                        (request("m3"), False)])
    p = amqp(*_respond(peer.url, "-c", "3", "-t", "30", "--json"))
    outcomes = peer.done()
    assert p.returncode == Exit.REJECTED, p.stderr
    assert [str(r.properties.correlation_id) for r in peer.replies] == ["m3"]
    assert [o for o, _ in outcomes] == ["rejected", "rejected", "accepted"]
    for _, state in outcomes[:2]:
        assert str(state.error.condition) == "amqp:decode-error"
    assert outcomes[1][1].error.description == "its reply-to is a ulong, not an address"
    s = _summary(p.stderr)
    assert (s["requests"], s["replied"], s["rejected"]) == (3, 1, 2)
    assert s["errors"][0].startswith("request 1: it is not a valid message: ")
    assert s["errors"][1] == "request 2: its reply-to is a ulong, not an address: rejected"
    assert p.stderr.startswith("amqp: warning: request 1: "), p.stderr
    assert len(p.stdout.splitlines()) == 3


def test_reply_links_past_the_limit_close_the_least_recently_used() -> None:
    """No anonymous relay: a link per reply-to address, `REPLY_LINKS` at most. The
    address after them closes the link used longest ago, and an address whose link was
    closed gets one again."""
    addresses = [f"r-{n}" for n in range(1, REPLY_LINKS + 2)] + ["r-1"]
    peer = RequestPeer([(request(f"m{n}", to), False) for n, to in enumerate(addresses, 1)],
                       relay=False)
    p = amqp(*_respond(peer.url, "-c", str(len(addresses)), "-t", "30", "--json"))
    outcomes = peer.done()
    assert p.returncode == 0, p.stderr
    assert [o for o, _ in outcomes] == ["accepted"] * len(addresses)
    assert [str(r.properties.to) for r in peer.replies] == addresses
    assert peer.most_reply_links == REPLY_LINKS
    attached = [a for step, a in peer.reply_links if step == "attach"]
    assert attached == addresses  # (one link each, r-1's twice)
    # r-1's link closed for r-101's, then r-2's for r-1's again
    steps = peer.reply_links
    assert steps.index(("detach", "r-1")) < steps.index(("attach", f"r-{REPLY_LINKS + 1}"))
    assert [a for step, a in steps if step == "detach"][:2] == ["r-1", "r-2"]
    assert _summary(p.stderr)["relay"] is False
