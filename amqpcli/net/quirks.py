"""What we know about particular peers' deviations, decided from their open's properties.

One place for product-specific behaviour, each entry with what was seen. Everything else
in the client follows the spec.
"""

from __future__ import annotations

import re
from typing import Any

from amqpcli.codec.types import Symbol

__all__ = ["PeerInfo", "peer_info"]


class PeerInfo:
    """The peer's product and version (from open.properties) and its known quirks."""

    def __init__(self, product: str | None, version: tuple[int, ...] | None) -> None:
        self.product = product
        self.version = version

    @property
    def is_old_rabbitmq(self) -> bool:
        # The AMQP 1.0 plugin before RabbitMQ 4.0 (which rewrote AMQP 1.0 support).
        return self.product == "RabbitMQ" and self.version is not None and self.version < (4,)

    @property
    def drain_works(self) -> bool:
        """RabbitMQ 3.10 ends the session with amqp:internal-error (a function_clause on
        send_drained in rabbit_classic_queue) when a receiver drains a classic queue."""
        return not self.is_old_rabbitmq

    def __repr__(self) -> str:
        v = ".".join(map(str, self.version)) if self.version else "?"
        return f"PeerInfo({self.product!r}, {v})"


def peer_info(open_properties: Any) -> PeerInfo:
    props = open_properties if isinstance(open_properties, dict) else {}
    # Keys are symbols (Part 2 §2.7.1 fields), which do not equal plain strings here.
    product = props.get(Symbol("product"))
    version_text = props.get(Symbol("version"))
    version = None
    if isinstance(version_text, str):
        m = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", version_text)
        if m:
            version = tuple(int(g) for g in m.groups() if g is not None)
    return PeerInfo(str(product) if isinstance(product, str) else None, version)
