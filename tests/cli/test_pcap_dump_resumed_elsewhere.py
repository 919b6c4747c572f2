"""The frame view's join of a delivery resumed on a link's new attachment (Part 2
§2.6.13) follows the link by its name and its ends' container-ids, as the model follows
it by name, not by the handle or connection it was under: the join went on only where
the earlier attachment's handle was free and on the same connection, and started again
(the rest alone: "not a valid message") when (a) another link had taken the old handle
after the detach, or (b) the link was attached again on a new connection."""

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
from tests.dissect.helpers import Script, dissect, write, write_connections
from tests.net.clirun import amqp, json_lines

BODY = b"a message resumed on a new attachment"
WHOLE = Message(body=BODY).encode()
CUT = 20  # the bytes of it the first attachment carried
KEPT = c.Received(section_number=UInt(0), section_offset=ULong(CUT))
OTHER = {"client": "server", "server": "client"}


def _attach(name: str, role: bool, handle: int, unsettled: Any = None) -> c.Attach:
    return c.Attach(name=name, handle=handle, role=role, snd_settle_mode=0,
                    rcv_settle_mode=0, source=c.Source(address="client"),
                    target=c.Target(address="q1"), unsettled=unsettled,
                    initial_delivery_count=None if role else 0)


def _credit(s: Script, handle: int, delivery_count: int = 0) -> Script:
    return s.s(c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=0,
                      outgoing_window=1000, handle=handle, delivery_count=delivery_count,
                      link_credit=10))


def _begun(s: Script, name: str, handle: int) -> Script:
    """Link `name` attached on `handle`, CUT bytes of a delivery sent."""
    s.c(_attach(name, False, handle)).s(_attach(name, True, handle))
    _credit(s, handle)
    return s.c(c.Transfer(handle=handle, delivery_id=0, delivery_tag=b"t0", message_format=0,
                          more=True), payload=WHOLE[:CUT])


def _resumed(s: Script, name: str, handle: int, did: int) -> Script:
    """Link `name` attached again on `handle`, the server holding what it had of t0: the
    client sends the rest."""
    s.c(_attach(name, False, handle, {b"t0": None})).s(_attach(name, True, handle, {b"t0": KEPT}))
    _credit(s, handle, 1)
    return s.c(c.Transfer(handle=handle, delivery_id=did, delivery_tag=b"t0", resume=True),
               payload=WHOLE[CUT:])


def _handle_taken() -> Script:
    """(a) L detached (not closed) on handle 0; M attached on handle 0, and sends a
    message; L attached again on handle 1."""
    s = _begun(Script().open(), "L", 0)
    s.c(c.Detach(handle=0, closed=False)).s(c.Detach(handle=0, closed=False))
    s.c(_attach("M", False, 0)).s(_attach("M", True, 0))
    _credit(s, 0)
    s.c(c.Transfer(handle=0, delivery_id=1, delivery_tag=b"m0", message_format=0),
        payload=Message(body=b"on M").encode())
    return _resumed(s, "L", 1, 2)


def _new_connection() -> list[Script]:
    """(b) L's connection ends with the delivery unfinished; the same containers connect
    again and attach L there, on another handle."""
    first = _begun(Script().open(), "L", 0)
    first.c(c.Close()).s(c.Close())
    return [first, _resumed(Script().open(), "L", 2, 0)]


def _joined(frames: list[Any]) -> list[Any]:
    """The frame view's joins, fed every frame in capture order."""
    joined = TransferAssembler()
    wholes = [joined.feed(f.item, (f.conn, f.side), (f.conn, OTHER[f.side]))
              for f in frames if isinstance(f.item, Frame)]
    assert not joined.pending_any()
    return wholes


CASES = pytest.mark.parametrize("case", ["handle-taken", "new-connection"])


def _capture(tmp_path: Path, case: str) -> Path:
    if case == "handle-taken":
        return write(tmp_path / "a.pcapng", _handle_taken())
    return Path(write_connections(tmp_path / "b.pcapng", _new_connection()))


