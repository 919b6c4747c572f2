"""`amqp send --txn-size`: a transaction the run ends without committing is rolled back by
the peer (AMQP 1.0 Part 4: a transaction still open when its controller's link or
connection ends is rolled back), so its messages were not delivered: they are counted
"not committed", not in doubt, and the exit is what ended the run (3 for a lost
connection, 130 for Ctrl-C), not 7. So is a commit the peer refused. A commit sent and
not answered may have committed: its messages stay in doubt (exit 7), with --reconnect
too. A rollback sent and not answered rolls back either way."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.engine import Event, LinkAttached, MessageReceived
from amqpcli.errors import Exit, UserError
from amqpcli.net.sending import SendSummary, summary_exit, summary_text
from tests.net.clirun import amqp_in_process, cli_env
from tests.net.onepeer import HANG_GUARD, PeerConnection, engine_peer
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration


class _Seen:
    """What the peer saw, for the test to wait on and check."""

    def __init__(self) -> None:
        self.third = threading.Event()  # the third message came
        self.discharges = 0


def _peer(drop_on: str | tuple[str, ...], *, credit: int = 10, count: int = 1,
          seen: _Seen | None = None) -> tuple[int, threading.Thread]:
    """Takes transactional sends: declares a transaction, accepts the first two messages
    in it, and drops the connection without a word when the third message comes
    (`message`) or when the discharge comes (`discharge`), or refuses the discharge
    (`refuse`: rejected, amqp:transaction:rollback), or commits (`commit`); with any other
    `drop_on` it accepts every message and answers nothing else. `credit`: granted once to
    the sender. `count`: connections taken one after the other, each alike, or as the
    tuple `drop_on` says for each."""
    seen = seen or _Seen()
    received: dict[int, int] = {}  # connection number -> messages it received

    def script(peer: PeerConnection, e: Event) -> None:
        ep = peer.ep
        drop = drop_on if isinstance(drop_on, str) else drop_on[peer.number - 1]
        if isinstance(e, LinkAttached) and e.side == ep.remote:
            ep.flow(e.link, 10 if e.link.coordinator else credit)
        elif isinstance(e, MessageReceived) and e.delivery.link.coordinator:
            if isinstance(e.delivery.txn_request, c.Declare):
                ep.settle(e.delivery, c.Declared(txn_id=b"t1"))
                return
            seen.discharges += 1
            if drop == "discharge":
                peer.hang_up()
            elif drop == "commit":
                ep.settle(e.delivery, c.Accepted())
            elif drop == "refuse":
                ep.settle(e.delivery, c.Rejected(error=c.Error(
                    condition=Symbol("amqp:transaction:rollback"))))
        elif isinstance(e, MessageReceived):
            received[peer.number] = received.get(peer.number, 0) + 1
            if received[peer.number] == 3:
                seen.third.set()
                if drop == "message":
                    peer.hang_up()
                    return
            ep.settle(e.delivery, c.TransactionalState(txn_id=b"t1", outcome=c.Accepted()))

    return engine_peer(script, count=count)


def _send(port: int, *args: str) -> tuple[int, dict[str, object], str]:
    code, out, err = amqp_in_process(
        "send", f"amqp://127.0.0.1:{port}/q", "x", "--sasl-mechanism", "none", "--count", "3",
        "--txn-size", "5", "--message-id", "m{n}", "--json", *args)
    return code, json.loads(out), err


def test_a_transaction_never_discharged_leaves_its_messages_not_committed() -> None:
    port, th = _peer("message")
    code, s, err = _send(port)
    th.join(HANG_GUARD)
    assert code == 3, err  # the connection was lost: the run did not complete
    assert (s["in-doubt"], s["not-committed"], s["accepted"]) == (0, 3, 0), s
    assert s["not-committed-messages"] == [
        {"number": n, "message-id": f"m{n}"} for n in (1, 2, 3)]
    assert s["exit"] == 3 and "in-doubt-messages" not in s
    assert "amqp: error: 3 message(s) not committed: " in err, err


def test_a_commit_refused_is_not_committed() -> None:
    port, th = _peer("refuse")
    code, s, err = _send(port)
    th.join(HANG_GUARD)
    assert code == 4, err  # refused
    assert (s["in-doubt"], s["not-committed"], s["accepted"]) == (0, 3, 0), s
    assert "the peer did not commit the transaction" in err, err


def test_a_commit_sent_and_not_answered_stays_in_doubt() -> None:
    port, th = _peer("discharge")
    code, s, err = _send(port)
    th.join(HANG_GUARD)
    assert code == 7, err
    assert (s["in-doubt"], s.get("not-committed"), s["accepted"]) == (3, None, 0), s


def test_a_rollback_not_answered_rolls_back_all_the_same() -> None:
    port, th = _peer("discharge")
    code, s, err = _send(port, "--rollback")
    th.join(HANG_GUARD)
    assert code == 3, err
    assert (s["in-doubt"], s["not-committed"]) == (0, 3), s


def test_an_interrupt_with_a_transaction_open_leaves_its_messages_not_committed() -> None:
    """Ctrl-C while the open transaction holds three messages (the peer's credit ran out
    after them): the run closes without a discharge, so the peer rolls the transaction
    back. The messages are not committed, not in doubt; the exit says the run was
    interrupted (130)."""
    seen = _Seen()
    port, th = _peer("none", credit=3, seen=seen)
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "send", f"amqp://127.0.0.1:{port}/q", "x",
         "--sasl-mechanism", "none", "--count", "10", "--txn-size", "5", "--message-id",
         "m{n}", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env=cli_env())
    try:
        assert seen.third.wait(HANG_GUARD), "the third message never came"
        assert p.poll() is None, "the run ended before it was interrupted"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=HANG_GUARD)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    th.join(HANG_GUARD)
    assert p.returncode == Exit.INTERRUPTED, err
    s = json.loads(out)
    assert (s["sent"], s["in-doubt"], s["not-committed"], s["accepted"]) == (3, 0, 3, 0), s
    assert s["not-committed-messages"] == [
        {"number": n, "message-id": f"m{n}"} for n in (1, 2, 3)]
    assert s["exit"] == Exit.INTERRUPTED and "in-doubt-messages" not in s
    assert "amqp: error: 3 message(s) not committed: interrupted" in err, err
    assert seen.discharges == 0  # (no commit went out: nothing was committed)


@pytest.mark.parametrize("again", [True, False], ids=["sent-again", "not-reconnected"])
def test_a_commit_unanswered_before_a_reconnect_leaves_its_messages_in_doubt(
        again: bool) -> None:
    """`--reconnect`: the peer never answers the commit and the connection drops. The
    commit may have taken effect: the messages are in doubt (exit 7) whether the next
    connection sends them again in a transaction whose commit goes unanswered too
    (`sent-again`), or no connection comes (`not-reconnected`): neither committed nor
    not committed, and not unsent."""
    port, th = _peer("discharge", count=2 if again else 1)
    code, s, err = _send(port, "--reconnect", "1")
    th.join(HANG_GUARD)
    assert code == Exit.IN_DOUBT, err
    assert (s["in-doubt"], s["accepted"], s["resent"]) == (3, 0, 3 if again else 0), s
    assert s["in-doubt-messages"] == [{"number": n, "message-id": f"m{n}"} for n in (1, 2, 3)]
    assert "not-committed" not in s and "not-sent" not in s, s
    assert s["exit"] == Exit.IN_DOUBT and "reconnecting (1 of 1)" in err, err


def test_a_commit_unanswered_then_a_resend_committed_delivers_them() -> None:
    """`--reconnect`: the first commit goes unanswered and the connection drops; the next
    connection sends the messages again and commits them. They are delivered (perhaps
    twice, if the first commit took effect: counted as resent), so they are accepted,
    not in doubt, and the run succeeds."""
    port, th = _peer(("discharge", "commit"), count=2)
    code, s, err = _send(port, "--reconnect", "1")
    th.join(HANG_GUARD)
    assert code == 0, err
    assert (s["in-doubt"], s["accepted"], s["resent"]) == (0, 3, 3), s
    assert "not-committed" not in s and "in-doubt-messages" not in s, s


def test_the_text_summary_and_the_exit() -> None:
    s = SendSummary(sent=3, messages=3, not_committed=[(1, "a"), (2, "b"), (3, "c")],
                    failure=UserError("interrupted", Exit.INTERRUPTED))
    first, second = summary_text(s).splitlines()
    assert first.startswith("sent 3, accepted 0, in doubt 0, not committed 3 in "), first
    assert second == ("not committed: messages 1-3: sent in a transaction the run ended "
                      "without committing, which the peer rolls back: not delivered")
    assert summary_exit(s) == (Exit.INTERRUPTED, "3 message(s) not committed: interrupted")
