"""Bad option values and a closed stdout: one-line usage errors (exit 2), nothing sent or
consumed. Every duration is a finite number of seconds above 0; `--count` is at least 1
for send as for recv; `recv --copy` takes no `--outcome`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration


def _one_line_error(r: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    assert r.returncode == code, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["send", "x", "--timeout", "-1"], "--timeout must be"),
        (["send", "x", "--timeout", "0"], "--timeout must be"),
        (["send", "x", "--timeout", "nan"], "--timeout must be"),
        (["send", "x", "--timeout", "inf"], "--timeout must be"),
        (["send", "x", "--duration", "-1"], "--duration must be"),
        (["send", "x", "--duration", "nan"], "--duration must be"),
        (["send", "x", "--rate", "nan"], "--rate must be"),
        (["send", "x", "--rate", "inf"], "--rate must be"),
        (["send", "x", "--count", "0"], "--count must be at least 1"),
        (["send", "x", "--connect-timeout", "nan"], "--connect-timeout must be"),
        (["send", "x", "--idle-timeout", "-3"], "--idle-timeout must be"),
        (["recv", "--timeout", "nan"], "--timeout must be"),
        (["recv", "--timeout", "-1"], "--timeout must be"),
        (["recv", "--connect-timeout", "inf"], "--connect-timeout must be"),
        (["recv", "--copy", "--outcome", "reject"], "--copy holds and releases"),
        (["recv", "--copy", "--outcome", "release"], "--copy holds and releases"),
        (["browse", "--timeout", "nan"], "--timeout must be"),
        (["browse", "--timeout", "0"], "--timeout must be"),
    ],
)
def test_bad_values_are_usage_errors(args: list[str], text: str) -> None:
    cmd, *rest = args
    r = amqp(cmd, "amqp://127.0.0.1:1/q", *rest)
    _one_line_error(r, 2, text)


def test_recv_with_stdout_closed_consumes_nothing(serve: ServePeers) -> None:
    url = serve()
    assert amqp("send", f"{url}/cl", "x").returncode == 0
    p = subprocess.run(
        [sys.executable, "-m", "amqpcli", "recv", f"{url}/cl", "-t", "1"],
        stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT, env=cli_env(), timeout=60,
        preexec_fn=lambda: os.close(1), check=False,
    )
    _one_line_error(p, 2, "standard output")
    assert "closed" in p.stderr
    r = amqp("recv", f"{url}/cl", "-t", "2", "-c", "1", "--json", "-q")
    assert r.returncode == 0 and len(json_lines(r.stdout)) == 1, r.stderr


@pytest.mark.parametrize("how", [["-f"], ["--lines", "-f"], ["--from"]])
def test_send_input_that_fails_to_read_is_one_line_and_sends_nothing(
        serve: ServePeers, how: list[str]) -> None:
    # /proc/self/mem opens but every read of it fails (EIO): a read error, not an open error
    url = serve()
    r = amqp("send", f"{url}/rd", *how, "/proc/self/mem")
    _one_line_error(r, 2, "cannot read '/proc/self/mem': Input/output error")
    r = amqp("recv", f"{url}/rd", "--drain", "-t", "2", "--json", "-q")
    assert r.returncode == 0 and r.stdout == "", r.stderr
