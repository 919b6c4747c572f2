"""`amqp request` from a responder that aborts reply deliveries part way (Part 2
§2.6.14): each aborted delivery took a reply credit (the delivery-count moved on past
it) and brought no reply. The reply credit was topped up only when replies came, so
aborts that used it up with no whole reply in between left the responder without credit
and the run waited for --timeout (exit 5) with its replies held back."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.net.clirun import amqp, json_lines
from tests.peers import PeerThread
from tests.peers.responder import Responder

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(("abort", "options"), [
    (11, ()),  # the whole reply credit of --concurrency 1 (it plus 10)
    (40, ("--count", "3", "--concurrency", "2")),  # more than three windows of 12
], ids=["one-window", "several-windows"])
def test_replies_come_after_aborts_used_the_credit_up(
        peers: Callable[[PeerThread], Any], abort: int, options: tuple[str, ...]) -> None:
    r: Responder = peers(Responder(abort=abort))
    # (-t bounds the wait the old credit ended in)
    p = amqp("request", f"{r.url}/service", "x", *options, "-t", "10", "--json")
    assert p.returncode == 0, p.stderr
    assert r.aborted() == abort
    requests = len(r.requests())
    assert [m["body"]["value"] for m in json_lines(p.stdout)] == [{"binary-text": "X"}] * requests
    (line,) = [ln for ln in p.stderr.splitlines() if ln.startswith('{"request"')]
    summary = json.loads(line)["request"]
    assert (summary["replies"], summary["missing"]) == (requests, 0), summary
