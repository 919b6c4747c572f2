"""Raw-socket clients that break the rules: one that dies while sending a message (it
opens a sending link, sends half of a large transfer frame and ends its connection there,
by a reset, SO_LINGER 0, or a FIN); and the pieces every such client starts and ends with."""

from __future__ import annotations

import socket
import struct

from amqpcli.codec import composites as c
from amqpcli.codec.frames import FrameReader, encode_frame, encode_protocol_header
from amqpcli.codec.message import Message


def sender_opening(container_id: str) -> bytes:
    """A client's first bytes without SASL: header, open, begin, a sending link to "q"."""
    return (encode_protocol_header("amqp")
            + encode_frame(c.Open(container_id=container_id))
            + encode_frame(c.Begin(next_outgoing_id=0, incoming_window=1000,
                                   outgoing_window=1000))
            + encode_frame(c.Attach(name="sender", handle=0, role=False,
                                    source=c.Source(), target=c.Target(address="q"),
                                    initial_delivery_count=0)))


def read_until_flow(sock: socket.socket) -> None:
    """Read the peer's frames until its first flow (its credit) came."""
    reader = FrameReader()
    got: list[object] = []
    while not any(isinstance(getattr(i, "body", None), c.Flow) for i in got):
        data = sock.recv(65536)
        assert data, "the peer closed before granting credit"
        got += reader.feed(data)


def read_to_end(sock: socket.socket) -> None:
    """Having sent a FIN, read until the peer ends too (a reset ends it as well)."""
    sock.shutdown(socket.SHUT_WR)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass


def die_mid_frame(port: int, *, reset: bool) -> tuple[int, int]:
    """Connect to `port` (a peer that speaks AMQP without SASL), attach a sending link and,
    once the peer granted credit, send half of a transfer frame and end: a reset, or a FIN
    (then read until the peer ends too). Returns (the frame's bytes sent, its size)."""
    transfer = encode_frame(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0",
                                       message_format=0), 0,
                            Message(body=b"x" * 30000).encode())
    half = len(transfer) // 2
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(sender_opening("dying-client"))
        # everything the peer sends before the transfer is read: no unread bytes make
        # the close below a reset when a FIN is meant
        read_until_flow(sock)
        sock.sendall(transfer[:half])
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            read_to_end(sock)
    return half, len(transfer)
