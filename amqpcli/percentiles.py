"""Percentiles as every summary of the project reports them: nearest rank, a value that was
measured (never one interpolated between two). Shared by `pcap-dump`'s latencies
(`amqpcli.dissect.stats`) and `amqp request`'s round trips (`amqpcli.net.requesting`);
it imports nothing of the project, so any layer may use it."""

from __future__ import annotations

import math

__all__ = ["percentile"]


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values (q in 0..100): the smallest value
    with at least q% of them at or below it; the first for q = 0."""
    if not sorted_values:
        raise ValueError("no values")
    k = max(0, min(len(sorted_values) - 1, math.ceil(q / 100 * len(sorted_values)) - 1))
    return sorted_values[k]
