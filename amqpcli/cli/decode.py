"""`amqp decode`: bytes (hex, base64, raw; argument, file, stdin) → a readable tree or JSON.

Thin: `decode_input` says what the input is, the codec decodes, `render` draws.
"""

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from amqpcli.cli.app import app
from amqpcli.cli.commands import COMMANDS
from amqpcli.errors import Exit, UserError

if TYPE_CHECKING:  # the codec and render load when the command runs, not for --help
    from amqpcli.codec.frames import FrameError
    from amqpcli.render.items import Item

_EXAMPLE_SUFFIXES = (".amqp", ".hex", ".b64")


def _examples() -> Any:
    from importlib import resources

    return resources.files("amqpcli").joinpath("examples")


def example_names() -> list[str]:
    return sorted(f.name for f in _examples().iterdir() if f.name.endswith(_EXAMPLE_SUFFIXES))


def read_example(name: str) -> bytes:
    names = example_names()
    match = [n for n in names if n == name or n.rsplit(".", 1)[0] == name]
    if not match:
        raise UserError(f"no example {name!r}; examples: {', '.join(names)}", Exit.USAGE)
    return _examples().joinpath(match[0]).read_bytes()  # type: ignore[no-any-return]


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a long hex string is no file name
        return False


def _read_source(data: str | None, file: Path | None, example: str | None) -> tuple[bytes, str]:
    """(input bytes, where they came from)."""
    given = [x is not None for x in (data, file, example)]
    if sum(given) > 1:
        raise UserError("give one input: an argument, -f FILE or --example NAME", Exit.USAGE)
    if example is not None:
        return read_example(example), f"example {example}"
    if data is not None and file is None:
        from amqpcli.cli.decode_input import looks_like_path

        if data != "-" and _is_file(data):
            file = Path(data)
        elif data != "-" and looks_like_path(data):
            if not os.path.exists(data):
                raise UserError(f"{data}: no such file", Exit.USAGE)
            file = Path(data)  # not a regular file: reading it says what it is
        elif data != "-":
            return data.encode("utf-8", "surrogateescape"), "argument"
    if file is not None and str(file) != "-":
        try:
            return file.read_bytes(), str(file)
        except OSError as e:
            raise UserError(f"cannot read {file}: {e.strerror or e}", Exit.USAGE) from None
    if sys.stdin.isatty() and data != "-" and str(file) != "-":
        raise UserError(
            "nothing to decode: give bytes as an argument, -f FILE, or on stdin", Exit.USAGE
        )
    return sys.stdin.buffer.read(), "stdin"


# --- decoding into items -----------------------------------------------------------------


def decode_frames(data: bytes, max_frame_size: int | None) -> "tuple[list[Item], str | None]":
    from amqpcli.codec.frames import FrameReader

    reader = FrameReader(max_frame_size=max_frame_size)
    items: list[Item] = [*reader.feed(data), *reader.close()]
    note = None
    if reader.opaque and reader.opaque != "error" and reader.opaque_bytes:
        note = (
            f"{reader.opaque_bytes} bytes of {reader.opaque} data after its header are not decoded"
        )
    return items, note


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
    from amqpcli.codec.decode import decode as decode_value
    from amqpcli.codec.frames import FrameError
    from amqpcli.codec.types import DecodeError
    from amqpcli.render.items import ValueItem

    items: list[Item] = []
    p = 0
    while p < len(data):
        try:
            value, end = decode_value(data, p)
        except DecodeError as e:
            items.append(FrameError(max(e.offset, p), e.expected, e.found, fatal=True))
            break
        except RecursionError:
            items.append(FrameError(p, "a value", "values nested too deeply", fatal=True))
            break
        items.append(ValueItem(p, value, end - p))
        p = end
    return items


def _describe(kind: str, items: "list[Item]", detected: bool) -> str:
    from amqpcli.codec.frames import Frame, FrameError, ProtocolHeader
    from amqpcli.render.items import MessageItem, ValueItem

    how = "detected" if detected else "as asked"
    if kind == "frames":
        frames = sum(isinstance(i, Frame) for i in items)
        headers = sum(isinstance(i, ProtocolHeader) for i in items)
        errors = sum(isinstance(i, FrameError) for i in items)
        if frames == 1 and headers == 0 and errors == 0:
            return f"a single frame ({how})"
        bits = [f"{headers} protocol header{'s' * (headers != 1)}"] if headers else []
        bits.append(f"{frames} frame{'s' * (frames != 1)}")
        if errors:
            bits.append(f"{errors} error{'s' * (errors != 1)}")
        return f"a frame stream: {', '.join(bits)} ({how})"
    if kind == "message":
        msg = next((i for i in items if isinstance(i, MessageItem)), None)
        if msg is None:
            return f"an encoded message ({how})"
        bare = not any(
            getattr(msg.message, s) is not None
            for s in ("header", "delivery_annotations", "message_annotations", "footer")
        )
        return f"an encoded message, {'bare' if bare else 'annotated'} ({how})"
    n = sum(isinstance(i, ValueItem) for i in items)
    return f"a sequence of {n} AMQP value{'s' * (n != 1)} ({how})"


# --- output ------------------------------------------------------------------------------


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

            self.console = Console(highlight=False, force_terminal=True)

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


def _report_error(err: "FrameError", data: bytes, show_secrets: bool = False) -> None:
    from amqpcli.render.hexdump import hex_window
    from amqpcli.render.redact import secret_spans

    sys.stdout.flush()
    lines = [f"decode error at offset {err.offset}: expected {err.expected}, found {err.found}"]
    if err.frame_offset is not None and err.frame_offset != err.offset:
        lines[0] += f" (in the frame at offset {err.frame_offset})"
    masked = () if show_secrets else secret_spans(data)
    lines += ["  " + ln for ln in hex_window(data, err.offset, masked=masked)]
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()


