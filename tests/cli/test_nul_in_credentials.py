"""A user or password holding a NUL character cannot go in a SASL PLAIN response, where
NUL separates the authorization id, the user and the password (RFC 4616): it was sent
all the same (a URL's %00, a password file's NUL), split by the peer elsewhere, and
refused as a wrong password (exit 3). It is a usage error now, said before connecting,
that does not show the password."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers

NOWHERE = "amqp://127.0.0.1:1/q"  # (never reached: refused first)


@pytest.mark.parametrize(("url", "what"), [
    ("amqp://al%00ice:Zq9Secret@127.0.0.1:1/q", "user"),
    ("amqp://alice:Zq9%00Secret@127.0.0.1:1/q", "password"),
], ids=["user", "password"])
def test_a_nul_in_the_urls_credentials_is_a_usage_error(url: str, what: str) -> None:
    r = amqp("send", url, "x")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"amqp: error: the {what} holds a NUL character"), r.stderr
    assert "Zq9" not in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr


def test_a_nul_in_a_password_file_is_a_usage_error(tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_bytes(b"Zq9\x00Secret\n")
    r = amqp("recv", NOWHERE, "-u", "alice", "--password-file", str(secret), "-t", "1")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("amqp: error: the password holds a NUL character"), r.stderr
    assert "Zq9" not in r.stderr, r.stderr


def test_a_nul_in_a_profiles_user_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[profiles.p]\nurl = "amqp://127.0.0.1:1"\nuser = "al\\u0000ice"\n')
    r = amqp("send", "@p/q", "x", env={"AMQP_CONFIG": str(config)})
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("amqp: error: the user holds a NUL character"), r.stderr


@pytest.mark.integration
def test_credentials_without_a_nul_still_log_in(serve: ServePeers) -> None:
    url = serve("--user", "alice", "--password", "pw")
    r = amqp("send", url.replace("//", "//alice:pw@") + "/q", "x", "-q")
    assert r.returncode == 0, r.stderr
