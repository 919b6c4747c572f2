"""`amqp decode`: bytes (hex, base64, raw; argument, file, stdin) → a readable tree or JSON.

Thin: `decode_input` says what the input is, the codec decodes it into items (here),
`decode_output` writes them (`render` draws each).

The input is read in pieces and decoded as it comes: what is held at any time is bounded by
the largest item (a frame, a value, a message) plus a little history for error windows,
never by the input. An input that ends within its first MiB (`_LOOKAHEAD`) is read whole
before anything is decided, as the detection rules of `decode_input` want, and its text
output opens with the counts of what it holds; a longer one is decided on that first MiB,
and its counts close the output instead.
"""

import itertools
import os
import sys
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, BinaryIO

import typer

from amqpcli.cli.app import app
from amqpcli.cli.commands import COMMANDS
from amqpcli.errors import Exit, UserError

if TYPE_CHECKING:  # the codec and render load when the command runs, not for --help
    from amqpcli.cli.decode_input import FormReader
    from amqpcli.codec.types import DecodeError
    from amqpcli.render.items import Item

_EXAMPLE_SUFFIXES = (".amqp", ".hex", ".b64")

# Input read before deciding its form and kind: one that ends within it is read whole.
_LOOKAHEAD = 1 << 20
# Bytes asked of a file or stdin at a time.
_PIECE = 1 << 16
# Bytes kept before an error's offset, and read after it, for its hex window and the SASL
# secrets masked in it (a secret is found from its frame's start, which this reaches back
# to for any SASL frame that fits in it).
_HISTORY = 1 << 16


def _examples() -> Any:
    from importlib import resources

    return resources.files("amqpcli").joinpath("examples")


def _example_files() -> dict[str, str]:
    """The bundled examples: {name: file name}, a name being its file's name without the
    suffix (no two examples share one)."""
    return {f.name.rsplit(".", 1)[0]: f.name for f in _examples().iterdir()
            if f.name.endswith(_EXAMPLE_SUFFIXES)}


def example_names() -> list[str]:
    """What `--example list` prints, the completions offer and `--example NAME` takes
    (the file's name, suffix and all, is taken too)."""
    return sorted(_example_files())


def read_example(name: str) -> bytes:
    files = _example_files()
    file = files.get(name, name if name in files.values() else None)
    if file is None:
        raise UserError(f"no example {name!r}; examples: {', '.join(sorted(files))}",
                        Exit.USAGE)
    return _examples().joinpath(file).read_bytes()  # type: ignore[no-any-return]


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a long hex string is no file name
        return False


def _open_source(
    data: str | None, file: Path | None, example: str | None
) -> tuple[Iterator[bytes], str, bool]:
    """(the input's bytes in pieces, where they come from, whether they are a stream: a
    pipe, a FIFO, a device or a terminal, which may never end). A file is opened now, so
    that one that cannot be is an error before anything is decoded."""
    given = [x is not None for x in (data, file, example)]
    if sum(given) > 1:
        raise UserError("give one input: an argument, -f FILE or --example NAME", Exit.USAGE)
    if example is not None:
        return iter([read_example(example)]), f"example {example}", False
    if data is not None and file is None:
        from amqpcli.cli.decode_input import looks_like_path

        if data != "-" and _is_file(data):
            file = Path(data)
        elif data != "-" and looks_like_path(data):
            if not os.path.exists(data):
                raise UserError(f"{data}: no such file", Exit.USAGE)
            file = Path(data)  # not a regular file: reading it says what it is
        elif data != "-":
            return iter([data.encode("utf-8", "surrogateescape")]), "argument", False
    if file is not None and str(file) != "-":
        try:
            stream = open(file, "rb")  # noqa: SIM115 - closed by _pieces
        except OSError as e:
            raise UserError(f"cannot read {file}: {e.strerror or e}", Exit.USAGE) from None
        return _pieces(stream, str(file)), str(file), _is_stream(stream)
    if sys.stdin is None or sys.stdin.closed:  # started with stdin closed (`<&-`)
        raise UserError("standard input is closed: nothing to decode (give bytes as an "
                        "argument, -f FILE or --example NAME)", Exit.USAGE)
    if sys.stdin.isatty() and data != "-" and str(file) != "-":
        raise UserError(
            "nothing to decode: give bytes as an argument, -f FILE, or on stdin", Exit.USAGE
        )
    return _pieces(sys.stdin.buffer, "stdin"), "stdin", _is_stream(sys.stdin.buffer)


