"""What `amqp decode` was given: bytes from hex, base64 or raw input, and what those bytes are.

Input forms (auto-detected, strictest first): raw binary (anything that is not plain
text), a hex dump with offsets (`hexdump -C`, `xxd`, Wireshark's "hex dump"), plain hex
(spaces, `0x` prefixes, `\\x` escapes, `:` or `,` separators allowed), base64.

Kinds of content (auto-detected, strictest first): a protocol header → frames; frame
headers whose sizes chain exactly to the end → frames; message sections (descriptors
0x70–0x78) in order to the end → message; a sane first frame header followed by a
performative's descriptor (a stream cut short) → frames; else a sequence of AMQP values.

These rules look at the whole input. An input longer than what `amqp decode` reads before
deciding (its first MiB) is decoded as it is read: its form and kind are decided on those
first bytes (`open_reader`, `detect_kind_prefix`) and the readers below read the rest piece
by piece, a byte that does not fit the form decided being an error where it is.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from typing import Protocol

from amqpcli.codec.decode import skip
from amqpcli.codec.message import Message
from amqpcli.codec.types import DecodeError

__all__ = [
    "FORMATS",
    "KINDS",
    "Base64Reader",
    "FormReader",
    "HexDumpReader",
    "InputError",
    "PlainHexReader",
    "detect_format",
    "detect_kind",
    "detect_kind_prefix",
    "looks_like_path",
    "open_reader",
    "parse_hex",
    "parse_input",
]

FORMATS = ("hex", "base64", "raw")
KINDS = ("frames", "message", "values", "frames-0-10")


class InputError(ValueError):
    """Input that is not in the form it claims (or any form we read)."""


_TEXT_BYTES = frozenset(range(32, 127)) | {9, 10, 13}
_NOT_HEX = re.compile(r"[^0-9a-fA-F]")
# An offset column: hex digits, then ':' (xxd) or whitespace (hexdump -C, Wireshark).
_DUMP_LINE = re.compile(r"^\s*([0-9a-fA-F]{4,16})(:\s?|\s+|$)(.*)$")
_PLAIN_SEPARATORS = re.compile(r"0[xX]|\\x|[\s:,;-]")
_B64 = re.compile(r"^[A-Za-z0-9+/_\-\s]*={0,2}\s*$")


def _is_text(data: bytes) -> bool:
    return all(b in _TEXT_BYTES for b in data)


def parse_plain_hex(text: str) -> bytes:
    """Hex digits with any of the usual separators and prefixes."""
    reader = PlainHexReader()
    return reader.feed_text(text) + reader.close()


class PlainHexReader:
    """Plain hex read piece by piece (`parse_plain_hex` is one piece): the bytes of the
    digits so far; a character that is neither a digit nor a separator is an error."""

    def __init__(self) -> None:
        self._held = ""  # a last "0" or "\\" that may start a prefix with the next piece
        self._odd = ""  # a digit waiting for its pair
        self._digits = 0
        self._text = _TextPieces("hex")

    def feed(self, data: bytes) -> bytes:
        return self.feed_text(self._text.decode(data))

    def feed_text(self, text: str, final: bool = False) -> bytes:
        text = self._held + text
        self._held = ""
        if not final and text[-1:] in ("0", "\\"):
            text, self._held = text[:-1], text[-1]
        digits = _PLAIN_SEPARATORS.sub("", text)
        bad = _NOT_HEX.search(digits)
        if bad is not None:
            raise InputError(f"not hex: unexpected character {bad.group()!r}")
        self._digits += len(digits)
        digits = self._odd + digits
        even = len(digits) & ~1
        self._odd = digits[even:]
        return bytes.fromhex(digits[:even])

    def close(self) -> bytes:
        tail = self.feed_text("", final=True)
        if not self._digits:
            raise InputError("no hex digits in the input")
        if self._odd:
            raise InputError(f"odd number of hex digits ({self._digits})")
        return tail


def _dump_data(rest: str, colon: bool) -> str:
    """The hex part of a dump line: before `|ascii|` (hexdump -C) or the two-space gap."""
    if "|" in rest:
        return rest.split("|", 1)[0]
    if colon:  # xxd: groups separated by one space, the ASCII column after two
        return rest.split("  ", 1)[0]
    # Wireshark: bytes then 3+ spaces then ASCII; hexdump -C has a 2-space gap mid-line.
    return re.split(r"\s{3,}", rest.strip(), maxsplit=1)[0]


def parse_dump(text: str) -> bytes | None:
    """Bytes of a hex dump with an offset column, or None if `text` is not one.

    Offsets must chain (each line starts where the previous one ended), which tells a
    dump from plain hex that happens to start with a long hex word.
    """
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    out = bytearray()
    expected: int | None = None
    marked = False  # a ':' or an ASCII column seen: sure it is a dump
    for ln in lines:
        line = _dump_line(ln)
        if line is None:
            return None
        offset, chunk, line_marked = line
        marked = marked or line_marked
        if expected is not None and offset != expected:
            return None
        if expected is None:
            expected = offset
        out += chunk
        expected += len(chunk)
    if len(lines) == 1 and not marked:
        return None
    return bytes(out)


def _dump_line(ln: str) -> tuple[int, bytes, bool] | None:
    """(offset, bytes, marked) of a line of a hex dump, None if it is not one; `marked`:
    it has a ':' after its offset or an ASCII column (surely a dump line)."""
    m = _DUMP_LINE.match(ln)
    if m is None:
        return None
    colon = m.group(2).startswith(":")
    data = _dump_data(m.group(3), colon)
    try:
        chunk = parse_plain_hex(data) if data.strip() else b""
    except InputError:
        return None
    return int(m.group(1), 16), chunk, colon or "|" in ln


# A line that runs on longer than this is no line of a hex dump (and is not held whole).
_MAX_DUMP_LINE = 1 << 16
# What ends a line for str.splitlines in ASCII text.
_LINE_ENDS = "\n\r\x0b\x0c\x1c\x1d\x1e"


class HexDumpReader:
    """A hex dump with an offset column read piece by piece: line by line, each line's
    offset where the one before ended (blank lines skipped)."""

    def __init__(self) -> None:
        self._partial = ""  # a line whose end has not come yet
        self._expected: int | None = None
        self._line = 0
        self._text = _TextPieces("hex")

    def feed(self, data: bytes) -> bytes:
        return self._lines(self._text.decode(data), final=False)

    def _lines(self, text: str, final: bool) -> bytes:
        text = self._partial + text
        self._partial = ""
        if not final:
            cut = max(text.rfind(c) for c in _LINE_ENDS) + 1
            text, self._partial = text[:cut], text[cut:]
            if len(self._partial) > _MAX_DUMP_LINE:
                raise InputError(f"line {self._line + 1}: not a line of a hex dump (longer "
                                 f"than {_MAX_DUMP_LINE} characters)")
        out = bytearray()
        for ln in text.splitlines():
            self._line += 1
            if not ln.strip():
                continue
            line = _dump_line(ln)
            if line is None or (self._expected is not None and line[0] != self._expected):
                raise InputError(f"line {self._line}: not a line of the hex dump (an offset "
                                 "where the line before ended, then hex)")
            offset, chunk, _ = line
            if self._expected is None:
                self._expected = offset
            self._expected += len(chunk)
            out += chunk
        return bytes(out)

    def close(self) -> bytes:
        return self._lines("", final=True)


def parse_hex(text: str) -> bytes:
    """Bytes from any hex form we read (dump with offsets, or plain)."""
    dumped = parse_dump(text)
    if dumped is not None:
        return dumped
    return parse_plain_hex(text)


def parse_base64(text: str) -> bytes:
    compact = "".join(text.split())
    if not compact:
        raise InputError("no base64 characters in the input")
    if len(compact.rstrip("=")) % 4 == 1:
        raise InputError("not base64: one character too many or too few")
    # the padding is often left off (URLs, JWT-style tools): put it back
    compact = compact.rstrip("=") + "=" * (-len(compact.rstrip("=")) % 4)
    try:
        if "-" in compact or "_" in compact:
            return base64.urlsafe_b64decode(compact)
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError) as e:
        raise InputError(f"not base64: {e}") from None


class _TextPieces:
    """The pieces of an input read as text: ASCII, else an error that says where."""

    def __init__(self, form: str) -> None:
        self._form = form
        self._offset = 0

    def decode(self, data: bytes) -> str:
        try:
            text = data.decode("ascii")
        except UnicodeDecodeError as e:
            raise InputError(f"{self._form} input: byte 0x{data[e.start]:02x} at offset "
                             f"{self._offset + e.start} is not text") from None
        self._offset += len(data)
        return text


_URLSAFE = str.maketrans("-_", "+/")


class Base64Reader:
    """Base64 read piece by piece, in either alphabet (`+/` or `-_`), its padding optional."""

    def __init__(self) -> None:
        self._rest = ""  # characters short of a group of four
        self._chars = 0
        self._padded = False
        self._text = _TextPieces("base64")

    def feed(self, data: bytes) -> bytes:
        return self._decode(self._text.decode(data), final=False)

    def _decode(self, text: str, final: bool) -> bytes:
        compact = "".join(text.split()).translate(_URLSAFE)
        if self._padded:
            if compact.strip("="):
                raise InputError("not base64: characters after its '=' padding")
            return b""
        pad = compact.find("=")
        if pad >= 0:
            if compact[pad:].strip("="):
                raise InputError("not base64: characters after its '=' padding")
            compact, self._padded = compact[:pad], True
        self._chars += len(compact)
        group = self._rest + compact
        if final or self._padded:
            self._rest = ""
            if len(group) % 4 == 1:
                raise InputError("not base64: one character too many or too few")
            group += "=" * (-len(group) % 4)
        else:
            whole = len(group) - len(group) % 4
            group, self._rest = group[:whole], group[whole:]
        try:
            return base64.b64decode(group, validate=True)
        except (binascii.Error, ValueError) as e:
            raise InputError(f"not base64: {e}") from None

    def close(self) -> bytes:
        tail = self._decode("", final=True)
        if not self._chars:
            raise InputError("no base64 characters in the input")
        return tail


class FormReader(Protocol):
    """Reads an input in its form piece by piece: `feed` gives the bytes of each piece (an
    InputError for what is not in the form), `close` those of the end."""

    def feed(self, data: bytes) -> bytes: ...

    def close(self) -> bytes: ...


class _RawReader:
    def feed(self, data: bytes) -> bytes:
        return data

    def close(self) -> bytes:
        return b""


def open_reader(head: bytes, form: str | None = None) -> tuple[FormReader, str, bytes]:
    """For an input that goes on after its first bytes `head`: a reader for the rest, its
    form and the bytes of `head`. The form is `form`, or the first `head` reads as in
    `detect_format`'s order (raw when it is not text; hex, a dump or plain; base64; raw)."""
    if form is not None and form not in FORMATS:
        raise InputError(f"unknown input form {form!r} (one of {', '.join(FORMATS)})")
    if form is None and not _is_text(head):
        form = "raw"
    if form != "raw":
        for candidate in [form] if form is not None else ["hex", "base64"]:
            reader: FormReader = Base64Reader() if candidate == "base64" else _hex_reader(head)
            if form is None and candidate == "hex":
                reader = _DetectedHex(reader)
            try:
                return reader, candidate, reader.feed(head)
            except InputError:
                if form is not None:
                    raise
    return _RawReader(), "raw", head


