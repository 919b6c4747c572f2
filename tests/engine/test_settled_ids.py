"""The session's memory of settled delivery-ids (`SettledIds`): what it must remember, that
it forgets nothing else, and that its size does not grow with the number of settlements."""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from amqpcli.engine.settled import WINDOW, SettledIds

MOD = 1 << 32


def _far(x: int, y: int) -> bool:
    gap = (x - y) % MOD
    return min(gap, MOD - gap) >= WINDOW


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
    # an id at least WINDOW away from it was settled after it.
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
        assert any(_far(later, did) for later, _ in adds[last_at + 1:]), did
