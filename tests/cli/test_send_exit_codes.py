"""`amqp send`: the JSON summary's "exit" is the process's exit code (in doubt first), the
peer's close is reported at once, and `amqp:connection:forced` is a drop `--reconnect`
recovers from."""

from __future__ import annotations

import json
import time

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.sending import SendSummary, summary_exit
from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers


@pytest.mark.parametrize(
    ("failure", "in_doubt", "rejected", "code"),
    [
        (UserError("detached", Exit.REFUSED), 3, 1, Exit.IN_DOUBT),
        (UserError("no outcome", Exit.TIMEOUT), 15, 0, Exit.IN_DOUBT),
        (UserError("interrupted", Exit.INTERRUPTED), 2, 0, Exit.IN_DOUBT),
        (UserError("interrupted", Exit.INTERRUPTED), 0, 0, Exit.INTERRUPTED),
        (None, 0, 2, Exit.REJECTED),
    ],
)
def test_json_exit_is_the_process_exit(failure: UserError | None, in_doubt: int,
                                       rejected: int, code: Exit) -> None:
    s = SendSummary(sent=8, rejected=rejected, failure=failure,
                    in_doubt=[(i, None) for i in range(in_doubt)])
    assert summary_exit(s)[0] == code
    assert s.to_json()["exit"] == int(code)


def test_json_has_no_exit_when_all_is_well() -> None:
    assert "exit" not in SendSummary(sent=1, accepted=1).to_json()


@pytest.mark.integration
def test_send_json_exit_is_the_process_exit(serve: ServePeers) -> None:
    url = serve("--detach-after", "5", "--reject", "every:3", "--release", "at:2")
    r = amqp("send", f"{url}/jobs", "work", "--count", "8", "--json", "--timeout", "10")
    s = json.loads(r.stdout)
    assert s["in-doubt"] > 0
    assert r.returncode == 7 and s["exit"] == 7, (r.stdout, r.stderr)


@pytest.mark.integration
def test_send_sees_the_peers_close_at_once(serve: ServePeers) -> None:
    url = serve("-q", "--close-after", "5")
    for _ in range(6):  # the close raced the wait for outcomes about half the time
        t = time.monotonic()
        r = amqp("send", f"{url}/r1", "x", "--count", "20", "--timeout", "20", "--json")
        assert time.monotonic() - t < 15, r.stderr
        s = json.loads(r.stdout)
        assert r.returncode == 7 and s["exit"] == 7, r.stderr
        assert "amqp:connection:forced" in r.stderr and "no outcome" not in r.stderr
        assert s["accepted"] == 5 and s["in-doubt"] == 15


@pytest.mark.integration
def test_send_is_done_when_the_peer_closes_after_the_last_outcome(serve: ServePeers) -> None:
    # Every message sent and accepted, then the peer's forced close (in the same write as
    # the last outcome): said, but the run did all it was asked (it exited 4).
    url = serve("-q", "--close-after", "5")
    r = amqp("send", f"{url}/r3", "x", "--count", "5", "--json", "--timeout", "20")
    s = json.loads(r.stdout)
    assert r.returncode == 0 and "exit" not in s and "error" not in s, r.stderr
    assert s["accepted"] == 5 and s["in-doubt"] == 0
    assert "after the last outcome: the peer closed the connection: amqp:connection:forced" \
        in r.stderr
    assert s["warnings"] == [r.stderr.strip().removeprefix("amqp: warning: ")]


@pytest.mark.integration
@pytest.mark.parametrize("fault", ["--close-after", "--detach-after"])
def test_send_reconnects_after_connection_forced(serve: ServePeers, fault: str) -> None:
    # amqp:connection:forced, or amqp:link:detach-forced on the sending link
    url = serve("-q", fault, "5")
    r = amqp("send", f"{url}/r2", "x", "--count", "20", "--reconnect", "10",
             "--message-id", "{n}", "--json", "--timeout", "20")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["accepted"] == 20 and s["in-doubt"] == 0 and s["reconnects"] >= 3
    assert s["resent"] > 0 and s["sent"] == 20 + s["resent"]


def test_json_summary_even_when_nothing_was_sent() -> None:
    # nothing listens on port 1: a script asking for JSON still gets its one object
    r = amqp("send", "amqp://127.0.0.1:1/q", "x", "--count", "20", "--reconnect", "1",
             "--json")
    assert r.returncode == 3, r.stderr
    (summary,) = [json.loads(x) for x in r.stdout.splitlines()]
    assert (summary["sent"], summary["not-sent"], summary["exit"]) == (0, 20, 3)
    assert summary["reconnects"] == 0  # retried, but never connected again


def test_reconnects_are_in_the_text_summary(serve: ServePeers) -> None:
    url = serve("-q", "--close-after", "3") + "/rc"
    r = amqp("send", url, "x", "--count", "8", "--reconnect", "5", "--window", "1")
    assert r.returncode == 0, r.stderr
    text = r.stdout.splitlines()[0]
    assert "accepted 8" in text and " reconnect(s)" in text, text


def test_duration_with_a_rate_sends_rate_times_duration_at_most(serve: ServePeers) -> None:
    # --duration 2 --rate 5: turns at 0, 0.2, ... 1.8 s; the one at 2.0 s is past the end
    r = amqp("send", serve("-q") + "/dr", "x", "--duration", "2", "--rate", "5", "--json")
    assert r.returncode == 0, r.stderr
    assert 1 <= json.loads(r.stdout)["sent"] <= 10
