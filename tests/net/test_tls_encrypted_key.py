"""An encrypted private key (`--key`, or the key in the `--cert` file) is refused with one
line that says so; OpenSSL never prompts for a passphrase (on a terminal its prompt
blocked, whatever --connect-timeout said; without one the error was 'invalid
argument')."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.config import TlsConfig
from tests.net.servepeer import cli_env
from tests.paths import REPO_ROOT
from tests.peers.tls import Certs, _openssl

PASSPHRASE = "PASSphr4se"


@pytest.fixture(scope="module")
def encrypted_key(tls_certs: Certs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("enc-key")
    _openssl("pkey", "-in", str(tls_certs.client_key), "-aes256", "-passout",
             f"pass:{PASSPHRASE}", "-out", "enc.key", cwd=d)
    assert b"ENCRYPTED" in (d / "enc.key").read_bytes()
    return d / "enc.key"


def _send(*args: str) -> subprocess.CompletedProcess[str]:
    # no terminal and no stdin: OpenSSL's prompt would go to stderr and read stdin
    return subprocess.run([sys.executable, "-m", "amqpcli", "send", "amqps://127.0.0.1:1/x",
                           "hi", "--insecure", *args],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          cwd=REPO_ROOT, env=cli_env(), start_new_session=True, timeout=120,
                          check=False)


def test_encrypted_key_file(tls_certs: Certs, encrypted_key: Path) -> None:
    r = _send("--cert", str(tls_certs.client_cert), "--key", str(encrypted_key))
    assert r.returncode == Exit.USAGE, r.stderr
    assert "pass phrase" not in r.stderr.lower()
    assert r.stderr.strip().splitlines() == [(
        f"amqp: error: TLS setup failed: the key in --key {encrypted_key} is encrypted: give it "
        "decrypted (there is no passphrase option; `openssl pkey -in KEY -out PLAIN.key` "
        "decrypts it)")]


def test_encrypted_key_in_the_cert_file(tls_certs: Certs, encrypted_key: Path,
                                        tmp_path: Path) -> None:
    both = tmp_path / "both.pem"
    both.write_bytes(tls_certs.client_cert.read_bytes() + encrypted_key.read_bytes())
    r = _send("--cert", str(both))
    assert r.returncode == Exit.USAGE, r.stderr
    assert "pass phrase" not in r.stderr.lower()
    assert f"the key in --cert {both} is encrypted" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_context_refuses_without_prompting(tls_certs: Certs, encrypted_key: Path) -> None:
    with pytest.raises(UserError, match="is encrypted"):
        TlsConfig(cert_file=str(tls_certs.client_cert), key_file=str(encrypted_key)).context()
    # an unencrypted key still loads
    TlsConfig(cert_file=str(tls_certs.client_cert), key_file=str(tls_certs.client_key)).context()
