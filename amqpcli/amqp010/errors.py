"""The one error the 0-10 decoders raise."""

from __future__ import annotations


class DecodeError(ValueError):
    """Malformed 0-10 input: where it went wrong, what was expected, what was found.

    `offset` counts bytes from the start of the stream (or of the buffer given to a
    decoding function).
    """

    def __init__(self, offset: int, expected: str, found: str) -> None:
        super().__init__(f"at offset {offset}: expected {expected}, found {found}")
        self.offset = offset
        self.expected = expected
        self.found = found


class EncodeError(ValueError):
    """A value that cannot be written as the 0-10 type asked for."""
