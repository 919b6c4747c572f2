"""`recv --timeout S` is S seconds without the peer sending: a large message arriving in
many small frames for longer than S is the peer at work, not silence. The run took the
time from the last whole message and gave up half-way through it (exit 5, the part
received thrown away)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from proton import Message

from tests.net.clirun import amqp

pytestmark = pytest.mark.integration


def test_a_delivery_still_coming_in_holds_off_the_timeout(
        direct_sender: Callable[..., Any]) -> None:
    # 8 MB in 512-byte frames: about a second through proton, far more than 0.5 s
    sender = direct_sender([Message(body=b"x" * 8_000_000)])
    r = amqp("recv", f"{sender.url}/q", "-t", "0.5", "--max-frame-size", "512", "-c", "1",
             "--json-summary", "--out", "/dev/null")
    assert r.returncode == 0, r.stderr
    assert '"received": 1' in r.stderr
