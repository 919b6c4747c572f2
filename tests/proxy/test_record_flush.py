"""`amqp proxy --record`: what was forwarded is on disk while the proxy still runs (flushed
after each batch of packets), not only when it stops."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqpcli.proxy.record import Recorder
from amqpcli.tui.sources.replay import load_capture
from tests.peers.broker import Broker


def _frames(path: Path) -> list[str]:
    return [type(r.item.body).__name__ if hasattr(r.item, "body") else type(r.item).__name__
            for r in load_capture(path).records]


@pytest.mark.integration
def test_recorded_frames_are_on_disk_while_the_proxy_runs(broker: Broker, tmp_path: Path) -> None:
    record = tmp_path / "p.pcapng"
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "proxy", "127.0.0.1:0", broker.url,
                             "--record", str(record)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", proc.stderr.readline())
        assert m
        for n in range(2):
            conn = BlockingConnection(f"amqp://127.0.0.1:{m.group(1)}", timeout=30)
            try:
                conn.create_sender("q").send(Message(body=f"m{n}"))
            finally:
                conn.close()
            while f"c{n + 1} closed" not in proc.stderr.readline():
                pass
        # Still running: the file already holds both connections, open to close.
        deadline = time.monotonic() + 2  # one event-loop turn, with room for a loaded machine
        while True:
            frames = _frames(record)
            if frames.count("Transfer") == 2 and frames.count("Close") == 4:
                break
            assert time.monotonic() < deadline, frames
            time.sleep(0.05)
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert broker.queue_bodies("q") == ["m0", "m1"]


def test_a_recorder_outside_an_event_loop_flushes_at_once(tmp_path: Path) -> None:
    class Conn:
        serial = 0
        started = 1.0
        client = ("127.0.0.1", 40000)
        upstream = ("127.0.0.1", 5672)

    path = tmp_path / "r.pcapng"
    rec = Recorder(path)
    try:
        empty = path.stat().st_size
        rec.open(Conn())
        rec.data(Conn(), "client", b"AMQP\x00\x01\x00\x00", 1.5)
        assert path.stat().st_size > empty
    finally:
        rec.close()
