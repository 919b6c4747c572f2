"""`amqp proxy … | head`: when no one reads the frame lines any more, the proxy stops
printing (one note on stderr) and goes on forwarding and recording the applications'
connections; SIGTERM then still stops it as Ctrl-C does (exit 130).

The proxy used to write each line from inside its forwarding: the first line that could
not be written aborted the application's connection (logged as the client's
BrokenPipeError), every later connection was broken the same way, and SIGTERM exited 0."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqpcli.tui.sources.replay import load_capture
from tests.peers.broker import Broker


def _send(port: int, body: str) -> None:
    conn = BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=30)
    try:
        conn.create_sender("q").send(Message(body=body))
    finally:
        conn.close()


@pytest.mark.integration
def test_forwarding_goes_on_when_stdout_is_gone(broker: Broker, tmp_path: Path) -> None:
    record = tmp_path / "p.pcapng"
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "proxy", "127.0.0.1:0",
                             broker.url, "--record", str(record)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader went away before the first line (`| head -0`)
    notes: list[str] = []
    try:
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", proc.stderr.readline())
        assert m
        port = int(m.group(1))
        for n in range(3):
            _send(port, f"m{n}")  # raised "connection closed by peer" for every one
            while f"c{n + 1} closed" not in (notes[-1] if notes else ""):
                line = proc.stderr.readline()
                assert line, notes
                notes.append(line)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    err = "".join(notes) + err
    assert proc.returncode == 130, err  # it was 0
    assert broker.queue_bodies("q") == ["m0", "m1", "m2"]
    stopped = [x for x in err.splitlines() if "output stopped" in x]
    assert len(stopped) == 1, err
    assert "still forwarding and recording" in stopped[0], err
    assert "BrokenPipeError" not in err and "Traceback" not in err, err
    ends = re.findall(r"amqp proxy: c\d (.*) \(\d+ bytes up, \d+ down\)", err)
    assert ends == ["closed"] * 3, err
    assert err.rstrip().endswith("amqp proxy: stopped"), err
    # the recording went on too: the three transfers are in it
    frames = [type(getattr(r.item, "body", None)).__name__ for r in load_capture(record).records]
    assert frames.count("Transfer") == 3, frames


def test_a_failing_callback_does_not_stop_the_forwarding(loop_thread: object) -> None:
    """Whatever the watching raises (a printer, a recorder), the bytes go on: the failure
    is reported when the connection closes, not blamed on a socket."""
    import asyncio
    import socket

    from amqpcli.cli.proxy import upstream_config
    from amqpcli.proxy import Proxy
    from tests.proxy.relay import LoopThread

    assert isinstance(loop_thread, LoopThread)
    closed: list[str] = []

    async def echo(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        while data := await r.read(65536):
            w.write(data)
            await w.drain()
        w.close()

    def broken_printer(*_: object) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    async def setup() -> tuple[Proxy, asyncio.base_events.Server]:
        server = await asyncio.start_server(echo, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        proxy = Proxy(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{port}"),
                      on_item=broken_printer, on_close=lambda conn, how: closed.append(how))
        await proxy.start()
        return proxy, server

    proxy, server = loop_thread.run(setup())
    assert proxy.bound is not None
    header = b"AMQP\x00\x01\x00\x00"
    with socket.create_connection(proxy.bound) as s:
        for _ in range(3):
            s.sendall(header)
            got = b""
            while len(got) < len(header):
                chunk = s.recv(100)
                assert chunk, "the proxy dropped the connection"
                got += chunk
            assert got == header
        s.shutdown(socket.SHUT_WR)
        assert s.recv(100) == b""
    loop_thread.run(proxy.wait_idle())
    loop_thread.run(proxy.close())
    loop_thread.close_server(server)
    assert closed == [("closed (not everything was shown or recorded: BrokenPipeError: "
                      "[Errno 32] Broken pipe)")], closed
