"""A transfer's payload that is not a valid AMQP message, and why (`NotAMessage`).

The views of `decode` and `pcap-dump` keep such a payload's bytes as they show any, and
add the codec's reason (`DecodeError`: what was expected, what was found) and where: the
byte of the payload (of a delivery sent in several frames, of the payloads joined), and
in the tree of `decode` its offset in the input too:

    not a valid message at payload byte 3 (offset 24): expected a format code, found 0xff

The numbers in the reason itself (`end of input at 8`) are the payload's too.

A payload of a message format other than 0 is no AMQP message by design (Part 2 §2.7.5:
a vendor's format): it is opaque, never called invalid. A `NotAMessage` without an error
stands for such a payload, or for one a view does not decode as a message at all (the
last piece of a delivery whose other pieces it does not join).
"""

from __future__ import annotations

from typing import Any

from amqpcli.codec.types import DecodeError

__all__ = ["NotAMessage", "amqp_format"]


def amqp_format(message_format: Any) -> bool:
    """Whether a transfer's message-format is the AMQP message format, 0 (or left out: the
    first transfer of a delivery must give it, and 0 is what peers take a missing one to
    be); any other is a vendor's, whose payload is not judged as an AMQP message."""
    return not message_format


class NotAMessage:
    """A delivery's payload that is not shown as a message: `error`, why it is not a valid
    one (offsets in the payload), or None (a message format other than 0, or not decoded
    here); `size`, the payload's size; `offset`, where the byte `error` points at is in
    the input or stream (None: not known)."""

    __slots__ = ("error", "offset", "size")

    def __init__(self, error: DecodeError | None, size: int, offset: int | None = None) -> None:
        self.error = error
        self.size = size
        self.offset = offset

    @classmethod
    def at(cls, error: DecodeError, payload: bytes, start: int | None) -> NotAMessage:
        """`error`, found decoding `payload`, whose first byte is at `start` in the input."""
        return cls(error, len(payload), None if start is None else start + error.offset)

    def text(self, offset: bool = False) -> str:
        """`not a valid message at payload byte N: expected X, found Y`; `offset`: with
        the byte's offset in the input after N, when it is known."""
        e = self.error
        if e is None:
            return f"not decoded as a message ({self.size} bytes)"
        where = f"at payload byte {e.offset}"
        if offset and self.offset is not None:
            where += f" (offset {self.offset})"
        return f"not a valid message {where}: expected {e.expected}, found {e.found}"

    def to_json(self) -> dict[str, Any]:
        """The `message-error` member of a frame (docs/message-format.md)."""
        e = self.error
        assert e is not None
        out: dict[str, Any] = {}
        if self.offset is not None:
            out["offset"] = self.offset
        out["payload-offset"] = e.offset
        out["expected"] = e.expected
        out["found"] = e.found
        return out

    def __repr__(self) -> str:
        return f"NotAMessage({self.text(True)})"
