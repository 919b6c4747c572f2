"""`recv --drain` against a sender that never answers the drain (proton's MessagingHandler
does not): what came is written, and after --timeout (10 s without one) the run ends with
exit 5, saying so. It waited for ever; with -t it exited 0 as if the drain had ended."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from proton import Message

from tests.net.clirun import amqp
from tests.peers import DirectSender

pytestmark = pytest.mark.integration


def test_a_drain_never_answered_ends_with_a_timeout(
        direct_sender: Callable[..., DirectSender]) -> None:
    sender = direct_sender([Message(body="a"), Message(body="b")], answer_drain=False)
    r = amqp("recv", f"{sender.url}/q", "--drain", "-t", "1", "--json-summary",
             "--out", "/dev/null")
    assert r.returncode == 5, r.stderr
    assert json.loads(r.stderr.splitlines()[0])["recv"]["received"] == 2
    assert r.stderr.rstrip().endswith(
        "amqp: error: the peer did not answer the drain in 1s: the node may hold more")

