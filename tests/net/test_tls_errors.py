"""Every TLS failure is one line with the hint that fits it: a certificate for other names
(--server-name, and the names it has), an expired one (the date), an unknown CA
(--ca-file), a peer that wants a client certificate or refuses ours (--cert/--key)."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

import pytest

from amqpcli.net.certinfo import cert_info
from tests.net.clirun import amqp
from tests.net.tlspeer import (
    Listener,
    handshake_then,
    one_line,
    reset,
    server_context,
    until_closed,
)
from tests.peers.tls import Certs, _openssl


@dataclass(frozen=True)
class ExtraCerts:
    wrong_name: tuple[Path, Path]  # signed by the test CA, for wrong.example only
    expired: tuple[Path, Path]  # signed by the test CA, for 127.0.0.1, valid in January 2020


@pytest.fixture(scope="module")
def extra_certs(tls_certs: Certs, tmp_path_factory: pytest.TempPathFactory) -> ExtraCerts:
    d = tmp_path_factory.mktemp("tls-extra")
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    ca = ["-CA", str(tls_certs.ca_cert), "-CAkey", str(tls_certs.dir / "ca.key")]
    (d / "wrong.ext").write_text("subjectAltName=DNS:wrong.example\n"
                                 "extendedKeyUsage=serverAuth\n")
    _openssl("req", "-new", *key, "-keyout", "wrong.key", "-out", "wrong.csr",
             "-subj", "/CN=wrong.example", cwd=d)
    _openssl("x509", "-req", "-in", "wrong.csr", *ca, "-CAcreateserial", "-out", "wrong.pem",
             "-days", "2", "-extfile", "wrong.ext", cwd=d)
    # `openssl ca` sets dates in the past (`x509 -days` takes only positive numbers)
    (d / "index.txt").write_text("")
    (d / "serial").write_text("1000\n")
    (d / "ca.cnf").write_text(
        f"[ca]\ndefault_ca = here\n[here]\ndatabase = {d}/index.txt\nserial = {d}/serial\n"
        f"new_certs_dir = {d}\ndefault_md = sha256\npolicy = any\nunique_subject = no\n"
        "[any]\ncommonName = supplied\n"
        "[ext]\nsubjectAltName = IP:127.0.0.1,DNS:localhost\nextendedKeyUsage = serverAuth\n")
    _openssl("req", "-new", *key, "-keyout", "expired.key", "-out", "expired.csr",
             "-subj", "/CN=expired", cwd=d)
    _openssl("ca", "-batch", "-config", "ca.cnf", "-cert", str(tls_certs.ca_cert), "-keyfile",
             str(tls_certs.dir / "ca.key"), "-in", "expired.csr", "-out", "expired.pem",
             "-startdate", "20200101000000Z", "-enddate", "20200201000000Z",
             "-extensions", "ext", "-notext", cwd=d)
    return ExtraCerts((d / "wrong.pem", d / "wrong.key"), (d / "expired.pem", d / "expired.key"))


def _send(port: int, *args: str) -> tuple[int, str]:
    r = amqp("send", f"amqps://127.0.0.1:{port}/q", "x", *args)
    return r.returncode, one_line(r.stderr) if r.returncode else r.stderr


# --- the peer's certificate --------------------------------------------------------------

def test_a_certificate_for_other_names_suggests_server_name(
        tls_certs: Certs, extra_certs: ExtraCerts) -> None:
    with Listener(handshake_then(server_context(*extra_certs.wrong_name), until_closed)) as ln:
        assert _send(ln.port, "--ca-file", str(tls_certs.ca_cert)) == (3, (
            f"cannot connect to 127.0.0.1:{ln.port}: TLS certificate verification failed: "
            "the certificate is for wrong.example, not '127.0.0.1' (use --server-name to "
            "check another name, or --insecure to skip verification)"))
        # the name it is for, checked: verified (then the peer says nothing)
        code, line = _send(ln.port, "--ca-file", str(tls_certs.ca_cert), "--server-name",
                           "wrong.example", "--connect-timeout", "1")
        assert code == 3 and "verification" not in line, line


def test_an_expired_certificate_says_when(tls_certs: Certs, extra_certs: ExtraCerts) -> None:
    with Listener(handshake_then(server_context(*extra_certs.expired), until_closed)) as ln:
        assert _send(ln.port, "--ca-file", str(tls_certs.ca_cert)) == (3, (
            f"cannot connect to 127.0.0.1:{ln.port}: TLS certificate verification failed: "
            "the certificate expired on 2020-02-01 00:00:00 UTC (use --insecure to skip "
            "verification)"))


def test_an_unknown_issuer_suggests_ca_file_and_is_not_retried(tls_certs: Certs) -> None:
    ctx = server_context(tls_certs.server_cert, tls_certs.server_key)
    with Listener(handshake_then(ctx, until_closed)) as ln:
        code, line = _send(ln.port, "--reconnect", "2")  # the system's CAs
        assert code == 3
        assert line.startswith(f"cannot connect to 127.0.0.1:{ln.port}: TLS certificate "
                               "verification failed: ")
        assert line.endswith("(use --ca-file, or --insecure to skip verification)")
        assert ln.accepted() == 1  # a TLS failure: not tried again


def test_cert_info_reads_dates_and_names(tls_certs: Certs, extra_certs: ExtraCerts) -> None:
    def info(path: Path):  # type: ignore[no-untyped-def]
        return cert_info(ssl.PEM_cert_to_DER_cert(path.read_text()))

    expired = info(extra_certs.expired[0])
    assert expired is not None and expired.names == ("127.0.0.1", "localhost")
    assert (str(expired.not_before), str(expired.not_after)) == (
        "2020-01-01 00:00:00+00:00", "2020-02-01 00:00:00+00:00")
    wrong = info(extra_certs.wrong_name[0])
    assert wrong is not None and wrong.names == ("wrong.example",)
    ca = info(tls_certs.ca_cert)  # no subjectAltName: its common name
    assert ca is not None and ca.names == ("amqpcli test CA",)
    assert cert_info(b"") is None and cert_info(b"\x30\x03\x30\x01") is None


# --- client certificates -----------------------------------------------------------------

def test_a_missing_client_certificate_suggests_cert_and_key(tls_certs: Certs) -> None:
    ctx = server_context(tls_certs.server_cert, tls_certs.server_key, tls_certs.ca_cert)
    with Listener(handshake_then(ctx, until_closed)) as ln:
        code, line = _send(ln.port, "--ca-file", str(tls_certs.ca_cert))
    assert code == 3
    where = f"cannot connect to 127.0.0.1:{ln.port}: "
    # TLS 1.3: the peer's alert comes after our side of the handshake; it may also be lost
    # to the reset that follows it
    assert line in (
        where + "TLS error: the peer sent the alert 'certificate required' (it requires a "
        "client certificate: use --cert and --key)",
        where + "connection reset by peer right after the TLS handshake: the peer may require "
        "a client certificate (use --cert and --key)",
    ), line


def test_a_reset_right_after_the_handshake_suggests_cert_and_key(tls_certs: Certs) -> None:
    ctx = server_context(tls_certs.server_cert, tls_certs.server_key)
    with Listener(handshake_then(ctx, reset)) as ln:
        assert _send(ln.port, "--ca-file", str(tls_certs.ca_cert)) == (3, (
            f"cannot connect to 127.0.0.1:{ln.port}: connection reset by peer right after the "
            "TLS handshake: the peer may require a client certificate (use --cert and --key)"))
        code, line = _send(ln.port, "--ca-file", str(tls_certs.ca_cert), "--cert",
                           str(tls_certs.client_cert), "--key", str(tls_certs.client_key))
        assert code == 3 and line.endswith(
            "right after the TLS handshake: the peer may not accept our client certificate "
            "(--cert)"), line


def test_a_refused_client_certificate_says_so(tls_certs: Certs) -> None:
    ctx = server_context(tls_certs.server_cert, tls_certs.server_key, tls_certs.ca_cert)
    with Listener(handshake_then(ctx, until_closed)) as ln:
        code, line = _send(ln.port, "--ca-file", str(tls_certs.ca_cert), "--cert",
                           str(tls_certs.untrusted_cert), "--key", str(tls_certs.untrusted_key))
    assert code == 3
    assert line.endswith(("(it did not accept our client certificate, --cert)",
                          "the peer may not accept our client certificate (--cert)")), line
