"""`recv -c N --reconnect`: messages alike after a lost connection are new ones unless their
header says they were delivered before (amqpcli/net/redelivery.py). Before, the identities
a drop left in doubt took any later message with the same bare message for a redelivery
(`send -c 1000 hello`: all alike), and recv took up to two windows more than -c N."""

from __future__ import annotations

from dataclasses import dataclass

from amqpcli.net.redelivery import InDoubtSettlements


@dataclass
class _Inc:
    body: bytes
    delivered_before: bool = False  # what its header says
    settled: bool = False


def _in_doubt() -> InDoubtSettlements:
    return InDoubtSettlements(lambda inc: hash(inc.body),  # type: ignore[attr-defined]
                              lambda inc: inc.delivered_before)  # type: ignore[attr-defined]


def test_identical_messages_without_a_header_after_a_drop_are_new() -> None:
    d = _in_doubt()
    d.settled([_Inc(b"hello")] * 5)  # type: ignore[list-item]
    d.lost()
    assert [d.redelivered(_Inc(b"hello")) for _ in range(5)] == [False] * 5  # type: ignore[arg-type]


def test_one_marked_as_delivered_before_is_a_redelivery_once() -> None:
    d = _in_doubt()
    d.settled([_Inc(b"hello")])  # type: ignore[list-item]
    d.lost()
    again = _Inc(b"hello", delivered_before=True)
    assert d.redelivered(again)  # type: ignore[arg-type]
    assert not d.redelivered(again)  # type: ignore[arg-type]


def test_what_did_not_come_first_is_given_up() -> None:
    d = _in_doubt()
    d.settled([_Inc(b"a"), _Inc(b"b")])  # type: ignore[list-item]
    d.lost()
    assert len(d) == 2
    # as many deliveries as were in doubt: none of them came again, none will
    d.redelivered(_Inc(b"c"))  # type: ignore[arg-type]
    d.redelivered(_Inc(b"d"))  # type: ignore[arg-type]
    assert len(d) == 0
    assert not d.redelivered(_Inc(b"a", delivered_before=True))  # type: ignore[arg-type]
