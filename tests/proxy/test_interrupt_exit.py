"""`amqp proxy` and `amqp serve` stopped by Ctrl-C or SIGTERM: a clean stop ("stopped"),
no traceback, and exit status 130 ("interrupted" in the README's table), not 0."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest

from tests.paths import REPO_ROOT


def _start(*args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AMQP_URL", "AMQP_DEBUG")}
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", *args], cwd=REPO_ROOT,
                            env={**env, "NO_COLOR": "1"}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert re.search(r"listening on 127\.0\.0\.1:\d+", line), line
    return proc


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("args", [
    ("proxy", "127.0.0.1:0", "amqp://127.0.0.1:1"),
    ("serve", "--listen", "127.0.0.1:0"),
], ids=lambda a: a[0])
def test_stopped_is_interrupted(args: tuple[str, ...], sig: signal.Signals) -> None:
    proc = _start(*args)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "stopped" in err and "Traceback" not in err, err
