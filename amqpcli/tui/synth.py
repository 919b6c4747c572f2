"""A made-up but well-formed AMQP 1.0 conversation, written as a capture file.

For the TUI's tests, its benchmark and its documentation screenshots: a client sends
`deliveries` messages on one link (unsettled, accepted and settled by the broker in
batches, the last `unsettled_tail` left open) and receives `received` messages on another
link whose receiver settles first but whose sender never does (a stall the TUI marks).
Frames are encoded by the codec and packetised by the capture package's writer.
"""

from __future__ import annotations

import os

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.codec.message import Message
from amqpcli.codec.types import Composite, UByte, UInt, UShort

SENDER, RECEIVER = False, True


def write_conversation(
    path: str | os.PathLike[str],
    deliveries: int = 50,
    *,
    unsettled_tail: int = 3,
    received: int = 2,
    batch: int = 100,
    body_size: int = 100,
    step_ns: int = 50_000,
    close: bool = False,
) -> int:
    """Write the capture; returns the number of frames in it."""
    frames = 0
    with CaptureWriter(path, linktype=101) as w:  # raw IP
        conv = TcpConversation(w, ("127.0.0.1", 40001), ("127.0.0.1", 5672), step_ns=step_ns)
        conv.handshake()

        def send(direction: int, *parts: bytes) -> None:
            conv.send(direction, b"".join(parts), mss=65000, ack=False)  # type: ignore[arg-type]

        def f(perf: Composite, ch: int = 0, payload: bytes = b"") -> bytes:
            nonlocal frames
            frames += 1
            return encode_frame(perf, ch, payload)

        send(C2S, encode_protocol_header("amqp"), f(c.Open(container_id="synth-client", hostname="localhost",
                                                         max_frame_size=UInt(65536))))
        send(S2C, encode_protocol_header("amqp"), f(c.Open(container_id="synth-broker", max_frame_size=UInt(65536))))
        send(C2S, f(c.Begin(next_outgoing_id=UInt(0), incoming_window=UInt(65535), outgoing_window=UInt(65535))))
        send(S2C, f(c.Begin(remote_channel=UShort(0),
                            next_outgoing_id=UInt(0), incoming_window=UInt(65535),
                            outgoing_window=UInt(65535))))
        # Link 0: we send to "orders"; the broker grants a durable target we did not ask for.
        send(C2S, f(c.Attach(name="orders-sender", handle=UInt(0), role=SENDER,
                             snd_settle_mode=UByte(0), rcv_settle_mode=UByte(0),
                             source=c.Source(address="synth-client"),
                             target=c.Target(address="orders", durable=UInt(0)),
                             initial_delivery_count=UInt(0))))
        send(S2C, f(c.Attach(name="orders-sender", handle=UInt(0), role=RECEIVER,
                             snd_settle_mode=UByte(0), rcv_settle_mode=UByte(0),
                             source=c.Source(address="synth-client"),
                             target=c.Target(address="orders", durable=UInt(2)))),
             f(c.Flow(next_incoming_id=UInt(0), incoming_window=UInt(65535), next_outgoing_id=UInt(0),
                      outgoing_window=UInt(65535), handle=UInt(0), delivery_count=UInt(0),
                      link_credit=UInt(deliveries + 10))))
        # Link 1: we receive from "replies", settle-mode second.
        send(C2S, f(c.Attach(name="replies-receiver", handle=UInt(1), role=RECEIVER,
                             snd_settle_mode=UByte(0), rcv_settle_mode=UByte(1),
                             source=c.Source(address="replies"), target=c.Target(address="synth-client"))))
        send(S2C, f(c.Attach(name="replies-receiver", handle=UInt(1), role=SENDER,
                             snd_settle_mode=UByte(0), rcv_settle_mode=UByte(1),
                             source=c.Source(address="replies"), target=c.Target(address="synth-client"),
                             initial_delivery_count=UInt(0))))
        send(C2S, f(c.Flow(next_incoming_id=UInt(0), incoming_window=UInt(65535), next_outgoing_id=UInt(0),
                           outgoing_window=UInt(65535), handle=UInt(1), delivery_count=UInt(0),
                           link_credit=UInt(10))))
        body = b"x" * body_size
        settle_upto = deliveries - unsettled_tail
        done = 0
        for start in range(0, deliveries, batch):
            end = min(deliveries, start + batch)
            chunk = []
            for i in range(start, end):
                msg = Message([c.Data(body)], properties=c.Properties(message_id=f"m{i}", subject="order"),
                              application_properties={"n": i})
                chunk.append(f(c.Transfer(handle=UInt(0), delivery_id=UInt(i), delivery_tag=i.to_bytes(4, "big"),
                                          message_format=UInt(0), settled=False), 0, msg.encode()))
            send(C2S, *chunk)
            last = min(end, settle_upto) - 1
            if last >= done:
                send(S2C, f(c.Disposition(role=RECEIVER, first=UInt(done), last=UInt(last), settled=True,
                                          state=c.Accepted())))
                done = last + 1
        for i in range(received):
            msg = Message(c.AmqpValue(f"reply {i}"), properties=c.Properties(message_id=f"r{i}"))
            send(S2C, f(c.Transfer(handle=UInt(1), delivery_id=UInt(i), delivery_tag=b"r" + bytes([i]),
                                   message_format=UInt(0), settled=False), 0, msg.encode()))
            # Mode second: the receiver accepts, the sender settles, the receiver never does.
            send(C2S, f(c.Disposition(role=RECEIVER, first=UInt(i), last=UInt(i), settled=False,
                                      state=c.Accepted())))
            send(S2C, f(c.Disposition(role=SENDER, first=UInt(i), last=UInt(i), settled=True,
                                      state=c.Accepted())))
        if close:
            send(C2S, f(c.Close()))
            send(S2C, f(c.Close()))
            conv.close()
    return frames
