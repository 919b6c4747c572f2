"""A receiver that states a terminal outcome without settling (proton's `update()` without
`settle()`, or receiver-settle-mode second): the outcome is known, so the send is over —
we settle as the sender and count the outcome. These sends were reported in doubt
(exit 7, 'no outcome') although the receiver had said accepted, and `--reconnect` would
have sent them again."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from proton import Link

from tests.net.clirun import amqp
from tests.peers import Accept, DirectReceiver, Reject, Release

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(("outcome", "key", "code"), [
    (Accept(), "accepted", 0), (Reject("amqp:x", "no"), "rejected", 6),
    (Release(), "released", 6),
])
def test_an_outcome_the_receiver_leaves_unsettled_ends_the_send(
        direct_receiver: Callable[..., DirectReceiver], outcome: object, key: str,
        code: int) -> None:
    rcv = direct_receiver(outcome=outcome, rcv_settle_mode=Link.RCV_SECOND)
    r = amqp("send", f"{rcv.url}/q", "x", "-c", "3", "--timeout", "10", "--json")
    summary = json.loads(r.stdout)
    assert r.returncode == code, r.stderr
    assert summary[key] == 3 and summary["in-doubt"] == 0, summary
    assert len(rcv.wait_for_messages(3)) == 3


def test_one_message_unsettled_accept(direct_receiver: Callable[..., DirectReceiver]) -> None:
    # the single-send path (one body) as well as the batched one
    rcv = direct_receiver(rcv_settle_mode=Link.RCV_SECOND)
    r = amqp("send", f"{rcv.url}/q", "x", "--timeout", "10")
    assert r.returncode == 0, r.stderr
    assert "accepted 1" in r.stdout and "in doubt 0" in r.stdout, r.stdout
