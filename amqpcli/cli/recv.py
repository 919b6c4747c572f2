"""`amqp recv`: messages from a node, written out before they are settled."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

import typer

from amqpcli.cli.app import app
from amqpcli.cli.commands import COMMANDS
from amqpcli.cli.options import (
    check_credit,
    check_link_options,
    check_path,
    check_positive,
    check_seconds,
    check_symbol,
    check_text,
    connection_options,
)
from amqpcli.cli.savebodies import BodyFiles
from amqpcli.errors import Exit, UserError

if TYPE_CHECKING:  # the net client and engine load when a command runs, not for --help
    from collections.abc import Callable, Sequence

    from amqpcli.net.client import Incoming
    from amqpcli.net.config import ConnectionConfig
    from amqpcli.net.receiving import RecvPlan, RecvSummary

_RCV = "Receiving"
_SRC = "Source"
_OUT = "Output"
_SEQ = "Sequence check"

# The options `amqp browse` shares with recv: one definition each.
DURATION_OPTION = typer.Option(None, "--duration", help="Stop this many seconds after the start (connecting included), as --count stops: what was written is settled, the messages not taken stay on the node, the summary is printed, exit 0. With --count and --timeout, whichever comes first. With --reconnect, a connection lost once the time is up, or not made again by then, ends the run the same way (exit 0); the first connection not made by then is an error (exit 3).", metavar="SECONDS", rich_help_panel=_RCV)
BODIES_ONLY_OPTION = typer.Option(False, "--bodies-only", help="Only each message's body, one line each, for pipelines: text as it is (control characters, a newline included, and backslashes escaped), binary as the text view shows it, a value on one line. Not with --json or --out (for bodies as bytes: --save-bodies).", rich_help_panel=_OUT)
SAVE_BODIES_OPTION = typer.Option(None, "--save-bodies", help="Save each body, as bytes, in a file of its own in DIR (made if need be): 000001.bin, 000002.bin, ... numbered on after the files DIR holds. Data sections and a binary value as their bytes, a string as UTF-8, another body AMQP-encoded. A message is settled once its file is on disk (fsync'd). Nothing on standard output; not with --json, --out or --bodies-only.", metavar="DIR", rich_help_panel=_OUT)
OUT_OPTION = typer.Option(None, "--out", help="Append messages to FILE as --json writes them, whole, to replay with send --from (fsync'd before each settlement).", metavar="FILE", rich_help_panel=_OUT)
JSON_SUMMARY_OPTION = typer.Option(False, "--json-summary", help='The summary on stderr as one JSON object ({"recv": {...}}, {"browse": {...}}).', rich_help_panel=_OUT)


class Sink:
    """Writes each message (text or one JSON line) and flushes before returning; for
    files it also fsyncs, so a settled message is on disk.

    Lines go to the file descriptor with `os.write`, a run of messages in one call: when
    a write fails part way (a reader that went away, a full disk), the bytes it did write
    say which messages were written whole, and only those may be settled. A terminal gets
    rich's tree through the text stream instead; a failure there settles none of the run.

    The receive loop, and `amqp request` for its replies, write with `write_many_async`:
    an output that takes nothing for a while (a pipe whose reader stopped reading, a
    socket, a terminal given JSON lines) is waited for as the network is, so the
    connection's heartbeats go on and a stop signal is taken at once. A line under way is
    finished first if the output takes it; one that takes nothing for `LINE_END_WAIT`
    seconds is left with part of it (`WriteStopped`: the messages not written whole are
    not settled). Rich's tree on a terminal still blocks."""

    # A stop's wait for the output to take more of the line under way (a reader that is
    # reading, however slowly, gets whole lines; one that stopped does not hold it up).
    LINE_END_WAIT = 1.0

    def __init__(self, json_lines: bool, out: str | None, show_secrets: bool = False,
                 bodies: bool = False, noun: str = "message") -> None:
        self.json_lines = json_lines
        self.noun = noun  # what each is called in its label and warnings (respond: request; request: reply)
        self.bodies = bodies  # --bodies-only: each body as one line (render/bodyline.py)
        self.path = out
        self.fsync = out is not None
        self.stream: TextIO
        if out is None or out == "-":
            if sys.stdout is None:  # started with stdout closed (`>&-`): nowhere to write
                raise UserError("standard output is closed: nowhere to write messages "
                                "(use --out FILE)", Exit.USAGE)
            self.stream = sys.stdout
            self.fsync = False
        else:
            try:
                self.stream = open(out, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
            except OSError as e:
                raise UserError(f"cannot write {out!r}: {e.strerror}", Exit.USAGE) from None
            try:
                _end_lines(self.stream, out)
            except BaseException:
                self.stream.close()
                raise
        # A regular file (--out, or stdout redirected to one): fsync means something there,
        # and a message cut part way by a failed write can be cut off again.
        self.regular = _regular(self.stream)
        self.fsync = self.fsync and self.regular
        self.pretty = not json_lines and not bodies and self.stream.isatty()
        # Where lines are written with os.write (None: through the text stream).
        self.fd: int | None = None if self.pretty else _fileno(self.stream)
        # Anything but a regular file may take nothing for a while: waited for, not blocked
        # on (a regular file always takes its bytes, and cannot be polled).
        self.may_stall = self.fd is not None and not self.regular
        self.count = 0
        self._console: Any = None
        # said once, just before the first message is written (nothing received: no word)
        self.before_first: Callable[[], None] | None = None

    def write(self, incoming: Incoming) -> None:
        self.write_many((incoming,))

    def write_many(self, incomings: Sequence[Incoming]) -> None:
        """Write a run of messages and flush (and fsync) once, before returning. If that
        fails, the `OutputError` says how many of the run, from the first, were written
        whole (`written`). Blocks while the output takes nothing."""
        run = self._start(incomings)
        if run is None:
            return
        assert self.fd is not None
        try:
            while run.rest:
                run.done += os.write(self.fd, run.rest)
            self._synced()
        except OSError as e:
            raise self._cut(run, e) from None

    async def write_many_async(self, incomings: Sequence[Incoming],
                               before_waiting: Callable[[], None] | None = None) -> None:
        """`write_many` without blocking the event loop: while the output takes nothing,
        it waits for it to take more as the loop waits for the network (`before_waiting`
        is called the first time). Stopped meanwhile (the task cancelled: Ctrl-C,
        SIGTERM), it finishes the line under way if the output takes it, then raises
        `WriteStopped`, saying how many of the run were written whole and whether the next
        one was written part way."""
        import asyncio

        run = self._start(incomings)
        if run is None:
            return
        fd = self.fd
        assert fd is not None
        try:
            while run.rest:
                if not self.may_stall:
                    run.done += os.write(fd, run.rest)
                    continue
                n = _write_now(fd, run.rest)
                if n:
                    run.done += n
                    continue
                if before_waiting is not None:
                    before_waiting()
                    before_waiting = None
                if not await _writable(fd):
                    self.may_stall = False  # cannot be polled: written as a file is
            self._synced()
        except OSError as e:
            raise self._cut(run, e) from None
        except asyncio.CancelledError:
            from amqpcli.net.receiving import WriteStopped

            written, size = run.whole()
            if run.done > size and await self._line_end(run, size + len(run.lines[written])):
                written, size = written + 1, run.done
            raise WriteStopped(written, cut=run.done > size) from None

    async def _line_end(self, run: _Run, end: int) -> bool:
        """After a stop: write the run up to `end`, the end of the line under way, while
        the output takes some of it every `LINE_END_WAIT` seconds."""
        from amqpcli.aio import wait_within

        fd = self.fd
        assert fd is not None
        try:
            while run.done < end:
                n = _write_now(fd, run.data[run.done:end])
                if n:
                    run.done += n
                    continue
                await wait_within(_writable(fd), self.LINE_END_WAIT)
        except OSError:  # (the wait's TimeoutError too)
            return False
        return True

    def _start(self, incomings: Sequence[Incoming]) -> _Run | None:
        """A run's lines, ready to go out to the descriptor (None: written through the
        text stream already)."""
        if self.before_first is not None:
            say, self.before_first = self.before_first, None
            say()
        if self.fd is None:
            self._write_stream(incomings)
            return None
        encoding, errors = self.stream.encoding, self.stream.errors or "strict"
        lines = [self._line(inc).encode(encoding, errors) for inc in incomings]
        try:
            self.stream.flush()  # anything written through the stream goes out first
        except OSError as e:
            raise self._failed(e, 0) from None
        # where the run starts in a file, to cut off a part line
        return _Run(lines, _position(self.fd) if self.regular else None)

    def _synced(self) -> None:
        if self.fsync:
            assert self.fd is not None
            os.fsync(self.fd)

    def _cut(self, run: _Run, e: OSError) -> UserError:
        """The error of a run whose write failed after `run.done` bytes: the messages among
        them count as written (for a file, once synced), and a part line left in a file is
        cut off again."""
        written, whole = run.whole()
        fd = self.fd
        assert fd is not None
        if run.start is not None and run.done > whole:
            # a message cut part way would leave a line no reader (or --from) takes
            try:
                os.ftruncate(fd, run.start + whole)
            except OSError:
                pass
        if written and self.fsync:
            try:
                os.fsync(fd)
            except OSError:
                written = 0  # not known to be on disk: none of them counts
        return self._failed(e, written)

    def _write_stream(self, incomings: Sequence[Incoming]) -> None:
        try:
            for incoming in incomings:
                self._write(incoming)
            self.stream.flush()
            if self.fsync:
                os.fsync(self.stream.fileno())
        except OSError as e:
            # A text stream does not say how much of it got out: none of the run counts.
            raise self._failed(e, 0) from None

    def _failed(self, e: OSError, written: int) -> UserError:
        from amqpcli.net.receiving import OutputError

        # Not written means not settled: the peer keeps the message.
        where = self.path if self.path not in (None, "-") else "standard output"
        return OutputError(f"cannot write {where}: {e.strerror or e}", Exit.USAGE, written)

    def _line(self, incoming: Incoming) -> str:
        """The message as its line (`--json`) or lines of plain text, with the newline."""
        from amqpcli.render.message import payload_tree
        from amqpcli.render.text import plain_lines

        self.count += 1
        if self.bodies:
            from amqpcli.render.bodyline import body_line

            line, problem = body_line(incoming.payload, incoming.message_format)
            if problem is not None:
                warn(f"{self.noun} {incoming.number}: {problem}; written as binary")
            return line + "\n"
        if self.json_lines:
            from amqpcli.render.jsonvalues import safe_json_text
            from amqpcli.render.message import payload_problem, payload_to_json

            obj = payload_to_json(incoming.payload, message_format=incoming.message_format)
            problem = payload_problem(incoming.payload, obj)
            if problem is not None:
                warn(f"{self.noun} {incoming.number}: {problem}")
            return safe_json_text(json.dumps(obj, ensure_ascii=False,
                                             separators=(",", ":"))) + "\n"
        tree = payload_tree(incoming.payload, label=f"{self.noun} {incoming.number}",
                            message_format=incoming.message_format)
        return "\n".join(plain_lines(tree)) + "\n"

    def _write(self, incoming: Incoming) -> None:
        if not self.pretty:
            self.stream.write(self._line(incoming))
            return
        from amqpcli.render.message import payload_tree
        from amqpcli.render.text import rich_tree

        self.count += 1
        tree = payload_tree(incoming.payload, label=f"{self.noun} {incoming.number}",
                            message_format=incoming.message_format)
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stream, highlight=False, markup=False,
                                    emoji=False)
        self._console.print(rich_tree(tree))

    def close(self) -> None:
        try:
            self.stream.flush()
        except (OSError, ValueError):
            pass
        if self.stream is not sys.stdout:
            try:
                self.stream.close()
            except OSError:
                pass


