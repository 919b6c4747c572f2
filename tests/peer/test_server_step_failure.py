"""A connection whose answer the server cannot build (here our open: a max-frame-size
beyond a uint, which only the Python API lets through now that `amqp serve` refuses it)
ends at once, and the log says why. The engine's error used to end only the task reading
the socket: the connection hung, silent, until the client gave up waiting for an open."""

from __future__ import annotations

import asyncio

import pytest

from amqpcli.cli.options import build_config
from amqpcli.errors import UserError
from amqpcli.net.client import Client
from amqpcli.peer import Broker, Server

_HANG_GUARD = 20.0  # the client's connect timeout: never reached when the server ends it


def test_an_open_that_cannot_be_built_is_logged() -> None:
    lines: list[str] = []
    server = Server(("127.0.0.1", 0), Broker(log=lines.append), max_frame_size=2**32)

    async def run() -> None:
        host, port = await server.start()
        try:
            cfg = build_config(f"amqp://{host}:{port}/q", connect_timeout=_HANG_GUARD)
            with pytest.raises(UserError) as caught:
                await Client.connect(cfg)
            assert "connection closed by peer" in str(caught.value)
            for _ in range(200):
                if any("disconnected" in x for x in lines):
                    break
                await asyncio.sleep(0.01)
        finally:
            await server.close()

    asyncio.run(run())
    failed = [x for x in lines if "internal error" in x]
    assert len(failed) == 1, lines
    assert failed[0].startswith("c1 from 127.0.0.1:")
    assert failed[0].endswith(": internal error: EncodeError: 4294967296 is out of range for uint")
