"""RFC 1982 serial-number arithmetic on 32 bits (AMQP 1.0 Part 2 §2.8.16 `sequence-no`).

Delivery-ids, delivery-counts and transfer-ids wrap at 2**32; comparing them with `<`
is wrong near the wrap. These helpers are the only place that knows how.
"""

from __future__ import annotations

MOD = 1 << 32
MASK = MOD - 1
HALF = 1 << 31


def add(a: int, n: int) -> int:
    """`a + n` modulo 2**32 (n may be negative)."""
    return (a + n) & MASK


def diff(a: int, b: int) -> int:
    """The signed serial distance `b - a`, in [-2**31, 2**31)."""
    return ((b - a + HALF) & MASK) - HALF


def lt(a: int, b: int) -> bool:
    """`a < b` in serial order (undefined for a distance of exactly 2**31; False then)."""
    d = (b - a) & MASK
    return 0 < d < HALF


def le(a: int, b: int) -> bool:
    return a == b or lt(a, b)


def in_range(x: int, first: int, last: int) -> bool:
    """`first <= x <= last` in serial order."""
    return ((x - first) & MASK) <= ((last - first) & MASK)


def span(first: int, last: int) -> int:
    """How many numbers `first..last` covers (1 when they are equal)."""
    return ((last - first) & MASK) + 1