class _Run:
    """A run of messages' lines on their way out: how much of it got out (`done`) says
    which messages were written whole."""

    def __init__(self, lines: list[bytes], start: int | None) -> None:
        self.lines = lines
        self.data = memoryview(lines[0] if len(lines) == 1 else b"".join(lines))
        self.done = 0
        self.start = start  # where the run starts in a regular file

    @property
    def rest(self) -> memoryview:
        return self.data[self.done:]

    def whole(self) -> tuple[int, int]:
        """How many messages are wholly among the bytes written, and their size."""
        written = size = 0
        for line in self.lines:
            if self.done - size < len(line):
                break
            size += len(line)
            written += 1
        return written, size


def _write_now(fd: int, data: memoryview) -> int:
    """Write what `fd` takes without waiting: 0 when it takes nothing for now. Non-blocking
    for this one write only: the open file may be shared (the shell's terminal, a stderr
    given as `2>&1`), and whoever else writes to it expects it to block."""
    blocking = os.get_blocking(fd)
    if blocking:
        os.set_blocking(fd, False)
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0
    finally:
        if blocking:
            os.set_blocking(fd, True)


async def _writable(fd: int) -> bool:
    """Wait, letting the event loop run, until `fd` takes more; False at once if it cannot
    be polled."""
    import asyncio

    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def took() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_writer(fd, took)
    except (OSError, ValueError, NotImplementedError):
        return False  # no polling on it (EPERM), or a loop that polls no descriptors
    try:
        await ready
    finally:
        loop.remove_writer(fd)
    return True


