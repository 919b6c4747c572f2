"""A source that serves hand-made view rows, to test widgets without the engine; the
sources `amqp tui` builds, without a screen (`built`)."""

from __future__ import annotations

from typing import Any

import pytest

from amqpcli.tui.sources.base import Source
from amqpcli.tui.view import (
    ConnRow,
    DeliveryDetail,
    LinkDetail,
    LinkRow,
    SessionRow,
    Snapshot,
    TerminusRow,
    TimelineRow,
    UnsettledRow,
)


def rows(n_unsettled: int = 3) -> list[ConnRow]:
    links = [
        LinkRow("c1/s0/l0", "sender-link", "sender", "0/0", 10, n_unsettled, 90, 5.0),
        LinkRow("c1/s0/l1", "receiver-link", "receiver", "1/1", 4, 0, 0, 0.0, ["no credit"]),
    ]
    return [
        ConnRow(
            "c1",
            "127.0.0.1:40000 → 127.0.0.1:5672",
            [SessionRow("c1/s0", "session ch 0/0", links)],
        )
    ]


class FakeSource(Source):
    kind = "client"
    title = "fake"

    def __init__(self) -> None:
        super().__init__()
        self.n_unsettled = 3
        self.settled: list[tuple[str, str]] = []
        self.credit: list[tuple[str, int]] = []

    def snapshot(self, link: str | None, delivery: str | None, now: float,
                 conn: str | None = None) -> Snapshot:
        detail = None
        if link is not None:
            detail = LinkDetail(
                key=link,
                title=f"link {link}",
                source=[TerminusRow("address", "q1", "q1"), TerminusRow("durable", "2", "0")],
                target=[TerminusRow("address", "", "")],
                flow=[("credit", "90"), ("delivery-count", "10")],
                unsettled=[
                    UnsettledRow(f"{link}/d{i}", str(i), f"tag{i}", 0.5, "-", "accepted" if i == 0 else "-", False, i == 0)
                    for i in range(self.n_unsettled)
                ],
                unsettled_total=self.n_unsettled,
            )
        dd = None
        if delivery is not None:
            dd = DeliveryDetail(
                delivery,
                f"delivery {delivery}",
                [TimelineRow(1.0, 0.0, "client", "transfer", "id 0 tag tag0"),
                 TimelineRow(1.002, 0.002, "server", "disposition", "accepted settled")],
                None,
                b"\x00Sw\xa1\x05hello",
            )
        return Snapshot(rows(self.n_unsettled), detail, dd)

    def settle(self, delivery: str, outcome: str) -> None:
        self.settled.append((delivery, outcome))

    def grant_credit(self, link: str, n: int) -> None:
        self.credit.append((link, n))


@pytest.fixture
def fake_source() -> FakeSource:
    return FakeSource()


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The sources `amqp tui` builds, the screen not opened."""
    sources: list[Any] = []
    monkeypatch.setattr("amqpcli.tui.app.run", lambda source, **kw: sources.append(source))
    monkeypatch.delenv("AMQP_URL", raising=False)
    return sources
