"""Reading (and writing) AMQP 0-10: frames, segments, assemblies, session model.

Public API (see docs/amqp010.md):

* `is_protocol_header(data)`, `PROTOCOL_HEADER`
* `StreamDecoder(expect_header=True)`: `feed(bytes) -> [ProtocolHeader | Assembly |
  StreamError]`, `close()`; `decode_stream(bytes) -> [ProtocolHeader | Assembly]`.
* `FrameReader`, `Frame`, `Assembler`, `Assembly` (method, header structs, body).
* `Control`, `Command`, `Struct`: `.klass`, `.name`, `.qname`, `.fields` (present fields
  in spec order); `.make("message.transfer", destination="q")` builds one.
* `encode_assembly(method, channel, header, body)`, `encode_method`, `encode_header`.
* `SessionObserver`: the sans-IO session model fed assemblies with a time and a side;
  `destinations(model)`: its transfers and subscriptions by session and destination
  (`Destination`, what 0-10 has instead of a 1.0 link).
* `ConnectionObserver`: both directions' bytes in (`feed(side, data, time)`), `Observed`
  items (decoded item + model events) out; `.model` is its `SessionObserver`.
* `DecodeError(offset, expected, found)`: the only exception malformed input raises.
"""

from amqpcli.amqp010.codec import (
    decode_header,
    decode_method,
    decode_value,
    encode_header,
    encode_method,
    encode_value,
)
from amqpcli.amqp010.connection import ConnectionObserver, Observed
from amqpcli.amqp010.errors import DecodeError, EncodeError
from amqpcli.amqp010.frames import (
    PROTOCOL_HEADER,
    Assembler,
    Assembly,
    Frame,
    FrameError,
    FrameReader,
    ProtocolHeader,
    encode_assembly,
    encode_frames,
    is_protocol_header,
)
from amqpcli.amqp010.model import (
    COMMANDS,
    CONTROLS,
    METHODS,
    STRUCTS,
    Command,
    Control,
    FieldDef,
    MethodDef,
    Struct,
    StructDef,
)
from amqpcli.amqp010.session import (
    CommandRecord,
    Destination,
    Message,
    SessionInfo,
    SessionObserver,
    Subscription,
    TimelineEvent,
    Violation,
    destinations,
)
from amqpcli.amqp010.stream import StreamDecoder, StreamError, decode_stream
from amqpcli.amqp010.values import (
    Array,
    ByteRanges,
    Datetime,
    SequenceSet,
    TypedBytes,
    TypedDecimal,
    TypedFloat,
    TypedInt,
    TypedStr,
)

__all__ = [
    "COMMANDS",
    "CONTROLS",
    "METHODS",
    "PROTOCOL_HEADER",
    "STRUCTS",
    "Array",
    "Assembler",
    "Assembly",
    "ByteRanges",
    "Command",
    "CommandRecord",
    "ConnectionObserver",
    "Control",
    "Datetime",
    "DecodeError",
    "Destination",
    "EncodeError",
    "FieldDef",
    "Frame",
    "FrameError",
    "FrameReader",
    "Message",
    "MethodDef",
    "Observed",
    "ProtocolHeader",
    "SequenceSet",
    "SessionInfo",
    "SessionObserver",
    "StreamDecoder",
    "StreamError",
    "Struct",
    "StructDef",
    "Subscription",
    "TimelineEvent",
    "TypedBytes",
    "TypedDecimal",
    "TypedFloat",
    "TypedInt",
    "TypedStr",
    "Violation",
    "decode_header",
    "decode_method",
    "decode_stream",
    "decode_value",
    "destinations",
    "encode_assembly",
    "encode_frames",
    "encode_header",
    "encode_method",
    "encode_value",
    "is_protocol_header",
]
