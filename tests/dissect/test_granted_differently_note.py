"""pcap-dump's note for a link whose termini were granted otherwise draws each value as
the frame lines do and as the client's warning does (`asked second, granted first`):
it showed the wire types (`asked ubyte:1, granted ubyte:0`) and a note repeating the field
(`(rcv-settle-mode changed)`)."""

from __future__ import annotations

from pathlib import Path

from amqpcli.codec import composites as c
from amqpcli.codec.types import UByte
from tests.dissect.helpers import RECEIVER, SENDER, Script, dissect, write


def test_values_are_drawn_by_their_names(tmp_path: Path) -> None:
    s = Script().open()
    s.c(c.Attach(name="to-q", handle=0, role=SENDER, rcv_settle_mode=UByte(1),
                 source=c.Source(address="me"), target=c.Target(address="q", durable=2),
                 initial_delivery_count=0))
    s.s(c.Attach(name="to-q", handle=0, role=RECEIVER, rcv_settle_mode=UByte(0),
                 source=c.Source(address="me"), target=c.Target(address="elsewhere",
                                                                 durable=0)))
    (note,) = dissect(write(tmp_path / "granted.pcapng", s.close())).notices
    assert note.text == (
        "link 'to-q': server granted differently: rcv-settle-mode: asked second, granted "
        "first; target.address: asked \"q\", granted \"elsewhere\"; target.durable: asked "
        "unsettled-state, granted none"), note.text
