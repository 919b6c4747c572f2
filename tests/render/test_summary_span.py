"""The summary's time span: the time of day within one day, the date too when the capture
runs over midnight (it read "from 22:13:20 to 01:20:15" for a set of several days)."""

from __future__ import annotations

from amqpcli.dissect import Summary
from amqpcli.render.summary import summary_lines

DAY = 1_700_006_400  # 2023-11-15T00:00:00Z


def _frames_line(first: float, last: float) -> str:
    s = Summary()
    s.first_time, s.last_time = first, last
    return next(ln for ln in summary_lines(s) if ln.startswith("frames:"))


def test_one_day_shows_the_time_of_day() -> None:
    line = _frames_line(DAY + 3600.5, DAY + 7200.25)
    assert "from 01:00:00.500000 to 02:00:00.250000 (3599.750 s)" in line


def test_over_midnight_shows_the_dates() -> None:
    line = _frames_line(DAY - 60, DAY + 95_310_000)
    assert "from 2023-11-14T23:59:00.000000Z to 2026-11-22T03:00:00.000000Z (95310060.000 s)" in line


def test_the_span_is_the_same_of_captures_and_of_their_tables() -> None:
    """A span of 1.5 ms: the captures' times (ns / 1e9) and the tables' (whole µs / 1e6)
    are floats one rounding apart, whose differences said 0.002 s and 0.001 s; the span
    is taken in whole microseconds, as the tables keep times."""
    first, last = 1_700_000_000_000_060_000, 1_700_000_000_001_560_000  # (ns)
    of_captures = _frames_line(first / 1e9, last / 1e9)
    of_tables = _frames_line(first // 1000 / 1e6, last // 1000 / 1e6)
    assert of_captures == of_tables
    assert of_captures.endswith("from 22:13:20.000060 to 22:13:20.001560 (0.002 s)")
