"""`recv --verify-sequence`: the numbers `send --sequence` puts in every message of a run
(an application property, `sn` by default), checked as the messages are written out.

What is kept is ranges, never a set of every number: a run in order is one range however
long it is, and only gaps (and the numbers seen twice) add more.

A gap is known only once a higher number has come: the check covers the numbers from the
start (the lowest seen, or the one the user gives) to the highest seen. Numbers after the
highest are not known to exist — a run stopped by --count, or a node that held no more —
so a loss at the tail shows as fewer messages than --count, at the timeout.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from amqpcli.codec.types import DecodeError

__all__ = ["Ranges", "SequenceCheck", "ranges_text"]

_SHOWN = 10  # ranges written out in the text summary and the error line


class Ranges:
    """Disjoint, non-adjacent ranges of integers, in order."""

    def __init__(self) -> None:
        self.lo: list[int] = []
        self.hi: list[int] = []

    def add(self, n: int) -> bool:
        """Add `n`; False when it was there already."""
        lo, hi = self.lo, self.hi
        i = bisect_right(lo, n)  # lo[i-1] <= n < lo[i]
        if i and hi[i - 1] >= n:
            return False
        left = i > 0 and hi[i - 1] == n - 1
        right = i < len(lo) and lo[i] == n + 1
        if left and right:
            hi[i - 1] = hi[i]
            del lo[i], hi[i]
        elif left:
            hi[i - 1] = n
        elif right:
            lo[i] = n
        else:
            lo.insert(i, n)
            hi.insert(i, n)
        return True

    def pairs(self) -> list[tuple[int, int]]:
        return list(zip(self.lo, self.hi, strict=True))


def ranges_text(pairs: list[tuple[int, int]], shown: int = _SHOWN) -> str:
    """`17-19, 42`; past `shown` ranges, how many more."""
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in pairs[:shown])
    if len(pairs) > shown:
        text += f", … ({len(pairs) - shown} more range(s))"
    return text


class SequenceCheck:
    """The numbers of the messages written, under the application property `key`.

    `start`: the run's first number, when the user gives it (else the lowest seen);
    `no_duplicates`: a number seen twice fails the run as a gap does."""

    def __init__(self, key: str, start: int | None = None, no_duplicates: bool = False) -> None:
        self.key = key
        self.start = start
        self.no_duplicates = no_duplicates
        self.seen = Ranges()
        self.dup_numbers = Ranges()  # which numbers came more than once
        self.duplicates = 0  # how many messages were such a second (third…) arrival
        self.out_of_order = 0  # a number below one seen before, and new
        self.unnumbered = 0  # no such property, or not an integer of 0 or more
        self.highest: int | None = None

    def add(self, payload: bytes) -> None:
        n = self._number(payload)
        if n is None:
            self.unnumbered += 1
            return
        if not self.seen.add(n):
            self.duplicates += 1
            self.dup_numbers.add(n)
            return
        if self.highest is None or n > self.highest:
            self.highest = n
        else:
            self.out_of_order += 1

    def _number(self, payload: bytes) -> int | None:
        from amqpcli.codec.message import Message
        from amqpcli.render.types import INTEGER_TYPES, amqp_type

        try:
            props = Message.decode(payload).application_properties
        except DecodeError:
            return None
        value: Any = getattr(props, "value", None)
        if not isinstance(value, dict):
            return None
        n = value.get(self.key)
        if n is None or amqp_type(n) not in INTEGER_TYPES or n < 0:
            return None
        return int(n)

    @property
    def first(self) -> int | None:
        """Where the check starts: the start given, else the lowest number seen."""
        if self.start is not None:
            return self.start
        return self.seen.lo[0] if self.seen.lo else None

    def missing(self) -> list[tuple[int, int]]:
        """The gaps between the start and the highest number seen."""
        first, top = self.first, self.highest
        if first is None or top is None or top < first:
            return []
        gaps = []
        expect = first
        for lo, hi in self.seen.pairs():
            if hi < expect:
                continue  # below the start given: not part of the run checked
            if lo > expect:
                gaps.append((expect, lo - 1))
            expect = hi + 1
        return gaps

    def failure(self) -> str | None:
        """Why the run fails the check, or None."""
        why = []
        gaps = self.missing()
        if gaps:
            n = sum(b - a + 1 for a, b in gaps)
            why.append(f"missing {ranges_text(gaps)} ({n})")
        if self.unnumbered:
            why.append(f"{self.unnumbered} message(s) without {self.key}")
        if self.no_duplicates and self.duplicates:
            why.append(f"duplicates {ranges_text(self.dup_numbers.pairs())} ({self.duplicates})")
        if not why:
            return None
        return f"sequence {self.key}: " + "; ".join(why)

    def text(self) -> str:
        """One line for the summary on stderr."""
        top = self.highest
        if top is None:
            head, parts = f"sequence {self.key}", ["no numbered message"]
        else:
            head = f"sequence {self.key} {self.first}-{top}"
            gaps = self.missing()
            n = sum(b - a + 1 for a, b in gaps)
            parts = [f"missing {ranges_text(gaps)} ({n})" if gaps else "no gap"]
        if self.duplicates:
            parts.append(f"duplicates {ranges_text(self.dup_numbers.pairs())} "
                         f"({self.duplicates})")
        if self.out_of_order:
            parts.append(f"out of order {self.out_of_order}")
        if self.unnumbered:
            parts.append(f"without {self.key} {self.unnumbered}")
        return f"{head}: " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        gaps = self.missing()
        return {
            "key": self.key,
            "first": self.first if self.highest is not None else None,
            "last": self.highest,
            "missing": sum(b - a + 1 for a, b in gaps),
            "missing-ranges": [[a, b] for a, b in gaps],
            "duplicates": self.duplicates,
            "duplicate-ranges": [[a, b] for a, b in self.dup_numbers.pairs()],
            "out-of-order": self.out_of_order,
            "unnumbered": self.unnumbered,
        }
