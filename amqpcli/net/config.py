"""Everything a connection needs besides the endpoint: SASL, TLS, timers, reconnect.

`ConnectionConfig` is what the CLI's shared connection options turn into, and what
`amqpcli.net.client` takes. The SASL mechanism rule lives here, in one place.
"""

from __future__ import annotations

import socket
import ssl
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from amqpcli.errors import Exit, UserError
from amqpcli.net.url import Endpoint

__all__ = ["MECHANISMS", "ConnectionConfig", "ReconnectPolicy", "TlsConfig", "choose_mechanism"]

MECHANISMS = ("ANONYMOUS", "PLAIN", "EXTERNAL", "NONE")  # NONE: no SASL layer at all


@dataclass(frozen=True)
class TlsConfig:
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify: bool = True
    server_name: str | None = None  # SNI and the name checked; default: the host
    # the context once made: the files are read once (when the options are checked), and
    # every connection (a reconnect, each of a proxy's) uses the same context
    _ctx: ssl.SSLContext | None = field(default=None, init=False, repr=False, compare=False)

    def context(self) -> ssl.SSLContext:
        """A client context: system CAs (or `ca_file`), hostname check unless `verify` is
        off. Made on the first call (a file that is missing or no PEM: a `UserError`, exit
        2), the same one after."""
        if self._ctx is None:
            object.__setattr__(self, "_ctx", self._make())
        assert self._ctx is not None
        return self._ctx

    def _make(self) -> ssl.SSLContext:
        try:
            ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=self.ca_file)
        except (OSError, ssl.SSLError) as e:
            raise _tls_file_error(f"--ca-file {self.ca_file}", e, "no PEM certificates in it") \
                from None
        if not self.verify:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            try:
                # a callback that refuses: OpenSSL's own would prompt on the terminal
                # ("Enter PEM pass phrase:") and block, whatever --connect-timeout says
                ctx.load_cert_chain(self.cert_file, self.key_file, password=_no_passphrase)
            except _EncryptedKey:
                key = (f"--key {self.key_file}" if self.key_file
                       else f"--cert {self.cert_file}")
                raise UserError(f"TLS setup failed: the key in {key} is encrypted: give it "
                                "decrypted (there is no passphrase option; `openssl pkey -in "
                                "KEY -out PLAIN.key` decrypts it)", Exit.USAGE) from None
            except (OSError, ssl.SSLError) as e:
                files = f"--cert {self.cert_file}" + (f", --key {self.key_file}"
                                                      if self.key_file else "")
                raise _tls_file_error(files, e, "not a PEM certificate with its private key, "
                                      "or the key does not match") from None
        return ctx


class _EncryptedKey(Exception):
    """The private key asked for a passphrase."""


def _no_passphrase() -> str:
    raise _EncryptedKey


def _tls_file_error(files: str, e: OSError, unreadable: str) -> UserError:
    """One line that names the file: `ssl` says "[SSL] PEM lib" for content it cannot
    use (a subclass of OSError without an errno) and only the errno text otherwise."""
    what = unreadable if isinstance(e, ssl.SSLError) else (e.strerror or str(e)).lower()
    return UserError(f"TLS setup failed: {files}: {what}", Exit.USAGE)


@dataclass(frozen=True)
class ReconnectPolicy:
    """Exponential backoff: `initial`, doubling up to `maximum` seconds; `limit` attempts
    in a row (0 = do not reconnect). A connection on which the run got somewhere (a
    message received, or its send over) starts the attempts and the backoff over."""

    limit: int = 0
    initial: float = 0.2
    maximum: float = 10.0

    def delays(self) -> Backoff:
        return Backoff(self.limit, self.initial, self.maximum)


class Backoff:
    """The pauses before each attempt left, made as they are taken (a `--reconnect` of
    10**20 is a number, not a list): `initial`, doubling up to `maximum`."""

    def __init__(self, limit: int, initial: float, maximum: float) -> None:
        self.left = limit
        self.taken = 0
        self._next = min(initial, maximum)
        self._maximum = maximum

    def __bool__(self) -> bool:
        return self.left > 0

    def pop(self) -> float:
        """The next pause; only while attempts are left."""
        assert self.left > 0
        self.left -= 1
        self.taken += 1
        delay, self._next = self._next, min(self._next * 2, self._maximum)
        return delay


@dataclass(frozen=True)
class ConnectionConfig:
    endpoint: Endpoint = field(default_factory=Endpoint)
    sasl_mechanism: str | None = None  # None: chosen by `choose_mechanism`
    tls: TlsConfig = field(default_factory=TlsConfig)
    tls_upgrade: bool = False  # amqp:// then the AMQP TLS header (protocol id 2)
    connect_timeout: float = 10.0
    idle_timeout: float | None = None  # seconds; None: do not ask the peer for heartbeats
    container_id: str | None = None
    max_frame_size: int | None = None
    # the largest message our receiving links take (their attach's max-message-size)
    max_message_size: int | None = None
    reconnect: ReconnectPolicy = field(default_factory=ReconnectPolicy)
    # every frame both ways: (connection label, "->" ours or "<-" the peer's, frame
    # reader item, time); the CLI renders it (`--trace`)
    trace: Callable[[str, str, Any, float], None] | None = None
    # the hostname of open and sasl-init (--open-hostname: a broker may pick a virtual host
    # by it); default: the TLS server name, else the endpoint's host
    hostname: str | None = None
    # which host of a failover list the next connect tries first: the one after the host
    # last connected to, so a run's reconnects go round the list (one list, shared by the
    # copies `connect_retrying` makes for each host)
    next_host: list[int] = field(default_factory=lambda: [0], repr=False, compare=False)

    @property
    def uses_tls(self) -> bool:
        return self.endpoint.tls or self.tls_upgrade

    def effective_container_id(self) -> str:
        return self.container_id or f"amqp-{socket.gethostname()}-{uuid.uuid4().hex[:12]}"

    def mechanism(self) -> str:
        return choose_mechanism(
            self.sasl_mechanism, self.endpoint.user, self.uses_tls and bool(self.tls.cert_file)
        )


def choose_mechanism(explicit: str | None, user: str | None, client_cert: bool) -> str:
    """The SASL mechanism: the one asked for; else PLAIN with a user, EXTERNAL with a
    client certificate, ANONYMOUS otherwise. One asked for empty is a usage error, not
    the default chosen unasked."""
    if explicit is not None:
        if not explicit.strip():
            raise UserError(f"--sasl-mechanism needs a name: one of {', '.join(MECHANISMS)}",
                            Exit.USAGE)
        mech = explicit.upper()
        if mech not in MECHANISMS:
            raise UserError(
                f"unknown SASL mechanism {explicit!r}: use one of {', '.join(MECHANISMS)}",
                Exit.USAGE,
            )
        if mech == "PLAIN" and not user:
            raise UserError("SASL PLAIN needs a user (URL user@ or --user)", Exit.USAGE)
        if mech == "NONE" and user:
            raise UserError("--sasl-mechanism none sends no credentials: drop the user",
                            Exit.USAGE)
        if mech == "ANONYMOUS" and user:
            raise UserError("--sasl-mechanism anonymous sends no credentials: drop the user "
                            "(or use PLAIN)", Exit.USAGE)
        return mech
    if user:
        return "PLAIN"
    if client_cert:
        return "EXTERNAL"
    return "ANONYMOUS"
