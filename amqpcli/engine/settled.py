"""The delivery-ids a session saw settled lately, per sending direction: what tells a late
disposition for an id settled before (a confirmation, or `already-settled`) from one for
an id never seen (`unknown-delivery`).

A table indexed by the id's low bits, holding the id and who settled it: a few bytes per
slot, so a busy session costs 20 KB per direction where a dictionary of the same ids cost
close to half a megabyte (and a capture of many busy sessions, as much per session). The
table starts at 32 slots, enough for a session that settles little, and takes its full
`WINDOW` slots when a new id would push out one less than `WINDOW` ids away from it; so
an id is forgotten only once an id at least `WINDOW` newer was settled after it, or, if it
was settled after such an id (late), once `LATE` more were settled late.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator

from .serial import HALF, MASK
from .serial import add as serial_add

WINDOW = 4096  # settled ids remembered per direction: every one within this many of another
_FIRST = 32  # slots to start with
LATE = 256  # ids settled late, after a newer id took their slot, remembered beside


def _typecode() -> str:
    """An unsigned array type that holds a 32-bit delivery-id in the fewest bytes."""
    return "I" if array("I").itemsize >= 4 else "L"


_IDS = _typecode()
# a pair of side names -> (side -> code, code -> side)
_CODES: dict[tuple[str, str], tuple[dict[str | None, int], tuple[str | None, ...]]] = {}


class SettledIds:
    """Delivery-id → the side that settled it (or None where nobody is known to have), for
    the ids settled lately in one direction of a session. Reads like a mapping
    (`did in s`, `s[did]`, `dict(s)`); `add` records a settlement.

    An id settled late (a message held while thousands of later ones went through) finds
    its slot taken by a newer id: the newer one stays, and the late one goes to a small
    table of its own (`LATE` of them, oldest out first)."""

    __slots__ = ("_code", "_ids", "_late", "_mask", "_side", "_who")

    def __init__(self, sides: tuple[str, str]) -> None:
        known = _CODES.get(sides)
        if known is None:  # (shared: every session of a connection has the same two sides)
            known = _CODES[sides] = ({sides[0]: 1, sides[1]: 2, None: 3},
                                     (None, sides[0], sides[1], None))
        self._code, self._side = known
        self._mask = _FIRST - 1
        self._ids = array(_IDS, bytes(_FIRST * array(_IDS).itemsize))
        self._who = bytearray(_FIRST)  # 0: an empty slot
        self._late: dict[int, int] | None = None  # id -> code, oldest first

    def add(self, did: int, side: str | None) -> None:
        slot = did & self._mask
        who = self._who
        code = self._code[side]
        if who[slot] and self._ids[slot] != did:
            # did - the id held, signed (`serial.diff`, inlined: every add of a busy session)
            gap = ((did - self._ids[slot] + HALF) & MASK) - HALF
            if -WINDOW < gap < WINDOW:  # (only a table smaller than WINDOW)
                self._grow()
                slot = did & self._mask
                who = self._who
            elif gap < 0:  # the id held is newer: it stays, this one is put aside
                late = self._late
                if late is None:
                    late = self._late = {}
                late.pop(did, None)
                late[did] = code
                if len(late) > LATE:
                    del late[next(iter(late))]
                return
        self._ids[slot] = did
        who[slot] = code
        if self._late:
            self._late.pop(did, None)

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

    def _code_of(self, did: int) -> int:
        """Its side's code, 0 if not held."""
        slot = did & self._mask
        code = self._who[slot]
        if code and self._ids[slot] == did:
            return code
        late = self._late
        return late.get(did, 0) if late else 0

    def __contains__(self, did: object) -> bool:
        return isinstance(did, int) and self._code_of(did) != 0

    def any_of(self, first: int, n: int) -> bool:
        """Whether any of the `n` ids from `first` on (serial order) is held."""
        code_of = self._code_of
        return any(code_of(serial_add(first, k)) for k in range(n))

    def __getitem__(self, did: int) -> str | None:
        code = self._code_of(did)
        if not code:
            raise KeyError(did)
        return self._side[code]

    def keys(self) -> Iterator[int]:
        ids = self._ids
        yield from (ids[k] for k, code in enumerate(self._who) if code)
        if self._late:
            yield from self._late

    def __iter__(self) -> Iterator[int]:
        return self.keys()

    def __len__(self) -> int:
        return len(self._who) - self._who.count(0) + len(self._late or ())

    def __repr__(self) -> str:
        return f"SettledIds({dict(self)!r})"
