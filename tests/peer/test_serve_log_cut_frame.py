"""`amqp serve` and a client that died while sending a message: its stream ended (FIN) or
its connection was reset (RST) inside a transfer frame whose start is sound. The log says
so as pcap-dump's notice does, and drops the delivery unfinished; no framing error, no
close sent to a client that is gone (was, with a FIN: `client broke the protocol
(framing-error) ... found end of input after N bytes` and `closing (...)`; with a reset:
only `disconnected`, the unfinished delivery unsaid)."""

from __future__ import annotations

import socket
import struct
from collections.abc import Callable
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from tests.peer.rawclient import RawClient

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]
ENDED = {"rst": "the connection was reset (RST)", "fin": "the stream ended (FIN)"}


def _die_mid_frame(client: RawClient, how: str) -> tuple[int, int]:
    """Send a whole first transfer (more to come) of delivery 0 and half of its second,
    then end the stream there. Returns (the second frame's bytes sent, its size)."""
    first = encode_frame(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", more=True),
                         0, b"\x00Sw\xa1\x05hello")
    second = encode_frame(c.Transfer(handle=0, more=False), 0, b"x" * 20000)
    half = len(second) // 2
    sock = client.sock
    sock.sendall(first + second[:half])
    if how == "rst":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    else:
        sock.shutdown(socket.SHUT_WR)
        try:
            while sock.recv(65536):  # (what serve still sends is read: no reset on close)
                pass
        except ConnectionResetError:
            pass
    sock.close()
    return half, len(second)


@pytest.mark.parametrize("how", ["fin", "rst"])
def test_a_client_dying_mid_frame_is_logged_as_such(serve: Serve, how: str) -> None:
    s = serve()
    client = RawClient(s.port, max_frame_size=65536)
    client.write(c.Attach(name="in", handle=0, role=False, source=c.Source(),
                          target=c.Target(address="orders"), initial_delivery_count=0))
    client.until(lambda: any(isinstance(b, c.Flow) and b.link_credit for b in client.got))
    sent, size = _die_mid_frame(client, how)
    s.wait_log(r"c1 disconnected")
    log = s.log
    lines = [x.removeprefix("amqp serve: ") for x in log.splitlines()]
    # frames so far: open, begin, attach from the client; open, begin, attach, flow from
    # serve; the whole transfer: the cut one is the 9th
    cut = f"c1 {ENDED[how]} inside frame 9 from the client (transfer, {sent} of {size} bytes)"
    dropped = "c1 'in': delivery 0 dropped unfinished (10 bytes came: transport ended)"
    at = lines.index(cut)
    assert lines[at + 1:at + 3] == [dropped, lines[-1]], log
    assert lines[-1].startswith("c1 disconnected"), log
    assert "framing" not in log and "broke the protocol" not in log, log
    assert "closing" not in log, log


def test_bytes_that_cannot_start_a_frame_stay_a_framing_error(serve: Serve) -> None:
    s = serve()
    client = RawClient(s.port, max_frame_size=65536)
    client.until(lambda: any(isinstance(b, c.Begin) for b in client.got))
    client.sock.sendall(b"\x00\x00\x00\x04\x02")  # a size under 8: no frame starts so
    client.sock.shutdown(socket.SHUT_WR)
    line = s.wait_log(r"framing-error")
    assert line.endswith("client broke the protocol (framing-error): at offset 68: expected "
                         "an 8-byte frame header, found end of input after 5 bytes"), s.log
    s.wait_log(r"c1 disconnected")
    assert "inside frame" not in s.log, s.log
    client.sock.close()
