"""Ctrl-C in `amqp send` and `amqp recv`: exit status 130, the connection closed cleanly
(the peer sees a close, not a dropped socket) and the summary printed. Driven as a user would: a subprocess,
SIGINT, against the proton broker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import IO

import pytest
from proton import Endpoint, Message

from tests.paths import REPO_ROOT
from tests.peers import Broker

pytestmark = pytest.mark.integration


def _start(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("AMQP_URL", None)
    return subprocess.Popen(
        [sys.executable, "-m", "amqpcli", *args], cwd=REPO_ROOT, env=env,
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )


def _readline(stream: IO[bytes] | None) -> bytes:
    assert stream is not None
    return stream.readline()


def _interrupt(proc: subprocess.Popen[bytes]) -> tuple[int, str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out.decode(), err.decode()


def _closed_by_client(broker: Broker) -> list[bool]:
    """For each connection the broker saw: did the client close it (a close frame)?"""
    def read() -> list[bool]:
        return [bool(c.state & Endpoint.REMOTE_CLOSED) for c in broker.handler.connections]

    return broker.call(read)


def _held(broker: Broker, name: str) -> int:
    """Messages in queue `name`; for wait_for, which runs it in the broker's thread."""
    q = broker.handler.registry.queues.get(name)
    return len(q.bodies()) if q is not None else 0


def _receiving(broker: Broker) -> subprocess.Popen[bytes]:
    broker.put("q", Message(body="one"))
    proc = _start("recv", f"{broker.url}/q", "--json")
    # The first message on stdout: connected, attached, written.
    assert b'"one"' in _readline(proc.stdout)
    broker.wait_for(lambda: _held(broker, "q") == 0 or None)
    return proc


def _sending(broker: Broker) -> subprocess.Popen[bytes]:
    proc = _start("send", f"{broker.url}/q", "x", "--duration", "600", "--rate", "20")
    broker.wait_for(lambda: _held(broker, "q") >= 3 or None)
    return proc


def test_recv_ctrl_c_exits_130(broker: Broker) -> None:
    code, _, err = _interrupt(_receiving(broker))
    assert code == 130, err


def test_send_ctrl_c_exits_130(broker: Broker) -> None:
    code, _, err = _interrupt(_sending(broker))
    assert code == 130, err


def test_recv_ctrl_c_closes_cleanly_and_summarises(broker: Broker) -> None:
    code, _, err = _interrupt(_receiving(broker))
    assert code == 130
    assert "1 message" in err or "received 1" in err, err
    assert broker.transport_errors() == []
    assert _closed_by_client(broker) == [True]


def test_send_ctrl_c_closes_cleanly_and_summarises(broker: Broker) -> None:
    code, out, err = _interrupt(_sending(broker))
    assert code == 130
    assert "accepted" in out + err, out + err
    assert broker.transport_errors() == []
    assert _closed_by_client(broker) == [True]
