"""`amqp request` to a responder that drains the request link (python-qpid-proton's
`Receiver.drain(n)`): the requests the run has go first, up to the credit, and only then
is the drain answered, the credit left unused given back (Part 2 §2.6.7: the sender uses
up the credit "after sending all available messages"); with no request to send (the last
one gone, a pipe with no line yet) it is answered at once. And a run that fails on a
timeout closes the connection (close, not a dropped socket)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from proton import Endpoint

from tests.net.clirun import amqp
from tests.net.servepeer import cli_env
from tests.paths import REPO_ROOT
from tests.peers import PeerThread
from tests.peers.responder import Responder

pytestmark = pytest.mark.integration

Start = Callable[[PeerThread], Any]

# our flows on the request link (the replies' receiver is attached first: handle 0), as
# --trace writes them
_REQUEST_FLOW = re.compile(
    r"-> \[0\]  flow +handle=1 delivery-count=(\d+) link-credit=(\d+)( drain)?")


def _request_flows(stderr: str) -> list[tuple[int, int, bool]]:
    return [(int(m[1]), int(m[2]), bool(m[3])) for m in _REQUEST_FLOW.finditer(stderr)]


@pytest.mark.parametrize("concurrency", ["1", "3"])
def test_a_drain_waits_for_the_requests_then_gives_back_the_rest(
        peers: Start, concurrency: str) -> None:
    # one drain of 10 on the attach and no credit after it: every request goes on it
    r: Responder = peers(Responder(drain=10))
    p = amqp("request", f"{r.url}/service", "a", "b", "c", "--concurrency", concurrency,
             "--trace")
    assert p.returncode == 0, p.stderr
    assert "requests sent 3, accepted 3, replies 3" in p.stderr
    # one flow answers the drain, after the three requests: delivery-count 10 (the 7
    # unused given back), credit 0
    assert _request_flows(p.stderr) == [(10, 0, True)]
    assert p.stderr.index("-> [0]  flow        handle=1") > p.stderr.rindex(
        "-> [0]  transfer    handle=1")
    assert r.request_flows()[-1] == (0, False)  # the responder's drain is over


@pytest.mark.parametrize("concurrency", ["1", "3"])
def test_a_drain_of_one_after_each_request(peers: Start, concurrency: str) -> None:
    # a responder that fetches one request at a time: each drain(1) gets a request (its
    # transfer answers the drain), none is given back
    r: Responder = peers(Responder(drain=1, drain_each=True))
    p = amqp("request", f"{r.url}/service", "x", "--count", "5", "--concurrency",
             concurrency)
    assert p.returncode == 0, p.stderr
    assert "requests sent 5, accepted 5, replies 5" in p.stderr
    assert len(r.requests()) == 5


def test_lines_already_in_a_pipe_go_before_the_drain_is_answered(peers: Start) -> None:
    r: Responder = peers(Responder(drain=10))
    p = amqp("request", f"{r.url}/service", "--lines", input=b"a\nb\nc\n")
    assert p.returncode == 0, p.stderr
    assert "replies 3" in p.stderr
    assert [bytes(q.message.body) for q in r.requests()] == [b"a", b"b", b"c"]


def test_a_pipe_with_no_line_yet_answers_a_drain_at_once(peers: Start) -> None:
    r: Responder = peers(Responder(drain=10))
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "request", f"{r.url}/service", "--lines"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=REPO_ROOT, env=cli_env())
    try:
        # nothing to send yet: the credit comes back while the producer is silent
        r.wait_for(lambda: r.handler.request_flows
                   and r.handler.request_flows[-1] == (0, False))
        assert r.requests() == []

        def grant() -> None:  # credit without drain (proton keeps the drain mode set)
            link = r.handler.request_links[0]
            link.drain_mode = False
            link.flow(1)

        r.call(grant)
        out, err = p.communicate("late\n", timeout=60)
    finally:
        p.kill()
        p.wait()
    assert p.returncode == 0, err
    assert "LATE" in out
    assert [bytes(q.message.body) for q in r.requests()] == [b"late"]


@pytest.mark.parametrize("why", ["no reply", "no credit"])
def test_a_run_that_times_out_closes_the_connection(peers: Start, why: str) -> None:
    r: Responder = peers(Responder(drop=[1]) if why == "no reply" else Responder(credit=0))
    p = amqp("request", f"{r.url}/service", "x", "-t", "1")
    assert p.returncode == 5, p.stderr
    assert ("no reply to 1 of 1 request(s) within the timeout" if why == "no reply"
            else "no credit from the peer for 1s") in p.stderr
    # our close came, and was answered (proton says "connection aborted" of a socket
    # dropped without one)
    assert r.call(lambda: [bool(c.state & Endpoint.REMOTE_CLOSED)
                           for c in r.handler.connections]) == [True]
    assert r.transport_errors() == []
