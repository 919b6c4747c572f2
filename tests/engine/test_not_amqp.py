"""A peer whose first bytes are no AMQP protocol header (TLS, HTTP, SSH, garbage): a client
endpoint gives up at once and says what the peer sent; a server endpoint answers with
the header it speaks and fails (its transport then closes), as the spec asks for a
header it does not support. Nothing after those bytes is read."""

from __future__ import annotations

import pytest

from amqpcli.codec.frames import ProtocolHeader
from amqpcli.engine import ConnectionClosed, Endpoint, SaslConfig
from amqpcli.engine.endpoint import not_amqp_bytes

TLS_ALERT = b"\x15\x03\x03\x00\x02\x02\x46"
TLS_HELLO = b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"x" * 40


@pytest.mark.parametrize(("first", "said"), [
    (b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", "it sent 'SSH-2.0-OpenSSH_9.2p1 Debian-2'"),
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
     "it sent 'HTTP/1.1 400 Bad Request'"),
    (TLS_ALERT, "it answered with TLS (an amqps:// port?)"),
    (b"\x00\x00\x00\x01\x02\x03\x04\x05\x06", "it sent 00 00 00 01 02 03 04 05"),
    (b"Q", "it sent 51"),
])
def test_a_client_gives_up_at_once_and_says_what_the_peer_sent(first: bytes, said: str) -> None:
    ep = Endpoint("client")
    ep.open()
    ep.data_to_send()
    events = ep.receive_data(first, 1.0)
    closed = [e for e in events if isinstance(e, ConnectionClosed)]
    assert len(closed) == 1 and closed[0].side == ep.local
    assert str(closed[0].error.condition) == "amqp:not-implemented"
    assert closed[0].error.description == f"the peer does not speak AMQP: {said}"
    assert ep.failed
    assert ep.receive_data(b"AMQP\x00\x01\x00\x00", 2.0) == []  # nothing more is read


@pytest.mark.parametrize("sasl", [None, SaslConfig(offer=("ANONYMOUS",))])
@pytest.mark.parametrize("first", [TLS_HELLO, b"GET / HTTP/1.1\r\n\r\n", b"\x00\x00"])
def test_a_server_answers_with_its_header_and_fails(first: bytes, sasl: SaslConfig | None
                                                   ) -> None:
    ep = Endpoint("peer", sasl=sasl)
    ep.receive_data(first, 1.0)
    header = ProtocolHeader(0, bytes(ep.data_to_send()))
    assert header.kind == ("amqp" if sasl is None else "sasl")
    assert ep.failed
    assert ep.receive_data(b"AMQP\x00\x01\x00\x00", 2.0) == []
    assert ep.data_to_send() == b""


def test_a_header_split_over_reads_is_still_a_header() -> None:
    ep = Endpoint("peer")
    for part in (b"A", b"MQ", b"P\x00\x01", b"\x00\x00"):
        ep.receive_data(part, 1.0)
    assert not ep.failed
    assert bytes(ep.data_to_send()) == b"AMQP\x00\x01\x00\x00"


def test_what_the_description_shows() -> None:
    assert not_amqp_bytes(TLS_HELLO) == "it answered with TLS (an amqps:// port?)"
    assert not_amqp_bytes(b"ab\x00cd") == "it sent 61 62 00 63 64"
    assert not_amqp_bytes(b"\r\n") == "it sent 0d 0a"
