"""`--save-bodies DIR` (recv, browse): each message's body, as bytes, in a file of its own,
settled only once the file is on disk.

The receive loop hands over a run of messages at a time (`write_many_async`), and their
bodies are written, fsync'd and named in a thread of their own, never on the event loop:
a disk that stalls (an NFS server gone away, a full device slow to say so) holds up the
run, not the connection, whose heartbeats go on, nor a stop signal. Runs are saved one
after the other, each by whoever holds `BodyFiles.saving`, so numbers are given out in
order, each once.

Stopped (Ctrl-C, SIGTERM, SIGHUP) while a run is being saved, the body under way is
finished and no other is begun; the bodies saved by then are settled, the rest are not
(the node delivers them again). The disk is waited for `STOP_WAIT` seconds at most, and
a warning says so once it has taken `QUIET_WAIT`: one that has not finished by then
leaves the whole run unsettled, and a warning says which messages and which files of
theirs may stay in DIR (the thread removes those if the disk comes back before the
process ends). A second Ctrl-C makes no difference: the wait is
bounded, and every stop signal after the first is ignored (`run_interruptible`)."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from amqpcli.errors import Exit, UserError

if TYPE_CHECKING:
    from amqpcli.net.client import Incoming

__all__ = ["BodyFiles", "body_bytes"]


class BodyFiles:
    """`--save-bodies DIR`: each message's body, as bytes, in a file of its own —
    DIR/000001.bin, 000002.bin, … numbered on after the highest number DIR holds already,
    so that a second run adds to the first and nothing is overwritten.

    A message is settled only once its file is whole on disk: it is written under a
    temporary name (`.*.part`), fsync'd, then given its name, and the directory is
    fsync'd before the run of messages is settled. A run killed part way leaves at most a
    `.part` file, never a short body under a body's name."""

    # After a stop: how long the disk is given to finish the body under way (and the
    # directory's fsync) before the run is given up on, none of it settled; and how long
    # it is waited for before a warning says so (a disk that is not stalled is done).
    STOP_WAIT = 5.0
    QUIET_WAIT = 0.25

    def __init__(self, path: str, on_warning: Callable[[str], None]) -> None:
        self.path = path
        self.on_warning = on_warning
        try:
            os.makedirs(path, exist_ok=True)
            names = os.listdir(path)
            self.dir_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            # (makedirs says "File exists" of a path that is there but no folder)
            why = ("not a folder" if e.errno in (errno.EEXIST, errno.ENOTDIR)
                   and not os.path.isdir(path) else e.strerror)
            raise UserError(f"--save-bodies: cannot use {path!r}: {why}",
                            Exit.USAGE) from None
        numbers = [int(m[1]) for m in map(re.compile(r"(\d+)\.bin").fullmatch, names) if m]
        # (given out by the run that holds `saving`: a run given up on after a stop may
        # hold it still, its thread stuck on the disk)
        self.next = max(numbers, default=0) + 1
        self.saving = threading.Lock()
        # the files saved (their messages settled or about to be): how many, the first
        # and the last name (a run of days saves millions)
        self.count = 0
        self.first: str | None = None
        self.last: str | None = None

    def write(self, incoming: Incoming) -> None:
        self.write_many((incoming,))

    def write_many(self, incomings: Sequence[Incoming]) -> None:
        """Save each body, then make the names durable; an `OutputError` says how many of
        the run, from the first, were saved whole. Blocks while the disk takes its time."""
        run = _Run(incomings)
        self._save_run(run)
        self._saved(run)
        self._raise_failure(run)

    async def write_many_async(self, incomings: Sequence[Incoming],
                               before_waiting: Callable[[], None] | None = None) -> None:
        """`write_many` in a thread, the event loop running meanwhile (`before_waiting` is
        called as the wait starts). Stopped meanwhile (the task cancelled: Ctrl-C,
        SIGTERM), the body under way is finished and no other begun, then `WriteStopped`
        says how many of the run were saved; a disk that has not finished `STOP_WAIT`
        seconds after the stop leaves none of the run saved (a warning says what it may
        leave in DIR)."""
        import asyncio

        from amqpcli.net.receiving import WriteStopped

        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()
        run = _Run(incomings)

        def wake() -> None:
            if not finished.done():
                finished.set_result(None)

        def save() -> None:
            try:
                self._save_run(run)
            except BaseException as e:  # noqa: BLE001 - a fault of ours: raised on the loop
                run.error = e
            if not run.end():
                _undo(self.path, run.names)  # given up on: its messages were not settled
                return
            with contextlib.suppress(RuntimeError):  # (the loop is closed: nobody waits)
                loop.call_soon_threadsafe(wake)

        threading.Thread(target=save, name="amqp-save-bodies", daemon=True).start()
        if before_waiting is not None:
            before_waiting()  # (the settlements of runs saved before go out meanwhile)
        try:
            await asyncio.shield(finished)
        except asyncio.CancelledError:
            run.stop = True
            # (cancelled again: the wait is over as when it times out)
            with contextlib.suppress(asyncio.CancelledError):
                done, _ = await asyncio.wait((finished,), timeout=self.QUIET_WAIT)
                if not done:
                    self.on_warning(f"--save-bodies: stopped while saving: waiting up to "
                                    f"{self.STOP_WAIT:g}s for the disk to finish "
                                    f"{run.doing}")
                    await asyncio.wait((finished,), timeout=self.STOP_WAIT - self.QUIET_WAIT)
            if run.give_up():  # (its bodies' own warnings unsaid: none is saved)
                self.on_warning(self._given_up(run))
                raise WriteStopped(0, cut=False) from None
            self._saved(run)
            if run.failure is not None:
                self.on_warning(f"--save-bodies: {run.failure}")
            raise WriteStopped(len(run.names), cut=False) from None
        self._saved(run)
        self._raise_failure(run)

    def _save_run(self, run: _Run) -> None:
        """Save each body of the run (those the loop still wants), then make the names
        durable; what became of them is left in `run`."""
        with self.saving:
            for incoming in run.incomings:
                if run.stop:
                    break
                run.begun += 1
                run.doing = f"message {incoming.number}'s file"
                try:
                    name = self._save(incoming, run)
                except OSError as e:
                    run.failure = f"cannot write in {self.path!r}: {e.strerror or e}"
                    break
                except _NotSaved as e:
                    run.failure = f"message {incoming.number}: {e}: not settled, the run ends"
                    break
                if name is None:
                    break  # (given up on)
                run.names.append(name)
            if not run.names:
                return
            run.doing = "the new names"
            try:
                os.fsync(self.dir_fd)  # the new names: on disk before any message is settled
            except OSError as e:
                run.failure = f"cannot write in {self.path!r}: {e.strerror or e}"
                names, run.names = run.names, []
                _undo(self.path, names)  # (not settled: the peer delivers them again)

    def _saved(self, run: _Run) -> None:
        """On the loop, once the thread is done with the run: its warnings said, its
        files counted."""
        for text in run.warnings:
            self.on_warning(text)
        if run.error is not None:
            raise run.error
        if run.names:
            self.count += len(run.names)
            self.first = self.first or run.names[0]
            self.last = run.names[-1]

    def _raise_failure(self, run: _Run) -> None:
        from amqpcli.net.receiving import OutputError

        if run.failure is not None:
            raise OutputError(f"--save-bodies: {run.failure}", Exit.USAGE, len(run.names))

    def _given_up(self, run: _Run) -> str:
        """The warning for a run the disk did not finish after a stop: what it may leave."""
        names = list(run.names)
        begun = run.incomings[:run.begun]
        text = (f"--save-bodies: the disk had not finished {run.doing} "
                f"{self.STOP_WAIT:g}s after the stop")
        if not begun:
            return text
        one = len(begun) == 1
        lost = [m for m in begun if m.settled]
        if len(lost) == len(begun):
            fate = "pre-settled: lost"
        elif not lost:
            fate = f"not settled: the node delivers {'it' if one else 'them'} again"
        else:  # (a run of pre-settled and unsettled messages)
            fate = (f"{len(lost)} of them pre-settled: lost; the others not settled: the node "
                    "delivers them again")
        text += (f": {_numbers(begun)} {'is' if one else 'are'} not saved ({fate})")
        if names:
            text += f"; {_span(names)} may stay in {self.path!r} all the same"
        return text

    def _save(self, incoming: Incoming, run: _Run) -> str | None:
        """Save one body; the name it was given (None: the run was given up on before it
        had one)."""
        data, problem = body_bytes(incoming.payload, incoming.message_format)
        if problem is not None:
            run.warnings.append(f"message {incoming.number}: {problem}")
        tmp = os.path.join(self.path, f".{os.urandom(8).hex()}.part")
        # (made as any file is, under the umask: mkstemp's would be the owner's alone)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with open(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            if run.given_up:
                return None  # (its message is not settled: no name for it)
            while True:
                name = f"{self.next:06d}.bin"
                self.next += 1
                final = os.path.join(self.path, name)
                try:
                    os.link(tmp, final)  # (never over a file of another run's)
                except FileExistsError:
                    continue
                except OSError:  # a file system without hard links: claim the name first
                    try:
                        os.close(os.open(final, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                    except FileExistsError:
                        continue
                    os.rename(tmp, final)
                break
        finally:
            if os.path.lexists(tmp):
                os.unlink(tmp)
        return name

    def close(self) -> None:
        # (a run given up on may be using the descriptor still: left open, as the process
        # ends, rather than closed and its number given to another file)
        if not self.saving.acquire(blocking=False):
            return
        try:
            os.close(self.dir_fd)
        except OSError:
            pass
        finally:
            self.saving.release()

    def to_json(self) -> dict[str, Any]:
        """For the JSON summary's "saved-bodies"."""
        out: dict[str, Any] = {"dir": self.path, "count": self.count}
        if self.count:
            out["first"], out["last"] = self.first, self.last
        return out

    def note(self) -> str | None:
        """Where the bodies went, for the end of the run."""
        if not self.count:
            return None
        where = os.path.join(self.path, str(self.first))
        if self.count > 1:
            where += f" to {self.last}"
        return f"{self.count} bod{'y' if self.count == 1 else 'ies'} saved: {where}"


class _Run:
    """A run of messages whose bodies the saving thread takes, and what became of them:
    the thread writes it, the loop reads it once the thread is done (or gives up on it)."""

    def __init__(self, incomings: Sequence[Incoming]) -> None:
        self.incomings = incomings
        self.begun = 0  # the bodies begun
        self.names: list[str] = []  # the names given, in order (durable once it is done)
        self.failure: str | None = None  # why it ended early
        self.error: BaseException | None = None  # a fault of ours, to raise on the loop
        self.warnings: list[str] = []  # to say on the loop
        # what the thread is at ("message 7's file"), for a stop's warnings; before the
        # first body, waiting for a run given up on earlier (which holds the disk still)
        self.doing = "an earlier write"
        self.stop = False  # the loop was stopped: begin no other body
        self._lock = threading.Lock()
        self._ended = False
        self.given_up = False

    def end(self) -> bool:
        """The thread is done with the run: False if the loop gave up on it already."""
        with self._lock:
            self._ended = True
            return not self.given_up

    def give_up(self) -> bool:
        """The loop waits no more: False if the thread was done already."""
        with self._lock:
            self.given_up = not self._ended
            return self.given_up


def _undo(path: str, names: Sequence[str]) -> None:
    """Remove the files of messages that are not settled (the peer delivers them again)."""
    for name in names:
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(path, name))


def _span(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{names[0]} to {names[-1]}"


def _numbers(incomings: Sequence[Incoming]) -> str:
    """"message 7", "messages 5 to 7"."""
    if len(incomings) == 1:
        return f"message {incomings[0].number}"
    return f"messages {incomings[0].number} to {incomings[-1].number}"


class _NotSaved(Exception):
    """A body that is not to be saved, nor its message settled (the text says why)."""


def body_bytes(payload: bytes, message_format: int = 0) -> tuple[bytes, str | None]:
    """A message's body as `--save-bodies` saves it (and why not as such, or None): data
    sections' bytes together, an amqp-value's binary as it is and its string as UTF-8;
    any other body (another value, amqp-sequence sections) its sections as they came,
    AMQP-encoded (`amqp decode` reads them), but for a SASL secret in them, masked as
    every view masks it; a message of a vendor's format (not 0), or one that does not
    decode, its payload whole. `_NotSaved` for one that does not decode and may hold a
    SASL secret (which no view shows): it is not settled either."""
    from amqpcli.codec import encode
    from amqpcli.codec.composites import AmqpValue, Data
    from amqpcli.codec.message import Message
    from amqpcli.codec.types import DecodeError
    from amqpcli.render.redact import may_hold_secret, redact
    from amqpcli.render.types import amqp_type

    if message_format:
        if may_hold_secret(payload):
            raise _NotSaved(f"its message-format is {message_format} (a vendor's) and its "
                            "payload may hold a SASL secret")
        return payload, (f"its message-format is {message_format} (a vendor's): its payload "
                         "saved whole")
    try:
        body = Message.decode(payload).body
    except DecodeError as e:
        if may_hold_secret(payload):
            raise _NotSaved(f"it does not decode ({e}) and may hold a SASL secret") from None
        return payload, f"it does not decode ({e}); its bytes saved whole"
    if body is None:
        return b"", None
    if isinstance(body, AmqpValue) and amqp_type(body.value) in ("binary", "string"):
        value = body.value
        return value.encode("utf-8") if isinstance(value, str) else bytes(value), None
    sections = [body] if isinstance(body, AmqpValue) else list(body)
    if all(isinstance(p, Data) for p in sections):
        return b"".join(bytes(p.value) for p in sections), None
    values = [redact(p.value) for p in sections]
    if all(v is p.value for v, p in zip(values, sections, strict=True)):
        return b"".join(encode(p) for p in sections), None  # (as they came)
    masked = b"".join(encode(type(p)(value=v)) for v, p in zip(values, sections, strict=True))
    return masked, "its body holds a SASL secret: saved masked"
