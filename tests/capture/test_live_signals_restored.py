"""A capture through tshark (pyshark), run in this process, leaves the process's signal
handling as it found it: pyshark's child watcher hooked SIGCHLD and the signal wakeup fd
to our event loop and stayed; every later child's exit then wrote a byte into a pipe
nobody read until it was full, and each signal after was reported as "Exception ignored
when trying to write to the signal wakeup fd: BlockingIOError"."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from capture_helpers import AMQP_HDR, frames

from amqpcli.capture import C2S, S2C, Data
from amqpcli.capture.live import decrypt_tls, live_capture
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.errors import UserError


def signal_state() -> dict[str, Any]:
    wakeup_fd = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(wakeup_fd)
    return {"wakeup fd": wakeup_fd, "SIGCHLD": signal.getsignal(signal.SIGCHLD),
            "child watcher": asyncio.get_child_watcher()}


@pytest.fixture
def unchanged() -> Iterator[Callable[[], None]]:
    """Checks that the signal state is as it was when the test began (and puts it back
    for the tests after, whatever the outcome)."""
    before = signal_state()

    def check() -> None:
        assert signal_state() == before

    try:
        yield check
    finally:
        asyncio.set_child_watcher(before["child watcher"])
        signal.signal(signal.SIGCHLD, before["SIGCHLD"])
        signal.set_wakeup_fd(before["wakeup fd"])


def plain_capture(path: Path) -> None:
    with CaptureWriter(path) as w:
        conv = TcpConversation(w)
        conv.handshake()
        conv.send(C2S, AMQP_HDR + frames(3))
        conv.send(S2C, AMQP_HDR + frames(2))


def test_decrypting_a_capture_file(tmp_path: Path, unchanged: Callable[[], None]) -> None:
    cap = tmp_path / "plain.pcapng"
    plain_capture(cap)
    events = list(decrypt_tls(str(cap), None))
    assert b"".join(bytes(e.data) for e in events
                    if isinstance(e, Data) and e.direction == C2S) == AMQP_HDR + frames(3)
    unchanged()


def test_a_decryption_that_fails(tmp_path: Path, unchanged: Callable[[], None]) -> None:
    with pytest.raises(UserError, match="TLS decryption of .*failed"):
        list(decrypt_tls(str(tmp_path / "none.pcapng"), None))
    unchanged()


@pytest.mark.integration
def test_a_live_capture(unchanged: Callable[[], None]) -> None:
    assert os.geteuid() == 0, "live capture on lo needs root"
    # ended before it began: pyshark sets up its capture, and starts no process
    assert list(live_capture("lo", "tcp", on_capturing=lambda end: end(now=True))) == []
    unchanged()
