"""The session's memory of settled delivery-ids (`SettledIds`): what it must remember, that
it forgets nothing else, and that its size does not grow with the number of settlements."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amqpcli.engine.settled import LATE, WINDOW, SettledIds

MOD = 1 << 32


def _far_newer(x: int, y: int) -> bool:
    """x is at least WINDOW after y (serial order)."""
    return WINDOW <= (x - y) % MOD < MOD // 2


def test_sequential_ids_keep_the_last_window() -> None:
    s = SettledIds(("a", "b"))
    for did in range(100_000):
        s.add(did, "a" if did % 3 else "b")
    assert len(s) == WINDOW
    assert all(did in s for did in range(100_000 - WINDOW, 100_000))
    assert 100_000 - WINDOW - 1 not in s and 0 not in s
    assert s[99_999] == "b" and s[99_998] == "a"  # (99,999 is a multiple of 3)
    assert sorted(s) == list(range(100_000 - WINDOW, 100_000))


def test_across_the_serial_wrap() -> None:
    s = SettledIds(("a", "b"))
    ids = [(MOD - 2000 + k) % MOD for k in range(4000)]
    for did in ids:
        s.add(did, "b")
    assert all(did in s and s[did] == "b" for did in ids)


def test_out_of_order_within_the_window_is_all_kept() -> None:
    s = SettledIds(("a", "b"))
    ids = list(range(10_000, 10_000 + WINDOW))
    ids = ids[1::2] + ids[::2][::-1]  # odd ones up, even ones down
    for did in ids:
        s.add(did, None)
    assert all(did in s for did in ids)
    assert s[10_000] is None
    assert dict(s) == {did: None for did in ids}


def test_a_late_settlement_does_not_push_out_a_newer_id() -> None:
    # A message held while 4,199 later ones were settled, then settled itself: the id
    # settled just before it (same slot, 4,096 apart) is still known, and so is it.
    s = SettledIds(("a", "b"))
    for did in range(1, 4200):
        s.add(did, "b")
    s.add(0, "b")
    assert 4096 in s and s[4096] == "b" and 0 in s and s[0] == "b"
    assert s.any_of(0, 1) and len(s) == WINDOW + 1
    for did in range(10_000, 10_000 + LATE + 1):  # newer ones take every slot; late ones
        s.add(did + WINDOW, "a")  # (a newer id in the slot first)
        s.add(did, "a")  # settled late: put aside, the oldest of those forgotten
    assert 10_000 not in s and 10_001 in s and 10_000 + WINDOW in s


def test_lookups_do_not_walk_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    s = SettledIds(("a", "b"))
    for did in range(5000):
        s.add(did, "a")

    def walked(self: SettledIds) -> None:
        raise AssertionError("a lookup walked every slot")

    monkeypatch.setattr(SettledIds, "keys", walked)  # (`in` would iterate without __contains__)
    assert 4999 in s and 0 not in s and s[4000] == "a" and s.any_of(4990, 20)


def test_not_found() -> None:
    s = SettledIds(("a", "b"))
    s.add(5, "a")
    assert 6 not in s and 5 + 64 not in s and "5" not in s
    try:
        s[6]
    except KeyError:
        pass
    else:
        raise AssertionError("an id never settled was found")


def test_memory_does_not_follow_the_number_of_settlements() -> None:
    # A busy session's memory of settled ids: a few bytes per remembered id (4096 of them),
    # where a dictionary of the same ids took over 400 KB per direction.
    tracemalloc.start()
    try:
        s = SettledIds(("a", "b"))
        for did in range(200_000):
            s.add(did, "a")
        size, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(s) == WINDOW
    assert size < 40_000, size


_ids = st.one_of(
    st.integers(0, 300),  # dense, out of order
    st.integers(0, 20_000),  # spread wider than the window
    st.integers(MOD - 300, MOD - 1),  # just below the wrap
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_ids, st.sampled_from(["a", "b", None])), max_size=400))
def test_like_a_dictionary_that_forgets_only_far_ids(adds: list[tuple[int, str | None]]) -> None:
    # Every id held maps to the side of its latest settlement; an id is missing only if
    # an id at least WINDOW newer was settled after it, or LATE more after it.
    s = SettledIds(("a", "b"))
    for did, side in adds:
        s.add(did, side)
    latest: dict[int, str | None] = {}
    for did, side in adds:
        latest[did] = side
    held = dict(s)
    assert set(held) <= set(latest)
    for did, side in latest.items():
        if did in held:
            assert held[did] == side and s[did] == side
            continue
        last_at = max(k for k, (d, _) in enumerate(adds) if d == did)
        after = adds[last_at + 1:]
        assert any(_far_newer(later, did) for later, _ in after) or len(after) >= LATE, did
