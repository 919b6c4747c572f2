"""`amqp respond` stopped while its output takes nothing (`amqp respond URL | (sleep
1000)`). A run of requests is written out whole before any of it is answered: those of
the runs written before are answered (their replies' outcomes waited for, whether or not
they had come when the stop did), and accepted; the others it took, printed whole or
not, are released (not left unsettled with the connection), the summary counting those
printed. None is lost, none answered twice: each request is answered once or on the
node again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_recv_stalled_output import _pipe_size, _until
from tests.net.clirun import amqp, json_lines, pipe_held
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's"),
]


def _stopped_into_a_full_pipe(serve: ServePeers, tmp_path: Path, size: int,
                              n: int) -> tuple[bytes, str, dict[str, Any], str]:
    """`n` requests of `size` bytes each on the node, `amqp respond --json` writing them
    into a pipe no one reads, SIGTERM once the pipe is full: what the pipe held,
    respond's stderr and summary, and what `amqp serve --trace` saw."""
    trace = tmp_path / "trace.txt"
    url = serve("-q", "--trace", stdout=trace)
    p = amqp("send", f"{url}/service", "--size", str(size), "--count", str(n),
             "--message-id", "m{n}", "--reply-to", "replies", "-q")
    assert p.returncode == 0, p.stderr
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "respond", f"{url}/service",
                             "--json"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO_ROOT, env=cli_env())
    assert proc.stdout is not None and proc.stderr is not None
    cap = _pipe_size()
    page = os.sysconf("SC_PAGE_SIZE")  # (full, a pipe may have part of its last page free)
    try:
        # requests written, nothing read (a hang guard, not a timing)
        assert _until(lambda: pipe_held(proc.stdout.fileno()) >= cap - page  # type: ignore[union-attr]
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
    (line,) = [ln for ln in err.splitlines() if ln.startswith('{"respond"')]
    summary = json.loads(line)["respond"]
    # none lost, none answered twice
    p = amqp("recv", f"{url}/replies", "--drain", "--json", "-q")
    assert p.returncode == 0, p.stderr
    answered = [o["properties"]["correlation-id"] for o in json_lines(p.stdout)]
    assert answered == [f"m{i}" for i in range(1, summary["replied"] + 1)]
    p = amqp("recv", f"{url}/service", "--drain", "--json", "-q")
    assert p.returncode == 0, p.stderr
    left = [o["properties"]["message-id"] for o in json_lines(p.stdout)]
    assert sorted(answered + left) == sorted(f"m{i}" for i in range(1, n + 1))
    return out, err, summary, trace.read_text()


def test_a_stop_answers_the_runs_written_and_releases_the_rest(
        serve: ServePeers, tmp_path: Path) -> None:
    n = 2 * _pipe_size() // 5000 + 10  # (far more than the pipe holds)
    out, _, summary, trace = _stopped_into_a_full_pipe(serve, tmp_path, 5000, n)
    whole = out.count(b"\n")
    assert 0 < whole < n
    # a line the stop cut short (the pipe held its start): released too, not a request
    # printed (how much of the last line the pipe took is the writer's and the kernel's)
    cut = 0 if out.endswith(b"\n") else 1
    assert (summary["requests"], summary.get("released", 0), summary["failed"]) == (
        whole, whole - summary["replied"] + cut, 0), (summary, cut)
    assert "state=released" in trace  # (the peer heard it so)


def test_a_line_the_stop_cut_short_is_said(serve: ServePeers, tmp_path: Path) -> None:
    """A request larger than the pipe: its line is cut short there, and said so; it was
    not printed whole, so not counted, and is released."""
    out, err, summary, trace = _stopped_into_a_full_pipe(serve, tmp_path, 2 * _pipe_size(), 2)
    assert out and b"\n" not in out
    assert (summary["requests"], summary["replied"]) == (0, 0), summary
    cut = ("stopped while the output took request 1: its line is cut short there (released: "
           "the node delivers it again)")
    assert summary["warnings"] == [cut], summary
    assert f"amqp: warning: {cut}\n" in err
    assert "state=released" in trace
