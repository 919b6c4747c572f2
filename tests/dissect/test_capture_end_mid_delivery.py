"""A capture that stops in the middle of a multi-frame delivery: the capture stopped, not
the connection. The delivery is `unsettled` at the end with no `abandon` step in its
timeline (the transport never ended), and one its sender settled as it began (pre-settled)
is `settled`, with bytes missing. They used to end with an `abandon` step "transport
ended", and the pre-settled one was called unsettled while it had a settlement time."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.capture.tcp import C2S
from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import UInt
from tests.dissect.helpers import Script, dissect, write


def _first_of_two(settled: bool) -> Script:
    """A link, then the first of two transfers of one message; the capture stops there."""
    msg = Message(body="x" * 200).encode()
    return Script().open().sender_link().c(
        c.Transfer(handle=UInt(0), delivery_id=UInt(0), delivery_tag=b"t0", message_format=0,
                   settled=settled, more=True), payload=msg[:100])


@pytest.mark.parametrize(("settled", "outcome", "at_end"), [
    (False, "unsettled", True), (True, "settled", False)])
def test_the_capture_ends_the_delivery_not_the_transport(
        tmp_path: Path, settled: bool, outcome: str, at_end: bool) -> None:
    r = dissect(write(tmp_path / "cut.pcapng", _first_of_two(settled), fin=False))
    (d,) = r.deliveries
    assert (d.outcome, d.presettled, d.at_end, d.incomplete) == (outcome, settled, at_end, True)
    assert [e.kind for e in d.timeline] == ["transfer"]
    assert (d.settled_time is not None) == settled


def test_a_reset_still_abandons_it(tmp_path: Path) -> None:
    """The sender's stream ended: the delivery was given up, and says how."""
    r = dissect(write(tmp_path / "rst.pcapng", _first_of_two(False), rst=C2S))
    (d,) = r.deliveries
    assert (d.outcome, d.at_end, d.incomplete) == ("abandoned", False, True)
    assert [e.kind for e in d.timeline] == ["transfer", "abandon"]
