"""An aborted delivery has no settlement latency, and stays out of its link's
percentiles, even when its abort transfer says settled (proton's does): it was given up,
with no outcome; who gave it up is still said."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from tests.dissect.helpers import Script, dissect, write


def _aborted_settled() -> Script:
    """Deliveries 0 and 2 accepted 1 ms after they were sent; delivery 1 aborted half a
    second after its first frame by a transfer that says settled, as proton sends it."""
    s = Script().open().sender_link()
    s.transfer(0).dispose(0, c.Accepted())
    msg = Message(body="x" * 100).encode()
    s.c(c.Transfer(handle=0, delivery_id=1, delivery_tag=b"t1", message_format=0, more=True),
        payload=msg[:50])
    s.at(0.5)
    s.c(c.Transfer(handle=0, delivery_id=1, delivery_tag=b"t1", aborted=True, settled=True))
    s.transfer(2).dispose(2, c.Accepted())
    return s.close()


def test_an_aborted_delivery_has_no_latency(tmp_path: Path) -> None:
    res = dissect(write(tmp_path / "abort.pcapng", _aborted_settled()))
    d0, d1, d2 = res.deliveries
    assert (d1.outcome, d1.aborted, d1.settled_by) == ("aborted", True, "sender")
    assert d1.latency is None and d1.settled_time is None
    assert d0.latency == pytest.approx(0.001, abs=1e-4)
    [ls] = res.dissector.conns[0].links
    assert sorted(ls.latencies) == sorted([d0.latency, d2.latency])  # not in percentiles
