"""TLS: amqps:// (TLS first), the AMQP TLS header (protocol id 2), verification, SNI, client
certificates with SASL EXTERNAL, against the proton broker and test certificates."""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
from collections.abc import Iterator

import pytest

from tests.net.clirun import amqp, json_lines
from tests.peers import Broker
from tests.peers.net import free_port
from tests.peers.tls import Certs

pytestmark = pytest.mark.integration


def _tls_url(broker: Broker, host: str = "127.0.0.1") -> str:
    return f"amqps://{host}:{broker.port}"


def test_amqps_with_ca(tls_broker: Broker, tls_certs: Certs) -> None:
    url = _tls_url(tls_broker, "localhost")
    r = amqp("send", f"{url}/q", "secret", "--ca-file", str(tls_certs.ca_cert))
    assert r.returncode == 0, r.stderr
    r = amqp("recv", f"{url}/q", "-c", "1", "-t", "10", "--json", "--ca-file", str(tls_certs.ca_cert))
    assert r.returncode == 0, r.stderr
    assert json_lines(r.stdout)[0]["body"] == {"data": [{"binary-text": "secret"}]}


def test_verification_is_on_by_default(tls_broker: Broker) -> None:
    r = amqp("send", f"{_tls_url(tls_broker)}/q", "x")
    assert r.returncode == 3
    assert "certificate verification failed" in r.stderr and "--insecure" in r.stderr
    r = amqp("send", f"{_tls_url(tls_broker)}/q", "x", "--insecure")
    assert r.returncode == 0, r.stderr


def test_server_name_is_checked(tls_broker: Broker, tls_certs: Certs) -> None:
    # The certificate names 127.0.0.1 and localhost, not example.com.
    r = amqp("send", f"{_tls_url(tls_broker)}/q", "x", "--ca-file", str(tls_certs.ca_cert),
             "--server-name", "example.com")
    assert r.returncode == 3 and "certificate verification failed" in r.stderr


def test_client_certificate_and_external(tls_broker_client_auth: Broker, tls_certs: Certs) -> None:
    base = [f"{_tls_url(tls_broker_client_auth)}/q", "x", "--ca-file", str(tls_certs.ca_cert)]
    r = amqp("send", *base)  # no certificate: the handshake fails
    assert r.returncode == 3, r.stderr
    r = amqp("send", *base, "--cert", str(tls_certs.client_cert), "--key",
             str(tls_certs.client_key), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["accepted"] == 1
    r = amqp("send", *base, "--cert", str(tls_certs.untrusted_cert), "--key",
             str(tls_certs.untrusted_key))
    assert r.returncode == 3, r.stderr


class _TlsHeaderFront:
    """Speaks the AMQP TLS header (protocol id 2), then TLS, and relays the decrypted bytes
    to a plain broker: what a peer offering TLS through the header looks like."""

    def __init__(self, certs: Certs, backend_port: int) -> None:
        self.port = free_port()
        self.backend_port = backend_port
        self.ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ctx.load_cert_chain(str(certs.server_cert), str(certs.server_key))
        self.loop = asyncio.new_event_loop()
        self.headers: list[bytes] = []
        ready = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(ready,), daemon=True)
        self.thread.start()
        ready.wait(10)

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self._handle, "127.0.0.1", self.port))
        ready.set()
        self.loop.run_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        header = await reader.readexactly(8)
        self.headers.append(header)
        writer.write(b"AMQP\x02\x01\x00\x00")
        await writer.drain()
        await writer.start_tls(self.ctx)
        br, bw = await asyncio.open_connection("127.0.0.1", self.backend_port)

        async def pipe(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            try:
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            except (ConnectionError, OSError):
                pass
            w.close()

        await asyncio.gather(pipe(reader, bw), pipe(br, writer))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


@pytest.fixture
def tls_header_front(broker: Broker, tls_certs: Certs) -> Iterator[_TlsHeaderFront]:
    front = _TlsHeaderFront(tls_certs, broker.port)
    yield front
    front.close()


def test_tls_through_the_amqp_tls_header(tls_header_front: _TlsHeaderFront, broker: Broker,
                                         tls_certs: Certs) -> None:
    url = f"amqp://localhost:{tls_header_front.port}/q"
    r = amqp("send", url, "via-header", "--tls-upgrade", "--ca-file", str(tls_certs.ca_cert))
    assert r.returncode == 0, r.stderr
    assert tls_header_front.headers == [b"AMQP\x02\x01\x00\x00"]
    assert broker.queue_bodies("q") == [b"via-header"]


def test_tls_header_to_a_plain_peer_is_a_connection_error(broker: Broker, tls_certs: Certs) -> None:
    # proton without TLS does not answer the TLS header: the connect timeout ends it.
    r = amqp("send", f"amqp://127.0.0.1:{broker.port}/q", "x", "--tls-upgrade",
             "--ca-file", str(tls_certs.ca_cert), "--connect-timeout", "2")
    assert r.returncode == 3
    assert r.stderr == f"amqp: error: cannot connect to 127.0.0.1:{broker.port}: timed out\n"


