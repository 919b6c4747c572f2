"""`amqp decode`'s output: the items `decode` reads, as trees, one line each (--brief) or
JSON, with the line that says what the input holds (first for an input read whole, last
for one decoded as it is read) and each decode error, with the bytes around it, on
stderr. `render` draws each item; this says what to draw, where and in what order.
"""

import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from amqpcli.errors import Exit, UserError

if TYPE_CHECKING:  # (decode imports this module; the codec and render load as it runs)
    from amqpcli.cli.decode import Decoded
    from amqpcli.codec.frames import FrameError
    from amqpcli.render.items import Item


class TextOut(Protocol):
    """Where text goes (`decode`'s choice: a console in colour, or plain lines)."""

    def tree(self, node: Any) -> None: ...

    def line(self, text: str, style: str = "") -> None: ...


class _Tally:
    """What the items of an input were: the counts its description says."""

    def __init__(self) -> None:
        from amqpcli.codec.frames import Frame, FrameError, ProtocolHeader
        from amqpcli.render.items import MessageItem, ValueItem

        self._counts = {Frame: 0, ProtocolHeader: 0, ValueItem: 0, FrameError: 0,
                        MessageItem: 0}
        self.message: MessageItem | None = None
        self.first_error: FrameError | None = None
        # the first of these, for the description and the summary of the errors
        self._firsts = {MessageItem: "message", FrameError: "first_error"}

    def add(self, item: "Item") -> None:
        kind = type(item)
        self._counts[kind] += 1
        if self._counts[kind] == 1 and kind in self._firsts:
            setattr(self, self._firsts[kind], item)

    def count(self, kind: type) -> int:
        return self._counts[kind]


def _cut_short(err: "FrameError") -> bool:
    """True for an error where the input ended within the item it was in."""
    return err.found.startswith("end of input")


def _describe(kind: str, tally: _Tally, detected: bool, cut_message: bool = False) -> str:
    """What the input held, counted as `--json` lists its items. A sequence of values
    ends at its first error: the description says what came before it and how it ended
    (`cut_message`: the input reads as an encoded message cut short)."""
    from amqpcli.codec.frames import Frame, FrameError, ProtocolHeader
    from amqpcli.render.items import ValueItem

    how = "detected" if detected else "as asked"
    err = tally.first_error
    if kind == "frames":
        frames, headers = tally.count(Frame), tally.count(ProtocolHeader)
        errors = tally.count(FrameError)
        if frames == 1 and headers == 0 and errors == 0:
            return f"a single frame ({how})"
        bits = [f"{headers} protocol header{'s' * (headers != 1)}"] if headers else []
        bits.append(f"{frames} frame{'s' * (frames != 1)}")
        if errors:
            bits.append(f"{errors} error{'s' * (errors != 1)}")
        return f"a frame stream: {', '.join(bits)} ({how})"
    if kind == "message":
        msg = tally.message
        if msg is None:
            if err is not None:
                return (f"an encoded message, cut short ({how})" if _cut_short(err)
                        else f"an encoded message that does not decode ({how})")
            return f"an encoded message ({how})"
        bare = not any(
            getattr(msg.message, s) is not None
            for s in ("header", "delivery_annotations", "message_annotations", "footer")
        )
        return f"an encoded message, {'bare' if bare else 'annotated'} ({how})"
    n = tally.count(ValueItem)
    if err is None:
        return f"a sequence of {n} AMQP value{'s' * (n != 1)} ({how})"
    if cut_message:
        return f"an encoded message, cut short ({how})"
    last = "cut short" if _cut_short(err) else "that does not decode"
    if n == 0:
        return f"an AMQP value {last} ({how})"
    return f"a sequence of {n} AMQP value{'s' * (n != 1)}, then one {last} ({how})"


# What an input read as it comes is said to be before its items (the counts come after).
_STREAMED = {
    "frames": "a frame stream",
    "values": "a sequence of AMQP values",
    "frames-0-10": "an AMQP 0-10 frame stream",
}


def _streamed_line(kind: str, detected: bool, form: str, source: str) -> str:
    how = "detected" if detected else "as asked"
    return (f"{_STREAMED[kind]} ({how}); {form} input ({source}) decoded as it is read: "
            "its counts come at the end")


def _cut_message(kind: str, tally: _Tally, src: "Decoded", detected: bool) -> bool:
    """True when values found to be so were cut short where the input reads as an encoded
    message that ends too soon (its whole values are message sections, in order, and the
    next one starts a section). Only an input read whole can be one: on a longer one
    detection reads on while the bytes may start a message."""
    from amqpcli.cli.decode_input import message_cut_short

    err = tally.first_error
    return (kind == "values" and detected and err is not None and _cut_short(err)
            and src.whole is not None and message_cut_short(src.whole))


