"""`amqp proxy` prints the protocol violations its engine observer finds, as `amqp
pcap-dump` of its recording does (text and JSON), numbered by the proxy's frame numbers:
a client sending three transfers before any credit is three transfer-beyond-credit."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.message import Message
from tests.proxy.dying_client import read_to_end, read_until_flow, sender_opening
from tests.proxy.recorded import proxied_and_dumped


def _eager_sender(port: int) -> None:
    """Open, begin, attach a sending link and send 3 transfers at once, before any flow;
    then read until the peer's flow came, and close."""
    transfers = b"".join(
        encode_frame(c.Transfer(handle=0, delivery_id=i, delivery_tag=b"t%d" % i,
                                message_format=0, settled=True), 0,
                     Message(body=b"m%d" % i).encode()) for i in range(3))
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(sender_opening("eager") + transfers)
        read_until_flow(sock)
        sock.sendall(encode_frame(c.Close()))
        read_to_end(sock)


@pytest.mark.parametrize("as_json", [False, True])
def test_violations_are_printed_as_pcap_dump_prints_them(tmp_path: Path, as_json: bool) -> None:
    out, dump = proxied_and_dumped(tmp_path, _eager_sender, as_json, "--credit", "2")
    if as_json:
        ours = [json.loads(x) for x in out.splitlines() if '"violation"' in x]
        theirs = [json.loads(x) for x in dump.splitlines() if '"violation"' in x]
        assert len(ours) == 3
        for v in theirs:
            v.pop("packet")
        assert ours == theirs, ours
    else:
        ours = [x for x in out.splitlines() if "!! violation" in x]
        theirs = [re.sub(r", packet \d+", "", x) for x in dump.splitlines() if "!! violation" in x]
        assert len(ours) == 3 and "transfer-beyond-credit by client" in ours[0]
        assert ours == theirs, ours
