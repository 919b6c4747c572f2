"""The test broker's JMS selector subset and its message rewriting, without a network."""

from __future__ import annotations

import pytest
from proton import Message, symbol

from tests.peers import sections
from tests.peers.queues import Consumer, Queue, Registry
from tests.peers.selector import SelectorError, parse

MSG = Message(
    body="x",
    priority=7,
    durable=True,
    subject="greeting",
    id="m-1",
    correlation_id="c-9",
    reply_to="replies",
    properties={"colour": "red", "n": 5, "f": 1.5, "ok": True, "quote": "it's", "pct": "50%"},
)


@pytest.mark.parametrize(
    ("text", "selected"),
    [
        ("colour = 'red'", True),
        ("colour <> 'red'", False),
        ("n > 3 AND n < 10", True),
        ("n >= 6 OR colour = 'blue'", False),
        ("NOT n = 5", False),
        ("colour IN ('blue', 'red')", True),
        ("colour NOT IN ('blue', 'red')", False),
        ("colour LIKE 'r_d'", True),
        ("colour LIKE 'b%'", False),
        ("colour NOT LIKE 'b%'", True),
        ("pct LIKE '50!%' ESCAPE '!'", True),
        ("quote = 'it''s'", True),
        ("n BETWEEN 5 AND 6", True),
        ("n NOT BETWEEN 5 AND 6", False),
        ("missing IS NULL", True),
        ("colour IS NOT NULL", True),
        ("ok = TRUE", True),
        ("f > 1", True),
        ("n * 2 - 1 = 9", True),
        ("n / 2 = 2", True),  # integer division, as in Java
        ("-n = -5", True),
        ("(colour = 'blue' OR n = 5) AND ok", True),
        ("JMSPriority = 7", True),
        ("JMSDeliveryMode = 'PERSISTENT'", True),
        ("JMSType = 'greeting'", True),
        ("JMSMessageID = 'm-1'", True),
        ("JMSCorrelationID = 'c-9'", True),
        ("header.priority > 5 AND header.durable", True),
        ("properties.reply_to = 'replies'", True),
        ("properties.subject LIKE 'greet%'", True),
        ("and_or = 1", False),  # identifiers may start with keywords
    ],
)
def test_selector_matches(text: str, selected: bool) -> None:
    assert parse(text).matches(MSG) is selected


@pytest.mark.parametrize(
    "text",
    [
        # NULL is unknown: neither a comparison nor its negation selects
        "missing = 1",
        "NOT missing = 1",
        "missing <> 1",
        # unlike types compare as unknown, strings only compare for equality
        "colour = 5",
        "NOT colour = 5",
        "colour > 'a'",
        "n LIKE '5'",
        "missing IN ('a')",
    ],
)
def test_selector_unknown_never_selects(text: str) -> None:
    assert parse(text).matches(MSG) is False


def test_selector_three_valued_or_and() -> None:
    assert parse("missing = 1 OR n = 5").matches(MSG)  # unknown OR true = true
    assert not parse("missing = 1 AND n = 5").matches(MSG)  # unknown AND true = unknown
    assert parse("NOT (missing = 1 AND n = 6)").matches(MSG)  # unknown AND false = false


@pytest.mark.parametrize(
    "text",
    [
        "",
        "colour ===",
        "colour = 'open",
        "colour LIKE",
        "colour LIKE 'a' ESCAPE 'ab'",
        "a IN ()",
        "a IN (b)",
        "fn(1)",
        "a = 1 b = 2",
        "header.nonsense = 1",
        "a NOT = 1",
        "a # 1",
    ],
)
def test_selector_syntax_errors(text: str) -> None:
    with pytest.raises(SelectorError):
        parse(text)


def test_rewrite_keeps_bare_message_bytes() -> None:
    msg = Message(body=b"\x01\x02", durable=True, priority=3, annotations={"x-opt-a": 1})
    msg.properties = {"k": "v"}
    raw = bytes(msg.encode())
    out = sections.rewrite(raw, delivery_count=2, first_acquirer=False, annotations={"x-opt-b": 2})
    assert out != raw
    assert sections.bare(out) == sections.bare(raw)
    again = sections.decode(out)
    assert again.delivery_count == 2
    assert again.first_acquirer is False
    assert again.durable and again.priority == 3
    assert again.annotations == {symbol("x-opt-a"): 1, symbol("x-opt-b"): 2}


def test_rewrite_adds_header_when_missing() -> None:
    raw = bytes(Message(body="no header").encode())
    out = sections.rewrite(raw, delivery_count=1)
    assert sections.split(out)[0].code == sections.HEADER
    assert sections.decode(out).delivery_count == 1
    assert sections.rewrite(raw) == raw  # nothing to change: the same bytes


def test_split_refuses_garbage() -> None:
    with pytest.raises(ValueError, match="offset 0"):
        sections.split(b"\x00\x53")


def test_queue_move_copy_and_redelivery() -> None:
    q = Queue("q")
    for body in ("a", "b"):
        q.put(bytes(Message(body=body).encode()))
    mover, other, browser = Consumer(1), Consumer(2), Consumer(3, browse=True)
    first = q.next_for(mover)
    assert first is not None and first.message.body == "a"
    q.take(first, mover)
    second = q.next_for(other)
    assert second is not None and second.message.body == "b"  # "a" is acquired
    seen = []
    while (e := q.next_for(browser)) is not None:
        q.take(e, browser)
        seen.append(e.message.body)
    assert seen == ["a", "b"]  # browsing sees acquired messages too and takes nothing
    q.release(first, failed=True, undeliverable_for=mover.id)
    assert q.next_for(mover) is second  # undeliverable-here: never "a" again for mover
    assert q.next_for(other) is first
    assert sections.decode(first.outgoing()).delivery_count == 1


def test_registry_topics_and_durable_subscriptions() -> None:
    reg = Registry()
    assert reg.route("/topic/t") == []  # nobody subscribes: dropped
    durable = reg.subscribe("/topic/t", ("client", "sub"))
    temp = reg.subscribe("/topic/t")
    assert set(reg.route("/topic/t")) == {durable, temp}
    assert reg.subscribe("/topic/t", ("client", "sub")) is durable
    reg.delete(temp)
    assert reg.route("/topic/t") == [durable]
    assert reg.route("plain") == [reg.queues["plain"]]
