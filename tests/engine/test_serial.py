from hypothesis import given
from hypothesis import strategies as st

from amqpcli.engine import serial

u32 = st.integers(min_value=0, max_value=2**32 - 1)


def test_add_wraps() -> None:
    assert serial.add(2**32 - 1, 1) == 0
    assert serial.add(0, -1) == 2**32 - 1


def test_lt_across_the_wrap() -> None:
    assert serial.lt(2**32 - 2, 1)
    assert not serial.lt(1, 2**32 - 2)
    assert serial.lt(5, 6) and not serial.lt(6, 5) and not serial.lt(5, 5)


def test_diff_and_span() -> None:
    assert serial.diff(2**32 - 1, 2) == 3
    assert serial.diff(2, 2**32 - 1) == -3
    assert serial.span(2**32 - 2, 1) == 4
    assert serial.in_range(0, 2**32 - 2, 1)
    assert not serial.in_range(2, 2**32 - 2, 1)


@given(u32, st.integers(min_value=1, max_value=2**31 - 1))
def test_add_then_lt(a: int, n: int) -> None:
    b = serial.add(a, n)
    assert serial.lt(a, b)
    assert not serial.lt(b, a)
    assert serial.diff(a, b) == n
