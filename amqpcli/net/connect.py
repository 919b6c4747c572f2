"""Opening the byte stream: TCP, TLS first (``amqps://``) or TLS through the AMQP TLS
header (protocol id 2), with every failure turned into one clear `UserError` line."""

from __future__ import annotations

import asyncio
import errno
import socket
import ssl

from amqpcli.errors import Exit, UserError
from amqpcli.net.config import ConnectionConfig

__all__ = ["TLS_HEADER", "connection_error", "open_stream"]

TLS_HEADER = b"AMQP\x02\x01\x00\x00"
_READ_LIMIT = 1 << 20

_REASONS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset by peer",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ENETUNREACH: "network unreachable",
    errno.ETIMEDOUT: "timed out",
    errno.EPIPE: "connection closed by peer",
}


# OpenSSL's reasons for a first answer that is no TLS record at all (an AMQP header, say)
_NOT_TLS = frozenset({"WRONG_VERSION_NUMBER", "UNKNOWN_PROTOCOL", "HTTP_REQUEST",
                      "PACKET_LENGTH_TOO_LONG", "RECORD_LAYER_FAILURE"})


class _Phase:
    """How far `_open` got, for an error that does not say: "tcp", "tls-header", "tls"."""

    def __init__(self) -> None:
        self.step = "tcp"


def connection_error(cfg: ConnectionConfig, exc: BaseException, during: str = "connect to") -> UserError:
    """One line for a failure to reach or keep the peer: "cannot connect to h:p: reason"."""
    where = cfg.endpoint.hostport
    if isinstance(exc, UserError):
        return exc
    if isinstance(exc, socket.gaierror):
        reason = f"cannot resolve host {cfg.endpoint.host!r}"
    elif isinstance(exc, ssl.SSLCertVerificationError):
        reason = f"TLS certificate verification failed: {exc.verify_message or exc.reason}"
        reason += " (use --ca-file, or --insecure to skip verification)"
    elif isinstance(exc, ssl.SSLError):
        reason = f"TLS error: {exc.reason or exc}"
        if exc.reason in _NOT_TLS:
            reason += " (the peer did not answer with TLS: a plain amqp:// port?)"
    elif isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        reason = "timed out"
    elif isinstance(exc, (asyncio.IncompleteReadError, EOFError)):
        reason = "connection closed by peer"
    elif isinstance(exc, OSError):
        reason = _REASONS.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
    else:
        reason = str(exc) or type(exc).__name__
    err = UserError(f"cannot {during} {where}: {reason}", Exit.CONNECTION)
    # Worth another try after a pause (the peer may be restarting); TLS and name
    # resolution failures are not (a TLS handshake that times out is a timeout: see
    # `open_stream`).
    err.retryable = not isinstance(exc, (ssl.SSLError, socket.gaierror))  # type: ignore[attr-defined]
    return err


async def open_stream(cfg: ConnectionConfig) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect (and, for TLS, handshake) within `cfg.connect_timeout`."""
    phase = _Phase()
    try:
        return await asyncio.wait_for(_open(cfg, phase), cfg.connect_timeout)
    except TimeoutError:
        if phase.step != "tls":
            raise connection_error(cfg, TimeoutError()) from None
        # A timeout, not a TLS failure: the peer took the connection and did not finish
        # the handshake in time, as a busy or starting peer may not (--reconnect retries it).
        err = UserError(f"cannot connect to {cfg.endpoint.hostport}: TLS handshake timed out "
                        f"after {cfg.connect_timeout:g}s", Exit.CONNECTION)
        err.retryable = True  # type: ignore[attr-defined]
        raise err from None
    except (OSError, asyncio.IncompleteReadError, EOFError) as e:
        raise connection_error(cfg, e) from None


async def _open(cfg: ConnectionConfig, phase: _Phase,
                ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    ep = cfg.endpoint
    server_name = cfg.tls.server_name or ep.host
    ctx = cfg.tls.context() if cfg.uses_tls else None  # a bad file: before connecting
    reader, writer = await asyncio.open_connection(ep.host, ep.port, limit=_READ_LIMIT)
    _nodelay(writer)
    try:
        if cfg.tls_upgrade and not ep.tls:
            # The TLS header exchange is below AMQP: both sides send it, then TLS starts.
            phase.step = "tls-header"
            writer.write(TLS_HEADER)
            await writer.drain()
            answer = await reader.readexactly(8)
            if answer != TLS_HEADER:
                raise UserError(
                    f"cannot connect to {ep.hostport}: peer does not offer TLS through the "
                    f"AMQP TLS header (it answered {answer!r})",
                    Exit.CONNECTION,
                )
        if ctx is not None:
            phase.step = "tls"
            # The handshake's own limit is the connect timeout's (asyncio's default is 60s)
            await writer.start_tls(ctx, server_hostname=server_name,
                                   ssl_handshake_timeout=cfg.connect_timeout + 1)
    except BaseException:
        writer.close()
        raise
    return reader, writer


def _nodelay(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