class _DetectedHex:
    """Hex that was not asked for: an odd number of digits says a digit may be missing,
    as `detect_format` does."""

    def __init__(self, reader: FormReader) -> None:
        self._reader = reader

    def feed(self, data: bytes) -> bytes:
        return self._reader.feed(data)

    def close(self) -> bytes:
        try:
            return self._reader.close()
        except InputError as e:
            if str(e).startswith("odd number of hex digits"):
                raise InputError(f"{e}{_ODD_HINT}") from None
            raise


def _hex_reader(head: bytes) -> FormReader:
    """A reader for the dump `head` starts (its whole lines are one), else for plain hex."""
    text = head.decode("ascii", "replace")
    whole_lines = text[: max(text.rfind(c) for c in _LINE_ENDS) + 1]
    return HexDumpReader() if parse_dump(whole_lines) is not None else PlainHexReader()


_ODD_HINT = ": a digit missing? (--input raw decodes the characters themselves)"


def detect_format(data: bytes) -> str:
    """ "raw", "hex" or "base64" for input given as bytes."""
    if not data or not _is_text(data):
        return "raw"
    text = data.decode("ascii")
    try:
        parse_hex(text)
        return "hex"
    except InputError as e:
        if str(e).startswith("odd number of hex digits") and len(text.strip()) >= 4:
            # nothing but hex digits, one short: a typo, not text to decode as bytes
            raise InputError(f"{e}{_ODD_HINT}") from None
    compact = "".join(text.split())
    if _B64.match(text) and (len(compact) % 4 == 0 or (len(compact) >= 8
                                                         and "/" not in compact)):
        # unpadded base64 only when long enough not to be a short word, and without a
        # `/` (a relative path); `--input base64` takes any
        try:
            parse_base64(text)
            return "base64"
        except InputError:
            pass
    return "raw"


