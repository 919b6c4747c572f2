"""Opening the byte stream: TCP, TLS first (``amqps://``) or TLS through the AMQP TLS
header (protocol id 2), with every failure turned into one clear `UserError` line."""

from __future__ import annotations

import asyncio
import errno
import socket
import ssl
from dataclasses import replace
from datetime import UTC, datetime

from amqpcli.aio import wait_within
from amqpcli.errors import Exit, UserError, cut_middle
from amqpcli.net.certinfo import CertInfo, cert_info
from amqpcli.net.config import ConnectionConfig
from amqpcli.render.types import printable

__all__ = ["TLS_HEADER", "check_resolvable", "connection_error", "name_refused", "open_stream"]

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

# OpenSSL's X509_V_ERR_* codes that the error line explains itself
_NOT_YET_VALID = 9
_EXPIRED = 10
_NAME_MISMATCH = frozenset({62, 63, 64})  # hostname, email, IP address
# the chain leads to no CA we trust: what --ca-file is for
_UNKNOWN_ISSUER = frozenset({2, 18, 19, 20, 21})

# TLS alerts (OpenSSL reasons SSLV3_ALERT_*, TLSV1_ALERT_*, TLSV13_ALERT_*) that say the
# peer did not take our client certificate
_CERT_REFUSED = frozenset({"BAD_CERTIFICATE", "UNSUPPORTED_CERTIFICATE", "CERTIFICATE_REVOKED",
                           "CERTIFICATE_EXPIRED", "CERTIFICATE_UNKNOWN", "UNKNOWN_CA",
                           "ACCESS_DENIED", "DECRYPT_ERROR"})

# the stream ending, as the socket or TLS layer reports it
_ENDED = (ConnectionResetError, BrokenPipeError, EOFError, asyncio.IncompleteReadError,
          ssl.SSLEOFError)


def name_refused(host: str) -> str | None:
    """Why Python refuses the host name `host` before any resolver sees it, or None.
    getaddrinfo and TLS's server name encode a name with the idna codec, which raises a
    UnicodeError (no OSError) for a label over 63 characters, an empty one ("a..b", ".")
    or a character IDNA forbids."""
    try:
        host.encode("idna")
    except UnicodeError as e:
        return str(e.__cause__ or e)
    return None


def check_resolvable(host: str) -> None:
    """Raise for a name Python would refuse to look up (`name_refused`) the error a name
    the resolver does not know gets, `socket.gaierror`: connecting or listening says
    "cannot resolve" either way, not an internal error."""
    reason = name_refused(host)
    if reason is not None:
        raise socket.gaierror(socket.EAI_NONAME, reason)


class _Phase:
    """How far `_open` got, for an error that does not say: "tcp", "tls-header", "tls"."""

    def __init__(self) -> None:
        self.step = "tcp"


def connection_error(cfg: ConnectionConfig, exc: BaseException, during: str = "connect to",
                     *, heard: bytes | None = None, cert: CertInfo | None = None) -> UserError:
    """One line for a failure to reach or keep the peer: "cannot connect to h:p: reason".

    `heard`: when the stream (TCP, and TLS if any) had been made and the failure ended it
    before the peer's open, the first bytes the peer had sent (b"" for none). A peer that
    ends the stream having said nothing tells something: a TLS port that met our AMQP
    header, a TLS peer that wants a client certificate. `cert`: for a certificate that did
    not verify, what it says (its dates and names), when it could be read."""
    # (a name hundreds of characters long, said twice, would bury the line)
    where = cut_middle(cfg.endpoint.hostport)
    if isinstance(exc, UserError):
        return exc
    if isinstance(exc, socket.gaierror):
        reason = f"cannot resolve host {cut_middle(cfg.endpoint.host)!r}"
    elif isinstance(exc, ssl.SSLCertVerificationError):
        reason = _verification_failed(cfg, exc, cert)
    elif isinstance(exc, ssl.SSLError) and not isinstance(exc, ssl.SSLEOFError):
        reason = _tls_error(cfg, exc)
    elif isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        reason = "timed out"
    elif isinstance(exc, (asyncio.IncompleteReadError, EOFError, ssl.SSLEOFError)):
        reason = "connection closed by peer"
    elif isinstance(exc, OSError):
        reason = _REASONS.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
    else:
        reason = str(exc) or type(exc).__name__
    if heard is not None and isinstance(exc, _ENDED):
        reason += _ended_early(cfg, heard)
    err = UserError(f"cannot {during} {where}: {reason}", Exit.CONNECTION)
    # Worth another try after a pause (the peer may be restarting); TLS and name
    # resolution failures are not (a TLS handshake that times out is a timeout: see
    # `open_stream`).
    err.retryable = not isinstance(  # type: ignore[attr-defined]
        exc, (ssl.SSLError, socket.gaierror)) or isinstance(exc, ssl.SSLEOFError)
    return err


def _ended_early(cfg: ConnectionConfig, heard: bytes) -> str:
    """What a peer that ended the stream before its open, having sent `heard`, may want."""
    if heard:
        # (first bytes that look like TLS are the engine's to name: "it answered with TLS")
        return ""
    if not cfg.uses_tls:
        return " right after our protocol header: the peer may expect TLS (amqps://)"
    if cfg.tls.cert_file:
        return (" right after the TLS handshake: the peer may not accept our client "
                "certificate (--cert)")
    return (" right after the TLS handshake: the peer may require a client certificate "
            "(use --cert and --key)")