_TAIL_BLOCK = 1 << 16


def _end_lines(stream: TextIO, path: str) -> None:
    """Before anything is appended to an `--out` file: a file that ends in a line cut short
    (a run killed while writing a message, whose message it therefore never settled, so
    the node still holds it) has that part cut off, said in a note; a last line that is a
    whole JSON object, only its line end missing, is ended instead (a message kept, not
    cut); one whose last line is not a JSON object's start is no file of --out lines, and
    is refused. Appended to as it was, the next message would be glued onto the last line
    and neither would replay."""
    fd = _fileno(stream)
    if fd is None or not _regular(stream):
        return
    size = os.fstat(fd).st_size
    end = size
    try:
        f = open(path, "rb")  # noqa: SIM115 - (the stream appending is write-only)
    except OSError:
        return  # (writable, not readable: nothing to check)
    with f:
        while end > 0:  # back to the last line end, a block at a time
            start = max(0, end - _TAIL_BLOCK)
            f.seek(start)
            block = f.read(end - start)
            nl = block.rfind(b"\n")
            if nl >= 0:
                end = start + nl + 1
                break
            end = start
        if end == size:
            return  # empty, or ends with a line end
        f.seek(end)
        first = f.read(1)
        f.seek(size - 1)
        whole = first == b"{" and f.read(1) == b"}" and _json_object(f, end, size)
    if first != b"{":
        raise UserError(f"cannot append to {path!r}: it does not end with a line end, and its "
                        "last line is not a message's (give a file of --out lines, or a new "
                        "one)", Exit.USAGE)
    if whole:
        # A whole message, its line end missing (a file made or edited by hand, or a run
        # killed between the two): ended, not cut. It may have been settled; at worst it
        # is a duplicate, as at-least-once allows, never a message lost.
        try:
            os.write(fd, b"\n")
        except OSError as e:
            raise UserError(f"cannot write {path!r}: {e.strerror}", Exit.USAGE) from None
        print(f"amqp: note: {path}: its last line, a whole message, had no line end: one "
              "added", file=sys.stderr, flush=True)
        return
    try:
        os.ftruncate(fd, end)
    except OSError as e:
        raise UserError(f"cannot write {path!r}: {e.strerror}", Exit.USAGE) from None
    print(f"amqp: note: {path}: cut off the last {size - end} byte(s), a line left unfinished "
          "by an earlier run (its message was not settled: the node delivers it again)",
          file=sys.stderr, flush=True)


