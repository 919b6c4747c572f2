"""A half-closed connection whose other side never answers ends after the half-close
timeout: both sockets closed, one note saying why (the summary line, bytes and all), the
silent side's FIN in the recording when the proxy closed it.

It stayed open for ever: the client's socket in CLOSE-WAIT, the broker's in FIN-WAIT-2,
two descriptors per such client, and no close note.
"""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from amqpcli.cli.proxy import upstream_config
from amqpcli.codec.frames import encode_protocol_header
from amqpcli.proxy import Proxy, Recorder
from tests.proxy.relay import LoopThread

HEADER = encode_protocol_header("amqp")
GUARD = 30.0  # seconds before a test that waits for the end calls it a hang


class _Broker:
    """A broker that accepts and then says nothing, never reads and never closes; or
    (`answer`) sends its protocol header at once and then (`close`) closes its side.
    `stop()` ends its connections' handlers (with the loop)."""

    def __init__(self, server: asyncio.base_events.Server, held: list[asyncio.Task[None]]):
        self.server = server
        self.held = held

    async def stop(self) -> None:
        self.server.close()
        for task in self.held:
            task.cancel()
        await asyncio.gather(*self.held, return_exceptions=True)


async def _broker(answer: bool, close: bool) -> _Broker:
    held: list[asyncio.Task[None]] = []

    async def serve(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        held.append(asyncio.current_task())  # type: ignore[arg-type]
        if answer:
            w.write(HEADER)
            await w.drain()
        if close:
            w.write_eof()
        await asyncio.Event().wait()

    return _Broker(await asyncio.start_server(serve, "127.0.0.1", 0), held)


def _proxied(loop_thread: LoopThread, tmp_path: Path, *, answer: bool, close: bool,
             timeout: float) -> tuple[Proxy, _Broker, list[str], Path]:
    record = tmp_path / "rec.pcapng"
    closed: list[str] = []

    async def setup() -> tuple[Proxy, _Broker]:
        server = await _broker(answer, close)
        port = server.server.sockets[0].getsockname()[1]
        proxy = Proxy(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{port}"),
                      on_close=lambda conn, how: closed.append(f"{conn.key} {how}"),
                      recorder=Recorder(record), half_close_timeout=timeout)
        await proxy.start()
        return proxy, server

    proxy, server = loop_thread.run(setup())
    return proxy, server, closed, record


def _ended(loop_thread: LoopThread, proxy: Proxy, server: _Broker) -> None:
    try:
        loop_thread.run(proxy.wait_idle(), timeout=GUARD)  # (a hang guard: it ends on its own)
    finally:
        loop_thread.run(proxy.close())
        loop_thread.run(server.stop())


def _tcp_end(record: Path) -> str:
    out = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", "--connections",
                          str(record)], capture_output=True, text=True, timeout=60,
                         check=False).stdout
    m = re.search(r"tcp: (.*)", out)
    assert m, out
    return m.group(1)


def test_a_silent_broker_after_the_clients_fin_ends_the_connection(
        loop_thread: LoopThread, tmp_path: Path) -> None:
    proxy, server, closed, record = _proxied(loop_thread, tmp_path, answer=False, close=False,
                                             timeout=0.5)
    assert proxy.bound is not None
    with socket.create_connection(proxy.bound) as client:
        client.settimeout(GUARD)
        client.sendall(HEADER)
        client.shutdown(socket.SHUT_WR)  # the client's side is closed; it waits for the end
        assert client.recv(100) == b""  # the proxy closed it: the client is not left waiting
    _ended(loop_thread, proxy, server)
    assert closed == [("c1 closed: the server sent nothing for 0.5 s after the client closed "
                       "its side")]
    # the client's FIN as it came, the server's when the proxy closed the client's socket
    assert _tcp_end(record) == "client fin, server fin"


def test_a_silent_client_after_the_brokers_fin_ends_the_connection(
        loop_thread: LoopThread, tmp_path: Path) -> None:
    proxy, server, closed, record = _proxied(loop_thread, tmp_path, answer=True, close=True,
                                             timeout=0.5)
    assert proxy.bound is not None
    with socket.create_connection(proxy.bound) as client:
        client.settimeout(GUARD)
        client.sendall(HEADER)
        got = b""
        while data := client.recv(100):  # the broker's header, then the end
            got += data
        assert got == HEADER
        _ended(loop_thread, proxy, server)
    assert closed == [("c1 closed: the client sent nothing for 0.5 s after the server closed "
                       "its side")]
    assert _tcp_end(record) == "client fin, server fin"


def test_a_side_that_answers_the_fin_ends_the_connection_as_before(
        loop_thread: LoopThread, tmp_path: Path) -> None:
    """The bound is only for a side that stays silent: a broker that closes its side too
    (here, having closed it first) makes a `closed` connection."""
    proxy, server, closed, record = _proxied(loop_thread, tmp_path, answer=True, close=True,
                                             timeout=GUARD)
    assert proxy.bound is not None
    with socket.create_connection(proxy.bound) as client:
        client.settimeout(GUARD)
        client.sendall(HEADER)
        while client.recv(100):
            pass
        client.shutdown(socket.SHUT_WR)
        _ended(loop_thread, proxy, server)
    assert closed == ["c1 closed"]
    assert _tcp_end(record) == "client fin, server fin"


def test_the_command_prints_the_ending_as_its_summary_line(tmp_path: Path) -> None:
    """`amqp proxy --half-close-timeout 0.5`: the connection's note, once, with its bytes."""
    hung = socket.socket()  # a broker that accepts (the kernel does) and never answers
    hung.bind(("127.0.0.1", 0))
    hung.listen()
    record = tmp_path / "p.pcapng"
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "proxy", "127.0.0.1:0",
                             f"amqp://127.0.0.1:{hung.getsockname()[1]}", "--record",
                             str(record), "--half-close-timeout", "0.5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    notes: list[str] = []
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert m, line
        with socket.create_connection(("127.0.0.1", int(m.group(1)))) as client:
            client.settimeout(GUARD)
            client.sendall(HEADER)
            client.shutdown(socket.SHUT_WR)
            assert client.recv(100) == b""
        while not notes or "c1 closed" not in notes[-1]:
            line = proc.stderr.readline()
            assert line, notes
            notes.append(line)
    finally:
        proc.terminate()
        proc.communicate(timeout=GUARD)
        hung.close()
    assert notes[-1] == ("amqp proxy: c1 closed: the server sent nothing for 0.5 s after the "
                         "client closed its side (8 bytes up, 0 down)\n")


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_a_bad_half_close_timeout_is_a_usage_error(value: str) -> None:
    r = subprocess.run([sys.executable, "-m", "amqpcli", "proxy", "127.0.0.1:0",
                        "amqp://127.0.0.1:1", "--half-close-timeout", value],
                       capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2
    assert r.stderr.splitlines() == [
        ("amqp: error: --half-close-timeout must be a finite number of seconds, 0 or more "
         f"(got {float(value):g})")]
