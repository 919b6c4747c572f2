"""The proxy's connection labels (c1, c2, …) are the ones `amqp pcap-dump` gives the
connections of the proxy's own recording.

pcap-dump numbers a recording's conversations in the order of their first bytes (the
protocol header), not of their handshakes; the proxy numbered them as it accepted them,
and counted connections that never carried a byte (or never reached the broker), so under
concurrency, or after a port probe, `c2` of the proxy was `c1` of the recording."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
from pathlib import Path

from amqpcli.cli.proxy import upstream_config
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.proxy import Proxy, Recorder
from tests.proxy.relay import LoopThread

HEADER = encode_protocol_header("amqp")


async def _broker() -> asyncio.base_events.Server:
    """Answers a header with a header and an open, then whatever comes until the end."""

    async def serve(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            if await r.read(8):
                w.write(HEADER + encode_frame(c.Open(container_id="broker")))
                await w.drain()
            while await r.read(65536):
                pass
        finally:
            w.close()

    return await asyncio.start_server(serve, "127.0.0.1", 0)


def _until(loop_thread: LoopThread, cond: object) -> None:
    for _ in range(600):
        if cond():  # type: ignore[operator]
            return
        loop_thread.run(asyncio.sleep(0.05))
    raise AssertionError("the proxy did not get there")


def _read_all(s: socket.socket, n: int) -> None:
    got = 0
    while got < n:
        chunk = s.recv(65536)
        assert chunk
        got += len(chunk)


def test_labels_are_those_of_pcap_dump_of_the_recording(loop_thread: LoopThread,
                                                         tmp_path: Path) -> None:
    record = tmp_path / "rec.pcapng"
    labels: dict[int, str] = {}  # the application's port -> the proxy's label
    closed: list[str] = []

    async def setup() -> tuple[Proxy, asyncio.base_events.Server]:
        server = await _broker()
        port = server.sockets[0].getsockname()[1]
        proxy = Proxy(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{port}"),
                      on_item=lambda conn, side, item, t, ev: labels.setdefault(
                          conn.client[1], conn.key),
                      on_close=lambda conn, how: closed.append(conn.key),
                      recorder=Recorder(record))
        await proxy.start()
        return proxy, server

    proxy, server = loop_thread.run(setup())
    assert proxy.bound is not None
    answer = len(HEADER + encode_frame(c.Open(container_id="broker")))
    # a probe: connects and goes away without a byte
    with socket.create_connection(proxy.bound):
        _until(loop_thread, lambda: proxy.connections and proxy.connections[0].upstream[0])
    _until(loop_thread, lambda: closed)
    a = socket.create_connection(proxy.bound)  # accepted first, silent for now
    # (the probe has ended: only the open connections are listed)
    _until(loop_thread, lambda: len(proxy.connections) == 1 and proxy.connections[0].upstream[0])
    b = socket.create_connection(proxy.bound)  # accepted second, talks first
    b.sendall(HEADER + encode_frame(c.Open(container_id="b")))
    _read_all(b, answer)
    a.sendall(HEADER + encode_frame(c.Open(container_id="a")))
    _read_all(a, answer)
    ports = {"a": a.getsockname()[1], "b": b.getsockname()[1]}
    for s in (a, b):
        s.close()
    _until(loop_thread, lambda: len(closed) == 3)
    loop_thread.run(proxy.close())
    loop_thread.close_server(server)

    dump = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(record),
                           "--connections"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert dump.returncode == 0, dump.stderr
    recorded = {int(port): label for label, port in
                re.findall(r"^(c\d+) 127\.0\.0\.1:(\d+) ->", dump.stdout, re.MULTILINE)}
    assert recorded == {ports["b"]: "c1", ports["a"]: "c2"}, dump.stdout
    assert labels == recorded
    # the probe has no number: it is named by its address
    assert re.fullmatch(r"127\.0\.0\.1:\d+", closed[0]), closed
