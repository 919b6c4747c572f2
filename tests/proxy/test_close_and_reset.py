"""How a proxied connection ends, in the proxy's note and in its recording.

* A broker that answers the client's FIN with a reset after a complete AMQP close
  exchange (RabbitMQ does) ended as `eof, server ConnectionResetError`: it is `closed`.
* A client's reset was recorded as a FIN exchange: the recording has the client's RST.
"""

from __future__ import annotations

import asyncio
import re
import socket
import struct
import subprocess
import sys
from pathlib import Path

from amqpcli.cli.proxy import upstream_config
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.proxy import Proxy, Recorder
from tests.proxy.relay import LoopThread

HEADER = encode_protocol_header("amqp")
OPEN_CLOSE = HEADER + encode_frame(c.Open(container_id="x")) + encode_frame(c.Close())


def _reset(sock: socket.socket) -> None:
    """Close with an RST (linger 0), not a FIN."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


async def _broker(reset_on_fin: bool) -> asyncio.base_events.Server:
    """Answers the client's header with its own, its open and close with its own once
    both came; at the client's FIN it resets (as RabbitMQ does) or closes."""

    async def serve(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        got = b""
        sent = 0
        while data := await r.read(65536):
            got += data
            for upto in (len(HEADER), len(OPEN_CLOSE)):
                if len(got) >= upto > sent:
                    w.write(OPEN_CLOSE[sent:upto])
                    sent = upto
            await w.drain()
        if reset_on_fin:
            _reset(w.get_extra_info("socket")._sock)  # type: ignore[attr-defined]
            w.transport.abort()
        else:
            w.close()

    return await asyncio.start_server(serve, "127.0.0.1", 0)


def _run(loop_thread: LoopThread, tmp_path: Path, reset_on_fin: bool,
         client: object) -> tuple[list[str], str]:
    record = tmp_path / "rec.pcapng"
    closed: list[str] = []

    async def setup() -> tuple[Proxy, asyncio.base_events.Server]:
        server = await _broker(reset_on_fin)
        port = server.sockets[0].getsockname()[1]
        proxy = Proxy(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{port}"),
                      on_close=lambda conn, how: closed.append(how), recorder=Recorder(record))
        await proxy.start()
        return proxy, server

    proxy, server = loop_thread.run(setup())
    assert proxy.bound is not None
    client(socket.create_connection(proxy.bound))  # type: ignore[operator]
    loop_thread.run(proxy.wait_idle())
    for _ in range(600):
        if closed:
            break
        loop_thread.run(asyncio.sleep(0.05))
    loop_thread.run(proxy.close())
    loop_thread.close_server(server)
    dump = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(record),
                           "--connections"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert dump.returncode == 0, dump.stderr
    tcp = re.findall(r"^\s+tcp: (.*)$", dump.stdout, re.MULTILINE)
    assert len(tcp) == 1, dump.stdout
    return closed, tcp[0]


def _clean_close(s: socket.socket) -> None:
    s.sendall(OPEN_CLOSE)
    got = b""
    while len(got) < len(OPEN_CLOSE):
        chunk = s.recv(65536)
        assert chunk
        got += chunk
    s.shutdown(socket.SHUT_WR)  # the FIN the broker answers with a reset
    try:
        while s.recv(65536):
            pass
    except ConnectionResetError:
        pass
    s.close()


def test_a_reset_after_the_amqp_close_is_a_clean_close(loop_thread: LoopThread,
                                                       tmp_path: Path) -> None:
    closed, tcp = _run(loop_thread, tmp_path, True, _clean_close)
    assert closed == ["closed"]  # was "eof, server ConnectionResetError"
    assert tcp == "client fin, server rst"


def test_a_clean_close_with_fins(loop_thread: LoopThread, tmp_path: Path) -> None:
    closed, tcp = _run(loop_thread, tmp_path, False, _clean_close)
    assert closed == ["closed"]
    assert tcp == "client fin, server fin"


def test_a_client_reset_is_recorded_as_a_reset(loop_thread: LoopThread, tmp_path: Path) -> None:
    def reset(s: socket.socket) -> None:
        s.sendall(HEADER + encode_frame(c.Open(container_id="x")))
        got = b""
        while len(got) < len(HEADER):
            got += s.recv(65536)
        _reset(s)

    closed, tcp = _run(loop_thread, tmp_path, False, reset)
    assert len(closed) == 1 and closed[0].startswith("client ConnectionResetError"), closed
    assert tcp.startswith("client rst"), tcp  # was "client fin, server fin"
