"""The pieces under `send --timestamp`, recv's latency and `--report-every`: where the
stamp sits in an encoded message, what counts as a stamp, the figures, the report timer."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest

from amqpcli.codec.message import Message
from amqpcli.codec.types import Long, Timestamp, UInt, ULong
from amqpcli.net.latency import Latencies, figures_text, stamp_of
from amqpcli.net.outgoing import (
    TIMESTAMP_KEY,
    MessageTemplate,
    OutgoingMessage,
    PerMessage,
    stamp_bytes,
    stamped,
)
from amqpcli.net.reporting import Interval, Reports


@pytest.mark.parametrize("props", [
    {},
    {"k": "v"},
    {"sn": PerMessage("{n}", lambda s: ULong(int(s)))},
])
def test_the_stamp_is_filled_in_where_the_template_left_it(props: dict[str, Any]) -> None:
    t = MessageTemplate(properties={"subject": "s"}, application_properties=dict(props),
                        footer={}, timestamp=TIMESTAMP_KEY)
    for n in (1, 2):
        out = t.encode(n, b"body")
        # unstamped, the message decodes all the same (the stamp's place holds a long)
        assert Message.decode(out.payload).application_properties.value[TIMESTAMP_KEY] == -(1 << 63)
        for ns in (0, 1, 1_795_000_000_123_456_789, -5):
            m = Message.decode(stamped(out, stamp_bytes(ns)))
            values = m.application_properties.value
            assert list(values)[-1] == TIMESTAMP_KEY  # last: see MessageTemplate.timestamp
            assert values[TIMESTAMP_KEY] == ns and type(values[TIMESTAMP_KEY]) is Long
            assert m.properties.subject == "s" and m.body[0].value == b"body"
            assert stamp_of(stamped(out, stamp_bytes(ns))) == ns


def test_without_a_stamp_the_bytes_go_as_they_are() -> None:
    out = MessageTemplate().encode(1, b"x")
    assert out.stamp_at == -1 and stamped(out, stamp_bytes(1)) is out.payload
    assert stamp_of(out.payload) is None
    assert stamp_of(OutgoingMessage(1, b"\x02ts not a message").payload) is None


def test_the_stamp_property_may_not_be_given_twice() -> None:
    with pytest.raises(ValueError):
        MessageTemplate(application_properties={TIMESTAMP_KEY: Long(1)}, timestamp=TIMESTAMP_KEY)


@pytest.mark.parametrize(("value", "stamp"), [
    (Long(7), 7), (ULong(8), 8), (UInt(9), 9),
    ("12", None), (Timestamp(1_700_000_000_000), None), (True, None), (1.5, None),
])
def test_what_counts_as_a_stamp(value: Any, stamp: int | None) -> None:
    payload = Message(application_properties={"ts": value}, body=b"x").encode()
    assert stamp_of(payload) == stamp


def test_figures_nearest_rank_negatives_kept() -> None:
    lat = Latencies()
    assert lat.figures() is None
    for ms in (-2.0, 1.0, 3.0, 10.0, 4.0):
        lat.add_ns(int(ms * 1e6) + 10**18, 10**18)
    assert lat.figures() == {"count": 5, "min": -2.0, "p50": 3.0, "p99": 10.0, "max": 10.0}
    assert lat.figures(3) == {"count": 2, "min": 4.0, "p50": 4.0, "p99": 10.0, "max": 10.0}
    assert lat.figures(5) is None
    assert lat.values.typecode == "d"  # compact: 8 bytes a message
    assert figures_text(lat.figures() or {}) == (
        "latency min -2.000 p50 3.000 p99 10.000 max 10.000 ms")


def test_interval() -> None:
    iv = Interval(100.0)
    assert iv.step(50, 100.5) == (50, 100.0)
    assert iv.step(50, 101.0) == (0, 0.0)


def test_reports_come_from_a_timer_while_the_loop_waits() -> None:
    out = io.StringIO()
    calls: list[float] = []

    def make(now: float) -> tuple[dict[str, Any], str]:
        calls.append(now)
        return {"n": len(calls)}, f"report {len(calls)}"

    async def run() -> None:
        r = Reports(0.05, make, as_json=True, out=out)
        r.start()
        await asyncio.sleep(0.3)  # nothing else happens meanwhile
        r.stop()
        n = len(calls)
        await asyncio.sleep(0.15)
        assert len(calls) == n  # stopped: no more

    asyncio.run(run())
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2
    assert [json.loads(line) for line in lines] == [
        {"report": {"n": i}} for i in range(1, len(lines) + 1)]


def test_a_failing_report_stops_the_reports_not_the_run() -> None:
    out = io.StringIO()

    def make(now: float) -> tuple[dict[str, Any], str]:
        raise RuntimeError("boom")

    async def run() -> None:
        r = Reports(0.02, make, as_json=False, out=out)
        r.start()
        await asyncio.sleep(0.15)
        r.stop()

    asyncio.run(run())
    assert out.getvalue() == "amqp: warning: no more reports: RuntimeError: boom\n"
