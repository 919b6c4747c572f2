"""The summary's list of violations: one order (`violation_order`: time to the
microsecond, connection number, frame, then what the line says), the first 50 of it,
whatever order the violations come in. The summary of tables lists them so too
(tests/pipeline): it used to order same-time violations by connection id (a hash), and
the summary of captures by when the dissector met them."""

from __future__ import annotations

import random

from amqpcli.dissect import Conn, Summary, ViolationRecord
from amqpcli.dissect.records import AMQP10
from amqpcli.dissect.stats import MAX_LISTED_VIOLATIONS, violation_order

T = 1_700_000_000.0


def _conn(n: int) -> Conn:
    return Conn(n, f"c{n}", f"10.0.0.1:{40000 + n}", "10.0.0.2:5672", AMQP10, T)


def _v(conn: Conn, t: float, frame: int, kind: str = "unknown-delivery",
       detail: str = "disposition for unknown delivery 5..5") -> ViolationRecord:
    return ViolationRecord(conn, AMQP10, kind, "server", detail, frame, frame * 2, t)


def _listed(records: list[ViolationRecord]) -> list[tuple[str, float, int, str]]:
    s = Summary()
    for r in records:
        s.add(r)
    return [(v.conn.label, v.time, v.frame_no, v.kind) for v in s.violations]


def test_same_time_violations_by_connection_then_frame_then_kind() -> None:
    c1, c2, c3 = _conn(1), _conn(2), _conn(3)
    records = [
        _v(c3, T + 1, 9),
        _v(c2, T + 1, 12, "transfer-beyond-credit", "no link credit"),
        _v(c2, T + 1, 12, "frame-too-large", "3303-byte frame > max-frame-size 512"),
        _v(c1, T + 1, 30),
        _v(c2, T + 0.5, 4),
        # the same microsecond: a later nanosecond does not come after a later connection
        _v(c1, T + 1 + 3e-7, 31),
    ]
    want = [("c2", T + 0.5, 4, "unknown-delivery"),
            ("c1", T + 1, 30, "unknown-delivery"),
            ("c1", T + 1 + 3e-7, 31, "unknown-delivery"),
            ("c2", T + 1, 12, "frame-too-large"),
            ("c2", T + 1, 12, "transfer-beyond-credit"),
            ("c3", T + 1, 9, "unknown-delivery")]
    for seed in range(10):
        random.Random(seed).shuffle(records)
        assert _listed(records) == want


def test_the_first_50_in_that_order_whatever_order_they_come_in() -> None:
    conns = [_conn(n) for n in range(1, 5)]
    records = [_v(conns[i % 4], T + (i // 7) * 0.001, i) for i in range(3 * MAX_LISTED_VIOLATIONS)]
    want = sorted(records, key=lambda r: violation_order(r, r.conn.index))
    expected = [(v.conn.label, v.time, v.frame_no, v.kind) for v in want[:MAX_LISTED_VIOLATIONS]]
    for order in (records, records[::-1], random.Random(1).sample(records, len(records))):
        s = Summary()
        for r in order:
            s.add(r)
        assert sum(s.by_violation.values()) == len(records)
        assert [(v.conn.label, v.time, v.frame_no, v.kind) for v in s.violations] == expected
