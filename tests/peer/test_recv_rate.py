"""`amqp recv --rate R` against `amqp serve`: the credit granted stays within a second at
the rate (or --credit, if smaller), and the pacing never counts as the peer's silence
for --timeout. No clock is read: the flows of --trace say what was granted."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.net.clirun import amqp, json_lines, queue_name

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]


def _granted(trace: str) -> list[int]:
    """The link-credit of each flow we sent on our receiving link (handle 0)."""
    return [int(m[1]) for m in re.finditer(
        r" -> \[\d+\]\s+flow\s+handle=0 .*?link-credit=(\d+)", trace)]


def test_a_paced_receive_grants_little_credit_and_outlasts_a_short_timeout(
        serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    r = amqp("send", url, "m", "--count", "3", "--message-id", "{n}")
    assert r.returncode == 0, r.stderr
    # 0.9 a second is a message every 1.1 s, longer than the 1 s timeout
    r = amqp("recv", url, "--rate", "0.9", "-t", "1", "-c", "3", "--json", "--trace")
    assert r.returncode == 0, r.stderr  # (5: "received 1 of 3 before the timeout")
    assert [m["properties"]["message-id"] for m in json_lines(r.stdout)] == ["1", "2", "3"]
    granted = _granted(r.stderr)
    assert granted and max(granted) <= 1, granted  # a second at 0.9 a second: one

def test_credit_takes_the_smaller_of_the_rate_and_credit(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    r = amqp("send", url, "m", "--count", "3")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "--rate", "1000", "--credit", "2", "-c", "3", "-t", "10", "--trace")
    assert r.returncode == 0, r.stderr
    assert "received 3" in r.stderr
    granted = _granted(r.stderr)
    assert granted and max(granted) <= 2, granted