@CASES
def test_the_frame_view_joins_the_rest_with_the_earlier_attachments_bytes(
        tmp_path: Path, case: str) -> None:
    res = dissect(_capture(tmp_path, case))
    wholes = _joined(res.frames)
    last = res.frames[-1].item
    assert last.body.resume and last.payload == WHOLE[CUT:]
    assert wholes[-1] is not None and wholes[-1].encode() == WHOLE
    assert f'data b"{BODY.decode()}"' in frame_line(last, message=wholes[-1])


def test_a_stream_without_opens_follows_the_link_on_its_own_stream_only() -> None:
    """Without the container-ids (the opens not seen), a link is known by its name on
    one stream only: a link of that name on another connection is not taken for it.
    With them, it is."""
    def frame(body: Any, payload: bytes = b"") -> Frame:
        return Frame(0, 0, 2, 0, 0, b"", body, payload)

    joined = TransferAssembler()
    first = c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0,
                       more=True)
    rest = c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", resume=True)
    joined.feed(frame(_attach("L", False, 0)), "c1>", "c1<")
    joined.feed(frame(first, WHOLE[:CUT]), "c1>", "c1<")
    joined.feed(frame(_attach("L", False, 0, {b"t0": None})), "c2>", "c2<")
    joined.feed(frame(_attach("L", True, 0, {b"t0": KEPT})), "c2<", "c2>")
    assert joined.feed(frame(rest, WHOLE[CUT:]), "c2>", "c2<") is None
    # with them, the same frames join
    joined = TransferAssembler()
    for where, peer in (("c1>", "c1<"), ("c2>", "c2<")):
        joined.feed(frame(c.Open(container_id="client-1")), where, peer)
        joined.feed(frame(c.Open(container_id="broker-1")), peer, where)
    joined.feed(frame(_attach("L", False, 0)), "c1>", "c1<")
    joined.feed(frame(first, WHOLE[:CUT]), "c1>", "c1<")
    joined.feed(frame(_attach("L", False, 0, {b"t0": None})), "c2>", "c2<")
    joined.feed(frame(_attach("L", True, 0, {b"t0": KEPT})), "c2<", "c2>")
    whole = joined.feed(frame(rest, WHOLE[CUT:]), "c2>", "c2<")
    assert whole is not None and whole.encode() == WHOLE


@CASES
def test_pcap_dump_summarises_the_message_joined(tmp_path: Path, case: str) -> None:
    cap = _capture(tmp_path, case)
    r = amqp("pcap-dump", str(cap))
    assert (r.returncode, r.stderr) == (0, "")
    (line,) = [x for x in r.stdout.splitlines() if "resume" in x and "transfer" in x]
    assert f'resume  data b"{BODY.decode()}" ({len(WHOLE)} bytes in all)' in line, line
    # JSON: the rest is a piece of a delivery, not a message judged alone
    r = amqp("pcap-dump", str(cap), "--json")
    assert (r.returncode, r.stderr) == (0, "")
    (rest,) = [x for x in json_lines(r.stdout)
               if x.get("performative", {}).get("transfer", {}).get("resume")]
    assert "message-error" not in rest


def test_an_attach_whose_name_is_not_a_string_names_no_link(tmp_path: Path) -> None:
    """A damaged attach (the name a list: the model's invalid-field) is no link for the
    joins to follow; its receiver's attach holding state was an internal error."""
    s = Script().open()
    s.c(c.Attach(name=[1, 2], handle=0, role=False, source=c.Source(address="a"),
                 target=c.Target(address="q"), initial_delivery_count=0))
    s.s(c.Attach(name=[1, 2], handle=0, role=True, source=c.Source(address="a"),
                 target=c.Target(address="q"), unsettled={b"t0": None}))
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0, more=True),
        payload=WHOLE[:CUT])
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0"), payload=WHOLE[CUT:])
    r = amqp("pcap-dump", str(write(tmp_path / "n.pcapng", s.close())))
    assert (r.returncode, r.stderr) == (0, "")
    assert f'data b"{BODY.decode()}" ({len(WHOLE)} bytes in all)' in r.stdout