def parse_input(data: bytes, form: str | None = None) -> tuple[bytes, str]:
    """(the bytes, the form they were read as). `form` forces one of FORMATS."""
    form = form or detect_format(data)
    if form == "raw":
        return data, form
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise InputError(f"--input {form}: the input is not text") from None
    if form == "hex":
        return parse_hex(text), form
    if form == "base64":
        return parse_base64(text), form
    raise InputError(f"unknown input form {form!r} (one of {', '.join(FORMATS)})")


# Suffixes of files one decodes: an argument ending in one names a file, not bytes.
PATH_SUFFIXES = (".bin", ".amqp", ".hex", ".b64", ".base64", ".raw", ".dat", ".txt", ".pcap",
                 ".pcapng", ".cap", ".dump")
_PATH_PREFIXES = ("/", "./", "../", "~/")


def looks_like_path(text: str) -> bool:
    """True for an argument meant as a file name rather than bytes: it starts like a path
    (`/`, `./`, `../`, `~/`: no AMQP value's base64 starts with `/`), ends in a file
    suffix (`.bin`, `.amqp`, ...: a `.` is in no hex or base64 form), or holds a `/` and
    reads as neither hex nor base64."""
    text = text.strip()
    if not text or "\n" in text:
        return False
    if text.startswith(_PATH_PREFIXES):
        return True
    if text.lower().endswith(PATH_SUFFIXES):
        return True
    if "/" in text:
        return detect_format(text.encode("utf-8", "surrogateescape")) == "raw"
    return False


