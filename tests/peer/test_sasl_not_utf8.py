"""A client whose SASL PLAIN credentials are not UTF-8 text (RFC 4616 §2) is refused
with sasl-outcome code auth, in the accept-anyone mode too, and the log says so without
a word of their bytes: it was an internal error (UnicodeDecodeError, naming the byte and
its position in the password) and the connection dropped with no outcome."""

from __future__ import annotations

import asyncio
import socket

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import FRAME_TYPE_SASL, SASL_HEADER, Frame, FrameReader, encode_frame
from amqpcli.codec.types import Symbol
from amqpcli.engine.sasl import CredentialsNotText, plain_credentials
from amqpcli.peer import Broker, Server

_HANG_GUARD = 20.0
PORT = 16541


def _login(port: int, response: bytes) -> list[object]:
    """Frame bodies serve sends to a raw SASL PLAIN login with `response`, until it ends
    the SASL exchange (or the connection)."""
    got: list[object] = []
    reader = FrameReader()
    with socket.create_connection(("127.0.0.1", port), timeout=_HANG_GUARD) as sock:
        sock.sendall(SASL_HEADER)
        sock.sendall(encode_frame(c.SaslInit(mechanism=Symbol("PLAIN"),
                                             initial_response=response), 0, b"",
                                  FRAME_TYPE_SASL))
        while not any(isinstance(b, c.SaslOutcome) for b in got):
            data = sock.recv(65536)
            if not data:
                break
            got += [i.body for i in reader.feed(data) if isinstance(i, Frame)]
    return got


def _serve(response: bytes, **kw: object) -> tuple[list[object], list[str]]:
    lines: list[str] = []
    server = Server(("127.0.0.1", PORT), Broker(log=lines.append), **kw)  # type: ignore[arg-type]

    async def run() -> list[object]:
        await server.start()
        try:
            got = await asyncio.to_thread(_login, PORT, response)
            for _ in range(int(_HANG_GUARD * 100)):
                if any("disconnected" in x for x in lines):
                    break
                await asyncio.sleep(0.01)
            return got
        finally:
            await server.close()

    return asyncio.run(run()), lines


@pytest.mark.parametrize("kw", [{}, {"sasl": "required", "user": "svc", "password": "Zq9"}],
                         ids=["anyone", "required"])
@pytest.mark.parametrize("response", [b"\0svc\0Zq9Secret\xff", b"\0s\xffvc\0Zq9Secret",
                                      b"\xc3\0svc\0Zq9Secret"],
                         ids=["password", "user", "authzid"])
def test_credentials_not_utf8_are_refused_with_auth(response: bytes,
                                                    kw: dict[str, object]) -> None:
    got, lines = _serve(response, **kw)
    outcomes = [b for b in got if isinstance(b, c.SaslOutcome)]
    assert [int(o.code) for o in outcomes] == [1], got
    log = "\n".join(lines)
    assert "internal error" not in log and "Error" not in log, log
    refused = [x for x in lines if "SASL PLAIN refused" in x]
    assert len(refused) == 1 and refused[0].startswith("c1 SASL PLAIN refused from 127.0.0.1:")
    assert refused[0].endswith(": the credentials are not UTF-8 text"), refused
    for clue in ("Zq9", "svc", "0xff", "xff", "position", "UnicodeDecodeError"):
        assert clue not in log, log


def test_text_credentials_still_log_in() -> None:
    got, _ = _serve(b"\0svc\0Zq9Secret\xc3\xa9")
    assert [int(b.code) for b in got if isinstance(b, c.SaslOutcome)] == [0], got
    got, _ = _serve(b"\0svc\0Zq9", sasl="required", user="svc", password="Zq9")
    assert [int(b.code) for b in got if isinstance(b, c.SaslOutcome)] == [0], got


def test_plain_credentials_says_nothing_of_the_bytes() -> None:
    with pytest.raises(CredentialsNotText) as caught:
        plain_credentials(b"\0svc\0Zq9Secret\xff")
    assert str(caught.value) == "the SASL PLAIN credentials are not UTF-8 text"
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert plain_credentials("\0svc\0é".encode()) == ("", "svc", "é")


def test_a_password_given_not_utf8_refuses_every_login_without_error() -> None:
    """(`amqp serve` refuses one at start-up; a `Server` given one refuses all logins.)"""
    got, lines = _serve(b"\0svc\0Zq9", sasl="required", user="svc", password="Zq9\udcff")
    assert [int(b.code) for b in got if isinstance(b, c.SaslOutcome)] == [1], got
    assert not [x for x in lines if "internal error" in x], lines
