"""TLS material for the peers: a CA, a server certificate for 127.0.0.1 and localhost and a
client certificate, made with the ``openssl`` command; and proton ``SSLDomain``s from them."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from proton import SSLDomain


@dataclass(frozen=True)
class Certs:
    dir: Path
    ca_cert: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    untrusted_cert: Path  # a self-signed client certificate no peer trusts
    untrusted_key: Path


def _openssl(*args: str, cwd: Path) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise RuntimeError("openssl not found: scripts/test.sh installs it (apt-get install openssl)")
    proc = subprocess.run(
        [exe, *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )
    if proc.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed:\n{proc.stderr}")


def make_certs(directory: Path) -> Certs:
    """Write a CA and certificates signed by it into ``directory`` (EC P-256: quick to make)."""
    d = directory
    d.mkdir(parents=True, exist_ok=True)
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    _openssl(
        "req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=amqpcli test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d,
    )  # fmt: skip
    server_ext = "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n"
    for name, cn, ext in (
        ("server", "localhost", server_ext),
        ("client", "amqpcli-test-client", "extendedKeyUsage=clientAuth\n"),
    ):
        (d / f"{name}.ext").write_text(ext)
        _openssl(
            "req", "-new", *key, "-keyout", f"{name}.key", "-out", f"{name}.csr",
            "-subj", f"/CN={cn}", cwd=d,
        )  # fmt: skip
        _openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext",
            cwd=d,
        )  # fmt: skip
    _openssl(
        "req", "-x509", *key, "-keyout", "untrusted.key", "-out", "untrusted.pem", "-days", "2",
        "-subj", "/CN=untrusted client", cwd=d,
    )  # fmt: skip
    return Certs(
        dir=d,
        ca_cert=d / "ca.pem",
        server_cert=d / "server.pem",
        server_key=d / "server.key",
        client_cert=d / "client.pem",
        client_key=d / "client.key",
        untrusted_cert=d / "untrusted.pem",
        untrusted_key=d / "untrusted.key",
    )


def server_domain(certs: Certs, require_client_cert: bool = False) -> SSLDomain:
    domain = SSLDomain(SSLDomain.MODE_SERVER)
    domain.set_credentials(str(certs.server_cert), str(certs.server_key), None)
    domain.set_trusted_ca_db(str(certs.ca_cert))
    if require_client_cert:
        domain.set_peer_authentication(SSLDomain.VERIFY_PEER, str(certs.ca_cert))
    else:
        domain.set_peer_authentication(SSLDomain.ANONYMOUS_PEER)
    return domain


def client_domain(
    certs: Certs, with_client_cert: bool = False, verify_name: bool = False
) -> SSLDomain:
    """A client domain that verifies the server's certificate against the test CA; with
    ``verify_name`` also its name (proton checks names only: connect to ``localhost``)."""
    domain = SSLDomain(SSLDomain.MODE_CLIENT)
    domain.set_trusted_ca_db(str(certs.ca_cert))
    domain.set_peer_authentication(
        SSLDomain.VERIFY_PEER_NAME if verify_name else SSLDomain.VERIFY_PEER
    )
    if with_client_cert:
        domain.set_credentials(str(certs.client_cert), str(certs.client_key), None)
    return domain
