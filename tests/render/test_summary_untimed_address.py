"""An address several links share, all of connections without times (a proton frame trace
written to tables): its line says the latency is unknown, as each link's does, not that
nothing was settled."""

from __future__ import annotations

from amqpcli.dissect import Summary
from amqpcli.dissect.stats import LinkSummary
from amqpcli.render.summary import summary_lines


def _address_line(timed: bool) -> str:
    s = Summary()
    s.addresses.append(LinkSummary("*", "2 links", "orders", "any", 3, {"accepted": 3}, None,
                                   [], 0, 0, {}, timed))
    lines = summary_lines(s)
    return lines[lines.index("addresses shared by several links:") + 1]


def test_untimed_links_latency_unknown() -> None:
    assert _address_line(False) == "  'orders': 2 links, 3 deliveries; accepted 3; latency unknown"


def test_timed_links_with_nothing_settled_say_so() -> None:
    assert _address_line(True).endswith("; no settled latency")