def _tls_error(cfg: ConnectionConfig, exc: ssl.SSLError) -> str:
    """One line for a TLS failure other than the peer's certificate."""
    reason = exc.reason or ""
    if not reason:
        return f"TLS error: {exc}"
    if reason in _NOT_TLS:
        return (f"TLS error: {_words(reason)} (the peer did not answer with TLS: a plain "
                "amqp:// port?)")
    if "_ALERT_" not in reason:
        return f"TLS error: {_words(reason)}"
    alert = reason.partition("_ALERT_")[2]
    said = f"TLS error: the peer sent the alert '{_words(alert)}'"
    if alert == "CERTIFICATE_REQUIRED":
        return f"{said} (it requires a client certificate: use --cert and --key)"
    if cfg.tls.cert_file and alert in _CERT_REFUSED:
        return f"{said} (it did not accept our client certificate, --cert)"
    if alert == "HANDSHAKE_FAILURE" and not cfg.tls.cert_file:
        return (f"{said} (it may require a client certificate, --cert and --key, or share "
                "no TLS version or cipher with us)")
    if alert == "PROTOCOL_VERSION":
        return f"{said} (we share no TLS version)"
    return said


def _words(reason: str) -> str:
    """OpenSSL's WRONG_VERSION_NUMBER as words: 'wrong version number'."""
    return reason.replace("_", " ").lower()


def _verification_failed(cfg: ConnectionConfig, exc: ssl.SSLCertVerificationError,
                         cert: CertInfo | None) -> str:
    """The peer's certificate did not verify: why, and what may help. `cert`: what the
    certificate says, when it could be read (dates, names)."""
    code = exc.verify_code
    said = (exc.verify_message or str(exc.reason or exc)).rstrip(".")
    insecure = "--insecure to skip verification"
    if code in _NAME_MISMATCH:
        name = printable(cfg.tls.server_name or cfg.endpoint.host)
        if cert is not None and cert.names:
            names = ", ".join(printable(n) for n in cert.names[:4])
            names += ", …" if len(cert.names) > 4 else ""
            what = f"the certificate is for {names}, not {name!r}"
        else:
            what = f"the certificate is not valid for {name!r}"
        hint = f"use --server-name to check another name, or {insecure}"
    elif code == _EXPIRED:
        after = cert.not_after if cert is not None else None
        if after is not None and after < datetime.now(UTC):
            what = f"the certificate expired on {_date(after)}"
        elif after is not None:
            what = "a certificate of its chain has expired"
        else:
            what = "the certificate has expired"
        hint = f"use {insecure}"
    elif code == _NOT_YET_VALID:
        before = cert.not_before if cert is not None else None
        what = f"the certificate is not valid before {_date(before)}" if before is not None \
            else "the certificate is not valid yet"
        hint = f"is this machine's clock right? Or use {insecure}"
    elif code in _UNKNOWN_ISSUER:
        what, hint = said, f"use --ca-file, or {insecure}"
    else:
        what, hint = said, f"use {insecure}"
    return f"TLS certificate verification failed: {what} ({hint})"


def _date(t: datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S UTC")


async def open_stream(cfg: ConnectionConfig) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect (and, for TLS, handshake) within `cfg.connect_timeout`."""
    phase = _Phase()
    try:
        return await wait_within(_open(cfg, phase), cfg.connect_timeout)
    except TimeoutError:
        if phase.step != "tls":
            raise connection_error(cfg, TimeoutError()) from None
        # A timeout, not a TLS failure: the peer took the connection and did not finish
        # the handshake in time, as a busy or starting peer may not (--reconnect retries it).
        err = UserError(f"cannot connect to {cfg.endpoint.hostport}: TLS handshake timed out "
                        f"after {cfg.connect_timeout:g}s", Exit.CONNECTION)
        err.retryable = True  # type: ignore[attr-defined]
        raise err from None
    except ssl.SSLCertVerificationError as e:
        cert = None
        if e.verify_code in _NAME_MISMATCH or e.verify_code in (_EXPIRED, _NOT_YET_VALID):
            cert = await _peer_certificate(cfg)
        raise connection_error(cfg, e, cert=cert) from None
    except (OSError, asyncio.IncompleteReadError, EOFError) as e:
        raise connection_error(cfg, e) from None


async def _peer_certificate(cfg: ConnectionConfig) -> CertInfo | None:
    """The peer's certificate, read over a second connection that does not verify it (the
    failed one gives nothing to read), for the error line: None if that fails too."""
    probe = replace(cfg, tls=replace(cfg.tls, verify=False))
    try:
        _reader, writer = await wait_within(_open(probe, _Phase()),
                                            min(cfg.connect_timeout, 5.0))
    except (OSError, TimeoutError, asyncio.IncompleteReadError, EOFError, UserError):
        return None
    try:
        tls = writer.get_extra_info("ssl_object")
        der = tls.getpeercert(binary_form=True) if tls is not None else None
    finally:
        writer.close()
    return cert_info(der) if der else None


async def _open(cfg: ConnectionConfig, phase: _Phase,
                ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    ep = cfg.endpoint
    server_name = cfg.tls.server_name or ep.host
    ctx = cfg.tls.context() if cfg.uses_tls else None  # a bad file: before connecting
    check_resolvable(ep.host)
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
