"""What `amqp decode` was given: bytes from hex, base64 or raw input, and what those bytes are.

Input forms (auto-detected, strictest first): raw binary (anything that is not plain
text), a hex dump with offsets (`hexdump -C`, `xxd`, Wireshark's "hex dump"), plain hex
(spaces, `0x` prefixes, `\\x` escapes, `:` or `,` separators allowed), base64.

Kinds of content (auto-detected, strictest first): a protocol header → frames; frame
headers whose sizes chain exactly to the end → frames; message sections (descriptors
0x70–0x78) in order to the end → message; a sane first frame header followed by a
performative's descriptor (a stream cut short) → frames; else a sequence of AMQP values.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct

from amqpcli.codec.message import Message
from amqpcli.codec.types import DecodeError

__all__ = [
    "FORMATS",
    "KINDS",
    "InputError",
    "detect_format",
    "detect_kind",
    "looks_like_path",
    "parse_hex",
    "parse_input",
]

FORMATS = ("hex", "base64", "raw")
KINDS = ("frames", "message", "values", "frames-0-10")


class InputError(ValueError):
    """Input that is not in the form it claims (or any form we read)."""


_TEXT_BYTES = frozenset(range(32, 127)) | {9, 10, 13}
_HEX_CHARS = set("0123456789abcdefABCDEF")
# An offset column: hex digits, then ':' (xxd) or whitespace (hexdump -C, Wireshark).
_DUMP_LINE = re.compile(r"^\s*([0-9a-fA-F]{4,16})(:\s?|\s+|$)(.*)$")
_PLAIN_SEPARATORS = re.compile(r"0[xX]|\\x|[\s:,;-]")
_B64 = re.compile(r"^[A-Za-z0-9+/_\-\s]*={0,2}\s*$")


def _is_text(data: bytes) -> bool:
    return all(b in _TEXT_BYTES for b in data)


def parse_plain_hex(text: str) -> bytes:
    """Hex digits with any of the usual separators and prefixes."""
    digits = _PLAIN_SEPARATORS.sub("", text)
    if not digits:
        raise InputError("no hex digits in the input")
    bad = next((c for c in digits if c not in _HEX_CHARS), None)
    if bad is not None:
        raise InputError(f"not hex: unexpected character {bad!r}")
    if len(digits) % 2:
        raise InputError(f"odd number of hex digits ({len(digits)})")
    return bytes.fromhex(digits)


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
        m = _DUMP_LINE.match(ln)
        if m is None:
            return None
        offset = int(m.group(1), 16)
        colon = m.group(2).startswith(":")
        marked = marked or colon or "|" in ln
        if expected is not None and offset != expected:
            return None
        data = _dump_data(m.group(3), colon)
        try:
            chunk = parse_plain_hex(data) if data.strip() else b""
        except InputError:
            return None
        if expected is None:
            expected = offset
        out += chunk
        expected += len(chunk)
    if len(lines) == 1 and not marked:
        return None
    return bytes(out)


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
            raise InputError(f"{e}: a digit missing? (--input raw decodes the characters "
                             "themselves)") from None
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
