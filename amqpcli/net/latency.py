"""End-to-end latency of stamped messages: `send --timestamp` puts in every message the
application property `ts`, a long holding the nanoseconds since the Unix epoch (UTC) when
it went out (qpid-send's convention); `recv` (and `browse`) take for each message that
carries an integer `ts` the wall clock when it is handed to be written, less that stamp.

The figures are only as good as the two clocks: across hosts they need synchronised
clocks (NTP, PTP), and a receiver whose clock is behind the sender's sees latencies below
zero, which are kept as they are (never clamped: they say the clocks disagree).

Latencies are kept as doubles in one array (8 bytes a message), sorted only when a
summary or a report asks for percentiles (`amqpcli.percentiles`: nearest rank)."""

from __future__ import annotations

from array import array
from typing import Any

from amqpcli.codec.encode import PYTHON_TYPE_NAMES
from amqpcli.codec.message import Message
from amqpcli.codec.types import DecodeError
from amqpcli.percentiles import percentile

__all__ = ["KEY", "STAMP_NEEDLE", "Latencies", "figures_text", "stamp_of"]

KEY = "ts"  # amqpcli.net.outgoing.TIMESTAMP_KEY
# What any message carrying the key holds somewhere in its bytes: the key's length (one
# byte: the last of a str8's header or of a str32's) and its text. A message without it
# is passed over with one substring search, never decoded.
STAMP_NEEDLE = b"\x02" + KEY.encode()
# The decoded values that are integers (an AMQP timestamp, in ms, is not such a stamp).
_INTEGERS = frozenset(cls for cls, name in PYTHON_TYPE_NAMES.items()
                      if name in ("ubyte", "ushort", "uint", "ulong", "byte", "short", "int",
                                  "long"))


def stamp_of(payload: bytes) -> int | None:
    """The integer application property `ts` of an encoded message, or None (no such
    property, a value that is no integer, a message whose sections do not decode)."""
    if STAMP_NEEDLE not in payload:
        return None
    try:
        props = Message.decode(payload).application_properties
    except DecodeError:
        return None
    values: Any = getattr(props, "value", None)
    if type(values) is not dict:
        return None
    ts = values.get(KEY)
    return int(ts) if ts is not None and type(ts) in _INTEGERS else None


class Latencies:
    """Latencies in milliseconds, in arrival order."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values = array("d")

    def __len__(self) -> int:
        return len(self.values)

    def add_ns(self, arrived_ns: int, stamp_ns: int) -> None:
        self.values.append((arrived_ns - stamp_ns) / 1e6)

    def figures(self, since: int = 0) -> dict[str, Any] | None:
        """`{"count", "min", "p50", "p99", "max"}` (ms, to the microsecond) of the
        latencies from number `since` on, or None when there are none."""
        if since >= len(self.values):
            return None
        ordered = sorted(self.values[since:])
        return {
            "count": len(ordered),
            "min": round(ordered[0], 3),
            "p50": round(percentile(ordered, 50), 3),
            "p99": round(percentile(ordered, 99), 3),
            "max": round(ordered[-1], 3),
        }


def figures_text(f: dict[str, Any], with_min: bool = True) -> str:
    """`latency min 0.412 p50 0.901 p99 3.100 max 3.400 ms`."""
    names = ("min", "p50", "p99", "max") if with_min else ("p50", "p99", "max")
    return "latency " + " ".join(f"{k} {f[k]:.3f}" for k in names) + " ms"
