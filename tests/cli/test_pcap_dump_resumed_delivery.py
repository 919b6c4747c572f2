"""A delivery resumed on a link's new attachment (Part 2 §2.6.14), in the frame view as in
the model of the connection: its payload starts again only when the receiver's re-attach
held no state of it; with a state, the resumed transfer carries the rest, and the frame
line of its last frame summarises the message joined from both attachments (the frame
view started again on every `resume=true`, and summarised the rest alone), and JSON does
not judge the rest alone as a message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import Frame
from amqpcli.codec.message import Message
from amqpcli.codec.types import UInt, ULong
from amqpcli.render.frameline import frame_line
from amqpcli.render.items import TransferAssembler
from tests.dissect.helpers import Script, dissect, write
from tests.net.clirun import amqp, json_lines

BODY = b"a message resumed on a new attachment"
WHOLE = Message(body=BODY).encode()
CUT = 20  # the bytes of it the first attachment carried


def _attach(role: bool, handle: int, unsettled: Any) -> c.Attach:
    return c.Attach(name="L", handle=handle, role=role, snd_settle_mode=0, rcv_settle_mode=0,
                    source=c.Source(address="client"), target=c.Target(address="q1"),
                    unsettled=unsettled, initial_delivery_count=None if role else 0)


def _resumed(held: Any, handle: int) -> Script:
    """The client's link L carries CUT bytes of a delivery, is detached (not closed) and
    attached again (under `handle`), the server's attach holding `held` for the tag; the
    client resumes the delivery with what the server does not have."""
    s = Script().open()
    s.c(_attach(False, 0, None)).s(_attach(True, 0, None))
    s.s(c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=0,
               outgoing_window=1000, handle=0, delivery_count=0, link_credit=10))
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0, more=True),
        payload=WHOLE[:CUT])
    s.c(c.Detach(handle=0, closed=False)).s(c.Detach(handle=0, closed=False))
    s.c(_attach(False, handle, {b"t0": None})).s(_attach(True, handle, {b"t0": held}))
    s.s(c.Flow(next_incoming_id=1, incoming_window=1000, next_outgoing_id=0,
               outgoing_window=1000, handle=handle, delivery_count=1, link_credit=10))
    rest = WHOLE if held is None else WHOLE[CUT:]
    s.c(c.Transfer(handle=handle, delivery_id=1, delivery_tag=b"t0", resume=True), payload=rest)
    return s


KEPT = c.Received(section_number=UInt(0), section_offset=ULong(CUT))


@pytest.mark.parametrize("handle", [0, 1], ids=["same-handle", "new-handle"])
@pytest.mark.parametrize("held", [KEPT, None], ids=["kept", "none"])
def test_the_frame_view_joins_as_the_model_does(tmp_path: Path, held: Any,
                                                handle: int) -> None:
    res = dissect(write(tmp_path / "r.pcapng", _resumed(held, handle)))
    [d] = res.deliveries
    assert (d.size, d.resumed) == (len(WHOLE), True)  # the model: kept, or sent again
    # the frame view: fed the frames in capture order, the message the last one ends
    joined = TransferAssembler()
    other = {"client": "server", "server": "client"}
    wholes = [joined.feed(f.item, (f.conn, f.side), (f.conn, other[f.side]))
              for f in res.frames if isinstance(f.item, Frame)]
    last = res.frames[-1].item
    assert (last.payload, len(wholes[-1].encode()) if wholes[-1] else None) == (
        (WHOLE[CUT:], len(WHOLE)) if held is not None else (WHOLE, None))
    assert f'data b"{BODY.decode()}"' in frame_line(last, message=wholes[-1])
    assert not joined.pending_any()


def test_pcap_dump_summarises_the_message_joined(tmp_path: Path) -> None:
    cap = write(tmp_path / "r.pcapng", _resumed(KEPT, 1))
    r = amqp("pcap-dump", str(cap))
    assert (r.returncode, r.stderr) == (0, "")
    last = r.stdout.splitlines()[-1]
    assert f'resume  data b"{BODY.decode()}" ({len(WHOLE)} bytes in all)' in last, last
    # JSON has each frame's payload: the rest is a piece, not an invalid message (it was,
    # under the new attachment's handle)
    r = amqp("pcap-dump", str(cap), "--json")
    assert (r.returncode, r.stderr) == (0, "")
    *_, last_json = json_lines(r.stdout)
    assert last_json["performative"]["transfer"]["resume"] is True
    assert "message-error" not in last_json
