"""`amqp request` against a proton responder (tests/peers/responder.py) that answers as
proton's examples/python/server.py does, and against `amqp serve` with that responder
as its client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.codec.message import Message as AMessage
from amqpcli.render.message import message_bytes_from_json
from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT
from tests.peers import PeerThread
from tests.peers.responder import WRONG_ID, Responder, ResponderClient

pytestmark = pytest.mark.integration

Start = Callable[[PeerThread], Any]


def _summary(stderr: str) -> dict[str, Any]:
    (line,) = [ln for ln in stderr.splitlines() if ln.startswith('{"request"')]
    return json.loads(line)["request"]  # type: ignore[no-any-return]


def test_replies_matched_and_printed(peers: Start) -> None:
    r: Responder = peers(Responder())
    p = amqp("request", f"{r.url}/service", "twas brillig", "and the slithy toves")
    assert p.returncode == 0, p.stderr
    assert "TWAS BRILLIG" in p.stdout and "AND THE SLITHY TOVES" in p.stdout
    assert "requests sent 2, accepted 2, replies 2" in p.stderr
    # labelled as what they are (respond's say "request N")
    assert [ln.split("  (")[0] for ln in p.stdout.splitlines()
            if not ln.startswith(" ")] == ["reply 1", "reply 2"], p.stdout
    # each request: reply-to the dynamic node the peer named, one id in message-id and
    # correlation-id, a different one per request
    (address,) = r.reply_addresses()
    reqs = r.requests()
    assert [q.message.reply_to for q in reqs] == [address, address]
    assert all(q.message.id == q.message.correlation_id for q in reqs)
    assert reqs[0].message.id != reqs[1].message.id


def test_json_replies_are_recv_lines_and_lossless(peers: Start) -> None:
    r: Responder = peers(Responder())
    p = amqp("request", f"{r.url}/service", "x", "--count", "3", "--concurrency", "3", "--json")
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    # the bytes of every reply, back from its line exactly (in the order they came)
    assert sorted(message_bytes_from_json(obj) for obj in lines) == sorted(r.replies())
    ids = {q.message.id for q in r.requests()}
    assert {AMessage.decode(message_bytes_from_json(o)).properties.correlation_id
            for o in lines} == ids and len(ids) == 3
    s = _summary(p.stderr)
    assert (s["requests"], s["accepted"], s["replies"], s["unmatched"], s["missing"]) == (
        3, 3, 3, 0, 0)
    assert set(s["round-trip-ms"]) == {"p50", "max"}


def test_missing_and_unmatched_replies(peers: Start) -> None:
    # 2 is never answered, 3 is answered with a correlation-id no request has
    r: Responder = peers(Responder(drop=[2], wrong=[3]))
    p = amqp("request", f"{r.url}/service", "a", "b", "c", "--concurrency", "3", "-t", "1")
    assert p.returncode == 5, p.stderr
    assert 'b"A"' in p.stdout and 'b"B"' not in p.stdout and 'b"C"' not in p.stdout
    assert p.stderr.count(f"correlation-id {WRONG_ID!r} answers no request") == 1
    assert "replies 1, unmatched 1, missing 2" in p.stderr
    assert p.stderr.splitlines()[-1] == (
        "amqp: error: no reply to 2 of 3 request(s) within the timeout")


def test_one_at_a_time_stops_at_the_missing_reply(peers: Start) -> None:
    r: Responder = peers(Responder(drop=[1]))
    p = amqp("request", f"{r.url}/service", "a", "b", "-t", "1", "--json")
    assert p.returncode == 5, p.stderr
    assert len(r.requests()) == 1  # the second waits for the first's reply, which never comes
    s = _summary(p.stderr)
    assert (s["requests"], s["missing"], s["not-sent"], s["exit"]) == (1, 1, 1, 5)


def test_rejected_request_exits_6_and_the_rest_goes_on(peers: Start) -> None:
    r: Responder = peers(Responder(reject=[1]))
    p = amqp("request", f"{r.url}/service", "a", "b")
    assert p.returncode == 6, p.stderr
    assert 'b"B"' in p.stdout
    assert "rejected: request 1: amqp:precondition-failed: told to reject it" in p.stderr
    assert "1 message(s) not accepted (1 rejected" in p.stderr.splitlines()[-1]


def test_reply_to_a_named_node(peers: Start) -> None:
    r: Responder = peers(Responder())
    p = amqp("request", f"{r.url}/service", "hi", "--reply-to", "my-replies")
    assert p.returncode == 0, p.stderr
    assert "HI" in p.stdout
    assert r.reply_addresses() == ["my-replies"]
    assert r.requests()[0].message.reply_to == "my-replies"


@pytest.mark.parametrize("correlate", ["correlation_id", "message_id"])
def test_through_amqp_serve(serve: ServePeers, peers: Start, correlate: str) -> None:
    # (serve first: the responder is stopped before it)
    # server.py's way (the reply's correlation-id is the request's) and the JMS way (it
    # is the request's message-id), the replies through serve's anonymous relay
    url = serve()
    rc: ResponderClient = peers(ResponderClient(url, "service", correlate=correlate))
    rc.wait_attached()
    p = amqp("request", f"{url}/service", "one", "two", "--message-id", "req-{n}",
             "--correlation-id", "corr-{n}", "--concurrency", "2", "--json")
    assert p.returncode == 0, p.stderr
    got = {AMessage.decode(message_bytes_from_json(o)).properties.correlation_id
           for o in json_lines(p.stdout)}
    assert got == ({"corr-1", "corr-2"} if correlate == "correlation_id" else {"req-1", "req-2"})
    assert _summary(p.stderr)["reply-to"].startswith("amqp-serve.tmp.")


def test_named_reply_node_on_serve(serve: ServePeers, peers: Start) -> None:
    url = serve()
    rc: ResponderClient = peers(ResponderClient(url, "service"))
    rc.wait_attached()
    p = amqp("request", f"{url}/service", "x", "--count", "2", "--reply-to", "replies")
    assert p.returncode == 0, p.stderr
    assert "replies 2" in p.stderr
    assert {q.message.reply_to for q in rc.requests()} == {"replies"}


@pytest.mark.parametrize(("args", "said"), [
    (["amqp://127.0.0.1:1", "x"], "no address"),
    (["amqp://127.0.0.1:1/q", "x", "--concurrency", "0"],
     "--concurrency must be between 1 and 1000000"),
    (["amqp://127.0.0.1:1/q", "x", "--concurrency", "99999999999"],  # (was an internal error)
     "--concurrency must be between 1 and 1000000"),
    (["amqp://127.0.0.1:1/q", "a", "b", "--count", "2"], "several BODY arguments"),
    (["amqp://127.0.0.1:1/q", "x", "-c", "2", "--concurrency", "2", "--message-id", "m"],
     "--message-id without {n} or {uuid} gives every request the same id"),
    # either id of a request is matched: a fixed one of the two is refused as well, before
    # connecting (port 1: nothing listens there)
    (["amqp://127.0.0.1:1/q", "a", "b", "c", "--concurrency", "3", "--correlation-id", "grp"],
     "--correlation-id without {n} or {uuid} gives every request the same id"),
    (["amqp://127.0.0.1:1/q", "a", "b", "--concurrency", "2", "--message-id", "fixed",
      "--correlation-id", "c{n}"],
     "--message-id without {n} or {uuid} gives every request the same id"),
    (["amqp://127.0.0.1:1/q", "--lines", "--concurrency", "2", "--correlation-id", "{{n}}"],
     "--correlation-id without {n} or {uuid}"),
    (["amqp://127.0.0.1:1/q", "x", "--reply-to", ""], "--reply-to needs a node address"),
    (["amqp://127.0.0.1:1/q", "x", "--reconnect", "-1"], "--reconnect must be 0 or more"),
])
def test_usage_errors(args: list[str], said: str) -> None:
    p = amqp("request", *args)
    assert p.returncode == 2, p.stderr
    assert said in p.stderr and "Traceback" not in p.stderr


def test_a_first_line_read_before_connecting_carries_the_reply_node(peers: Start) -> None:
    # a pipe whose lines have all come (a here-string): line 1 is checked before we
    # connect, and its request made once the reply node is known
    r: Responder = peers(Responder())
    read_end, write_end = os.pipe()
    os.write(write_end, b"one\ntwo\n")
    os.close(write_end)
    p = subprocess.run([sys.executable, "-m", "amqpcli", "request", f"{r.url}/service",
                        "--lines"], stdin=read_end, capture_output=True, text=True,
                       timeout=120, cwd=REPO_ROOT, env=cli_env(), check=False)
    os.close(read_end)
    assert p.returncode == 0, p.stderr
    assert "ONE" in p.stdout and "TWO" in p.stdout
    (address,) = r.reply_addresses()
    assert [q.message.reply_to for q in r.requests()] == [address, address]


def test_a_bad_line_ends_the_run_after_the_replies_to_those_sent(peers: Start) -> None:
    r: Responder = peers(Responder())
    p = amqp("request", f"{r.url}/service", "--lines", "--json-body", "--json",
             input=b'"one"\n{not json\n"three"\n')
    assert p.returncode == 2, p.stderr
    assert len(json_lines(p.stdout)) == 1 and len(r.requests()) == 1
    assert "body is not lossless JSON" in p.stderr.splitlines()[-1]
    assert _summary(p.stderr)["replies"] == 1


def test_a_fixed_id_one_request_at_a_time(peers: Start) -> None:
    # with --concurrency 1 only one request waits: a fixed id still tells its reply apart
    r: Responder = peers(Responder())
    p = amqp("request", f"{r.url}/service", "a", "b", "--correlation-id", "grp")
    assert p.returncode == 0, p.stderr
    assert "replies 2" in p.stderr
    assert [q.message.correlation_id for q in r.requests()] == ["grp", "grp"]


def test_unmatched_replies_do_not_put_off_the_timeout(peers: Start) -> None:
    # request 1 is never answered, and a reply that answers nothing comes every 0.2 s for
    # as long as the responder runs: the run must still end when --timeout passes (it
    # waited for ever, each unmatched reply starting the timeout again)
    r: Responder = peers(Responder(noise=[1]))
    p = amqp("request", f"{r.url}/service", "x", "--reply-to", "busy", "-t", "1", "--json",
             timeout=60)
    assert p.returncode == 5, p.stderr
    s = _summary(p.stderr)
    assert (s["requests"], s["replies"], s["missing"]) == (1, 0, 1)
    assert s["unmatched"] >= 1
    assert p.stdout == ""


def test_no_outcome_within_the_timeout_is_in_doubt(peers: Start) -> None:
    # both requests answered, neither settled: as send, a send with no outcome when
    # --timeout passes is in doubt (exit 7), counted and listed
    r: Responder = peers(Responder(unsettled=[1, 2, 3]))
    p = amqp("request", f"{r.url}/service", "a", "b", "--concurrency", "2", "-t", "1",
             "--message-id", "req-{n}")
    assert p.returncode == 7, p.stderr
    assert 'b"A"' in p.stdout and 'b"B"' in p.stdout
    assert "accepted 0, in doubt 2, replies 2" in p.stderr
    assert "amqp: in doubt: request 1 (message-id 'req-1')" in p.stderr
    assert "amqp: in doubt: request 2 (message-id 'req-2')" in p.stderr
    assert p.stderr.splitlines()[-1] == (
        "amqp: error: 2 message(s) in doubt: no outcome for 2 request(s) within 1s")
    p = amqp("request", f"{r.url}/service", "c", "-t", "1", "--message-id", "req-{n}",
             "--json")
    assert p.returncode == 7, p.stderr
    s = _summary(p.stderr)
    assert (s["in-doubt"], s["in-doubt-messages"], s["replies"], s["exit"]) == (
        1, [{"number": 1, "message-id": "req-1"}], 1, 7)
    assert "no-outcome" not in s


def test_rabbitmq_ending_the_session_at_a_dynamic_node_suggests_reply_to(
        rabbitmq_url: str, rabbitmq_queue: str) -> None:
    """RabbitMQ 3.10 refuses a dynamic node by ending the session (amqp:not-implemented):
    the suggestion of --reply-to was left out because the session had ended; a vhost it
    refuses, which closes the connection at the first attach, gets none."""
    p = amqp("request", f"{rabbitmq_url}/{rabbitmq_queue}", "ping")
    assert (p.returncode, p.stdout) == (4, "")
    assert p.stderr == (
        "amqp: error: the peer refused the link to a dynamic node: amqp:not-implemented: "
        "Dynamic sources not supported (asked for a dynamic node for the replies: --reply-to "
        "ADDRESS names a node instead)\n")
    p = amqp("request", f"{rabbitmq_url}/{rabbitmq_queue}", "ping", "--open-hostname",
             "vhost:no-such-vhost")
    assert p.returncode == 4 and "--reply-to" not in p.stderr, p.stderr


def test_a_reply_that_cannot_be_written_is_not_counted(peers: Start) -> None:
    """Standard output full: the run ends (exit 2), the reply is not accepted, and the
    summary does not count it as received (it said `replies 1` with its round trip)."""
    r: Responder = peers(Responder())
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            [sys.executable, "-m", "amqpcli", "request", f"{r.url}/service", "hi",
             "--json"], check=False, stdout=full, stderr=subprocess.PIPE, text=True,
            cwd=REPO_ROOT, env=cli_env(), timeout=120)
    assert p.returncode == 2, p.stderr
    assert "cannot write standard output" in p.stderr
    summary = _summary(p.stderr)
    assert summary["replies"] == 0 and "round-trip-ms" not in summary, summary
    assert summary["missing"] == 1  # (its request had no reply it could show)


def test_no_credit_for_the_requests_is_summed_up_as_send_does(serve: ServePeers) -> None:
    """The request link open, no credit: what became of the requests (not sent), then why,
    as `send` says it (only the error used to come)."""
    url = serve("-q", "--credit", "0")
    p = amqp("request", f"{url}/q", "m", "n", "-t", "1")
    assert p.returncode == 5, p.stderr
    lines = p.stderr.splitlines()
    assert lines[0].startswith("amqp: requests sent 0, accepted 0, replies 0, not sent 2 in ")
    assert lines[1:] == ["amqp: error: no credit from the peer for 1s"]
