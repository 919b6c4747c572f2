"""Stopping `amqp serve` (SIGTERM or Ctrl-C) with connections open: each gets an AMQP
close (amqp:connection:forced, "server stopping") before its socket closes, nothing is
printed but the log, and the exit status is 130."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from proton.handlers import MessagingHandler

from tests.net.clirun import queue_name
from tests.net.servepeer import cli_env
from tests.paths import REPO_ROOT
from tests.peer.proton_clients import _run

pytestmark = pytest.mark.integration

_HANG_GUARD = 30.0  # seconds; for a slow machine, not a measurement


class _Watcher(MessagingHandler):  # type: ignore[misc]
    """Holds a receiver open and records how the connection ended."""

    def __init__(self, url: str) -> None:
        super().__init__(prefetch=10)
        self.url = url
        self.attached = threading.Event()
        self.condition: Any = None
        self.remote_close = False
        self.transport_error: str | None = None
        self.conn: Any = None
        self.timer: Any = None

    def on_start(self, event: Any) -> None:
        self.conn = event.container.connect(self.url, allowed_mechs="ANONYMOUS",
                                            reconnect=False)
        event.container.create_receiver(self.conn, queue_name())
        self.timer = event.container.schedule(_HANG_GUARD, self)

    def on_link_opened(self, event: Any) -> None:
        self.attached.set()

    def on_connection_remote_close(self, event: Any) -> None:
        self.remote_close = True
        self.condition = event.connection.remote_condition
        self.timer.cancel()
        event.connection.close()

    def on_transport_error(self, event: Any) -> None:
        cond = event.transport.condition
        self.transport_error = str(cond) if cond is not None else "transport error"
        self.timer.cancel()

    def on_timer_task(self, event: Any) -> None:
        self.conn.close()


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_stop_closes_open_connections_with_forced(how: signal.Signals, tmp_path: Path) -> None:
    err = tmp_path / "serve.err"
    with open(err, "w") as f:
        proc = subprocess.Popen(
            [sys.executable, "-m", "amqpcli", "serve", "--listen", "127.0.0.1:0"],
            stdout=subprocess.DEVNULL, stderr=f, cwd=REPO_ROOT, env=cli_env())
    try:
        deadline = time.monotonic() + _HANG_GUARD
        port = None
        while port is None and time.monotonic() < deadline and proc.poll() is None:
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", err.read_text())
            if m:
                port = int(m.group(1))
            else:
                time.sleep(0.05)
        assert port is not None, err.read_text()
        w = _Watcher(f"amqp://127.0.0.1:{port}")
        t = threading.Thread(target=_run, args=(w, _HANG_GUARD), daemon=True)
        t.start()
        assert w.attached.wait(_HANG_GUARD), err.read_text()
        proc.send_signal(how)
        assert proc.wait(_HANG_GUARD) == 130
        t.join(_HANG_GUARD + 30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = err.read_text()
    assert "Traceback" not in log and "Exception in callback" not in log, log
    assert w.remote_close, f"no AMQP close from the server (transport: {w.transport_error})"
    assert w.condition is not None
    assert w.condition.name == "amqp:connection:forced"
    assert w.condition.description == "server stopping"
    assert log.rstrip().splitlines()[-1] == "amqp serve: stopped", log
