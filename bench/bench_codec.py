"""Codec throughput: amqpcli's Message against python-qpid-proton's on the same bytes.

    python bench/bench_codec.py [--seconds 1.0] [--repeat 5]

The message is a typical one: a header, properties with message-id, to, subject,
content-type and creation-time, five application properties and a 100-byte data body.
Both decoders read the bytes proton encodes. Figures are messages per second, the best of
`--repeat` runs of about `--seconds` each, ours and proton's interleaved in one process.

* decode: bytes → message object (ours splits sections and decodes them on access;
  proton's decodes everything into Python objects).
* decode + read all: the same, then every field of every section is read.
* encode: a message object built once → bytes, each time from its fields.
"""

from __future__ import annotations

import argparse
import platform
import time
from collections.abc import Callable

import proton

from amqpcli.codec import Symbol, Timestamp, UByte
from amqpcli.codec.composites import Header, Properties
from amqpcli.codec.message import Message

BODY = bytes(range(100))
APP_PROPS = {
    "region": "eu-west",
    "attempt": 3,
    "priority-class": "gold",
    "retry": False,
    "score": 0.5,
}
CREATED = 1_700_000_000_123
# proton.Message's header and properties attributes
PROTON_FIELDS = (
    "durable",
    "priority",
    "ttl",
    "first_acquirer",
    "delivery_count",
    "id",
    "user_id",
    "address",
    "subject",
    "reply_to",
    "correlation_id",
    "content_type",
    "content_encoding",
    "expiry_time",
    "creation_time",
    "group_id",
    "group_sequence",
    "reply_to_group_id",
)


def proton_message() -> proton.Message:
    m = proton.Message(
        body=BODY,
        inferred=True,
        durable=True,
        priority=5,
        id="order-000123",
        address="queue/orders",
        subject="order.created",
        content_type="application/octet-stream",
        creation_time=CREATED / 1000,
        properties=dict(APP_PROPS),
    )
    return m


def our_message() -> Message:
    return Message(
        BODY,
        header=Header(durable=True, priority=UByte(5)),
        properties=Properties(
            message_id="order-000123",
            to="queue/orders",
            subject="order.created",
            content_type=Symbol("application/octet-stream"),
            creation_time=Timestamp(CREATED),
        ),
        application_properties=dict(APP_PROPS),
    )


def _batch(fn: Callable[[], object], seconds: float) -> int:
    """Calls that take about a tenth of a run."""
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t
        if dt > seconds / 10:
            return max(1, int(n * seconds / 10 / dt))
        n *= 2


def _run(fn: Callable[[], object], batch: int, seconds: float) -> float:
    count = 0
    t0 = time.perf_counter()
    while True:
        for _ in range(batch):
            fn()
        count += batch
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return count / dt


def rates(
    a: Callable[[], object], b: Callable[[], object], seconds: float, repeat: int
) -> tuple[float, float]:
    """Best calls per second of `a` and of `b`, their runs interleaved so that both see
    the same machine (other load on it moves both alike)."""
    ba, bb = _batch(a, seconds), _batch(b, seconds)
    best_a = best_b = 0.0
    for _ in range(repeat):
        best_a = max(best_a, _run(a, ba, seconds))
        best_b = max(best_b, _run(b, bb, seconds))
    return best_a, best_b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=5)
    ns = ap.parse_args()

    wire = bytes(proton_message().encode())
    ours_wire = our_message().encode()
    assert Message.decode(wire).value == BODY
    assert Message.decode(ours_wire).properties == Message.decode(wire).properties

    def ours_decode() -> object:
        return Message.decode(wire)

    def ours_decode_read() -> object:
        m = Message.decode(wire)
        h = m.header
        p = m.properties
        ap = m.application_properties
        assert h is not None and p is not None and ap is not None
        seen = [getattr(h, n) for n in h._SLOTS]
        seen += [getattr(p, n) for n in p._SLOTS]
        seen += list(ap.value.items())
        seen += [m.delivery_annotations, m.message_annotations, m.footer, m.value]
        return seen

    def proton_decode() -> object:
        m = proton.Message()
        m.decode(wire)
        return m

    def proton_decode_read() -> object:
        m = proton.Message()
        m.decode(wire)
        seen = [getattr(m, n) for n in PROTON_FIELDS]
        seen += list((m.properties or {}).items())
        seen += [m.instructions, m.annotations, m.body]
        return seen

    our_msg = our_message()
    pm = proton_message()

    def ours_encode() -> object:
        return our_msg.encode()

    def proton_encode() -> object:
        return pm.encode()

    print(
        f"python {platform.python_version()}, python-qpid-proton {'.'.join(map(str, proton.VERSION))}"
    )
    print(f"message: {len(wire)} bytes as proton encodes it, {len(ours_wire)} as we do")
    print(f"{'':20} {'amqpcli msg/s':>14} {'proton msg/s':>14} {'ratio':>7}")
    for label, a, b in (
        ("decode", ours_decode, proton_decode),
        ("decode + read all", ours_decode_read, proton_decode_read),
        ("encode", ours_encode, proton_encode),
    ):
        ra, rb = rates(a, b, ns.seconds, ns.repeat)
        print(f"{label:20} {ra:14,.0f} {rb:14,.0f} {ra / rb:7.2f}")


if __name__ == "__main__":
    main()