def _summary_line(description: str, size: int, form: str, source: str,
                  stopped: bool = False) -> str:
    """What the input held: the first line of a short input's output, the last of a long
    one's (`stopped`: a stream read no further after its fatal error)."""
    if stopped:
        return (f"{description}; the first {size} byte{'s' * (size != 1)} of {form} input "
                f"({source}), not read on after the error")
    return f"{description}; {size} byte{'s' * (size != 1)} from {form} input ({source})"


def _stopped_note(src: "Decoded", source: str) -> None:
    """Say that a stream was left unread after its fatal error (`Decoded.stop_after_error`)."""
    if src.stopped:
        sys.stderr.write(f"amqp: note: {source} is not a regular file: not read past its first "
                         f"{src.size} bytes after the error (it may never end)\n")


class _ErrorLines:
    """What each decode error says: where, what, and the bytes around it, the SASL secrets
    in them masked.

    The secrets are looked for in a region of the input, never in all of it: from
    `_HISTORY` before the item the error is in (a long input keeps no more) to `_HISTORY`
    past the error, or further when those bytes are at hand. The search holds many times
    the bytes it reads (a run of zero bytes is a candidate 0-10 frame header at every
    offset), and an input of many errors was read once per error; the errors that follow
    within a region are shown from it.

    A delivery in several frames may hold a secret that no frame shows whole: the
    payloads the views hide (`ChunkSecrets`) are told to `hide`, and while such a
    delivery is in progress (`pending`) the bytes past the error are masked too (they may
    continue it).
    """

    def __init__(self, src: "Decoded", show_secrets: bool = False) -> None:
        self._src = src
        self._show_secrets = show_secrets
        self._region: tuple[int, bytes, list[tuple[int, int]]] | None = None
        self._hidden: list[tuple[int, int]] = []  # (only those an error window can reach)
        self.pending = False

    def hide(self, frame: Any) -> None:
        """Mask the payload of `frame` in the windows of later errors."""
        from amqpcli.cli.decode import _HISTORY

        end = frame.offset + frame.size
        self._hidden = [sp for sp in self._hidden if sp[1] > frame.offset - 2 * _HISTORY]
        self._hidden.append((end - len(frame.payload), end))

    def _around(self, err: "FrameError") -> tuple[int, bytes, list[tuple[int, int]]]:
        """(the offset of the region's first byte, its bytes, the secrets' spans in it)."""
        from amqpcli.cli.decode import _HISTORY
        from amqpcli.render.redact import secret_spans

        src = self._src
        start = err.offset if err.frame_offset is None else min(err.offset, err.frame_offset)
        reach, need = start - _HISTORY, err.offset + _HISTORY
        if self._region is not None:
            lo, data, _ = self._region
            hi = lo + len(data)
            if lo <= max(reach, src.kept_from) and (need <= hi or src.eof and hi == src.size):
                return self._region
        data, base = src.around(err.offset)
        lo = max(base, reach)
        hi = min(base + len(data), max(need, lo + 3 * _HISTORY))
        data = data[lo - base : hi - base]
        spans = [] if self._show_secrets else [(a + lo, b + lo) for a, b in secret_spans(data)]
        self._region = (lo, data, spans)
        return self._region

    def __call__(self, err: "FrameError") -> list[str]:
        from amqpcli.render.hexdump import hex_window

        lines = [f"decode error at offset {err.offset}: expected {err.expected}, found {err.found}"]
        if err.frame_offset is not None and err.frame_offset != err.offset:
            lines[0] += f" (in the frame at offset {err.frame_offset})"
        base, data, masked = self._around(err)
        if not self._show_secrets and (self._hidden or self.pending):
            masked = masked + self._hidden
            if self.pending:
                masked.append((err.offset + 1, base + len(data)))
        lines += ["  " + ln for ln in hex_window(data, err.offset, masked=masked, base=base)]
        return lines


def _write_error(lines: list[str]) -> None:
    sys.stdout.flush()
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()