def _json_object(f: BinaryIO, start: int, end: int) -> bool:
    """Whether the file's bytes from start to end are one whole JSON object."""
    f.seek(start)
    try:
        return isinstance(json.loads(f.read(end - start)), dict)
    except ValueError:  # (not JSON, or not UTF-8)
        return False


def _position(fd: int) -> int | None:
    try:
        return os.lseek(fd, 0, os.SEEK_CUR)
    except OSError:  # not seekable after all: nothing to cut back to
        return None


def _regular(stream: TextIO) -> bool:
    import stat

    fd = _fileno(stream)
    try:
        return fd is not None and stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        return False


def _fileno(stream: TextIO) -> int | None:
    try:
        return stream.fileno()
    except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is both
        return None


def parse_filters(items: list[str]) -> tuple[tuple[Any, Any], ...]:
    """``KEY=JSON``: the filter value in the lossless JSON format, usually a described
    value: ``{"described": {"symbol": "…"}, "value": …}``."""
    from amqpcli.net.outgoing import check_encodes
    from amqpcli.render.jsonvalues import JsonValueError, from_json

    out = []
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UserError(f"--filter: expected KEY=JSON, got {item!r}", Exit.USAGE)
        try:
            value = from_json(json.loads(text))
        except (json.JSONDecodeError, JsonValueError) as e:
            raise UserError(f"--filter {key}: not a value in the JSON format: {e}", Exit.USAGE) from None
        check_symbol(key, f"--filter {key!r}")  # (the source's filter map has symbol keys)
        check_encodes(value, f"--filter {key}")  # a range error now, not at the attach
        out.append((key, value))
    return tuple(out)


