"""The observer on a real capture: python-qpid-proton ↔ RabbitMQ, SASL PLAIN, 20 messages
sent and accepted, 20 received and accepted."""

from __future__ import annotations

from collections import Counter
from typing import Any

from amqpcli.capture import C2S, Data, read_capture
from amqpcli.engine import (
    DeliverySettled,
    Observer,
    SaslOutcome,
    TerminusMismatch,
    Violation,
)
from tests.paths import CAPTURES_DIR, require


def _observe() -> tuple[dict[int, Observer], list[Any]]:
    path = require(CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng")
    observers: dict[int, Observer] = {}
    events: list[Any] = []
    for ev in read_capture([str(path)]):
        if isinstance(ev, Data):
            o = observers.setdefault(ev.flow.index, Observer())
            side = "client" if ev.direction == C2S else "server"
            events += o.feed_bytes(side, bytes(ev.data), ev.time_ns / 1e9)
    return observers, events


def test_rabbitmq_capture() -> None:
    observers, events = _observe()
    assert not [e for e in events if isinstance(e, Violation)]
    sasl = [e for e in events if isinstance(e, SaslOutcome)]
    assert sasl and all(e.ok and e.mechanism == "PLAIN" for e in sasl)
    settled = [e.delivery for e in events if isinstance(e, DeliverySettled)]
    by = Counter((d.sender, d.outcome, d.settled_by) for d in settled)
    # 20 sent by the client and accepted by the broker, 20 sent by the broker and
    # accepted by the client
    assert by == {("client", "accepted", "server"): 20, ("server", "accepted", "client"): 20}
    for d in settled:
        assert d.latency is not None and d.latency >= 0
        assert d.timeline[0].kind == "transfer" and d.timeline[-1].settled
        assert d.message().body is not None
    # RabbitMQ fills in fields the client left out; that is not a mismatch
    assert not [e for e in events if isinstance(e, TerminusMismatch)]
    for o in observers.values():
        assert o.connection.state == "closed"
