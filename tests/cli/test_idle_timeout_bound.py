"""An `--idle-timeout` (or a profile's `idle_timeout`) past what an open can advertise is
a usage error, with the bound `amqp serve` has: `--idle-timeout 8589935` was an internal
error (EncodeError: the open's idle-time-out is a uint of milliseconds), `1e300` printed
a 300-digit number."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.cli.options import MAX_IDLE_TIMEOUT
from tests.net.clirun import amqp

URL = "amqp://127.0.0.1:16509/q"  # nothing listens: an accepted value fails to connect
BOUND = f"must be at most {MAX_IDLE_TIMEOUT} seconds"


@pytest.mark.parametrize(("args", "got"), [
    (["send", URL, "hi", "--idle-timeout", "8589935"], "8589935"),
    (["send", URL, "hi", "--idle-timeout", "1e300"], "1e+300"),
    (["send", URL, "hi", "--idle-timeout", "4000001"], "4000001"),
    (["recv", URL, "--idle-timeout", "8589935"], "8589935"),
    (["browse", URL, "--idle-timeout", "1e12"], "1e+12"),
    (["request", URL, "hi", "--idle-timeout", "1e12"], "1e+12"),
], ids=["send", "send-1e300", "send-just-over", "recv", "browse", "request"])
def test_an_idle_timeout_too_large_is_a_usage_error(args: list[str], got: str) -> None:
    r = amqp(*args, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (
        2, "", f"amqp: error: --idle-timeout {BOUND} (got {got})\n")


def test_the_bound_itself_is_taken() -> None:
    r = amqp("send", URL, "hi", "--idle-timeout", str(MAX_IDLE_TIMEOUT), timeout=60)
    assert r.returncode == 3 and "connection refused" in r.stderr, r.stderr


def test_a_profile_idle_timeout_too_large_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[profiles.p]\nurl = "amqp://127.0.0.1:16509"\nidle_timeout = 1e12\n')
    r = amqp("send", "@p/q", "hi", env={"AMQP_CONFIG": str(config)}, timeout=60)
    assert (r.returncode, r.stderr) == (
        2, f"amqp: error: {config}: profile 'p': idle_timeout {BOUND} (got 1e+12)\n")