def recv_exit(s: RecvSummary, count: int | None) -> tuple[Exit, str]:
    from amqpcli.net.txn import in_doubt_exit

    doubt = in_doubt_exit(s.in_doubt, s.failure)  # first, as for send: the one thing a
    if doubt is not None:                          # script must act on
        return doubt
    if s.failure is not None:
        after = f" (after {s.written} message(s))" if s.written else ""
        return s.failure.code, f"{s.failure}{after}"
    if count is not None and s.received < count and s.timed_out:
        return Exit.TIMEOUT, f"received {s.received} of {count} message(s) before the timeout"
    if s.drain_unanswered is not None:
        return Exit.TIMEOUT, (f"the peer did not answer the drain in {s.drain_unanswered:g}s: "
                              "the node may hold more")
    # Messages that never came (or, asked, came twice): the run worked, messages did not
    # get through as sent — send's 6 for messages the peer refused, seen from this side.
    lost = s.sequence.failure() if s.sequence is not None else None
    if lost is not None:
        return Exit.REJECTED, lost
    return Exit.OK, ""


def _failed_before_start(s: RecvSummary) -> bool:
    """A run that failed before its first message says only why (no empty summary) —
    except after Ctrl-C, which always ends with the summary."""
    return s.failure is not None and s.received == 0 and s.failure.code != Exit.INTERRUPTED


def warn(text: str) -> None:
    """A warning of the run (its summary's `warnings` hold the same text)."""
    print(f"amqp: warning: {text}", file=sys.stderr, flush=True)


def note(text: str) -> None:
    """Word of what the run found, no fault of anyone's (a dynamic node's address)."""
    print(f"amqp: note: {text}", file=sys.stderr, flush=True)


@app.command(help=COMMANDS["recv"].help, epilog=(
    "Examples:\n\n"
    "  amqp recv amqp://localhost//queue/orders --count 10 --json | jq -c .body\n\n"
    "  amqp recv @prod/orders --outcome accept,accept,reject:app:bad=checksum\n\n"
    "  amqp recv @prod/events --selector \"region = 'eu'\" --subscription audit\n\n"
    "  amqp recv @prod/orders --drain --verify-sequence --bodies-only | grep ERROR"))
