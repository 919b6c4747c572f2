"""A peer that stops answering while we close (a frozen broker, a network gone silent):
our detach and close get no answer. That is said on stderr and in the JSON summary's
warnings (it was passed over in silence), with the settlements that may never have
reached the peer (sent after the last frame it sent: settled on our side, so fire and
forget, and the peer may deliver those messages again). The close waits for the peer
once, not once per step (a detach unanswered, the close is sent and not waited for), and
no longer than a receive's --timeout: the warning names the wait. The exit code is the
run's: what it was asked to do was done. A send's pre-settled messages on such a
connection are counted settled-unconfirmed: nothing says the peer had them."""

from __future__ import annotations

import json
import threading

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.engine import ConnectionClosed, Event, LinkAttached, LinkDetached
from tests.net.clirun import amqp, amqp_in_process, json_lines
from tests.net.onepeer import HANG_GUARD, PeerConnection, engine_peer

pytestmark = pytest.mark.integration


def _peer(messages: int,
          silent_from: type[LinkDetached | ConnectionClosed]) -> tuple[int, threading.Thread]:
    """Holds `messages` messages for a receiver and answers everything until the client's
    first `silent_from` event (its detach, its close): from then on it reads what comes
    and answers nothing, until the client hangs up."""

    def script(peer: PeerConnection, e: Event) -> None:
        ep = peer.ep
        if isinstance(e, LinkAttached) and e.side == ep.remote and e.link.sender == ep.local:
            for i in range(1, messages + 1):
                ep.send(e.link, Message(c.AmqpValue(f"m{i}")).encode())
        elif isinstance(e, silent_from) and e.side == ep.remote:
            peer.go_silent()

    return engine_peer(script)


def _run(port: int, *args: str) -> tuple[int, str, list[str], dict[str, object]]:
    """`amqp ARGS` against the peer on `port` (recv with --json-summary, browse with
    --json): exit code, standard output, the lines of standard error but the summary's,
    the summary."""
    summary_on_stderr = "--json-summary" if args[0] == "recv" else "--json"
    r = amqp(args[0], f"amqp://127.0.0.1:{port}/q", *args[1:], "--sasl-mechanism", "none",
             summary_on_stderr, timeout=HANG_GUARD)
    lines = r.stderr.splitlines()
    (summary,) = [json.loads(x)[args[0]] for x in lines if x.startswith("{")]
    return r.returncode, r.stdout, [x for x in lines if not x.startswith("{")], summary


def _unanswered(lines: list[str]) -> list[str]:
    return [x for x in lines if "did not answer our" in x]


def test_a_peer_silent_from_our_detach_is_said_and_waited_for_once() -> None:
    """The case found: nothing to receive, -t 2 over, then nothing from the peer (as from a
    frozen broker). One warning, the wait it names bounded by --timeout; the close is
    sent and not waited for again (it went by in silence after 5 s and 5 s)."""
    port, th = _peer(0, LinkDetached)
    code, _, lines, summary = _run(port, "recv", "-t", "2")
    th.join(HANG_GUARD)
    assert code == 0, lines
    warning = "the peer did not answer our detach within 2s (it may have stopped)"
    assert _unanswered(lines) == [f"amqp: warning: {warning}"], lines
    assert summary["warnings"] == [warning]


def test_settlements_sent_after_the_peer_went_silent_are_said() -> None:
    port, th = _peer(2, LinkDetached)
    code, out, lines, summary = _run(port, "recv", "-c", "2", "--json")
    th.join(HANG_GUARD)
    assert code == 0, lines  # written and settled: the run did what it was asked
    assert [m["body"] for m in json_lines(out)] == [{"value": "m1"}, {"value": "m2"}]
    warning = ("the peer did not answer our detach within 5s (it may have stopped): "
               "2 settlement(s) sent after the peer last sent anything may not have reached "
               "it: it may deliver those messages again")
    assert _unanswered(lines) == [f"amqp: warning: {warning}"], lines
    assert summary["warnings"] == [warning]


def test_a_close_unanswered_after_an_answered_detach_has_no_settlement_in_question() -> None:
    # The peer answered our detach, sent after the settlements: it had read them.
    port, th = _peer(2, ConnectionClosed)
    code, _, lines, _ = _run(port, "recv", "-c", "2", "-t", "3")
    th.join(HANG_GUARD)
    assert code == 0, lines
    assert _unanswered(lines) == [
        "amqp: warning: the peer did not answer our close within 3s (it may have stopped)"], lines


def test_browse_says_it_too() -> None:
    port, th = _peer(2, LinkDetached)
    code, out, lines, summary = _run(port, "browse", "-t", "2")
    th.join(HANG_GUARD)
    assert code == 0, lines
    assert [m["body"] for m in json_lines(out)] == [{"value": "m1"}, {"value": "m2"}]
    # What a browse settles it releases, and a message released comes again whether the
    # release reached the peer or not: nothing to say of it.
    warning = "the peer did not answer our detach within 2s (it may have stopped)"
    assert _unanswered(lines) == [f"amqp: warning: {warning}"], lines
    assert summary["warnings"] == [warning]


def _credit_then_silent(credit: int) -> tuple[int, threading.Thread]:
    """Takes a sender's messages on `credit` granted once (never more), and answers
    nothing from the client's close on: it reads what comes until the client hangs up."""

    def script(peer: PeerConnection, e: Event) -> None:
        if isinstance(e, ConnectionClosed):
            peer.go_silent()
        elif isinstance(e, LinkAttached) and e.side == peer.ep.remote:
            peer.ep.flow(e.link, credit)

    return engine_peer(script)


UNCONFIRMED = ("3 pre-settled message(s) sent on a connection that ended without the "
               "peer's answer to our close: whether they arrived is not known (pre-settled "
               "is at most once)")


@pytest.mark.parametrize(("count", "code"), [
    (5, 5),  # two wait for credit that never comes: the run fails (timeout), then closes
    (3, 0),  # all three go: the run is done, then closes
])
def test_pre_settled_sends_are_unconfirmed_when_the_close_goes_unanswered(
        monkeypatch: pytest.MonkeyPatch, count: int, code: int) -> None:
    """Three pre-settled messages go on the credit there is; the peer never answers the
    close: nothing says it had them, so they are counted settled-unconfirmed, with a
    warning, and the exit is the run's own."""
    monkeypatch.setattr("amqpcli.net.client.CLOSE_WAIT", 0.2)  # (the unanswered wait)
    port, th = _credit_then_silent(3)
    exit_code, out, err = amqp_in_process(
        "send", f"amqp://127.0.0.1:{port}/q", "x", "--sasl-mechanism", "none",
        "--count", str(count), "--presettled", "--timeout", "0.2", "--json")
    th.join(HANG_GUARD)
    s = json.loads(out)
    assert exit_code == code and s.get("exit", 0) == code, err
    assert (s["sent"], s["settled"], s["settled-unconfirmed"]) == (3, 3, 3), s
    assert s.get("not-sent", 0) == count - 3
    warnings = ["the peer did not answer our close within 0.2s (it may have stopped)",
                UNCONFIRMED]
    assert s["warnings"] == warnings, s
    assert [x for x in err.splitlines() if x.startswith("amqp: warning: ")] == [
        f"amqp: warning: {w}" for w in warnings], err
