"""What `amqp decode` was given: bytes from hex, base64 or raw input, and what those bytes are.

Input forms (auto-detected, strictest first): raw binary (anything that is not plain
text), a hex dump with offsets (`hexdump -C`, `xxd`, `od -t x1`, `od -A x -t x1z`,
Wireshark's "hex dump"), plain hex (spaces, `0x` prefixes, `\\x` escapes, `:` or `,` separators allowed),
base64.

Kinds of content (auto-detected, strictest first): a protocol header → frames; frame
headers whose sizes chain exactly to the end → frames; message sections (descriptors
0x70–0x78) in order to the end → message; a sane first frame header followed by a
performative's descriptor (a stream cut short) → frames; else a sequence of AMQP values.

These rules look at the whole input. An input longer than what `amqp decode` reads before
deciding (its first MiB) is decoded as it is read: its form and kind are decided on those
first bytes (`choose_reader`, `detect_kind_prefix`) and the readers below read the rest
piece by piece, a byte that does not fit the form decided being an error where it is.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from collections.abc import Iterator
from itertools import pairwise
from typing import Protocol

from amqpcli.codec.decode import skip
from amqpcli.codec.message import Message
from amqpcli.codec.types import DecodeError

__all__ = [
    "FORMATS",
    "KINDS",
    "Base64Reader",
    "DumpError",
    "FormReader",
    "HexDumpReader",
    "InputError",
    "PlainHexReader",
    "TooLong",
    "choose_reader",
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


class DumpError(InputError):
    """A hex dump (it can be nothing else) that is not read: one in little-endian groups
    or in bits, whose `*` lines do not say how far the line before them repeats, or
    with a line whose offset does not follow on (or no dump line at all) after lines
    that surely are one."""


class TooLong(Exception):
    """The bytes an input stands for are more than the limit asked: read it as it comes."""


_TEXT_BYTES = frozenset(range(32, 127)) | {9, 10, 13}
_NOT_HEX = re.compile(r"[^0-9a-fA-F]")
# the separators of plain hex, each run kept when a text is split by them
_PLAIN_SEPARATORS = re.compile(r"((?:0[xX]|\\x|[\s:,;-])+)")
_SEPARATORS_TO_SPACE = str.maketrans(":,;-", "    ")
_HEX_DIGIT_CHARS = "0123456789abcdefABCDEF"
_B64 = re.compile(r"^[A-Za-z0-9+/_\-\s]*={0,2}\s*$")


def _is_text(data: bytes) -> bool:
    return all(b in _TEXT_BYTES for b in data)


class _Reader:
    """A form read piece by piece: `feed` gives the bytes of a piece of the input, `close`
    those of its end, `pieces` either in parts of a bounded size."""

    def feed(self, data: bytes) -> bytes:
        raise NotImplementedError

    def close(self) -> bytes:
        raise NotImplementedError

    def pieces(self, data: bytes | None) -> Iterator[bytes]:
        """The bytes of `data` (None: of the end of the input), in parts."""
        yield self.close() if data is None else self.feed(data)


def parse_plain_hex(text: str) -> bytes:
    """Hex digits with any of the usual separators and prefixes."""
    reader = PlainHexReader()
    return reader.feed_text(text) + reader.close()


class PlainHexReader(_Reader):
    """Plain hex read piece by piece (`parse_plain_hex` is one piece): the bytes of the
    digits so far; a character that is neither a digit nor a separator is an error.

    The digits between separators are a group, read two by two from its start: a group
    of an odd number of digits would otherwise borrow one from the next (`0x1 0x2` read
    as 0x12), so it is an error, but for one digit after a `0x` or `\\x` prefix, which
    is that byte (`0x0,0x53`: what printing bytes with `hex()` or `%#x` writes). A line
    break alone ends no group: hex wrapped at any width reads as one line."""

    def __init__(self) -> None:
        self._held = ""  # a last group, "0" or "\\" that the next piece may go on with
        self._odd = ""  # a digit waiting for its pair
        self._digits = 0
        self._group = 0  # digits in the group read so far (it may go on in the next piece)
        self._prefixed = False  # that group follows a 0x or \\x
        self._text = _TextPieces("hex")

    def feed(self, data: bytes) -> bytes:
        return self.feed_text(self._text.decode(data))

    def feed_text(self, text: str, final: bool = False) -> bytes:
        # a line break is no separator: a long line of hex may be wrapped anywhere
        text = (self._held + text).replace("\n", "").replace("\r", "")
        self._held = ""
        if not final:
            head = text.rstrip(_HEX_DIGIT_CHARS)
            if head and len(head) < len(text) and not head.endswith("\\"):
                # a group the next piece may go on with: read it whole, with that piece
                text, self._held = head, text[len(head):]
            elif text[-1:] in ("0", "\\"):
                text, self._held = text[:-1], text[-1]
        groups = (text.replace("\\x", " ").replace("0x", " ").replace("0X", " ")
                  .translate(_SEPARATORS_TO_SPACE).split())
        if not self._odd and not any(n & 1 for n in set(map(len, groups))):
            return self._even_groups(text, "".join(groups))
        out = bytearray()
        for i, part in enumerate(_PLAIN_SEPARATORS.split(text)):
            if i & 1:  # a separator: the group before it has ended
                if part:
                    self._end_group(out)
                    self._prefixed = part[-1:] in ("x", "X")
                continue
            if not part:
                continue
            bad = _NOT_HEX.search(part)
            if bad is not None:
                raise InputError(f"not hex: unexpected character {bad.group()!r}")
            self._digits += len(part)
            self._group += len(part)
            digits = self._odd + part
            even = len(digits) & ~1
            self._odd = digits[even:]
            out += bytes.fromhex(digits[:even])
        return bytes(out)

    def _even_groups(self, text: str, digits: str) -> bytes:
        """`feed_text` for a piece whose groups all have an even number of digits (the
        usual case), with nothing pending: its digits in one go."""
        bad = _NOT_HEX.search(digits)
        if bad is not None:
            raise InputError(f"not hex: unexpected character {bad.group()!r}")
        self._digits += len(digits)
        last = len(text) - len(text.rstrip(_HEX_DIGIT_CHARS))  # digits of a group going on
        if last == len(text):
            self._group += last
        else:
            self._group = last
            self._prefixed = text[-last - 1] in ("x", "X")
        return bytes.fromhex(digits)

    def _end_group(self, out: bytearray) -> None:
        if self._odd:
            if not (self._group == 1 and self._prefixed):
                raise InputError(f"odd number of hex digits ({self._group}) in the group "
                                 f"ending at digit {self._digits}")
            out.append(int(self._odd, 16))
            self._odd = ""
        self._group = 0
        self._prefixed = False

    def close(self) -> bytes:
        tail = self.feed_text("", final=True)
        if not self._digits:
            raise InputError("no hex digits in the input")
        if self._odd and not (self._group == 1 and self._prefixed) \
                and self._group == self._digits:
            raise InputError(f"odd number of hex digits ({self._digits})")
        end = bytearray()
        self._end_group(end)
        return tail + end


# --- hex dumps ------------------------------------------------------------------------------
#
# A line of a dump is an offset (4 to 16 hex digits), then the bytes, then maybe their text;
# each tool lays them out its own way, and a line is read by that layout (never by what its
# text column holds, which may be anything):
#
#   xxd (-g N, -c N, -u, -s, -a)   00000000: 414d 5150 0001 0000  AMQP....
#       a ':', groups of hex one space apart, two spaces, the text
#   hexdump -C                     00000000  41 4d 51 50 00 01 00 00  |AMQP....|
#   od -A x -t x1z                 000000 41 4d 51 50 00 01 00 00  >AMQP....<
#   od -t x1 (octal offsets)       0000000 41 4d 51 50 00 01 00 00
#   Wireshark, tshark -x           0000   41 4d 51 50 00 01 00 00   AMQP....
#       bytes one or two spaces apart, then the text between '|' or '>' '<', or three
#       spaces or more on
#
# A line `*` (hexdump, od, xxd -a) stands for copies of the line before it, as many as
# take it to the offset of the next line (the dump's last line is its end offset alone).
# Dumps of bytes in little-endian groups (xxd -e; hexdump without -C and od -x, whose
# 2-byte words are in the machine's order) are refused where they show as such: read as
# they are written, their bytes would come out swapped.
#
# Offsets are hex, but for od's default: seven octal digits (`od -t x1`, `od -t x1z`), told
# by its width from the first line on (the other dumps' offsets are 4, 6 or 8 hex digits,
# hexdump's without -C 7, in words). od's other layouts (octal or hex words, characters,
# decimal offsets) are no dump read here; one is refused (`_od_shape`) rather than read
# as plain hex, offsets and all.

_OFFSET = re.compile(r"\s*([0-9a-fA-F]{4,16})(:?)(?=\s|$)")
# xxd: groups of hex digits one space apart, then two spaces and the text (or nothing)
_XXD_REST = re.compile(r" +([0-9a-fA-F]+(?: [0-9a-fA-F]+)*)(?:  (.*)| *)$")
# hexdump -C, od, Wireshark: bytes one or two spaces apart, then the rest of the line
_BYTES_REST = re.compile(r"\s+([0-9a-fA-F]{2}(?: {1,2}[0-9a-fA-F]{2})*)(?![0-9a-fA-F])(.*)$")
# hexdump without -C, od -A x -x: 2-byte (or 4-byte) words, no text
_WORDS_REST = re.compile(
    r"\s+(?:[0-9a-fA-F]{4}(?: [0-9a-fA-F]{4})*|[0-9a-fA-F]{8}(?: [0-9a-fA-F]{8})*)\s*$")
# xxd -e sets a last group that is short apart, to the right: it is read as text
_XXD_E_LAST = re.compile(r"((?:[0-9a-fA-F]{2})+) {2,}(.*)")
# How dumps show a byte in their text column.
_SHOWN = bytes(b if 0x20 <= b < 0x7F else 0x2E for b in range(256))

_LITTLE_ENDIAN = ("an xxd -e dump (little-endian groups) is not read: its bytes would come "
                  "out swapped; dump with xxd, xxd -p or hexdump -C")
_WORDS = ("a dump in 2- or 4-byte words (hexdump without -C, od -x) is not read: a word's "
          "bytes are in the machine's order; dump with hexdump -C, xxd or od -A x -t x1z")
_BITS = "an xxd -b dump (bits) is not read: dump with xxd, xxd -p or hexdump -C"
_OD = ("a dump in words or characters, or with decimal offsets, is not read (od without "
       "-t x1, od -A d, hexdump without -C): dump with od -t x1, od -A x -t x1z, hexdump -C "
       "or xxd")
_NOT_DUMP_LINE = "not a line of the hex dump (an offset where the line before ended, then hex)"
# A '*' line that stands for more than this is refused rather than spelled out.
_MAX_REPEAT = 1 << 32


def _shown(data: bytes) -> str:
    return data.translate(_SHOWN).decode("ascii").strip(" ")


class _NotDumpLine(Exception):
    """A line that is no line of the dump read so far."""


def _dump_line(ln: str) -> tuple[str, bytes, str | None, bool] | None:
    """(offset digits, bytes, layout, marked) of a line of a hex dump, None if it is not one.
    The layout is "xxd", "bytes" or "words" (None for an offset alone); `marked`: it has
    a ':' after its offset or a text column between '|' or '>' '<' (surely a dump line)."""
    m = _OFFSET.match(ln)
    if m is None:
        return None
    offset, colon, rest = m.group(1), bool(m.group(2)), ln[m.end():]
    if not rest.strip():
        return offset, b"", None, colon
    if colon:
        data = _xxd_bytes(rest)
        return None if data is None else (offset, data, "xxd", True)
    b = _BYTES_REST.match(rest)
    if b is not None:
        after = b.group(2)
        text = after.lstrip(" ")
        marked = text[:1] in ("|", ">")
        if text and not marked and not after.startswith("   "):
            return None  # what follows the bytes is no text column of any layout
        return offset, bytes.fromhex(b.group(1)), "bytes", marked
    w = _WORDS_REST.match(rest)
    if w is not None:
        return offset, bytes.fromhex(rest), "words", False
    return None


def _xxd_bytes(rest: str) -> bytes | None:
    """The bytes of what follows an xxd line's ':' (None if it is not an xxd line). Its
    text column, when there is one, must show those bytes, or be that of xxd -e or of
    xxd -b (whose bits are hex digits too): an error."""
    m = _XXD_REST.match(rest)
    if m is None:
        return None
    groups = m.group(1).split(" ")
    if any(len(g) % 2 for g in groups):
        return None
    data = bytes.fromhex("".join(groups))
    text = (m.group(2) or "").strip(" ")
    if text and text != _shown(data):
        if len(text) == len(groups) and all(len(g) == 8 and not g.strip("01") for g in groups):
            raise DumpError(_BITS)
        if _little_endian(groups, text):
            raise DumpError(_LITTLE_ENDIAN)
        if len(text) != len(_shown(data)):
            return None  # a character a byte: this text is not that of these bytes
    return data


def _little_endian(groups: list[str], text: str) -> bool:
    """True if `text` shows the bytes of `groups` each reversed, as xxd -e writes them."""
    swapped = b"".join(bytes.fromhex(g)[::-1] for g in groups)
    if text == _shown(swapped):
        return True
    last = _XXD_E_LAST.fullmatch(text)
    return last is not None and last.group(2).strip(" ") == _shown(
        swapped + bytes.fromhex(last.group(1))[::-1])


class _Dump:
    """The lines of a hex dump, read one after the other: each gives the runs of bytes it
    stands for, (bytes, times), or raises _NotDumpLine (or DumpError)."""

    def __init__(self) -> None:
        self._expected: int | None = None  # where the next line starts
        self._before = b""  # the bytes of the line before: what a '*' repeats
        self._star = 0  # the number of a '*' line waiting for the offset after it
        self._layout: str | None = None
        self._radix: int | None = None  # of the offsets: 8 for od's default, else 16
        self.lines = 0
        self.marked = False  # a ':' or a text column seen: sure it is a dump
        self.data = False  # a line with bytes seen

    def line(self, ln: str, number: int) -> list[tuple[bytes, int]]:
        if ln.strip() == "*":
            if self._star or not self._before:
                if not self.lines:
                    raise _NotDumpLine
                raise DumpError(f"line {number}: a '*' line with no line of bytes before it "
                                "to repeat")
            self._star = number
            self.lines += 1
            return []
        line = _dump_line(ln)
        if line is None:
            raise _NotDumpLine
        digits, data, layout, marked = line
        if self._radix is None:
            self._radix = 8 if len(digits) == 7 and layout == "bytes" else 16
        try:
            offset = int(digits, self._radix)
        except ValueError:
            raise _NotDumpLine from None
        if layout is not None:
            if self._layout is None:
                self._layout = layout
            elif layout != self._layout:
                raise _NotDumpLine
        runs = []
        if self._star:
            runs.append(self._repeats(offset, number))
        elif self._expected is not None and offset != self._expected:
            if self.sure():  # (else plain hex that only looked like a dump so far)
                raise DumpError(
                    f"line {number}: offset {self._shown(offset)} where the line before "
                    f"ended at {self._shown(self._expected)}: a line missing or out of "
                    "order, or a second dump")
            raise _NotDumpLine
        self._expected = offset + len(data)
        self._before = data
        self.lines += 1
        self.marked = self.marked or marked
        self.data = self.data or bool(data)
        if self._layout == "words" and self.lines > 1:
            raise DumpError(_WORDS)
        if data:
            runs.append((data, 1))
        return runs

    def _repeats(self, offset: int, number: int) -> tuple[bytes, int]:
        """The copies a '*' line stands for, up to `offset` (that of line `number`)."""
        assert self._expected is not None
        repeated = self._before
        gap = offset - self._expected
        if gap <= 0 or gap % len(repeated):
            raise DumpError(
                f"line {number}: offset {self._shown(offset)} after the '*' line {self._star} "
                f"is no whole number of copies of the {len(repeated)}-byte line before it "
                f"(from {self._shown(self._expected)})")
        if gap > _MAX_REPEAT:
            raise DumpError(f"line {self._star}: a '*' line standing for more than 4 GiB of "
                            "copies is not read")
        self._star = 0
        return repeated, gap // len(repeated)

    def _shown(self, offset: int) -> str:
        return f"{offset:07o} (octal)" if self._radix == 8 else f"0x{offset:x}"

    def end(self) -> None:
        """The dump ends: a '*' line must not be its last."""
        if self._star:
            raise DumpError(f"line {self._star}: a '*' line ends the dump: no offset after it "
                            "says how far the line before it repeats")

    def sure(self) -> bool:
        """True if the lines read are surely a dump, not plain hex: one with bytes, and
        more than one line or a marked one."""
        return self.data and (self.lines > 1 or self.marked)


def _read_dump(text: str, final: bool = True) -> list[tuple[bytes, int]] | None:
    """The runs of bytes (bytes, times) of the hex dump `text` is, None if it is not one
    (`final`: it is all of the dump, not its first lines). A DumpError for a dump that is
    not read."""
    dump = _Dump()
    runs: list[tuple[bytes, int]] = []
    for number, ln in enumerate(text.splitlines(), 1):
        if not ln.strip():
            continue
        try:
            runs += dump.line(ln, number)
        except _NotDumpLine:
            if dump.sure():  # a dump so far: its bytes are not those of its text
                raise DumpError(f"line {number}: {_NOT_DUMP_LINE}") from None
            return None
    if not dump.sure():
        return None
    if final:
        dump.end()
    return runs


# A line of od's output (od, od -x, od -c, od -A d, …; hexdump without -C too): an offset
# of 6 or more digits, then the columns, or nothing (the end offset, on the last line).
_OD_LINE = re.compile(r"\s*([0-9a-fA-F]{6,16})(\s+\S.*)?\s*")


def _od_shape(text: str, final: bool = True) -> bool:
    """True if `text`, which is no dump read here, has the shape of od's output (or of
    hexdump's without -C): lines that open with offsets of 6 or 7 digits, the first 0,
    growing line to line, `*` lines between them, and (`final`: all of the input) the end
    offset alone on the last line. Read as plain hex, its offsets would be bytes."""
    offsets: list[tuple[int, str, bool]] = []
    for ln in text.splitlines():
        if not ln.strip():
            continue
        if ln.strip() == "*":
            if not offsets:
                return False
            continue
        m = _OD_LINE.fullmatch(ln)
        if m is None:
            return False
        offsets.append((len(m.group(1)), m.group(1).lower(), m.group(2) is not None))
    if len(offsets) < 2 or offsets[0][0] not in (6, 7) or offsets[0][1].strip("0"):
        return False
    if any(b[:2] <= a[:2] for a, b in pairwise(offsets)):
        return False
    if not all(columns for _, _, columns in offsets[:-1]):
        return False
    return not final or not offsets[-1][2]


def _refuse_od(text: str, final: bool = True) -> None:
    """A DumpError if `text` (no dump read here) is od's output in a layout not read."""
    if _od_shape(text, final):
        raise DumpError(_OD)


