"""Writes the bundled examples in amqpcli/examples/ with the project's own encoder.

    python scripts/make_examples.py

Run it again after a codec change; the files are deterministic (fixed times and ids), so
a diff shows exactly what changed.
"""

from __future__ import annotations

from pathlib import Path

from amqpcli.codec.composites import (
    Accepted,
    Attach,
    Begin,
    Close,
    Detach,
    Disposition,
    End,
    Flow,
    Header,
    Open,
    Properties,
    SaslInit,
    Source,
    Target,
    Transfer,
)
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.codec.message import Message
from amqpcli.codec.types import Byte, Symbol, Timestamp, UByte, UInt, ULong, UShort

OUT = Path(__file__).resolve().parent.parent / "amqpcli" / "examples"


def example_message() -> Message:
    return Message(
        b'{"order": 1042, "item": "widget", "qty": 3}',
        header=Header(durable=True, priority=UByte(4)),
        message_annotations={
            Symbol("x-opt-jms-msg-type"): Byte(3),
            Symbol("x-opt-jms-dest"): Byte(0),
        },
        properties=Properties(
            message_id="ID:orders-1042",
            to="/queue/orders",
            subject="order.created",
            content_type=Symbol("application/json"),
            creation_time=Timestamp(1_767_225_600_000),  # 2026-01-01T00:00:00Z
        ),
        application_properties={"region": "eu-west", "retries": 0},
    )


def client_session() -> bytes:
    """A client's side of a short connection: SASL PLAIN, send one message, close."""
    msg = example_message().encode()
    frames = [
        encode_protocol_header("sasl"),
        encode_frame(
            SaslInit(
                mechanism=Symbol("PLAIN"),
                initial_response=b"\x00guest\x00guest",
                hostname="localhost",
            ),
            type=1,
        ),
        encode_protocol_header("amqp"),
        encode_frame(
            Open(
                container_id="amqp-cli-example",
                hostname="localhost",
                max_frame_size=UInt(65536),
                channel_max=UShort(255),
                idle_time_out=UInt(30000),
            )
        ),
        encode_frame(
            Begin(next_outgoing_id=UInt(0), incoming_window=UInt(2048), outgoing_window=UInt(2048))
        ),
        encode_frame(
            Attach(
                name="orders-sender",
                handle=UInt(0),
                role=False,
                snd_settle_mode=UByte(0),
                rcv_settle_mode=UByte(0),
                source=Source(address="amqp-cli-example"),
                target=Target(address="/queue/orders", durable=UInt(0)),
                initial_delivery_count=UInt(0),
            )
        ),
        encode_frame(
            Flow(
                next_incoming_id=UInt(0),
                incoming_window=UInt(2048),
                next_outgoing_id=UInt(0),
                outgoing_window=UInt(2048),
                handle=UInt(0),
                delivery_count=UInt(0),
                link_credit=UInt(0),
                available=UInt(1),
            )
        ),
        encode_frame(
            Transfer(
                handle=UInt(0),
                delivery_id=UInt(0),
                delivery_tag=b"\x00\x00\x00\x00\x00\x00\x00\x01",
                message_format=UInt(0),
                settled=False,
            ),
            payload=msg,
        ),
        encode_frame(None),
        encode_frame(Disposition(role=False, first=UInt(0), settled=True, state=Accepted())),
        encode_frame(Detach(handle=UInt(0), closed=True)),
        encode_frame(End()),
        encode_frame(Close()),
    ]
    return b"".join(frames)


def hexdump(data: bytes) -> str:
    """`hexdump -C` layout (offset, two groups of eight bytes, ASCII column)."""
    lines = []
    for row in range(0, len(data), 16):
        chunk = data[row : row + 16]
        left = " ".join(f"{b:02x}" for b in chunk[:8])
        right = " ".join(f"{b:02x}" for b in chunk[8:])
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{row:08x}  {left:<23}  {right:<23}  |{text}|")
    lines.append(f"{len(data):08x}")
    return "\n".join(lines) + "\n"


def main() -> None:
    OUT.mkdir(exist_ok=True)
    session = client_session()
    (OUT / "client-session.amqp").write_bytes(session)
    # the same bytes as a `hexdump -C` dump (each example's name, its file's without the
    # suffix, is its own: `amqp decode --example NAME`)
    (OUT / "client-session-hexdump.hex").write_text(hexdump(session))
    (OUT / "message.amqp").write_bytes(example_message().encode())
    # A lone value that is not a message: a Qpid selector filter, as a JMS client sends it.
    from amqpcli.codec.encode import encode
    from amqpcli.codec.types import Described

    selector = Described(ULong(0x0000468C00000004), "region = 'eu-west'")
    (OUT / "selector-filter.amqp").write_bytes(encode({Symbol("jms-selector"): selector}))
    for p in sorted(OUT.iterdir()):
        print(f"wrote {p.relative_to(OUT.parent.parent)} ({p.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
