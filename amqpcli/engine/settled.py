"""The delivery-ids a session saw settled lately, per sending direction: what tells a late
disposition for an id settled before (a confirmation, or `already-settled`) from one for
an id never seen (`unknown-delivery`).

A table indexed by the id's low bits, holding the id and who settled it: a few bytes per
slot, so a busy session costs 20 KB per direction where a dictionary of the same ids cost
close to half a megabyte (and a capture of many busy sessions, as much per session). The
table starts at 32 slots, enough for a session that settles little, and takes its full
`WINDOW` slots when a new id would push out one less than `WINDOW` ids away from it; so
an id is forgotten only once an id at least `WINDOW` away from it was settled after it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

WINDOW = 4096  # settled ids remembered per direction: every one within this many of another
_FIRST = 32  # slots to start with
_MOD = 1 << 32


def _typecode() -> str:
    """An unsigned array type that holds a 32-bit delivery-id in the fewest bytes."""
    return "I" if array("I").itemsize >= 4 else "L"


_IDS = _typecode()
# a pair of side names -> (side -> code, code -> side)
_CODES: dict[tuple[str, str], tuple[dict[str | None, int], tuple[str | None, ...]]] = {}


class SettledIds:
    """Delivery-id → the side that settled it (or None where nobody is known to have), for
    the ids settled lately in one direction of a session. Reads like a mapping
    (`did in s`, `s[did]`, `dict(s)`); `add` records a settlement."""

    __slots__ = ("_code", "_ids", "_mask", "_side", "_who")

    def __init__(self, sides: tuple[str, str]) -> None:
        known = _CODES.get(sides)
        if known is None:  # (shared: every session of a connection has the same two sides)
            known = _CODES[sides] = ({sides[0]: 1, sides[1]: 2, None: 3},
                                     (None, sides[0], sides[1], None))
        self._code, self._side = known
        self._mask = _FIRST - 1
        self._ids = array(_IDS, bytes(_FIRST * array(_IDS).itemsize))
        self._who = bytearray(_FIRST)  # 0: an empty slot

    def add(self, did: int, side: str | None) -> None:
        slot = did & self._mask
        who = self._who
        if who[slot] and self._ids[slot] != did and self._mask < WINDOW - 1:
            gap = (did - self._ids[slot]) % _MOD
            if min(gap, _MOD - gap) < WINDOW:
                self._grow()
                slot = did & self._mask
                who = self._who
        self._ids[slot] = did
        who[slot] = self._code[side]

    def _grow(self) -> None:
        """The full table: every id held moves to its slot there (ids in different slots
        stay apart: a larger table only looks at more of their bits)."""
        mask, ids, who = WINDOW - 1, self._ids, self._who
        new_ids = array(_IDS, bytes(WINDOW * ids.itemsize))
        new_who = bytearray(WINDOW)
        for k, code in enumerate(who):
            if code:
                i = ids[k]
                new_ids[i & mask] = i
                new_who[i & mask] = code
        self._mask, self._ids, self._who = mask, new_ids, new_who

    def any_of(self, first: int, n: int) -> bool:
        """Whether any of the `n` ids from `first` on (serial order) is held."""
        mask, ids, who = self._mask, self._ids, self._who
        for k in range(n):
            did = (first + k) & 0xFFFFFFFF
            slot = did & mask
            if who[slot] and ids[slot] == did:
                return True
        return False

    def __getitem__(self, did: int) -> str | None:
        slot = did & self._mask
        code = self._who[slot]
        if not code or self._ids[slot] != did:
            raise KeyError(did)
        return self._side[code]

    def keys(self) -> Iterator[int]:
        ids = self._ids
        return (ids[k] for k, code in enumerate(self._who) if code)

    def __iter__(self) -> Iterator[int]:
        return self.keys()

    def __len__(self) -> int:
        return len(self._who) - self._who.count(0)

    def __repr__(self) -> str:
        return f"SettledIds({dict(self)!r})"
