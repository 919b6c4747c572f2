"""Errors a user can act on, and the exit codes they map to.

One place for every exit code the `amqp` command returns, so the CLI, the docs and the
tests agree. A `UserError` is printed as one line on stderr (no traceback unless
`--debug`) and ends the command with its code.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0
    FAILURE = 1  # unexpected internal error (a bug: rerun with --debug)
    USAGE = 2  # bad option or input; output could not be written
    CONNECTION = 3  # could not connect, TLS/SASL failure, connection lost
    REFUSED = 4  # the peer refused the link or closed it with an error
    TIMEOUT = 5  # nothing arrived or was confirmed in time
    REJECTED = 6  # some messages were rejected/released/modified or settled without an outcome by the peer, or missing from a numbered run
    IN_DOUBT = 7  # some sends (or a receiver's transaction) could not be confirmed either way
    DECODE = 8  # input could not be decoded (partial results were printed)
    INTERRUPTED = 130  # Ctrl-C


# The secrets of this run (the password it connects with, a URL's typed on the command
# line): masked wherever a text may repeat them (a peer's errors, the frames traced, a
# usage error quoting an argument), as the SASL frames are. Each kept as the forms it may
# take, longest first.
_SECRET_FORMS: list[str] = []
# A secret shorter than this is not looked for in other text: it would be found everywhere
# (a password "1" in every number, "amqp" in every condition, "guest" in its user's name,
# their hex in any payload). The frames that carry it (SASL) are masked all the same.
MIN_MASKED = 6
# The same forms as bytes, for a binary value shown whole (base64 in JSON hides a form
# from any text search).
_SECRET_BYTES: list[bytes] = []


def register_secret(secret: str | None) -> None:
    """`secret` is never to be shown: `mask_secrets` (and `mask_secret_bytes`) hide it
    from then on."""
    if not secret or len(secret) < MIN_MASKED:
        return
    forms = set(secret_forms(secret)) - set(_SECRET_FORMS)
    if forms:
        _SECRET_FORMS.extend(forms)
        _SECRET_FORMS.sort(key=len, reverse=True)
        _SECRET_BYTES[:] = [_utf8(form) for form in _SECRET_FORMS]


def clear_secrets() -> None:
    """Forget the registered secrets (a process that runs several commands: the tests)."""
    _SECRET_FORMS.clear()
    _SECRET_BYTES.clear()


def secret_forms(secret: str) -> tuple[str, ...]:
    """How a secret may appear in a text: as itself, as escaped bytes, as hex."""
    raw = _utf8(secret)
    return (secret, repr(raw)[2:-1], raw.hex())


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")  # (a byte not UTF-8 given as one)
    except UnicodeEncodeError:  # (a lone surrogate of no byte: as it is)
        return text.encode("utf-8", "surrogatepass")


def mask_secrets(text: str) -> str:
    """`text` with every registered secret, in any of its forms, as `***`."""
    for form in _SECRET_FORMS:
        if form in text:
            text = text.replace(form, "***")
    return text


def mask_secret_bytes(data: bytes) -> bytes:
    """`data` with every registered secret, in any of its forms (as UTF-8), as `***`: the
    rule of `mask_secrets` for a binary value a peer wrote, which a view may show whole
    (base64, hex cut short) where no text search finds the secret."""
    for form in _SECRET_BYTES:
        if form in data:
            data = data.replace(form, b"***")
    return data


class UserError(Exception):
    """An error the user caused or can fix; printed as one line."""

    def __init__(self, message: str, code: Exit = Exit.USAGE) -> None:
        super().__init__(message)
        self.code = code


def listen_error(host: str, port: int, e: OSError) -> UserError:
    """The one-line error for a listening socket that could not be opened (serve, proxy,
    the TUI's server): the reason alone, not asyncio's text that repeats the address, and
    a name that does not resolve said as such (its errno is no system error)."""
    import os
    import socket

    shown = cut_middle(host)
    if isinstance(e, socket.gaierror):
        reason = f"cannot resolve {shown!r} ({(e.strerror or str(e)).lower()})"
    elif e.errno:
        reason = os.strerror(e.errno).lower()
    else:
        reason = (e.strerror or str(e)).lower()
    where = f"[{shown}]:{port}" if ":" in host else f"{shown}:{port}"
    return UserError(f"cannot listen on {where}: {reason}", Exit.CONNECTION)


def cut_middle(text: str, limit: int = 120) -> str:
    """`text` as an error quotes it: whole up to `limit` characters, else its start and
    end with how much was left out between them (the message names what is wrong; the
    quote says which input)."""
    if len(text) <= limit:
        return text
    keep = (limit - 20) // 2
    return f"{text[:keep]}…({len(text) - 2 * keep} characters)…{text[-keep:]}"