_HEADER = struct.Struct(">IBBH")


def frames_chain(data: bytes) -> bool:
    """True if `data` is protocol headers and frames whose sizes end exactly at its end."""
    p = 0
    n = len(data)
    if n < 8:
        return False
    while p < n:
        if n - p < 8:
            return False
        if data[p : p + 4] == b"AMQP":
            p += 8
            continue
        size, doff, _ftype, _ch = _HEADER.unpack_from(data, p)
        if size < 8 or doff < 2 or doff * 4 > size or p + size > n:
            return False
        p += size
    return True


def is_message(data: bytes) -> bool:
    """True if `data` splits into message sections, in order, up to its end."""
    if len(data) < 3 or data[0] != 0x00:
        return False
    try:
        Message.decode(data)
    except (DecodeError, ValueError, IndexError, struct.error):
        return False
    return True


def starts_with_frame(data: bytes) -> bool:
    """True if `data` opens with a sane frame header and a performative's descriptor
    (a stream cut short or followed by something else still reads as frames)."""
    if len(data) < 11:
        return False
    size, doff, ftype, _ch = _HEADER.unpack_from(data, 0)
    if size < 8 or doff < 2 or doff * 4 > size or ftype > 1 or len(data) < doff * 4 + 3:
        return False
    p = doff * 4
    codes = range(0x10, 0x19) if ftype == 0 else range(0x40, 0x45)
    return data[p] == 0x00 and data[p + 1] == 0x53 and data[p + 2] in codes


def detect_kind(data: bytes) -> str:
    """The kind of content: "frames", "message" or "values" (see the module docstring)."""
    if data[:4] == b"AMQP" or frames_chain(data):
        return "frames"
    if is_message(data):
        return "message"
    if starts_with_frame(data):
        return "frames"
    return "values"


def detect_kind_prefix(data: bytes, chain: bool = True) -> str | None:
    """`detect_kind` for the first bytes of a longer input: "frames" or "values", or None
    when they may start a message (whether the input is one only its end tells: read on).

    The frame rule takes headers that chain over `data`, at least one frame whole and the
    last one possibly cut by its end. A message's first four bytes read as a frame size of
    more than 5 MB, so no message passes it on its first MiB; on more of a message
    (`chain=False`, reading on) the rule is not tried again.
    """
    if data[:4] == b"AMQP" or (chain and _frames_chain_so_far(data)):
        return "frames"
    if _message_so_far(data):
        return None
    if starts_with_frame(data):
        return "frames"
    return "values"


def _frames_chain_so_far(data: bytes) -> bool:
    p = 0
    n = len(data)
    whole = 0
    while n - p >= 8:
        if data[p : p + 4] == b"AMQP":
            p += 8
            continue
        size, doff, _ftype, _ch = _HEADER.unpack_from(data, p)
        if size < 8 or doff < 2 or doff * 4 > size:
            return False
        if p + size > n:
            break
        p += size
        whole += 1
    return whole > 0


# A described value whose descriptor is a message section's: 0x70-0x78, small or ulong.
_SECTION_START = re.compile(rb"\x00(\x53|\x80\x00{7})[\x70-\x78]")


def _message_so_far(data: bytes) -> bool:
    """True if `data` may start a message: its whole values are message sections in order,
    or it opens with a section that has not ended yet."""
    if len(data) < 3 or data[0] != 0x00:
        return False
    end = 0
    while end < len(data):
        try:
            end = skip(data, end)
        except DecodeError as e:
            if not e.found.startswith("end of input"):
                return False
            break
    if end == 0:
        return _SECTION_START.match(data) is not None
    return is_message(data[:end])
