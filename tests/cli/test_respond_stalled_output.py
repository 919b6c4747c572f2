"""`amqp respond` stopped while its output takes nothing (`amqp respond URL | (sleep
1000)`). A run of requests is written out whole before any of it is answered: those of
the runs written before are answered (their replies' outcomes waited for, whether or not
they had come when the stop did), and accepted; the others it took, printed whole or
not, are released (not left unsettled with the connection), the summary counting those
printed. None is lost, none answered twice: each request is answered once or on the
node again."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_recv_stalled_output import _pipe_size, _until
from tests.net.clirun import amqp, json_lines, pipe_held
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's"),
]


def test_a_stop_while_the_output_takes_nothing_releases_the_requests(
        serve: ServePeers, tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    url = serve("-q", "--trace", stdout=trace)
    cap = _pipe_size()
    n = 2 * cap // 5000 + 10  # (far more than the pipe holds)
    p = amqp("send", f"{url}/service", "y" * 5000, "--count", str(n), "--message-id", "m{n}",
             "--reply-to", "replies", "-q")
    assert p.returncode == 0, p.stderr
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "respond", f"{url}/service",
                             "--json"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO_ROOT, env=cli_env())
    assert proc.stdout is not None and proc.stderr is not None
    try:
        # requests written, nothing read (a hang guard, not a timing)
        assert _until(lambda: pipe_held(proc.stdout.fileno()) >= cap // 2  # type: ignore[union-attr]
                      or proc.poll() is not None, 60)
        assert proc.poll() is None, proc.stderr.read().decode()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
        err = proc.stderr.read().decode()
        out = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 130, err
    assert "Traceback" not in err
    whole = out.count(b"\n")
    assert 0 < whole < n
    (line,) = [ln for ln in err.splitlines() if ln.startswith('{"respond"')]
    summary = json.loads(line)["respond"]
    replied = summary["replied"]
    assert (summary["requests"], summary.get("released", 0), summary["failed"]) == (
        whole, whole - replied, 0), summary
    assert "state=released" in trace.read_text()  # (the peer heard it so)
    p = amqp("recv", f"{url}/replies", "--drain", "--json", "-q")
    assert p.returncode == 0, p.stderr
    answered = [o["properties"]["correlation-id"] for o in json_lines(p.stdout)]
    assert answered == [f"m{i}" for i in range(1, replied + 1)]
    p = amqp("recv", f"{url}/service", "--drain", "--json", "-q")
    assert p.returncode == 0, p.stderr
    left = [o["properties"]["message-id"] for o in json_lines(p.stdout)]
    assert sorted(answered + left) == sorted(f"m{i}" for i in range(1, n + 1))
