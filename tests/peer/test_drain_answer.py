"""A receiver's drain against `amqp serve`, from a scripted client on a raw socket: one
flow answers it (Part 2 §2.6.7: the sender sends what it has, advances delivery-count
until link-credit is zero and sends its flow state; §2.7.4: `drain` is the sender's
drain mode, `available` the messages awaiting credit). Serve answered with two: the
engine's (credit given back, no `available`), then the broker's (`available`)."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import AMQP_HEADER, Frame, FrameReader, encode_frame
from tests.net.clirun import amqp, queue_name
from tests.net.onepeer import HANG_GUARD

pytestmark = pytest.mark.integration

Serve = Any


def _converse(port: int, frames: list[Any], handles: tuple[int, ...]) -> list[Any]:
    """Connect without SASL and write the AMQP header and `frames` (bodies, channel 0) in
    one go; once serve has sent a flow on each of `handles`, close and read to its close.
    The bodies serve sent, in order: everything it sent in answer to `frames` comes before
    its close."""
    reader = FrameReader()
    got: list[Any] = []
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD) as sock:

        def read_until(done: Any) -> None:
            while not done():
                data = sock.recv(65536)
                assert data, f"serve closed the socket; it sent {got}"
                got.extend(item.body for item in reader.feed(data)
                           if isinstance(item, Frame) and item.body is not None)

        sock.sendall(AMQP_HEADER + b"".join(encode_frame(body, 0) for body in frames))
        read_until(lambda: {b.handle for b in got if isinstance(b, c.Flow)} >= set(handles))
        sock.sendall(encode_frame(c.Close(), 0))
        read_until(lambda: any(isinstance(b, c.Close) for b in got))
    return got


def _receiver(handle: int, address: str) -> Any:
    return c.Attach(name=f"drainer-{handle}", handle=handle, role=True,
                    source=c.Source(address=address), target=c.Target())


def _drain(handle: int, credit: int) -> Any:
    # sent before serve's begin is seen: no next-incoming-id yet (Part 2 §2.7.4)
    return c.Flow(incoming_window=2048, next_outgoing_id=0, outgoing_window=2048,
                  handle=handle, delivery_count=0, link_credit=credit, drain=True)


def test_a_drain_is_answered_by_one_flow(serve: Serve) -> None:
    s = serve()
    empty, three, four = queue_name(), queue_name(), queue_name()
    for q, n in ((three, 3), (four, 4)):
        r = amqp("send", f"{s.url}/{q}", "m", "--count", str(n))
        assert r.returncode == 0, r.stderr
    got = _converse(s.port, [
        c.Open(container_id="scripted"),
        c.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048),
        _receiver(0, empty), _drain(0, 5),  # nothing there: all 5 given back
        _receiver(1, three), _drain(1, 5),  # 3 sent, the other 2 given back
        _receiver(2, four), _drain(2, 2),  # the transfers use the credit up, 2 are left
    ], handles=(0, 1, 2))
    transfers = [b.handle for b in got if isinstance(b, c.Transfer)]
    assert [transfers.count(h) for h in (0, 1, 2)] == [0, 3, 2]
    for handle, delivery_count, available in ((0, 5, 0), (1, 5, 0), (2, 2, 2)):
        flows = [b for b in got if isinstance(b, c.Flow) and b.handle == handle]
        assert len(flows) == 1, (handle, flows)
        f = flows[0]
        assert (f.delivery_count, f.link_credit, f.drain, f.available) == (
            delivery_count, 0, True, available), (handle, f)
