"""asyncio transport for AMQP 1.0: URLs, TCP/TLS, SASL choice, heartbeats, reconnect.

It drives `amqpcli.engine` and never speaks the protocol itself.
"""

from amqpcli.net.config import ConnectionConfig, ReconnectPolicy, TlsConfig, choose_mechanism
from amqpcli.net.url import Endpoint, parse_url, resolve_endpoint

__all__ = [
    "ConnectionConfig",
    "Endpoint",
    "ReconnectPolicy",
    "TlsConfig",
    "choose_mechanism",
    "parse_url",
    "resolve_endpoint",
]
