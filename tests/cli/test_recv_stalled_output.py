"""`amqp recv` whose output takes nothing for a while (a pipe whose reader stopped
reading, `amqp recv URL | (sleep 1000)`): it waits for the output as it waits for the
network, so its heartbeats go on and a stop signal ends it at once. What was written whole
is accepted, a message written part way is said and not settled, and the rest stays on
the node."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines, pipe_held
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's"),
]

def _heartbeats(trace: Path) -> int:
    """The empty frames the client sent, as `amqp serve --trace` shows them."""
    return len(re.findall(r" -> \[\d+\]\s+heartbeat", trace.read_text()))


def _until(ready: object, bound: float) -> bool:
    deadline = time.monotonic() + bound
    while not ready():  # type: ignore[operator]
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _pipe_size() -> int:
    import fcntl

    r, w = os.pipe()
    try:
        return fcntl.fcntl(r, fcntl.F_GETPIPE_SZ)
    finally:
        os.close(r)
        os.close(w)


def test_sigterm_while_the_output_takes_nothing(serve: ServePeers, tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    # silent for a second, recv would be closed by the peer: its heartbeats must go on
    url = serve("-q", "--idle-timeout", "1", "--trace", stdout=trace)
    cap = _pipe_size()
    page = os.sysconf("SC_PAGE_SIZE")  # (full, a pipe may have part of its last page free)
    n = 2 * cap // 5000 + 10  # far more than the pipe holds
    r = amqp("send", f"{url}/stalled", "y" * 5000, "--count", str(n), "--message-id", "{n}",
             "-q")
    assert r.returncode == 0, r.stderr
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "recv", f"{url}/stalled",
                             "--json", "--credit", str(n)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO_ROOT,
                            env=cli_env())
    assert proc.stdout is not None and proc.stderr is not None
    try:
        rfd = proc.stdout.fileno()
        # The pipe full, nothing read: recv waits for its reader with messages still to
        # write (the bounds here are hang guards, not timings).
        assert _until(lambda: pipe_held(rfd) >= cap - page or proc.poll() is not None, 60)
        assert proc.poll() is None, proc.stderr.read().decode()
        beats = _heartbeats(trace)
        heard = _until(lambda: _heartbeats(trace) >= beats + 2, 10)
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(20)
        except subprocess.TimeoutExpired:
            pytest.fail("recv did not stop on SIGTERM while its output took nothing")
        err = proc.stderr.read().decode()
        out = proc.stdout.read()  # what the pipe held
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert heard, "no heartbeats while recv waited for its output"
    assert code == 130, err
    assert "Traceback" not in err
    whole = out.count(b"\n")
    written = [json.loads(line) for line in out.split(b"\n")[:whole]]
    # what the pipe holds whole was written, so accepted; nothing else was
    assert f"amqp: received {whole}, accept {whole} in " in err, err
    # (the lines are 5152 or 5153 bytes long: none ends where the pipe is full)
    assert not out.endswith(b"\n"), "the pipe ends with a whole line"
    assert (f"stopped while the output took message {whole + 1}: its line is cut short "
            "there (not settled: the node delivers it again)") in err, err
    assert "amqp: error: interrupted" in err
    left = amqp("recv", f"{url}/stalled", "--drain", "--json", "-q")
    assert left.returncode == 0, left.stderr
    ids = [m["properties"]["message-id"] for m in written + json_lines(left.stdout)]
    assert sorted(ids, key=int) == [str(i) for i in range(1, n + 1)]  # each exactly once
