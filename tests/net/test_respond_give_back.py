"""`amqp respond`: requests whose reply failed are held, then given back as failed
delivery attempts (modified, delivery-failed), when the run ends or once `HELD` wait, so
that a request that always fails neither grows the responder's memory nor is kept from
the peer's redelivery limit; the lines saying why are kept up to `ERRORS_KEPT`."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from amqpcli.codec import composites as c
from amqpcli.net import responding
from amqpcli.net.responding import HELD, RespondPlan, _Responder
from tests.net.requestlinks import FakeRequestLink as _Link


def _request(n: int, settled: bool = False) -> Any:
    return SimpleNamespace(number=n, settled=settled,
                           delivery=SimpleNamespace(drop_payload=lambda: None))


def _responder() -> tuple[_Responder, _Link]:
    r = _Responder(None, RespondPlan("service"), None, lambda text: None)  # type: ignore[arg-type]
    link = _Link()
    r.requests = link  # type: ignore[assignment]
    return r, link


def test_held_requests_are_given_back_as_failed_once_held_fill() -> None:
    r, link = _responder()
    for n in range(1, HELD):
        r._not_answered(_request(n), "rejected: amqp:not-found")
    assert link.settled == [] and r.s.given_back == 0  # (held)
    r._not_answered(_request(HELD), "rejected: amqp:not-found")
    assert [n for n, _ in link.settled] == list(range(1, HELD + 1))
    assert all(isinstance(s, c.Modified) and s.delivery_failed and not s.undeliverable_here
               for _, s in link.settled)
    assert link.flows == []  # (mid-run: the link goes on taking requests)
    assert r.s.given_back == HELD and r.held == []
    assert r.s.errors[0] == "request 1: reply not sent (rejected: amqp:not-found): given back"


def test_the_rest_are_given_back_at_the_end_with_the_credit_taken_back() -> None:
    r, link = _responder()
    r._not_answered(_request(1), "no outcome within 30s")
    r._not_answered(_request(2, settled=True), "no outcome within 30s")
    r._give_back()
    assert [n for n, _ in link.settled] == [1] and link.flows == [0]
    assert (r.s.given_back, r.s.lost, r.s.failed) == (1, 1, 2)


def test_held_requests_are_not_counted_when_the_connection_is_lost() -> None:
    r, link = _responder()
    link.received = 1  # type: ignore[attr-defined]
    r._not_answered(_request(1), "no outcome within 30s")
    r._lost()
    assert (r.s.given_back, r.s.failed, r.s.errors) == (0, 0, [])


def test_the_lines_saying_why_are_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(responding, "ERRORS_KEPT", 3)
    r, _ = _responder()
    for n in range(1, 6):
        r._not_answered(_request(n, settled=True), "no outcome within 30s")
    assert (len(r.s.errors), r.s.errors_more, r.s.lost) == (3, 2, 5)
    assert r.s.to_json()["errors-more"] == 2
    assert r.s.text().splitlines()[-2:] == [
        "request 3: reply not sent (no outcome within 30s): lost (it came pre-settled)",
        "… and 2 more"]
