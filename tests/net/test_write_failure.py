"""A write that fails ends the stream in the engine as a failed read does (a reset): the
engine judges what it held and abandons what is unsettled before `StreamEnded`, so a
send whose socket broke on the way out is in doubt, not forgotten."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from amqpcli.net.transport import StreamEnded, Transport


class _Engine:
    """Always has bytes to send; records how it was told the stream ended."""

    def __init__(self) -> None:
        self.eofs: list[str] = []

    def receive_data(self, data: bytes, time: float) -> list[Any]:
        return []

    def receive_eof(self, time: float, how: str = "fin") -> list[Any]:
        self.eofs.append(how)
        return ["abandoned"]

    def data_to_send(self) -> bytes:
        return b"frame"

    def take_events(self) -> list[Any]:
        return []

    def set_time(self, now: float) -> None:
        pass

    def next_timer(self) -> float | None:
        return None

    def handle_timer(self, now: float) -> list[Any]:
        return []


class _SocketTransport:
    def __init__(self) -> None:
        self.buffered = 0

    def get_write_buffer_size(self) -> int:
        return self.buffered


class _BrokenWriter:
    """A socket whose writes fail: `write` raises at once or only `drain` does."""

    def __init__(self, fails_at: str) -> None:
        self.fails_at = fails_at
        self.transport = _SocketTransport()

    def write(self, data: bytes) -> None:
        self.transport.buffered += len(data) + Transport.HIGH_WATER
        if self.fails_at == "write":
            raise BrokenPipeError("broken pipe")

    async def drain(self) -> None:
        raise ConnectionResetError("reset by peer")

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass

    async def wait_closed(self) -> None:
        pass


@pytest.mark.parametrize(("fails_at", "raised"), [("write", BrokenPipeError),
                                                  ("drain", ConnectionResetError)])
def test_a_failed_write_ends_the_stream_in_the_engine_first(fails_at: str,
                                                            raised: type) -> None:
    async def run() -> tuple[_Engine, list[Any], Transport]:
        engine, seen = _Engine(), []
        t = Transport(engine, asyncio.StreamReader(), _BrokenWriter(fails_at),  # type: ignore[arg-type]
                      seen.append)
        t.start()  # the first flush writes
        await t.drain()
        await t.close()
        return engine, seen, t

    engine, seen, t = asyncio.run(run())
    assert engine.eofs == ["rst"]  # told once, as a reset
    assert seen[0] == "abandoned" and isinstance(seen[1], StreamEnded)  # engine first
    assert isinstance(t.lost, raised) and not t.internal  # the network's, not ours
    assert len(seen) == 2
