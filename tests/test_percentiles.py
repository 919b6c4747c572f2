"""`amqpcli.percentiles.percentile`: nearest rank over sorted values, the one rule behind
pcap-dump's latency percentiles and amqp request's round trips."""

from __future__ import annotations

import math

import pytest

from amqpcli.net.requesting import RequestSummary
from amqpcli.percentiles import percentile

TEN = [float(v) for v in range(1, 11)]


@pytest.mark.parametrize(("q", "expected"), [
    (0, 1.0), (5, 1.0), (10, 1.0), (11, 2.0), (50, 5.0), (90, 9.0), (91, 10.0),
    (99, 10.0), (100, 10.0),
])
def test_nearest_rank(q: float, expected: float) -> None:
    assert percentile(TEN, q) == expected


def test_a_measured_value_never_an_interpolated_one() -> None:
    assert percentile([1.0, 2.0], 50) == 1.0
    assert percentile([0.25], 99) == 0.25


def test_no_values_is_an_error() -> None:
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 10, 99, 100, 101, 1000])
def test_the_same_rank_as_request_computed_before_sharing_it(n: int) -> None:
    # amqp request's own formula, without the clamp to the last value (never needed for
    # q in 0..100): the shared function gives the same value for every q.
    values = [float(v) for v in range(n)]
    for q in [0, 0.1, 1, 10, 25, 33.3, 50, 66.7, 75, 90, 95, 99, 99.9, 100]:
        assert percentile(values, q) == values[max(0, math.ceil(q / 100 * n) - 1)]


def test_request_summary_sorts_its_round_trips_and_has_none_without_them() -> None:
    assert RequestSummary().percentile(50) is None
    s = RequestSummary(round_trips=[0.3, 0.1, 0.2, 0.4])
    assert s.percentile(50) == 0.2
    assert s.percentile(100) == 0.4
