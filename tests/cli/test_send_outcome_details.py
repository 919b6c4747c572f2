"""`amqp send`'s summary says what the rejected and modified outcomes carried, not only how
many there were: a rejection's error (condition, description, info), a modification's
flags and annotations. The JSON summary keeps each distinct outcome whole (lossless JSON)
with its messages; the text gives one line per condition or set of flags, so a run of
100,000 rejections of one kind is one line. The peer's text is masked for the run's
secrets in both."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.errors import register_secret
from amqpcli.net.outcomedetails import OutcomeDetails
from tests.net.clirun import amqp_in_process
from tests.peers import Accept, DirectReceiver, Modify, Received, Reject, Release

FULL = "amqp:resource-limit-exceeded"


def _outcome(rec: Received) -> object:
    """Messages 1-2 and 4 rejected with one condition (4 with another description and
    info), 3 with another; 5-6 modified; 7 released; the rest accepted."""
    return {
        0: Reject(FULL, "queue full"), 1: Reject(FULL, "queue full"),
        2: Reject("amqp:precondition-failed", "no"),
        3: Reject(FULL, "over quota", {"limit": 5}),
        4: Modify(True, True, {"x-opt-why": "busy"}), 5: Modify(True, True, {"x-opt-why": "busy"}),
        6: Release(),
    }.get(rec.index % 8, Accept())  # (the same again for a second run)


@pytest.mark.integration
def test_the_summaries_say_what_the_outcomes_carried(
        direct_receiver: Callable[..., DirectReceiver]) -> None:
    rcv = direct_receiver(outcome=_outcome)
    url = f"{rcv.url}/q"
    code, out, err = amqp_in_process("send", url, "x", "--count", "8", "--window", "1")
    assert code == 6, err
    assert out.splitlines()[1:] == [
        (f"rejected 3 (messages 1-2, 4): {FULL}: queue full (the first of 2 different "
         "ones: see --json)"),
        "rejected 1 (message 3): amqp:precondition-failed: no",
        ("modified 2 (messages 5-6): delivery-failed,undeliverable-here, "
         'message-annotations {:x-opt-why: "busy"}'),
        "released 1 (message 7): not delivered: --on-release retry sends such messages again",
    ]

    code, out, err = amqp_in_process("send", url, "x", "--count", "8", "--window", "1",
                                     "--json")
    assert code == 6, err
    s = json.loads(out)
    assert (s["rejected"], s["modified"], s["released"], s["accepted"]) == (4, 2, 1, 1)

    def rejected(condition: str, description: str, **more: object) -> dict[str, object]:
        return {"rejected": {"error": {"error": {"condition": condition,
                                                 "description": description, **more}}}}

    # (proton writes its maps as map32: the lossless form keeps that, as "code")
    assert s["outcome-details"] == [
        {"state": rejected(FULL, "queue full"), "count": 2, "messages": [1, 2]},
        {"state": rejected("amqp:precondition-failed", "no"), "count": 1, "messages": [3]},
        {"state": rejected(FULL, "over quota", info={"map": {"limit": 5}, "code": "0xd1"}),
         "count": 1,
         "messages": [4]},
        {"state": {"modified": {"delivery-failed": True, "undeliverable-here": True,
                                "message-annotations": {"map": {"x-opt-why": "busy"},
                                                        "keys": "symbol", "code": "0xd1"}}},
         "count": 2, "messages": [5, 6]},
    ]


def test_one_line_for_many_and_no_secret() -> None:
    register_secret("hunter2-secret")
    details = OutcomeDetails()
    state = c.Rejected(error=c.Error(
        condition=Symbol(FULL), description="no room for hunter2-secret",
        info={Symbol("user-password"): "hunter2-secret"}))
    for n in range(1, 100_001):
        details.add(n, state)
    assert details.lines() == [
        (f"rejected 100000 (messages 1-100000): {FULL}: no room for *** "
         '(info {:user-password: "***"})')]
    (group,) = details.to_json()
    assert group["count"] == 100_000 and "hunter2" not in json.dumps(group)