def show_010(
    src: "Decoded", items_of: "Callable[[Decoded], Iterator[Any]]", out: TextOut | None,
    source: str, form: str, detected: bool, brief: bool, show_secrets: bool,
) -> None:
    """An AMQP 0-10 frame stream: assemblies as trees, lines (--brief) or JSON (`out`
    None); its error with the bytes around it on stderr."""
    from amqpcli.amqp010 import StreamError
    from amqpcli.codec.frames import FrameError
    from amqpcli.render.amqp010 import tree_010
    from amqpcli.render.jsonvalues import json_line
    from amqpcli.render.traffic import json_010, line_010

    def summary(n: int, size: int) -> str:
        how = "detected" if detected else "as asked"
        return _summary_line(f"an AMQP 0-10 frame stream: {n} assembl"
                             f"{'ies' if n != 1 else 'y'} ({how})", size, form, source,
                             src.stopped)

    if out is not None:
        if src.whole is not None:
            n = sum(getattr(i, "method", None) is not None for i in items_of(src.again()))
            out.line(summary(n, len(src.whole)), "dim")
        else:
            out.line(_streamed_line("frames-0-10", detected, form, source), "dim")
    error = None
    report: list[str] = []
    n = 0
    for item in items_of(src):
        n += getattr(item, "method", None) is not None
        if isinstance(item, StreamError):
            error = item.error
            src.stop_after_error()
            # the bytes around it are at hand now; it is reported after the rest
            report = _ErrorLines(src, show_secrets)(
                FrameError(error.offset, error.expected, error.found))
        if out is None:
            sys.stdout.write(json_line(json_010(item, show_secrets=show_secrets)) + "\n")
        elif isinstance(item, StreamError):
            continue
        elif brief:
            out.line(line_010(item, show_secrets=show_secrets))
        else:
            for line in tree_010(item, show_secrets):
                out.line(line)
    src.drain()
    if out is not None and src.whole is None:
        out.line(summary(n, src.size), "dim")
    if error is not None:
        _write_error(report)
        _stopped_note(src, source)
        raise UserError(
            f"decode error at offset {error.offset}: expected {error.expected}, "
            f"found {error.found}",
            Exit.DECODE,
        )


def show_items(
    kind: str, src: "Decoded", items_of: "Callable[[Decoded, list[str]], Iterator[Item]]",
    out: TextOut | None, source: str, form: str, detected: bool, brief: bool,
    show_secrets: bool,
) -> None:
    """The items of an AMQP 1.0 input, as they are decoded: trees, lines (--brief) or JSON
    (`out` None); each error with the bytes around it on stderr."""
    from amqpcli.codec.frames import Frame, FrameError, ProtocolHeader
    from amqpcli.render.items import TransferAssembler, item_to_json, item_tree
    from amqpcli.render.jsonvalues import json_line
    from amqpcli.render.redact import ChunkSecrets

    if out is not None:
        if src.whole is not None:
            # an input read whole opens with what it holds: counted in a first pass
            tally = _Tally()
            for item in items_of(src.again(), []):
                tally.add(item)
            out.line(_summary_line(_describe(kind, tally, detected,
                                             _cut_message(kind, tally, src, detected)),
                                   len(src.whole), form, source), "dim")
        else:
            out.line(_streamed_line(kind, detected, form, source), "dim")
    tally = _Tally()
    notes: list[str] = []
    assembler = TransferAssembler()
    pieces = ChunkSecrets()
    error_lines = _ErrorLines(src, show_secrets)
    if brief:
        from amqpcli.render.frameline import item_line
    for item in items_of(src, notes):
        tally.add(item)
        whole, hidden = None, False
        if isinstance(item, Frame):
            whole = assembler.feed(item)
            hidden = pieces.hides(None, item)
            if hidden:
                error_lines.hide(item)
            error_lines.pending = pieces.pending()
        if isinstance(item, FrameError):
            if out is None:
                sys.stdout.write(json_line(item_to_json(item)) + "\n")
            _write_error(error_lines(item))
            if item.fatal:
                src.stop_after_error()
            continue
        if out is None:
            obj = item_to_json(item, show_secrets, message=whole, hidden=hidden,
                               say_invalid=True)
            sys.stdout.write(json_line(obj) + "\n")
        elif brief and isinstance(item, (Frame, ProtocolHeader)):
            out.line(item_line(item, show_secrets=show_secrets, message=whole,
                               say_invalid=True))
        else:
            out.tree(item_tree(item, show_secrets, message=whole, hidden=hidden,
                               say_invalid=True))
    src.drain()
    if out is not None and src.whole is None:
        out.line(_summary_line(_describe(kind, tally, detected,
                                         _cut_message(kind, tally, src, detected)),
                               src.size, form, source, src.stopped), "dim")
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
    _stopped_note(src, source)
    first = tally.first_error
    if first is not None:
        errors = tally.count(FrameError)
        count = f"{errors} decode errors, the first" if errors > 1 else "decode error"
        raise UserError(
            f"{count} at offset {first.offset}: expected {first.expected}, found {first.found}",
            Exit.DECODE,
        )