@connection_options
def recv(
    conn: ConnectionConfig,
    count: int | None = typer.Option(None, "--count", "-c", help="Stop after N messages (distinct ones: with --reconnect, a message that comes again because its settlement was lost with the connection, its header saying it was delivered before, is written again, not counted).", rich_help_panel=_RCV),
    timeout: float | None = typer.Option(None, "--timeout", "-t", help="Stop when no message arrives for this many seconds (default: wait forever).", rich_help_panel=_RCV),
    duration: float | None = DURATION_OPTION,
    credit: int = typer.Option(100, "--credit", help="Link credit (prefetch).", rich_help_panel=_RCV),
    drain: bool = typer.Option(False, "--drain", help="Take what the node holds now, then stop.", rich_help_panel=_RCV),
    outcome: str = typer.Option("accept", "--outcome", "-o", help="accept, release, reject[:CONDITION[=DESCRIPTION]], modify[:failed][:undeliverable]; a comma-separated list is applied in turn. Messages released or modified (not undeliverable) are held and given back when the run ends, so each is written once.", rich_help_panel=_RCV),
    presettled: bool = typer.Option(False, "--presettled", help="Ask the sender to settle before sending (at most once: a message lost in transit is lost).", rich_help_panel=_RCV),
    settle_mode: str = typer.Option("first", "--settle-mode", help="Receiver settle mode: first (settle at once) or second (after the sender settles).", rich_help_panel=_RCV),
    txn_size: int | None = typer.Option(None, "--txn-size", help="Settle in transactions of N messages (the last one may hold fewer).", rich_help_panel=_RCV),
    rollback: bool = typer.Option(False, "--rollback", help="With --txn-size: roll each transaction back instead of committing (the messages stay on the node).", rich_help_panel=_RCV),
    rate: float | None = typer.Option(None, "--rate", help="At most this many messages per second (credit: at most a second's worth).", rich_help_panel=_RCV),
    selector: str | None = typer.Option(None, "--selector", "-s", help="JMS-style selector (apache.org:selector-filter:string under key jms-selector).", rich_help_panel=_SRC),
    filters: list[str] | None = typer.Option(None, "--filter", help="Source filter KEY=JSON, the value in the lossless JSON format (repeatable).", rich_help_panel=_SRC),  # noqa: B008 - a repeatable option
    subscription: str | None = typer.Option(None, "--subscription", help="Durable subscription NAME (the link name; keep --container-id stable).", rich_help_panel=_SRC),
    unsubscribe: bool = typer.Option(False, "--unsubscribe", help="With --subscription: remove it and exit.", rich_help_panel=_SRC),
    dynamic: bool = typer.Option(False, "--dynamic", help="Ask the peer for a temporary node and print its address.", rich_help_panel=_SRC),
    capabilities: list[str] | None = typer.Option(None, "--capability", help="A capability of the source (repeatable): topic or queue for the kind of node (Artemis, amqp serve), shared or global for a shared subscription (JMS 2).", rich_help_panel=_SRC),  # noqa: B008 - a repeatable option
    link_name: str | None = typer.Option(None, "--link-name", help="The link's name in the attach (default: amqp-receiver-N; a --subscription's is its name).", rich_help_panel=_SRC),
    copy: bool = typer.Option(False, "--copy", help="distribution-mode copy: browse without consuming (held messages are released at the end).", rich_help_panel=_SRC),
    verify_sequence: bool = typer.Option(False, "--verify-sequence", help="Check the numbers send --sequence gives each message (the application property sn): a gap, or a message without the number, fails the run (exit 6); duplicates and numbers out of order are counted in the summary.", rich_help_panel=_SEQ),
    sequence_key: str | None = typer.Option(None, "--sequence-key", help="The property --verify-sequence checks (default: sn); implies --verify-sequence.", rich_help_panel=_SEQ),
    sequence_start: int | None = typer.Option(None, "--sequence-start", help="The run's first number (default: the lowest that comes), so that numbers missing before it count as a gap; implies --verify-sequence.", rich_help_panel=_SEQ),
    no_duplicates: bool = typer.Option(False, "--no-duplicates", help="A number that comes twice fails the run (exit 6) as a gap does (duplicates are expected with at-least-once delivery, so they are only counted by default); implies --verify-sequence.", rich_help_panel=_SEQ),
    json_out: bool = typer.Option(False, "--json", help="One JSON object per message (docs/message-format.md).", rich_help_panel=_OUT),
    bodies_only: bool = BODIES_ONLY_OPTION,
    save_bodies: str | None = SAVE_BODIES_OPTION,
    json_summary: bool = JSON_SUMMARY_OPTION,
    report_every: float | None = typer.Option(None, "--report-every", help="Every SECONDS, a line on stderr with the figures so far: received, in the interval and its rate, and the interval's latency of messages stamped by send --timestamp (JSON objects with --json-summary).", metavar="SECONDS", rich_help_panel=_OUT),
    out: str | None = OUT_OPTION,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary on stderr.", rich_help_panel=_OUT),
) -> None:
    from amqpcli.net.client import raise_exit
    from amqpcli.net.receiving import run_recv

    if unsubscribe:
        # It removes the subscription and receives nothing: options about receiving or
        # writing messages would be ignored without a word.
        unused = [name for name, given in (
            ("--count", count is not None), ("--timeout", timeout is not None),
            ("--duration", duration is not None), ("--save-bodies", save_bodies is not None),
            ("--drain", drain), ("--outcome", outcome != "accept"),
            ("--presettled", presettled), ("--settle-mode", settle_mode != "first"),
            ("--txn-size", txn_size is not None), ("--rollback", rollback),
            ("--rate", rate is not None), ("--copy", copy), ("--dynamic", dynamic),
            ("--json", json_out), ("--out", out is not None),
            ("--bodies-only", bodies_only), ("--json-summary", json_summary),
            ("--verify-sequence", verify_sequence), ("--sequence-key", sequence_key is not None),
            ("--sequence-start", sequence_start is not None),
            ("--no-duplicates", no_duplicates), ("--link-name", link_name is not None),
            ("--report-every", report_every is not None)) if given]
        if unused:
            raise UserError(f"--unsubscribe removes the subscription and receives nothing: "
                            f"it takes no {', '.join(unused)}", Exit.USAGE)
    from dataclasses import replace

    plan = make_plan(conn, count, timeout, credit, drain, outcome, settle_mode, selector,
                     filters or [], subscription, unsubscribe, dynamic, copy,
                     link_name=link_name, capabilities=capabilities or [], duration=duration)
    if presettled:
        if settle_mode == "second" or copy:
            raise UserError("--presettled goes with neither --settle-mode second nor --copy", Exit.USAGE)
        if outcome != "accept":
            # settled by the sender before it is sent, a message takes no outcome of ours:
            # released, it would be gone all the same
            raise UserError("--presettled messages take no --outcome: the sender settles "
                            "them (they are consumed)", Exit.USAGE)
        plan = replace(plan, presettled=True)
    plan = with_txn(plan, txn_size, rollback)
    check_positive(rate, "--rate")
    if rate is not None:
        plan = replace(plan, rate=rate)
    check_seconds(report_every, "--report-every")
    if report_every is not None:
        plan = replace(plan, report_every=report_every, report_json=json_summary)
    plan = with_sequence(plan, verify_sequence, sequence_key, sequence_start, no_duplicates)
    if subscription and conn.container_id is None:
        # A durable subscription is found again by (container-id, link name).
        conn = replace(conn, container_id=f"amqp-sub-{subscription}")
    sink = make_sink(json_out, out, bodies_only, save_bodies, quiet)
    summary = run_recv(conn, plan, sink, on_warning=warn,
                       on_address=lambda a: note(f"dynamic node address: {a}"))
    code, why = recv_exit(summary, count)
    saved_note(sink, quiet or json_summary)
    if quiet or unsubscribe:
        pass
    elif json_summary:  # always its one object, as browse's: a script reads it
        obj = summary_json(summary, sink)
        if code != Exit.OK:  # the code the run ends with (in doubt wins over a failure)
            obj["error"], obj["exit"] = why, int(code)
        print(json.dumps({"recv": obj}), file=sys.stderr)
    elif not _failed_before_start(summary):
        print(f"amqp: {summary.text()}", file=sys.stderr)
        if summary.sequence is not None:
            print(f"amqp: {summary.sequence.text()}", file=sys.stderr)
    raise_exit(code, why, summary.failure)  # an internal error's own line, once the summary is out


