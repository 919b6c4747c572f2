"""`amqp proxy -1 URL`: a negative number where LISTEN goes is a port out of range, said
as any bad listen port is (with the way to ask for a free one), not Click's "No such
option: -1". A stray negative number after the arguments, or with --listen, is still no
option of the proxy."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.paths import REPO_ROOT

BAD_PORT = "amqp: error: bad listen port {}: must be 0-65535 (0 picks a free one)"


def _proxy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amqpcli", "proxy", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("args", [
    ["-1", "amqp://127.0.0.1:1"],
    ["--json", "-1", "amqp://127.0.0.1:1"],
    ["--record", "x.pcapng", "-1", "amqp://127.0.0.1:1"],  # (-1 is not --record's file)
    ["--listen", "-1", "amqp://127.0.0.1:1"],
])
def test_a_negative_listen_port_is_a_bad_port(args: list[str]) -> None:
    r = _proxy(*args)
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == [BAD_PORT.format(-1)], r.stderr


@pytest.mark.parametrize("args", [
    ["5673", "amqp://127.0.0.1:1", "-1"],
    ["-l", "5673", "-1", "amqp://127.0.0.1:1"],
    ["--bogus", "5673", "amqp://127.0.0.1:1"],
])
def test_other_unknown_options_are_still_said_as_such(args: list[str]) -> None:
    r = _proxy(*args)
    assert r.returncode == 2, r.stderr
    unknown = next(a for a in args if a in ("-1", "--bogus"))
    assert r.stderr.splitlines() == [
        f"amqp: error: No such option: {unknown} (amqp proxy --help)"], r.stderr


def test_the_help_says_how_to_ask_for_a_free_port() -> None:
    r = _proxy("--help")
    assert r.returncode == 0, r.stderr
    assert "Port 0 picks a free one" in " ".join(r.stdout.split())
