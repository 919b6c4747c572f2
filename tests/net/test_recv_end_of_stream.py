"""Pre-settled messages that arrive in the same read as the connection's end are written.

A scripted peer (our engine in the peer role on a plain socket) answers the client's first
credit with N pre-settled transfers and then the end of the connection, all in one socket
write: a close frame and the socket shut, or (abrupt) the socket shut after the transfers.
`amqp recv --presettled` must write all N bodies, in order, then report the end.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time

import pytest

from amqpcli.codec.message import Message
from amqpcli.engine.endpoint import Endpoint
from amqpcli.engine.events import CreditChanged
from amqpcli.engine.sasl import OK, SaslConfig
from tests.net.servepeer import cli_env
from tests.paths import REPO_ROOT

N = 50


def _peer(close_frame: bool) -> tuple[int, threading.Thread]:
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(20)
    port = srv.getsockname()[1]

    def run() -> None:
        s, _ = srv.accept()
        s.settimeout(20)
        ep = Endpoint("peer", sasl=SaslConfig(offer=("ANONYMOUS",), authenticate=lambda m, r: OK))
        try:
            while True:
                data = s.recv(65536)
                if not data:
                    return
                evs = ep.receive_data(data, time.monotonic()) + ep.take_events()
                link = next((e.link for e in evs
                             if isinstance(e, CreditChanged) and e.link is not None), None)
                if link is None:
                    s.sendall(ep.data_to_send())
                    continue
                for i in range(N):
                    ep.send(link, Message(f"m{i}"), settled=True)
                if close_frame:
                    ep.close()
                s.sendall(ep.data_to_send())  # transfers and end: one write
                return
        finally:
            s.close()
            srv.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return port, t


@pytest.mark.parametrize("count", [True, False], ids=["count", "no-count"])
@pytest.mark.parametrize("close_frame", [True, False], ids=["close-frame", "abrupt"])
def test_presettled_messages_with_the_end_are_all_written(close_frame: bool, count: bool) -> None:
    port, t = _peer(close_frame)
    args = ["--count", str(N)] if count else []
    r = subprocess.run(
        [sys.executable, "-m", "amqpcli", "recv", f"amqp://127.0.0.1:{port}/q", "--presettled",
         "--json", "-t", "10", *args],
        capture_output=True, text=True, cwd=REPO_ROOT, env=cli_env(), timeout=60, check=False,
    )
    t.join(20)
    bodies = [json.loads(line)["body"]["value"] for line in r.stdout.splitlines() if line.strip()]
    assert bodies == [f"m{i}" for i in range(N)], r.stderr  # all of them, in order
    assert f"pre-settled {N}" in r.stderr, r.stderr
    if count:
        # --count reached: what came after is the peer's end; either is reported as such
        assert r.returncode in (0, 3, 4), r.stderr
    elif close_frame:
        assert r.returncode == 4 and "the peer closed the connection" in r.stderr, r.stderr
    else:
        assert r.returncode == 3 and "connection closed by peer" in r.stderr, r.stderr