def _is_stream(stream: BinaryIO) -> bool:
    """Whether `stream` is other than a regular file (a pipe, a FIFO, a device such as
    /dev/zero, a terminal, a socket): its end may never come."""
    import stat

    try:
        return not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return True


def _pieces(stream: BinaryIO, name: str) -> Iterator[bytes]:
    """The bytes of `stream` as they arrive (what is there, up to _PIECE at a time)."""
    read = getattr(stream, "read1", stream.read)
    try:
        while True:
            sys.stdout.flush()  # what is decoded shows before waiting for more input
            try:
                piece = read(_PIECE)
            except OSError as e:
                raise UserError(f"cannot read {name}: {e.strerror or e}", Exit.USAGE) from None
            if not piece:
                return
            yield piece
    finally:
        if stream is not getattr(sys.stdin, "buffer", None):
            stream.close()


class Decoded:
    """The input's bytes (read from its form) for a decoder, piece by piece.

    `whole` is the input when all of it was read before decoding started. Otherwise the
    bytes given to the decoder are kept from `_HISTORY` before the first one it still needs
    (`release`), for the hex window of an error (`around`).
    """

    def __init__(self, pieces: Iterator[bytes], ahead: bytes = b"") -> None:
        self._pieces = pieces
        self._ahead: deque[bytes] = deque([ahead] if ahead else [])  # read, not given yet
        self._ahead_size = len(ahead)
        self.size = len(ahead)  # bytes read so far: all of them once `eof`
        self.eof = False
        self.whole: bytes | None = None
        self._kept = bytearray()  # given, from offset _kept_start
        self._kept_start = 0
        # the input may never end (a pipe, a device: `_is_stream`); `stopped` once it is
        # read no further after a fatal error (`stop_after_error`)
        self.stream = False
        self.stopped = False

    @classmethod
    def of(cls, data: bytes) -> "Decoded":
        """All of an input, read."""
        src = cls(iter(()), data)
        src.eof = True
        src.whole = data
        return src

    def again(self) -> "Decoded":
        """An input read whole before decoding, from its start again (for another pass)."""
        assert self.whole is not None
        return Decoded.of(self.whole)

    def _read(self) -> bool:
        """One more piece read (False at the end of the input)."""
        for piece in self._pieces:
            if piece:
                self._ahead.append(piece)
                self._ahead_size += len(piece)
                self.size += len(piece)
                return True
        self.eof = True
        return False

    def peek(self, n: int) -> bytes:
        """The first `n` bytes (fewer at the end of the input); none given out yet. An input
        read to its end here becomes `whole`."""
        while self._ahead_size < n and self._read():
            pass
        if len(self._ahead) > 1:
            self._ahead = deque([b"".join(self._ahead)])
        if self.eof and self.whole is None and not self._kept:
            self.whole = self._ahead[0] if self._ahead else b""
        return self._ahead[0][:n] if self._ahead else b""

    def read_all(self) -> bytes:
        """The whole input (none given out yet)."""
        while self._read():
            pass
        return self.peek(self._ahead_size)

    def pieces(self) -> Iterator[bytes]:
        while not self.stopped and (self._ahead or self._read()):
            piece = self._ahead.popleft()
            self._ahead_size -= len(piece)
            if self.whole is None:
                self._kept += piece
            yield piece

    @property
    def given(self) -> int:
        """The offset after the last byte given out."""
        return self.size - self._ahead_size

    def drain(self) -> None:
        """Read the rest of the input, undecoded (after an error that ends decoding), to
        count its bytes; nothing more of a stream stopped after its error."""
        for _ in self.pieces():
            self.release(self.given)

    def stop_after_error(self) -> None:
        """A fatal decode error was reported: a stream not at its end is read no further
        (a regular file is still read to its end by `drain`, its bytes counted; a pipe or
        a device such as /dev/zero may never end)."""
        if self.stream and not self.eof:
            self.stopped = True

    def release(self, offset: int) -> None:
        """The decoder needs no byte before `offset` any more."""
        drop = offset - _HISTORY - self._kept_start
        if self.whole is None and drop > max(_PIECE, len(self._kept) // 2):  # amortised
            del self._kept[:drop]
            self._kept_start += drop

    @property
    def kept_from(self) -> int:
        """The offset of the first byte still kept (0 for an input read whole)."""
        return 0 if self.whole is not None else self._kept_start

    def around(self, offset: int) -> tuple[bytes, int]:
        """(bytes, the offset of the first) to show an error at `offset` in: those kept
        before it, and those after it, read on for `_HISTORY` bytes or to the end."""
        if self.whole is not None:
            return self.whole, 0
        while self._kept_start + len(self._kept) + self._ahead_size < offset + _HISTORY:
            if not self._read():
                break
        return bytes(self._kept) + b"".join(self._ahead), self._kept_start


def _read_input(
    pieces: Iterator[bytes], input_form: str | None, source: str, stream: bool = False
) -> tuple[Decoded, str]:
    """The decoded bytes of the input and the form they were read from: an input that ends
    within `_LOOKAHEAD` read whole (`parse_input`), unless its bytes are more (a hex dump's
    `*` lines stand for copies); a longer one by the reader of the form its first bytes
    are in."""
    from amqpcli.cli.decode_input import InputError, TooLong, choose_reader, parse_input

    head = bytearray()
    for piece in pieces:
        head += piece
        if len(head) >= _LOOKAHEAD:
            break
    else:
        try:
            buf, form = parse_input(bytes(head), input_form, limit=_LOOKAHEAD)
        except TooLong:
            pass  # read as it comes, as a longer input is
        except InputError as e:
            raise UserError(f"{source}: {e}", Exit.USAGE) from None
        else:
            return Decoded.of(buf), form
    try:
        reader, form = choose_reader(bytes(head), input_form)
    except InputError as e:
        raise UserError(f"{source}: {e}", Exit.USAGE) from None
    src = Decoded(_read_form(itertools.chain([bytes(head)], pieces), reader, source))
    src.stream = stream
    return src, form


def _read_form(pieces: Iterator[bytes], reader: "FormReader", source: str) -> Iterator[bytes]:
    from amqpcli.cli.decode_input import InputError

    try:
        for piece in pieces:
            yield from reader.pieces(piece)
        yield from reader.pieces(None)
    except InputError as e:
        raise UserError(f"{source}: {e}", Exit.USAGE) from None


def _detect_kind(src: Decoded) -> str:
    """What the input holds (`detect_kind`; on its first bytes when it goes on past them,
    reading on while they may start a message)."""
    from amqpcli.cli.decode_input import detect_kind, detect_kind_prefix

    n = _LOOKAHEAD
    while True:
        head = src.peek(n)
        if src.whole is not None:
            return detect_kind(src.whole)
        kind = detect_kind_prefix(head, chain=n == _LOOKAHEAD)
        if kind is not None:
            return kind
        n *= 2


# --- decoding into items -----------------------------------------------------------------


def decode_frames(data: bytes, max_frame_size: int | None) -> "tuple[list[Item], str | None]":
    notes: list[str] = []
    items = list(_frame_items(Decoded.of(data), max_frame_size, notes))
    return items, notes[0] if notes else None


def _frame_items(src: Decoded, max_frame_size: int | None, notes: list[str]) -> "Iterator[Item]":
    from amqpcli.codec.frames import FrameReader

    reader = FrameReader(max_frame_size=max_frame_size)
    for piece in src.pieces():
        yield from reader.feed(piece)
        # after a header of another protocol or a fatal error the rest is only counted
        src.release(reader.offset if reader.opaque is None else src.given)
    yield from reader.close()
    if reader.opaque and reader.opaque != "error" and reader.opaque_bytes:
        notes.append(
            f"{reader.opaque_bytes} bytes of {reader.opaque} data after its header are not decoded"
        )


def decode_message(data: bytes) -> "list[Item]":
    from amqpcli.codec.frames import FrameError
    from amqpcli.codec.message import Message
    from amqpcli.codec.types import DecodeError
    from amqpcli.render.items import MessageItem
    from amqpcli.render.message import load_sections

    try:
        msg = load_sections(Message.decode(data))
    except DecodeError as e:
        return [FrameError(e.offset, e.expected, e.found)]
    return [MessageItem(0, msg, len(data))]


def decode_values(data: bytes) -> "list[Item]":
    return list(_value_items(Decoded.of(data)))


def _value_items(src: Decoded) -> "Iterator[Item]":
    """The values of the input, one after the other, each decoded once all its bytes are
    read; a value that does not decode ends the sequence (a fatal error)."""
    from amqpcli.codec.decode import decode as decode_value
    from amqpcli.codec.frames import FrameError
    from amqpcli.codec.types import DecodeError
    from amqpcli.render.items import ValueItem

    pieces = src.pieces()
    buf = b""  # the bytes from offset `base` on; the next value at buf[p]
    base = p = 0
    ended = False
    while True:
        n = len(buf)
        try:
            while p < n:
                value, end = decode_value(buf, p)
                yield ValueItem(base + p, value, end - p, buf[p:end])
                p = end
        except DecodeError as e:
            if ended or not _needs_more_input(e):
                e = e.moved(base)
                yield FrameError(max(e.offset, base + p), e.expected, e.found, fatal=True)
                return
            short = True
        except RecursionError:
            yield FrameError(base + p, "a value", "values nested too deeply", fatal=True)
            return
        else:
            if ended:
                return
            short = False
        # read on: a piece, or as many bytes again as a value cut short has (so that a
        # long one is decoded a few times, not once a piece)
        want = 2 * (n - p) if short else 1
        while len(buf) - p < want:
            piece = next(pieces, None)
            if piece is None:
                ended = True
                break
            buf, base, p = buf[p:] + piece, base + p, 0
        src.release(base)


def _needs_more_input(e: "DecodeError") -> bool:
    """True for an error that more input may take away: the input ended within the value,
    or a count of zero-width array elements is bounded by the length of the input."""
    return e.found.startswith("end of input") or e.expected.endswith("zero-width elements")


def _items_010(src: Decoded, has_header: bool) -> Iterator[Any]:
    from amqpcli.amqp010 import StreamDecoder

    decoder = StreamDecoder(expect_header=has_header)
    for piece in src.pieces():
        yield from decoder.feed(piece)
        # a 0-10 frame is at most 64 KiB: the decoder holds no bytes from before that but
        # those of an assembly under way
        src.release(src.given - len(piece) - 0xFFFF)
    yield from decoder.close()


# --- where the output goes (decode_output writes it) -------------------------------------


class _Out:
    """Where text goes: a rich console in colour (by default on a terminal, unless NO_COLOR
    is set or TERM is dumb), plain lines otherwise."""

    def __init__(self, color: bool | None = None) -> None:
        if color is None:
            color = (sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
                     and not os.environ.get("NO_COLOR"))
        self.rich = color
        self.console: Any = None
        if self.rich:
            from rich.console import Console

            # lines name files and hold decoded text: never emoji codes or markup
            self.console = Console(highlight=False, force_terminal=True, markup=False,
                                   emoji=False)

    def tree(self, node: Any) -> None:
        from amqpcli.render.text import plain_lines, rich_tree

        if self.rich:
            self.console.print(rich_tree(node))
        else:
            sys.stdout.write("\n".join(plain_lines(node)) + "\n")

    def line(self, text: str, style: str = "") -> None:
        if self.rich:
            self.console.print(text, style=style or None, markup=False, soft_wrap=True)
        else:
            sys.stdout.write(text + "\n")


@app.command(
    help=COMMANDS["decode"].help,
    epilog="Examples:\n\n  amqp decode --example client-session\n\n"
    "  amqp decode 00 53 77 a1 02 68 69\n\n"
    "  xxd capture.bin | amqp decode --json",
)
def decode(
    words: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="DATA",
            help="The bytes (hex or base64, in one word or several: 00 53 77), or a path to "
                 "a file; '-' or nothing reads stdin.",
            show_default=False,
        ),
    ] = None,
    file: Annotated[
        str | None,
        typer.Option("--file", "-f", metavar="PATH", help="Read the input from FILE ('-': stdin)."),
    ] = None,
    input_form: Annotated[
        str | None,
        typer.Option("--input", "-i", help="Input form: hex, base64 or raw (default: detected)."),
    ] = None,
    as_kind: Annotated[
        str | None,
        typer.Option(
            "--as",
            help="What the bytes are: frames, message, values, or frames-0-10 (AMQP 0-10 "
            "frames without their protocol header) (default: detected).",
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="One JSON object per item (lossless; see docs/message-format.md)."
        ),
    ] = False,
    brief: Annotated[
        bool, typer.Option("--brief", help="One line per frame instead of a tree.")
    ] = False,
    color: Annotated[
        bool | None,
        typer.Option("--color/--no-color", help="Colour (default: on a terminal, unless NO_COLOR is set).", show_default=False),
    ] = None,
    show_secrets: Annotated[
        bool, typer.Option("--show-secrets", help="Show SASL passwords and credentials (masked by default).")
    ] = False,
    max_frame_size: Annotated[
        int | None,
        typer.Option("--max-frame-size", help="Report frames larger than this as errors."),
    ] = None,
    example: Annotated[
        str | None,
        typer.Option(
            "--example",
            help="Decode a bundled example (client-session, message, …; 'list' lists them).",
        ),
    ] = None,
) -> None:
    from amqpcli.cli.decode_input import FORMATS, KINDS
    from amqpcli.cli.decode_output import show_010, show_items
    from amqpcli.cli.options import check_path
    from amqpcli.codec.frames import parse_protocol_header

    check_path(file, "--file")  # Typer would read '' as the path '.'
    if example == "list":
        for name in example_names():
            typer.echo(name)
        return
    data = words[0] if words and len(words) == 1 else None
    if words and len(words) > 1:
        # Hex given as separate words (`amqp decode 00 53 77`): one input (empty words
        # add nothing: `amqp decode '' ''` has no bytes, not a space).
        data = " ".join(word for word in words if word)
    if input_form is not None and input_form not in FORMATS:
        raise UserError(f"--input must be one of {', '.join(FORMATS)}", Exit.USAGE)
    if as_kind is not None and as_kind not in KINDS:
        raise UserError(f"--as must be one of {', '.join(KINDS)}", Exit.USAGE)
    if max_frame_size is not None and not 8 <= max_frame_size <= 0xFFFFFFFF:
        raise UserError(
            "--max-frame-size must be at least 8 (the frame header) and at most 4294967295",
            Exit.USAGE,
        )
    pieces, source, stream = _open_source(data, None if file is None else Path(file), example)
    src, form = _read_input(pieces, input_form, source, stream)
    if not src.peek(_LOOKAHEAD):  # (bytes that end within it are then the whole input)
        raise UserError(f"{source}: no bytes to decode", Exit.USAGE)

    kind = as_kind or _detect_kind(src)
    header = parse_protocol_header(src.peek(8))
    is_010 = header is not None and header.kind == "amqp0-10"
    out = None if as_json else _Out(color)
    if kind == "frames-0-10" or (kind == "frames" and is_010):
        show_010(src, lambda s: _items_010(s, is_010), out, source, form, as_kind is None,
                 brief, show_secrets)
        return
    if kind == "message":
        src.read_all()  # a message is one item: all of the input
    items_of: Callable[[Decoded, list[str]], Iterator[Item]] = {
        "frames": lambda s, notes: _frame_items(s, max_frame_size, notes),
        "message": lambda s, notes: iter(decode_message(s.whole or b"")),
        "values": lambda s, notes: _value_items(s),
    }[kind]
    show_items(kind, src, items_of, out, source, form, as_kind is None, brief, show_secrets)
