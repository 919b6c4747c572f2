"""A TCP gap across the boundary between two deliveries on one link: the first ends where
the capture lost its last transfers, the second begins where the capture found it, and
each says whether bytes of it are missing. Senders that repeat delivery-id and tag on
every transfer of a delivery (proton does) make the boundary visible after the gap."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.engine.session import starts_message
from tests.dissect.helpers import Script, dissect, write

FRAME = 1000  # payload bytes per transfer frame
WHOLE = len(Message(body=b"x" * 10_000).encode())  # the message bytes of each delivery


def _big(s: Script, did: int, *, repeat_ids: bool) -> list[int]:
    """Delivery `did` (10 kB in 11 transfers); `repeat_ids`: every transfer carries the
    delivery-id and tag, not only the first. The step indices of its transfers."""
    payload = Message(body=b"x" * 10_000).encode()
    chunks = [payload[i:i + FRAME] for i in range(0, len(payload), FRAME)]
    steps = []
    for k, chunk in enumerate(chunks):
        ids = k == 0 or repeat_ids
        steps.append(len(s.steps))
        s.c(c.Transfer(handle=0, delivery_id=did if ids else None,
                       delivery_tag=b"t%d" % did if ids else None,
                       message_format=0 if k == 0 else None,
                       more=k < len(chunks) - 1), payload=chunk)
    return steps


def _capture(tmp_path: Path, lost: list[int], *, repeat_ids: bool = True,
             n: int = 3) -> tuple[Path, list[list[int]]]:
    """`n` deliveries, then their dispositions; the transfers at the (delivery, transfer)
    positions coded as 100 * delivery + transfer in `lost` are left out whole."""
    s = Script().open().sender_link()
    steps = [_big(s, i, repeat_ids=repeat_ids) for i in range(n)]
    for i in range(n):
        s.dispose(i, c.Accepted())
    s.close()
    drop = [(steps[k // 100][k % 100], seg) for k in lost for seg in range(4)]
    return write(tmp_path / "gap.pcapng", s, mss=300, drop=drop), steps


def _seen(path: Path) -> list[tuple[int | None, bool, str, int]]:
    res = dissect(path)
    assert not res.violations
    assert "gap" in [n.kind for n in res.notices]
    return [(d.delivery_id, d.incomplete, d.outcome, d.frames) for d in res.deliveries]


def test_the_gap_takes_the_end_of_one_and_the_start_of_the_next(tmp_path: Path) -> None:
    path, _ = _capture(tmp_path, [107, 108, 109, 110, 200, 201])
    assert _seen(path) == [(0, False, "accepted", 11), (1, True, "accepted", 7),
                           (2, True, "accepted", 9)]
    res = dissect(path)
    d1, d2 = res.deliveries[1:]
    assert d1.size == 7 * FRAME and d2.size == WHOLE - 2 * FRAME
    # each says where its bytes went missing: after its 7th transfer, before its first
    assert [e.kind for e in d1.timeline].index("gap") == 7
    assert [e.kind for e in d2.timeline][:2] == ["gap", "transfer"]


def test_the_gap_takes_only_the_first_transfer(tmp_path: Path) -> None:
    path, _ = _capture(tmp_path, [100])
    assert _seen(path) == [(0, False, "accepted", 11), (1, True, "accepted", 10),
                           (2, False, "accepted", 11)]


def test_the_gap_takes_only_the_last_transfers(tmp_path: Path) -> None:
    """The next delivery's first transfer is there: it is whole."""
    path, _ = _capture(tmp_path, [109, 110])
    assert _seen(path) == [(0, False, "accepted", 11), (1, True, "accepted", 9),
                           (2, False, "accepted", 11)]


def test_the_next_first_transfer_ends_a_delivery_without_repeated_ids(
        tmp_path: Path) -> None:
    """Continuations without delivery-id: the next delivery's first transfer still
    carries one, so the boundary is found there (it was a mismatch that merged them)."""
    path, _ = _capture(tmp_path, [109, 110], repeat_ids=False)
    assert _seen(path) == [(0, False, "accepted", 11), (1, True, "accepted", 9),
                           (2, False, "accepted", 11)]
    assert dissect(path).deliveries[2].size == WHOLE


def test_the_gap_takes_the_end_of_the_last_delivery(tmp_path: Path) -> None:
    """Nothing follows on the link but the receiver's settlement: the delivery ends
    settled with what was seen, not in progress (as before boundaries were looked for;
    the settlement ends it)."""
    path, _ = _capture(tmp_path, [110], n=2)
    assert _seen(path) == [(0, False, "accepted", 11), (1, True, "accepted", 10)]
    res = dissect(path)
    assert res.deliveries[1].settled_by == "receiver"
    assert res.deliveries[1].latency is not None


@pytest.mark.parametrize(("payload", "starts"), [
    (Message(body=b"x").encode(), True),
    (Message(body="x", properties=c.Properties(message_id="m")).encode(), True),
    (b"\x00\x80" + bytes(7) + b"\x75\xa0\x01x", True),  # ulong descriptor, data
    (b"\x00\xa3\x11amqp:amqp-value:*" + b"\x41", True),  # symbol descriptor
    (b"", True),  # nothing to tell by
    (b"x" * 100, False),
    (b"\x00\x53\x10\x45", False),  # a described value, but not a section
    (b"\x00", False),
])
def test_what_a_message_begins_with(payload: bytes, starts: bool) -> None:
    assert starts_message(payload) is starts
