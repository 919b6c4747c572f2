"""Which protocol a TCP flow speaks, from the first bytes one side sent.

AMQP of every version opens with "AMQP" and four bytes; AMQP 1.0 uses the protocol id
(0 plain, 2 TLS, 3 SASL) and version 1.0.0; 0-10 sends "AMQP 1 1 0 10"; 0-9-1 sends
"AMQP 0 0 9 1" (0-8 and 0-9 use "AMQP 1 1 8 0" / "AMQP 1 1 0 9"). A TLS connection opens
with a handshake record: 0x16 0x03 <minor>.
"""

from __future__ import annotations

AMQP_1_0 = "amqp-1.0"
AMQP_SASL = "amqp-sasl"
AMQP_TLS = "amqp-tls"
AMQP_0_10 = "amqp-0-10"
AMQP_0_9_1 = "amqp-0-9-1"
AMQP_0_9 = "amqp-0-9"
AMQP_0_8 = "amqp-0-8"
AMQP_OTHER = "amqp-other"  # "AMQP" followed by a version we do not know
TLS = "tls"
UNKNOWN = "unknown"

AMQP_PROTOCOLS = frozenset(
    {AMQP_1_0, AMQP_SASL, AMQP_TLS, AMQP_0_10, AMQP_0_9_1, AMQP_0_9, AMQP_0_8, AMQP_OTHER}
)

_HEADERS = {
    b"\x00\x01\x00\x00": AMQP_1_0,
    b"\x03\x01\x00\x00": AMQP_SASL,
    b"\x02\x01\x00\x00": AMQP_TLS,
    b"\x01\x01\x00\x0a": AMQP_0_10,
    b"\x00\x00\x09\x01": AMQP_0_9_1,
    b"\x01\x01\x00\x09": AMQP_0_9,
    b"\x01\x01\x08\x00": AMQP_0_8,
}

NEEDED = 8  # bytes that settle the question


def detect(first: bytes) -> str:
    """The protocol named by a stream's first bytes (fewer than 8 is allowed, at the end
    of a short stream)."""
    if first[:4] == b"AMQP":
        return _HEADERS.get(bytes(first[4:8]), AMQP_OTHER)
    if len(first) >= 3 and first[0] == 0x16 and first[1] == 0x03 and first[2] <= 0x04:
        return TLS
    return UNKNOWN


def is_client_hello(first: bytes) -> bool:
    """A TLS handshake record carrying a ClientHello: its sender is the client."""
    return len(first) >= 6 and first[0] == 0x16 and first[1] == 0x03 and first[5] == 0x01
