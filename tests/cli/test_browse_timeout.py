"""`amqp browse` whose drain the peer never answers ends at --timeout: the listing did not
finish, so the copy check is not done (no "consumed" verdict from a second link that
would see the same silence), the summary and the JSON say so, and the exit is 5."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.net.clirun import amqp, json_lines
from tests.peers import DirectSender

pytestmark = pytest.mark.integration

BODIES = [bytes.fromhex("005377a10161"), bytes.fromhex("005377a10162")]  # "a", "b"


@pytest.fixture
def silent_drain(peers: Callable[..., Any]) -> DirectSender:
    return peers(DirectSender(BODIES, answer_drain=False))  # type: ignore[no-any-return]


def test_text_summary(silent_drain: DirectSender) -> None:
    r = amqp("browse", f"{silent_drain.url}/x", "--timeout", "0.5")
    assert r.returncode == 5, r.stderr
    assert "consumed, not copied" not in r.stderr
    lines = r.stderr.splitlines()
    assert lines[-2].startswith("amqp: 2 messages seen on 'x' before the timeout")
    assert lines[-2].endswith("; not checked whether the peer copied or consumed them (the "
                              "browse did not finish: the peer did not answer the drain in time)")
    assert lines[-1] == ("amqp: error: the peer did not answer the drain in 0.5s: the listing "
                         "may be incomplete")
    assert len(silent_drain.links()) == 1  # no second link


def test_json_summary(silent_drain: DirectSender) -> None:
    r = amqp("browse", f"{silent_drain.url}/x", "--timeout", "0.5", "--json")
    assert r.returncode == 5, r.stderr
    assert len(json_lines(r.stdout)) == 2
    summary = json.loads(r.stderr.splitlines()[-2])["browse"]
    assert "copy-consumed" not in summary
    assert summary["copy-not-checked"].startswith("the browse did not finish")
    assert summary["exit"] == 5
    assert summary["error"].startswith("the peer did not answer the drain in 0.5s")
    assert summary["held-and-released"] == 2