def make_sink(json_out: bool, out: str | None, bodies_only: bool, save_bodies: str | None,
              quiet: bool) -> Sink | BodyFiles:
    """Where messages go (recv's and browse's output options): one of the text view,
    JSON lines (`--json`, `--out FILE`), bodies as lines or bodies as files."""
    check_path(out, "--out")
    check_path(save_bodies, "--save-bodies", "folder")
    if save_bodies is not None:
        others = [name for name, given in (("--json", json_out), ("--out", out is not None),
                                           ("--bodies-only", bodies_only)) if given]
        if others:
            raise UserError(f"--save-bodies writes bodies to files and nothing else: it "
                            f"takes no {', '.join(others)}", Exit.USAGE)
        return BodyFiles(save_bodies, warn)
    if bodies_only and (json_out or out is not None):
        # Two formats for one stream (--out writes the JSON lines --json would).
        raise UserError(f"--bodies-only prints bodies alone: it takes no "
                        f"{'--json' if json_out else '--out'} (the lossless lines)", Exit.USAGE)
    # A file is kept to be read back: it gets the lossless lines, never the text view,
    # which cuts long binary values.
    sink = Sink(json_out or out is not None, out, bodies=bodies_only)
    if not sink.json_lines and not sink.bodies and sink.regular and not quiet:
        sink.before_first = lambda: note(
            "standard output is a file, and the text view cuts long binary values "
            "(data bodies): it does not replay with send --from (--json or --out FILE "
            "write messages whole)")
    return sink


def summary_json(summary: RecvSummary, sink: Sink | BodyFiles) -> dict[str, Any]:
    obj = summary.to_json()
    if isinstance(sink, BodyFiles):
        obj["saved-bodies"] = sink.to_json()
    return obj


def saved_note(sink: Sink | BodyFiles, quiet: bool) -> None:
    """`--save-bodies`: say where the bodies went (the JSON summary says it too)."""
    if isinstance(sink, BodyFiles) and not quiet:
        text = sink.note()
        if text is not None:
            note(text)


