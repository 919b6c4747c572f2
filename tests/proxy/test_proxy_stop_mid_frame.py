"""The proxy stopped (Ctrl-C, SIGTERM: `Proxy.close`) while a client is in the middle of
sending a frame: the recording ends the client's stream with a FIN there, inside the
frame, and `amqp pcap-dump` of it says the frame was cut short. The proxy tells its
callbacks so too (the `truncated` notice the CLI prints and the TUI notes), as pcap-dump
of its recording says it; it told nothing (its output and the recording's disagreed),
and the FIN was put at the time of the last bytes, not when the proxy stopped."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from amqpcli.cli.proxy import upstream_config
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.message import Message
from amqpcli.proxy import Proxy, ProxyNotice, Recorder
from tests.net.servepeer import ServePeers
from tests.proxy.dying_client import read_until_flow, sender_opening
from tests.proxy.relay import LoopThread


def test_a_frame_under_way_when_the_proxy_stops(serve: ServePeers, loop_thread: LoopThread,
                                                tmp_path: Path) -> None:
    record = tmp_path / "p.pcapng"
    notices: list[tuple[str, str, float]] = []
    last_data: list[float] = []

    def on_item(conn: Any, side: str, item: Any, t: float, events: list[Any]) -> None:
        if isinstance(item, ProxyNotice):
            notices.append((side, item.text, t))

    def on_chunk(conn: Any, side: str, data: bytes, t: float) -> None:
        last_data.append(t)

    async def setup() -> Proxy:
        proxy = Proxy(("127.0.0.1", 0), upstream_config(serve("--no-sasl")),
                      on_item=on_item, on_chunk=on_chunk, recorder=Recorder(record))
        await proxy.start()
        return proxy

    proxy = loop_thread.run(setup())
    assert proxy.bound is not None
    opening = sender_opening("stopped-client")
    transfer = encode_frame(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0",
                                       message_format=0), 0,
                            Message(body=b"x" * 30000).encode())
    half = len(transfer) // 2
    with socket.create_connection(proxy.bound, timeout=30) as sock:
        sock.sendall(opening)
        read_until_flow(sock)
        sock.sendall(transfer[:half])
        for _ in range(600):  # until the proxy has read the half frame
            conns = proxy.connections
            if conns and conns[0].bytes["client"] == len(opening) + half:
                break
            loop_thread.run(asyncio.sleep(0.05))
        assert proxy.connections[0].bytes["client"] == len(opening) + half
        loop_thread.run(proxy.close())  # as Ctrl-C stops it, the client still connected
    dump = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(record)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert dump.returncode == 0, dump.stderr
    said = [x for x in dump.stdout.splitlines() if " !! " in x]
    assert len(said) == 1 and re.search(
        r"c1 !! client: the stream ended \(FIN\) inside frame \d+ from the client "
        rf"\(transfer, {half} of {len(transfer)} bytes\)$", said[0]), dump.stdout
    # the proxy told the same notice, at the time the recording has it: when it stopped
    assert [(side, text) for side, text, _ in notices] == [
        ("client", re.sub(r".* !! client: ", "", said[0]))]
    assert notices[0][2] > max(last_data)
    assert said[0].startswith(
        _clock(notices[0][2]))  # (pcap-dump's line starts with the FIN's time)


def _clock(t: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(round(t * 1e6) / 1e6, tz=UTC).strftime("%H:%M:%S.%f")
