"""Which ends of a connection a finished run passes over with a warning (`recv`): one that
comes once the run is complete (count met, drain or timeout over), unless something still
needed the peer. The end-to-end cases are in tests/cli/test_recv_end_of_link.py; these
cover the ones a peer cannot be made to produce on cue (an end during the closing steps)."""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.cli.options import build_config
from amqpcli.errors import Exit, UserError
from amqpcli.net.client import ConnectionLost
from amqpcli.net.receiving import RecvPlan, _Receiver


class _EndedLink:
    ended = True

    def __init__(self, unsent: int = 0) -> None:
        self.unsent = unsent
        self.flushed = 0

    def flush_settlements(self) -> None:
        self.flushed += 1


def _receiver(plan: RecvPlan, link: Any, **summary: Any) -> _Receiver:
    r = _Receiver(build_config("amqp://127.0.0.1/q"), plan, sink=None,  # type: ignore[arg-type]
                  on_warning=None, on_address=None)
    r.link = link
    for k, v in summary.items():
        setattr(r.s, k, v)
    return r


CLOSED = UserError("the peer closed the connection: amqp:connection:forced", Exit.REFUSED)


@pytest.mark.parametrize("summary", [
    {"received": 5},  # --count 5 met (plan below)
    {"received": 2, "drained": True},
    {"received": 0, "timed_out": True},
])
def test_a_complete_run_says_the_end_and_does_not_fail(summary: dict[str, Any]) -> None:
    link = _EndedLink(unsent=2)
    plan = RecvPlan("q", count=5 if summary["received"] == 5 else None)
    r = _receiver(plan, link, **summary)
    assert r._ended_when_complete(ConnectionLost(CLOSED))
    assert link.flushed == 1
    assert r.s.warnings == [
        f"after the last message: {CLOSED}",
        ("2 message(s) written but not settled (the end came first): the peer delivers "
         "them again"),
    ]


@pytest.mark.parametrize(("plan", "summary"), [
    (RecvPlan("q", count=5), {"received": 4}),  # not complete
    (RecvPlan("q"), {"received": 9}),  # no count: only the end ended it
    (RecvPlan("q", count=1, settle_second=True), {"received": 1}),  # outcomes not final
    (RecvPlan("q", count=1, copy=True, check_copy=True), {"received": 1}),  # check undone
])
def test_an_end_that_cut_the_run_short_is_its_failure(plan: RecvPlan,
                                                      summary: dict[str, Any]) -> None:
    r = _receiver(plan, _EndedLink(), **summary)
    assert not r._ended_when_complete(CLOSED)
    assert r.s.warnings == []


def test_an_error_of_a_link_still_up_is_not_an_end() -> None:
    link = _EndedLink()
    link.ended = False  # type: ignore[misc]
    r = _receiver(RecvPlan("q", count=1), link, received=1)
    assert not r._ended_when_complete(UserError("no detach from the peer", Exit.TIMEOUT))