def with_sequence(plan: RecvPlan, verify: bool, key: str | None, start: int | None,
                  no_duplicates: bool) -> RecvPlan:
    """--verify-sequence and the options that imply it (as send's --sequence-key implies
    --sequence)."""
    from dataclasses import replace

    if key is not None:
        check_text(key, "--sequence-key")
        if not key:
            raise UserError("--sequence-key needs a name", Exit.USAGE)
    if start is not None and start < 0:
        raise UserError("--sequence-start must be 0 or more", Exit.USAGE)
    if not (verify or key is not None or start is not None or no_duplicates):
        return plan
    return replace(plan, sequence_key=key if key is not None else "sn",
                   sequence_start=start, no_duplicates=no_duplicates)


def with_txn(plan: RecvPlan, txn_size: int | None, rollback: bool) -> RecvPlan:
    from dataclasses import replace

    if rollback and txn_size is None:
        raise UserError("--rollback needs --txn-size", Exit.USAGE)
    if txn_size is None:
        return plan
    if txn_size < 1:
        raise UserError("--txn-size must be at least 1", Exit.USAGE)
    # A transaction holds outcomes: copy sends none, pre-settled messages take none.
    if plan.copy:
        raise UserError("--copy settles nothing (it releases what it held): it takes no "
                        "--txn-size", Exit.USAGE)
    if plan.presettled:
        raise UserError("--presettled messages take no outcome: they go with no --txn-size",
                        Exit.USAGE)
    return replace(plan, txn_size=txn_size, rollback=rollback)


def make_plan(conn: ConnectionConfig, count: int | None, timeout: float | None, credit: int,
              drain: bool, outcome: str, settle_mode: str, selector: str | None,
              filters: list[str], subscription: str | None, unsubscribe: bool,
              dynamic: bool, copy: bool, check_copy: bool = False, *,
              link_name: str | None = None, capabilities: Sequence[str] = (),
              duration: float | None = None) -> RecvPlan:
    from amqpcli.net.outgoing import check_encodes
    from amqpcli.net.receiving import Outcome, RecvPlan, parse_outcomes

    for text, what in ((selector, "--selector"), (subscription, "--subscription"),
                       (outcome, "--outcome"), *((f, "--filter") for f in filters)):
        check_text(text, what)
    check_link_options(link_name, capabilities)
    if selector is not None:
        from amqpcli.selector import selector_option

        selector_option(selector)  # (checked before connecting)
    if subscription == "":
        raise UserError("--subscription needs a NAME", Exit.USAGE)
    if link_name is not None and subscription is not None:
        raise UserError("--subscription NAME is the link's name: it takes no --link-name",
                        Exit.USAGE)
    if count is not None and count < 1:
        raise UserError("--count must be at least 1", Exit.USAGE)
    check_credit(credit, "--credit")
    check_seconds(timeout, "--timeout")
    check_seconds(duration, "--duration")
    outcomes = tuple(parse_outcomes(outcome))
    for o in outcomes:  # (a condition is a symbol: found now, not once a message is in)
        check_encodes(o.state(), f"--outcome {outcome!r}")
    if copy and outcomes != (Outcome("accept"),):
        # Copy holds every message and releases it at the end: no outcome is ever sent.
        raise UserError("--copy holds and releases every message: it takes no --outcome",
                        Exit.USAGE)
    if settle_mode not in ("first", "second"):
        raise UserError("--settle-mode must be first or second", Exit.USAGE)
    if unsubscribe and not subscription:
        raise UserError("--unsubscribe needs --subscription NAME", Exit.USAGE)
    if dynamic and conn.endpoint.address:
        raise UserError("--dynamic asks the peer for a node: give no address", Exit.USAGE)
    if not dynamic and not conn.endpoint.address:
        raise UserError("no address: give it in the URL (amqp://host/ADDRESS) or with --address", Exit.USAGE)
    return RecvPlan(
        address=conn.endpoint.address, count=count, timeout=timeout, duration=duration,
        credit=credit,
        drain=drain, outcomes=outcomes, settle_second=settle_mode == "second",
        selector=selector, filters=parse_filters(filters), subscription=subscription,
        unsubscribe=unsubscribe, dynamic=dynamic, copy=copy, check_copy=check_copy,
        link_name=link_name, capabilities=tuple(capabilities),
    )
