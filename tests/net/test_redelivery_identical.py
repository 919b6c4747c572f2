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


@dataclass
class _Link:
    deliveries: int
    link_credit: int


@dataclass
class _Delivery:
    link: _Link


@dataclass
class _OnLink:
    body: bytes
    delivery: _Delivery
    delivered_before: bool = True  # (RabbitMQ marks every delivery of a lost link so)
    settled: bool = False


def test_a_second_loss_before_anything_was_settled_keeps_counting_the_unwritten() -> None:
    # messages alike, as RabbitMQ gives them back: every delivery of a lost link comes
    # again marked first-acquirer false, the unwritten ones too. The new link was lost
    # before anything was settled on it: it was known only by its settlements, so the
    # second loss counted nothing unwritten and the third link's took the lookalikes
    # for redeliveries (recv took more than -c N)
    d = _in_doubt()
    first = _Link(deliveries=5, link_credit=2)
    d.settled([_OnLink(b"hello", _Delivery(first)) for _ in range(3)])  # type: ignore[misc]
    d.lost()  # 2 received and not written, 2 of credit left: 4 may come unwritten
    second = _Link(deliveries=2, link_credit=3)
    assert not any(d.redelivered(_OnLink(b"hello", _Delivery(second)))  # type: ignore[arg-type]
                   for _ in range(2))
    d.lost()  # nothing settled on the second link
    third = _Link(deliveries=0, link_credit=10)
    came = [d.redelivered(_OnLink(b"hello", _Delivery(third)))  # type: ignore[arg-type]
            for _ in range(5)]
    assert came == [False] * 5


def test_the_unwritten_are_given_up_with_the_identities() -> None:
    # once as many deliveries as were in doubt came, nothing of the lost link will come
    # again: a later loss counted the unwritten of the first all the same
    d = _in_doubt()
    first = _Link(deliveries=5, link_credit=2)
    d.settled([_OnLink(b"hello", _Delivery(first)) for _ in range(3)])  # type: ignore[misc]
    d.lost()
    second = _Link(deliveries=20, link_credit=0)
    seen = [_OnLink(b"other", _Delivery(second), delivered_before=False) for _ in range(20)]
    d.settled(seen)  # type: ignore[arg-type]
    for inc in seen:
        d.redelivered(inc)  # type: ignore[arg-type]
    assert len(d) == 0 and d.unwritten == 0
