"""asyncio transport for AMQP 1.0: URLs, TCP/TLS, SASL choice, heartbeats, reconnect.

It drives `amqpcli.engine` and never speaks the protocol itself.

* `url` — `Endpoint`, `parse_url`, `resolve_endpoint` (the address rule, secrets)
* `config` — `ConnectionConfig`, `TlsConfig`, `ReconnectPolicy`, the SASL mechanism rule
* `connect` — opening the stream (TCP, TLS first, the AMQP TLS header), error lines
* `transport` — the pump between the stream and the engine (bytes, events, timers)
* `client` — `Client`: links, sending, receiving, transactions, failures as `UserError`
* `sending`, `receiving` — the loops behind `amqp send` and `amqp recv` / `amqp browse`
* `txnreceive` — `amqp recv --txn-size`'s transactions; `txn` — what the send and recv
  summaries say of transactions
* `outgoing` — messages built from options; `progress` — the stderr progress line
* `quirks` — what particular peers do differently, decided from their open
"""

from typing import Any

from amqpcli.net.config import ConnectionConfig, ReconnectPolicy, TlsConfig, choose_mechanism
from amqpcli.net.url import Endpoint, parse_url, resolve_endpoint

_LAZY = {"Client", "ConnectionLost", "connect_retrying"}


def __getattr__(name: str) -> Any:
    # The client pulls in the engine; `amqp --help` and option parsing should not.
    if name in _LAZY:
        from amqpcli.net import client

        return getattr(client, name)
    raise AttributeError(name)

__all__ = [
    "Client",
    "ConnectionConfig",
    "ConnectionLost",
    "Endpoint",
    "ReconnectPolicy",
    "TlsConfig",
    "choose_mechanism",
    "connect_retrying",
    "parse_url",
    "resolve_endpoint",
]
