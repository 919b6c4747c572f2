"""`--save-bodies DIR` (recv, browse): each message's body, as bytes, in a file of its own,
settled only once the file is on disk."""

from __future__ import annotations

import contextlib
import os
import re
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

    def __init__(self, path: str, on_warning: Callable[[str], None]) -> None:
        self.path = path
        self.on_warning = on_warning
        try:
            os.makedirs(path, exist_ok=True)
            names = os.listdir(path)
            self.dir_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            raise UserError(f"--save-bodies: cannot use {path!r}: {e.strerror}",
                            Exit.USAGE) from None
        numbers = [int(m[1]) for m in map(re.compile(r"(\d+)\.bin").fullmatch, names) if m]
        self.next = max(numbers, default=0) + 1
        # the files saved (their messages settled or about to be): how many, the first
        # and the last name (a run of days saves millions)
        self.count = 0
        self.first: str | None = None
        self.last: str | None = None

    def write(self, incoming: Incoming) -> None:
        self.write_many((incoming,))

    def write_many(self, incomings: Sequence[Incoming]) -> None:
        """Save each body, then make the names durable; an `OutputError` says how many of
        the run, from the first, were saved whole."""
        from amqpcli.net.receiving import OutputError

        names: list[str] = []
        failure: str | None = None
        for incoming in incomings:
            try:
                names.append(self._save(incoming))
            except OSError as e:
                failure = f"cannot write in {self.path!r}: {e.strerror or e}"
                break
            except _NotSaved as e:
                failure = f"message {incoming.number}: {e}: not settled, the run ends"
                break
        try:
            os.fsync(self.dir_fd)  # the new names: on disk before any message is settled
        except OSError as e:
            failure = f"cannot write in {self.path!r}: {e.strerror or e}"
            for name in names:  # (not settled: the peer delivers them again)
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.path, name))
            names = []
        if names:
            self.count += len(names)
            self.first = self.first or names[0]
            self.last = names[-1]
        if failure is not None:
            raise OutputError(f"--save-bodies: {failure}", Exit.USAGE, len(names))

    def _save(self, incoming: Incoming) -> str:
        """Save one body; the name it was given."""
        data, problem = body_bytes(incoming.payload, incoming.message_format)
        if problem is not None:
            self.on_warning(f"message {incoming.number}: {problem}")
        tmp = os.path.join(self.path, f".{os.urandom(8).hex()}.part")
        # (made as any file is, under the umask: mkstemp's would be the owner's alone)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with open(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
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
        try:
            os.close(self.dir_fd)
        except OSError:
            pass

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
