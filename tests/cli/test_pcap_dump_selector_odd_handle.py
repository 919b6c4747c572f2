"""`pcap-dump --selector` on a transfer whose handle is no number (a damaged or hostile
frame: the field holds a list) judges it as any other, without an internal error."""

from __future__ import annotations

from pathlib import Path

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.message import Message
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp_in_process as run


def test_a_list_for_a_handle(tmp_path: Path) -> None:
    msg = Message(body="hello").encode()
    s = Script().open().sender_link()
    s.raw(0, encode_frame(c.Transfer(handle=[1], delivery_id=0, delivery_tag=b"t",
                                     more=True), 0, payload=msg[:3]))
    s.raw(0, encode_frame(c.Transfer(handle=[1], more=False), 0, payload=msg[3:]))
    s.close()
    cap = str(write(tmp_path / "odd.pcapng", s))
    code, out, err = run("pcap-dump", "--selector", "true", cap)
    assert "internal error" not in err and code in (0, 8), err
    assert "violation invalid-field" in out  # (the engine says what is wrong with them)
