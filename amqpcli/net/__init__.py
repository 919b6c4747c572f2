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

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (for the type checker: at run time each is loaded on first use)
    from amqpcli.net.client import Client, ConnectionLost, connect_retrying
    from amqpcli.net.config import ConnectionConfig, ReconnectPolicy, TlsConfig, choose_mechanism
    from amqpcli.net.url import Endpoint, parse_url, resolve_endpoint

# Every name is looked up on first use: a command that only reads a URL's password (to mask
# it in its errors) should not pay for ssl and the engine.
_LAZY = {
    "Client": "client",
    "ConnectionLost": "client",
    "connect_retrying": "client",
    "ConnectionConfig": "config",
    "ReconnectPolicy": "config",
    "TlsConfig": "config",
    "choose_mechanism": "config",
    "Endpoint": "url",
    "parse_url": "url",
    "resolve_endpoint": "url",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(name)
    from importlib import import_module

    return getattr(import_module(f"amqpcli.net.{module}"), name)


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