def parse_dump(text: str, limit: int | None = None) -> bytes | None:
    """Bytes of a hex dump with an offset column, or None if `text` is not one.

    Offsets must chain (each line starts where the previous one ended, or a `*` line's
    copies end), which tells a dump from plain hex that happens to start with a long hex
    word. TooLong when the bytes would be more than `limit`.
    """
    runs = _read_dump(text)
    if runs is None:
        return None
    if limit is not None and sum(len(data) * times for data, times in runs) > limit:
        raise TooLong
    return b"".join(data * times if times > 1 else data for data, times in runs)


# A line that runs on longer than this is no line of a hex dump (and is not held whole).
_MAX_DUMP_LINE = 1 << 16
# What ends a line for str.splitlines in ASCII text.
_LINE_ENDS = "\n\r\x0b\x0c\x1c\x1d\x1e"
# The bytes given at a time: the copies a '*' line stands for come in parts of this size.
_PART = 1 << 16


class HexDumpReader(_Reader):
    """A hex dump with an offset column read piece by piece: line by line, each line's
    offset where the one before ended (blank lines skipped), a `*` line's copies given
    once the offset after it says how many."""

    def __init__(self) -> None:
        self._partial = ""  # a line whose end has not come yet
        self._dump = _Dump()
        self._line = 0
        self._text = _TextPieces("hex")

    def feed(self, data: bytes) -> bytes:
        return b"".join(self.pieces(data))

    def close(self) -> bytes:
        return b"".join(self.pieces(None))

    def pieces(self, data: bytes | None) -> Iterator[bytes]:
        final = data is None
        text = self._partial + ("" if data is None else self._text.decode(data))
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
            try:
                runs = self._dump.line(ln, self._line)
            except _NotDumpLine:
                raise InputError(f"line {self._line}: {_NOT_DUMP_LINE}") from None
            for chunk, times in runs:
                while times:
                    n = min(times, max(1, _PART // len(chunk)))
                    out += chunk * n
                    times -= n
                    if len(out) >= _PART:
                        yield bytes(out)
                        out.clear()
        if out:
            yield bytes(out)
        if final:
            self._dump.end()


def parse_hex(text: str, limit: int | None = None) -> bytes:
    """Bytes from any hex form we read (dump with offsets, or plain); TooLong when a dump
    stands for more than `limit` bytes."""
    dumped = parse_dump(text, limit)
    if dumped is not None:
        return dumped
    _refuse_od(text)
    return parse_plain_hex(text)


def _check_hex(text: str) -> None:
    """An InputError if `text` is in no hex form we read (a dump's copies not spelled out)."""
    if _read_dump(text) is None:
        _refuse_od(text)
        parse_plain_hex(text)


def parse_base64(text: str) -> bytes:
    compact = "".join(text.split())
    if not compact:
        raise InputError("no base64 characters in the input")
    if len(compact.rstrip("=")) % 4 == 1:
        raise InputError("not base64: one character too many or too few")
    # the padding is often left off (URLs, JWT-style tools): put it back
    compact = compact.rstrip("=") + "=" * (-len(compact.rstrip("=")) % 4)
    try:
        # either alphabet, checked alike (urlsafe_b64decode would drop any other character)
        return base64.b64decode(compact.translate(_URLSAFE), validate=True)
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


class Base64Reader(_Reader):
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
    InputError for what is not in the form), `close` those of the end; `pieces` gives
    either (None: the end) in parts of a bounded size, as a `*` line of a dump may stand
    for any number of bytes."""

    def feed(self, data: bytes) -> bytes: ...

    def close(self) -> bytes: ...

    def pieces(self, data: bytes | None) -> Iterator[bytes]: ...


class _RawReader(_Reader):
    def feed(self, data: bytes) -> bytes:
        return data

    def close(self) -> bytes:
        return b""


def choose_reader(head: bytes, form: str | None = None) -> tuple[FormReader, str]:
    """For an input that goes on after its first bytes `head`: a reader for all of it (the
    bytes of `head` not read yet) and its form. The form is `form`, or the first `head`
    reads as in `detect_format`'s order (raw when it is not text; hex, a dump or plain;
    base64; raw). An InputError if `head` is not in the form asked (or is a dump not
    read)."""
    if form is not None and form not in FORMATS:
        raise InputError(f"unknown input form {form!r} (one of {', '.join(FORMATS)})")
    if form is None and not _is_text(head):
        form = "raw"
    if form != "raw":
        for candidate in [form] if form is not None else ["hex", "base64"]:
            try:
                if candidate == "base64":
                    Base64Reader().feed(head)
                    return Base64Reader(), candidate
                return _hex_reader(head, detected=form is None), candidate
            except DumpError:
                raise
            except InputError:
                if form is not None:
                    raise
                if candidate == "hex":
                    typo = hex_typo(head.decode("ascii", "replace"))
                    if typo is not None:
                        raise InputError(typo) from None
    return _RawReader(), "raw"


def open_reader(head: bytes, form: str | None = None) -> tuple[FormReader, str, bytes]:
    """`choose_reader`, with the bytes of `head` read: (reader for the rest, form, bytes)."""
    reader, form = choose_reader(head, form)
    return reader, form, reader.feed(head)


class _DetectedHex(_Reader):
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


def _hex_reader(head: bytes, detected: bool) -> FormReader:
    """A reader for the dump `head` starts (its whole lines are one), else for plain hex
    (an InputError if `head` is not that either)."""
    text = head.decode("ascii", "replace")
    whole_lines = text[: max(text.rfind(c) for c in _LINE_ENDS) + 1]
    if _read_dump(whole_lines, final=False) is not None:
        return HexDumpReader()
    _refuse_od(whole_lines, final=False)
    PlainHexReader().feed(head)
    return _DetectedHex(PlainHexReader()) if detected else PlainHexReader()


_ODD_HINT = ": a digit missing? (--input raw decodes the characters themselves)"
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def hex_typo(text: str) -> str | None:
    """What is wrong with text that is hex but for a character or two (`00 53 77 a1 6g`):
    groups of hex digits between spaces, three or more, and one or two characters that
    are not hex digits. Decoded as base64 or as the characters themselves it would only
    give bytes that were never meant; None for text not of that shape."""
    groups = text.split()
    if len(groups) < 3 or any(len(g) > 8 for g in groups):
        return None
    odd = [(i, ch) for i, ch in enumerate(text) if not ch.isspace() and ch not in _HEX_DIGITS]
    if not 1 <= len(odd) <= 2:
        return None
    at, ch = odd[0]
    return (f"not hex: unexpected character {ch!r} at position {at + 1} (the rest is hex; "
            "--input base64 or --input raw reads it as such)")


def detect_format(data: bytes) -> str:
    """ "raw", "hex" or "base64" for input given as bytes."""
    if not data or not _is_text(data):
        return "raw"
    text = data.decode("ascii")
    try:
        _check_hex(text)
        return "hex"
    except DumpError:
        raise
    except InputError as e:
        if str(e).startswith("odd number of hex digits") and len(text.strip()) >= 4:
            # nothing but hex digits, one short: a typo, not text to decode as bytes
            raise InputError(f"{e}{_ODD_HINT}") from None
    typo = hex_typo(text)
    if typo is not None:
        raise InputError(typo)
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


_BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark


def parse_input(data: bytes, form: str | None = None,
                limit: int | None = None) -> tuple[bytes, str]:
    """(the bytes, the form they were read as). `form` forces one of FORMATS. TooLong when
    the bytes would be more than `limit` (a hex dump's `*` lines stand for copies).
    Text that a UTF-8 byte order mark begins (an editor's) is read without it; input of
    nothing but white space is no bytes (no AMQP value starts with one)."""
    if data.startswith(_BOM) and form != "raw" and (
            form is not None or detect_format(data[3:]) != "raw"):
        data = data[3:]
    if form is None and data.isspace():
        return b"", "raw"
    form = form or detect_format(data)
    if form == "raw":
        return data, form
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise InputError(f"--input {form}: the input is not text") from None
    if form == "hex":
        return parse_hex(text, limit), form
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
        try:
            return detect_format(text.encode("utf-8", "surrogateescape")) == "raw"
        except InputError:  # a line of a dump not read, or hex a digit short: no file name
            return False
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


def message_cut_short(data: bytes) -> bool:
    """True if `data` is the start of an encoded message that ends too soon: its whole
    values are message sections in order, and the input ends within the next one, which
    opens as a section."""
    return _message_so_far(data) and not is_message(data)


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
