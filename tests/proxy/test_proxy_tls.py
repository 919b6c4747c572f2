"""TLS to the broker: the application speaks plain AMQP to the proxy, the proxy TLS upstream."""

from __future__ import annotations

import pytest
from proton import Message, ProtonException
from proton.utils import BlockingConnection

from amqpcli.cli.proxy import upstream_config
from amqpcli.errors import UserError
from amqpcli.proxy import Proxy
from tests.peers.broker import Broker
from tests.peers.tls import Certs
from tests.proxy.relay import LoopThread


def _send(port: int) -> None:
    conn = BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=30)
    try:
        conn.create_sender("tls-q").send(Message(body="over tls"))
    finally:
        conn.close()


@pytest.mark.integration
def test_proxy_speaks_tls_to_the_broker(tls_broker: Broker, tls_certs: Certs,
                                        loop_thread: LoopThread) -> None:
    assert tls_broker.url.startswith("amqps://")
    names: list[str] = []

    async def setup() -> Proxy:
        proxy = Proxy(("127.0.0.1", 0), upstream_config(tls_broker.url, ca_file=str(tls_certs.ca_cert)),
                      on_item=lambda conn, side, item, t, ev: names.append(getattr(item, "name", "")))
        await proxy.start()
        return proxy

    proxy = loop_thread.run(setup())
    assert proxy.bound is not None
    _send(proxy.bound[1])
    loop_thread.run(proxy.wait_idle())
    loop_thread.run(proxy.close())
    assert tls_broker.queue_bodies("tls-q") == ["over tls"]
    # The copy the proxy parsed is the plain AMQP inside the TLS session.
    assert "transfer" in names and "open" in names


@pytest.mark.integration
def test_untrusted_broker_certificate_is_refused(tls_broker: Broker,
                                                 loop_thread: LoopThread) -> None:
    closed: list[str] = []

    async def setup() -> Proxy:
        proxy = Proxy(("127.0.0.1", 0), upstream_config(tls_broker.url),  # system CAs only
                      on_close=lambda conn, how: closed.append(how))
        await proxy.start()
        return proxy

    proxy = loop_thread.run(setup())
    assert proxy.bound is not None
    with pytest.raises(ProtonException):  # the proxy drops the application's connection
        _send(proxy.bound[1])
    loop_thread.run(proxy.wait_idle())
    loop_thread.run(proxy.close())
    assert len(closed) == 1 and "certificate verification failed" in closed[0]
    with pytest.raises(UserError):
        upstream_config("amqps://127.0.0.1:1", ca_file="/nonexistent/ca.pem").tls.context()
