"""`--save-bodies DIR` (recv, browse): each message's body, as bytes, in a file of its own,
settled only once the file is on disk."""

from __future__ import annotations

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
        self.saved: list[str] = []  # the names given, in order

    def write(self, incoming: Incoming) -> None:
        self.write_many((incoming,))

    def write_many(self, incomings: Sequence[Incoming]) -> None:
        """Save each body, then make the names durable; an `OutputError` says how many of
        the run, from the first, were saved whole."""
        from amqpcli.net.receiving import OutputError

        before = len(self.saved)
        failure: OSError | None = None
        for incoming in incomings:
            try:
                self._save(incoming)
            except OSError as e:
                failure = e
                break
        saved = len(self.saved) - before
        try:
            os.fsync(self.dir_fd)  # the new names: on disk before any message is settled
        except OSError as e:
            failure, saved = e, 0
        if failure is not None:
            raise OutputError(f"--save-bodies: cannot write in {self.path!r}: "
                              f"{failure.strerror or failure}", Exit.USAGE, saved)

    def _save(self, incoming: Incoming) -> None:
        data, problem = body_bytes(incoming.payload)
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
                except OSError:  # a file system without hard links
                    if os.path.lexists(final):
                        continue
                    os.rename(tmp, final)
                break
        finally:
            if os.path.lexists(tmp):
                os.unlink(tmp)
        self.saved.append(name)

    def close(self) -> None:
        try:
            os.close(self.dir_fd)
        except OSError:
            pass

    def to_json(self) -> dict[str, Any]:
        """For the JSON summary's "saved-bodies"."""
        out: dict[str, Any] = {"dir": self.path, "count": len(self.saved)}
        if self.saved:
            out["first"], out["last"] = self.saved[0], self.saved[-1]
        return out

    def note(self) -> str | None:
        """Where the bodies went, for the end of the run."""
        if not self.saved:
            return None
        where = os.path.join(self.path, self.saved[0])
        if len(self.saved) > 1:
            where += f" to {self.saved[-1]}"
        return f"{len(self.saved)} bod{'y' if len(self.saved) == 1 else 'ies'} saved: {where}"


def body_bytes(payload: bytes) -> tuple[bytes, str | None]:
    """A message's body as `--save-bodies` saves it (and why not as such, or None): data
    sections' bytes together, an amqp-value's binary as it is and its string as UTF-8;
    any other body (another value, amqp-sequence sections) its sections as they came,
    AMQP-encoded (`amqp decode` reads them), but for a SASL secret in them, masked as
    every view masks it; a message that does not decode, its bytes (none when they may
    hold a SASL secret, which the views do not show either)."""
    from amqpcli.codec import encode
    from amqpcli.codec.composites import AmqpValue, Data
    from amqpcli.codec.message import Message
    from amqpcli.codec.types import DecodeError
    from amqpcli.render.redact import may_hold_secret, redact
    from amqpcli.render.types import amqp_type

    try:
        body = Message.decode(payload).body
    except DecodeError as e:
        if may_hold_secret(payload):
            return b"", f"it does not decode ({e}) and may hold a SASL secret: nothing saved"
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
