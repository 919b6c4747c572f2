"""`amqp serve`'s `disconnected (N bytes in, M out)` line leaves the client's SASL frames
out of the bytes in: with them, the same traffic with a longer password gave a larger
figure, which told the password's length."""

from __future__ import annotations

import asyncio
import re
import socket

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import (
    AMQP_HEADER,
    FRAME_TYPE_SASL,
    SASL_HEADER,
    Frame,
    FrameReader,
    encode_frame,
)
from amqpcli.codec.types import Symbol
from amqpcli.peer import Broker, Server

_HANG_GUARD = 20.0


def _until(sock: socket.socket, reader: FrameReader, body: type) -> object:
    """The body of the first `body` frame the server sends."""
    while True:
        data = sock.recv(65536)
        assert data, f"the server closed before its {body.__name__}"
        for item in reader.feed(data):
            if isinstance(item, Frame) and isinstance(item.body, body):
                return item.body


def _session(port: int, password: str) -> int:
    """A SASL PLAIN login with `password`, then an open and a close when it is let in;
    the bytes sent, less the sasl-init frame."""
    init = encode_frame(c.SaslInit(mechanism=Symbol("PLAIN"),
                                   initial_response=b"\0svc\0" + password.encode()),
                        0, b"", FRAME_TYPE_SASL)
    reader = FrameReader()
    sent = len(SASL_HEADER)
    with socket.create_connection(("127.0.0.1", port), timeout=_HANG_GUARD) as sock:
        sock.sendall(SASL_HEADER + init)
        outcome = _until(sock, reader, c.SaslOutcome)
        if outcome.code == 0:  # type: ignore[attr-defined]
            for data, answer in ((AMQP_HEADER + encode_frame(c.Open(container_id="t")),
                                  c.Open), (encode_frame(c.Close()), c.Close)):
                sock.sendall(data)
                sent += len(data)
                _until(sock, reader, answer)
    return sent


def _disconnect_lines(passwords: list[str], **kw: object) -> tuple[list[str], list[int]]:
    lines: list[str] = []
    server = Server(("127.0.0.1", 0), Broker(log=lines.append), **kw)  # type: ignore[arg-type]

    async def run() -> list[int]:
        _, port = await server.start()
        try:
            sent = []
            for n, password in enumerate(passwords, 1):
                sent.append(await asyncio.to_thread(_session, port, password))
                for _ in range(int(_HANG_GUARD * 100)):
                    if any(x.startswith(f"c{n} disconnected") for x in lines):
                        break
                    await asyncio.sleep(0.01)
            return sent
        finally:
            await server.close()

    sent = asyncio.run(run())
    return [re.sub(r"^c\d+ ", "", x) for x in lines if " disconnected " in x], sent


@pytest.mark.parametrize("kw", [{}, {"sasl": "required", "user": "svc", "password": "other"}],
                         ids=["let-in", "refused"])
def test_passwords_of_other_lengths_give_the_same_figures(kw: dict[str, object]) -> None:
    (short, long), sent = _disconnect_lines(["Zq9Secret", "Zq9Secret" * 10], **kw)
    assert short == long, (short, long)
    assert sent[0] == sent[1]
    # what the client sent but its SASL frame
    assert short.startswith(f"disconnected ({sent[0]} bytes in, "), short
    assert short.endswith("; the client's SASL frames not counted)"), short


def test_no_sasl_no_note() -> None:
    lines: list[str] = []
    server = Server(("127.0.0.1", 0), Broker(log=lines.append))

    async def run() -> None:
        _, port = await server.start()
        try:
            def session() -> None:
                with socket.create_connection(("127.0.0.1", port), timeout=_HANG_GUARD) as s:
                    s.sendall(AMQP_HEADER + encode_frame(c.Open(container_id="t")))
                    _until(s, FrameReader(), c.Open)
            await asyncio.to_thread(session)
            for _ in range(int(_HANG_GUARD * 100)):
                if any("disconnected" in x for x in lines):
                    break
                await asyncio.sleep(0.01)
        finally:
            await server.close()

    asyncio.run(run())
    sent = len(AMQP_HEADER + encode_frame(c.Open(container_id="t")))
    (line,) = [x for x in lines if "disconnected" in x]
    assert re.fullmatch(rf"c1 disconnected \({sent} bytes in, \d+ out\)", line), lines
