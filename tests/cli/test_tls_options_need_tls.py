"""TLS options are checked before anything starts, by one rule for every command
(`build_config`).

* `--ca-file`, `--cert`, `--key` or `--server-name` with a plain `amqp://` URL (and no
  `--tls-upgrade`) is a usage error: send, recv and proxy ignored them and went in clear,
  a PLAIN password included.
* With TLS, the proxy reads the files before listening: `amqp proxy … amqps://…
  --ca-file /nonexist` listened, then failed every application's connection.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.net.clirun import amqp
from tests.peers.tls import Certs

PLAIN = "amqp://127.0.0.1:1"  # nothing listens on port 1: no run gets as far as connecting


@pytest.mark.parametrize("tls_args", [
    ("--ca-file", "CA"), ("--cert", "CERT"), ("--key", "KEY"), ("--server-name", "example.com"),
])
@pytest.mark.parametrize("command", [
    ("send", f"{PLAIN}/q", "hi"),
    ("recv", f"{PLAIN}/q"),
    ("browse", f"{PLAIN}/q"),
    ("proxy", "127.0.0.1:0", PLAIN),
    ("tui", "--proxy", "127.0.0.1:0", PLAIN),
], ids=lambda c: c[0] + ("-proxy" if "--proxy" in c else ""))
def test_tls_options_with_a_plain_url_are_a_usage_error(
        command: tuple[str, ...], tls_args: tuple[str, str], tls_certs: Certs) -> None:
    files = {"CA": str(tls_certs.ca_cert), "CERT": str(tls_certs.client_cert),
             "KEY": str(tls_certs.client_key)}
    option, value = tls_args
    r = amqp(*command, option, files.get(value, value), timeout=60)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    upgrade = "" if command[0] == "proxy" else " (or --tls-upgrade)"  # proxy has none
    assert r.stderr == (f"amqp: error: {option} is a TLS option, but amqp://127.0.0.1:1 is "
                        f"plain TCP: use amqps://{upgrade} for TLS\n")
    assert r.stdout == ""


@pytest.mark.parametrize("command", [("send", f"{PLAIN}/q", "hi"), ("recv", f"{PLAIN}/q")])
def test_insecure_with_a_plain_url_and_tls_upgrade_with_amqps(command: tuple[str, ...]) -> None:
    # both were taken without a word: --insecure verifies nothing on plain TCP, and
    # amqps:// has no AMQP TLS header to upgrade with
    r = amqp(*command, "--insecure", timeout=60)
    said = ("amqp: error: --insecure is a TLS option, but amqp://127.0.0.1:1 is plain TCP: "
            "use amqps:// (or --tls-upgrade) for TLS\n")
    assert (r.returncode, r.stderr) == (2, said)
    tls = [a.replace("amqp://", "amqps://") for a in command]
    r = amqp(*tls, "--tls-upgrade", timeout=60)
    said = "amqp: error: --tls-upgrade is for amqp://: amqps://127.0.0.1:1 is TLS first\n"
    assert (r.returncode, r.stderr) == (2, said)


def test_several_are_named(tls_certs: Certs) -> None:
    r = amqp("send", f"{PLAIN}/q", "hi", "--cert", str(tls_certs.client_cert), "--key",
             str(tls_certs.client_key), timeout=60)
    assert r.returncode == 2
    assert r.stderr.startswith("amqp: error: --cert, --key are TLS options, but amqp://")


def test_with_tls_upgrade_they_are_taken(tls_certs: Certs) -> None:
    r = amqp("send", f"{PLAIN}/q", "hi", "--tls-upgrade", "--ca-file", str(tls_certs.ca_cert),
             timeout=60)
    assert r.returncode == 3, r.stderr  # they reach the connecting
    assert "cannot connect to 127.0.0.1:1" in r.stderr


@pytest.mark.parametrize("command", [
    ("send", "amqps://127.0.0.1:1/q", "hi"),
    ("tui", "--proxy", "127.0.0.1:0", "amqps://127.0.0.1:1"),
])
def test_tls_files_are_read_before_connecting(command: tuple[str, ...], tmp_path: Path) -> None:
    r = amqp(*command, "--ca-file", str(tmp_path / "none.pem"), timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr == (f"amqp: error: TLS setup failed: --ca-file {tmp_path}/none.pem: "
                        "no such file or directory\n")


@pytest.mark.parametrize("what", ["missing", "junk"])
def test_the_proxy_checks_its_tls_files_before_listening(what: str, tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    if what == "junk":
        ca.write_text("not a certificate\n")
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "proxy", "127.0.0.1:0",
                             "amqps://127.0.0.1:1", "--ca-file", str(ca)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    first = proc.stderr.readline()  # it said "listening on …" and ran on
    if proc.poll() is None and "listening" in first:
        proc.kill()
    out, rest = proc.communicate(timeout=60)
    why = "no such file or directory" if what == "missing" else "no PEM certificates in it"
    assert first == f"amqp: error: TLS setup failed: --ca-file {ca}: {why}\n", first + rest
    assert rest == "" and out == ""
    assert proc.returncode == 2