def _decode_010(
    buf: bytes, has_header: bool, source: str, form: str, detected: bool, as_json: bool, brief: bool,
    show_secrets: bool, color: bool | None = None,
) -> None:
    """An AMQP 0-10 frame stream: assemblies as trees, lines (--brief) or JSON."""
    from amqpcli.amqp010 import StreamDecoder, StreamError
    from amqpcli.codec.frames import FrameError
    from amqpcli.render.amqp010 import tree_010
    from amqpcli.render.jsonvalues import json_line
    from amqpcli.render.traffic import json_010, line_010

    decoder = StreamDecoder(expect_header=has_header)
    items = [*decoder.feed(buf), *decoder.close()]
    out = None if as_json else _Out(color)
    if out is not None:
        n = sum(getattr(i, "method", None) is not None for i in items)
        how = "detected" if detected else "as asked"
        out.line(f"an AMQP 0-10 frame stream: {n} assembl{'ies' if n != 1 else 'y'} ({how}); "
                 f"{len(buf)} bytes from {form} input ({source})", "dim")
    error = None
    for item in items:
        if isinstance(item, StreamError):
            error = item.error
        if as_json:
            sys.stdout.write(json_line(json_010(item, show_secrets=show_secrets)) + "\n")
        elif isinstance(item, StreamError):
            continue
        elif brief:
            assert out is not None
            out.line(line_010(item, show_secrets=show_secrets))
        else:
            assert out is not None
            for line in tree_010(item, show_secrets):
                out.line(line)
    if error is not None:
        _report_error(FrameError(error.offset, error.expected, error.found), buf, show_secrets)
        raise UserError(
            f"decode error: at offset {error.offset}: expected {error.expected}, "
            f"found {error.found}",
            Exit.DECODE,
        )


@app.command(
    help=COMMANDS["decode"].help,
    epilog="Examples: amqp decode --example client-session;  amqp decode 00 53 77 a1 02 68 69;  "
    "xxd capture.bin | amqp decode --json",
)
def decode(
    data: Annotated[
        str | None,
        typer.Argument(
            help="The bytes (hex or base64), or a path to a file; '-' or nothing reads stdin.",
            show_default=False,
        ),
    ] = None,
    more: Annotated[list[str] | None, typer.Argument(hidden=True)] = None,
    file: Annotated[
        Path | None, typer.Option("--file", "-f", help="Read the input from FILE ('-': stdin).")
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
    from amqpcli.cli.decode_input import FORMATS, KINDS, InputError, detect_kind, parse_input
    from amqpcli.codec.frames import Frame, FrameError, ProtocolHeader, parse_protocol_header
    from amqpcli.render.items import TransferAssembler, item_to_json, item_tree
    from amqpcli.render.jsonvalues import json_line

    if example == "list":
        for name in example_names():
            typer.echo(name)
        return
    if more:
        # Hex given as separate words (`amqp decode 00 53 77`): one input.
        data = " ".join([data or "", *more])
    if input_form is not None and input_form not in FORMATS:
        raise UserError(f"--input must be one of {', '.join(FORMATS)}", Exit.USAGE)
    if as_kind is not None and as_kind not in KINDS:
        raise UserError(f"--as must be one of {', '.join(KINDS)}", Exit.USAGE)
    if max_frame_size is not None and not 8 <= max_frame_size <= 0xFFFFFFFF:
        raise UserError(
            "--max-frame-size must be at least 8 (the frame header) and at most 4294967295",
            Exit.USAGE,
        )
    raw, source = _read_source(data, file, example)
    try:
        buf, form = parse_input(raw, input_form)
    except InputError as e:
        raise UserError(f"{source}: {e}", Exit.USAGE) from None
    if not buf:
        raise UserError(f"{source}: no bytes to decode", Exit.USAGE)

    kind = as_kind or detect_kind(buf)
    header = parse_protocol_header(buf)
    is_010 = header is not None and header.kind == "amqp0-10"
    if kind == "frames-0-10" or (kind == "frames" and is_010):
        _decode_010(buf, is_010, source, form, as_kind is None, as_json, brief, show_secrets,
                    color)
        return
    note = None
    if kind == "frames":
        items, note = decode_frames(buf, max_frame_size)
    elif kind == "message":
        items = decode_message(buf)
    else:
        items = decode_values(buf)

    out = None if as_json else _Out(color)
    if out is not None:
        out.line(
            f"{_describe(kind, items, as_kind is None)}; {len(buf)} bytes from {form} input ({source})",
            "dim",
        )
    errors: list[FrameError] = []
    assembler = TransferAssembler()
    if brief:
        from amqpcli.render.frameline import item_line
    for item in items:
        whole = assembler.feed(item) if isinstance(item, Frame) else None
        if isinstance(item, FrameError):
            errors.append(item)
            if as_json:
                sys.stdout.write(json_line(item_to_json(item)) + "\n")
            _report_error(item, buf, show_secrets)
            continue
        if as_json:
            obj = item_to_json(item, show_secrets, message=whole)
            sys.stdout.write(json_line(obj) + "\n")
        elif brief and isinstance(item, (Frame, ProtocolHeader)):
            assert out is not None
            out.line(item_line(item, show_secrets=show_secrets, message=whole))
        else:
            assert out is not None
            out.tree(item_tree(item, show_secrets, message=whole))
    if note:
        sys.stderr.write(f"note: {note}\n")
    if errors:
        first = errors[0]
        count = f"{len(errors)} decode errors" if len(errors) > 1 else "decode error"
        raise UserError(
            f"{count}: first at offset {first.offset}: expected {first.expected}, found {first.found}",
            Exit.DECODE,
        )
