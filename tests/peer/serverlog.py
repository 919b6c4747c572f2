"""A server of ours (`amqpcli.peer.Server`, in this process) that fails a step of its own
while a client connects: the connect fails, and the server's log says why in one
internal-error line."""

from __future__ import annotations

import asyncio

import pytest

from amqpcli.cli.options import build_config
from amqpcli.errors import UserError
from amqpcli.net.client import Client
from amqpcli.peer import Server

HANG_GUARD = 20.0  # the client's connect timeout: never reached when the server ends it


def internal_error_on_connect(server: Server, lines: list[str], userinfo: str = "",
                              timeout: float = HANG_GUARD) -> tuple[UserError, str]:
    """Start `server` (its broker logging to `lines`), connect to it as ``userinfo@`` and
    see the connect fail, wait for the server to log the disconnection, and close it.
    Returns the connect's error and the log's one internal-error line, which is the first
    connection's (``c1 from 127.0.0.1:…``); both asserted."""
    failure: list[UserError] = []

    async def run() -> None:
        host, port = await server.start()
        try:
            at = f"{userinfo}@" if userinfo else ""
            cfg = build_config(f"amqp://{at}{host}:{port}/q", connect_timeout=timeout)
            with pytest.raises(UserError) as caught:
                await Client.connect(cfg)
            failure.append(caught.value)
            for _ in range(int(timeout * 100)):
                if any("disconnected" in x for x in lines):
                    break
                await asyncio.sleep(0.01)
        finally:
            await server.close()

    asyncio.run(run())
    failed = [x for x in lines if "internal error" in x]
    assert len(failed) == 1, lines
    assert failed[0].startswith("c1 from 127.0.0.1:")
    return failure[0], failed[0]
