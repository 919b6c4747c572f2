"""`amqp request` whose output takes nothing for a while (`amqp request URL … | (sleep
1000)`): it waits for the output as `amqp recv` does (recv's `Sink.write_many_async`), so
its heartbeats go on and a stop signal ends it at once. A reply written whole is accepted,
one written part way is said and not accepted, and the rest stays on the reply node."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_recv_stalled_output import _heartbeats, _pipe_size, _until
from tests.net.clirun import amqp, json_lines, pipe_held
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's"),
]


def _request_into_a_pipe(url: str, cap: int) -> tuple[int, subprocess.Popen[bytes]]:
    """`amqp request --json` writing into a pipe, with far more replies than the pipe holds
    (`cap`) waiting on a --reply-to node before the requests go, each naming the request
    it answers (`req-N`): every request sent finds its reply at once. (n, the process)."""
    n = 2 * cap // 5000 + 10
    r = amqp("send", f"{url}/replies", "y" * 5000, "--count", str(n), "--message-id", "{n}",
             "--correlation-id", "req-{n}", "-q")
    assert r.returncode == 0, r.stderr
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "request", f"{url}/service", "q",
                             "--reply-to", "replies", "--count", str(n), "--concurrency",
                             str(n), "--message-id", "req-{n}", "--json"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO_ROOT, env=cli_env())
    assert proc.stdout is not None and proc.stderr is not None
    return n, proc


def test_sigterm_while_the_output_takes_no_reply(serve: ServePeers, tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    # silent for a second, request would be closed by the peer: its heartbeats must go on
    url = serve("-q", "--idle-timeout", "1", "--trace", stdout=trace)
    cap = _pipe_size()
    page = os.sysconf("SC_PAGE_SIZE")  # (full, a pipe may have part of its last page free)
    n, proc = _request_into_a_pipe(url, cap)
    try:
        rfd = proc.stdout.fileno()
        # Replies written, nothing read (the bounds here are hang guards, not timings). Two
        # heartbeats from then on: request is idle with replies still to write, so it waits
        # for its reader (the pipe full: checked below). A request blocked in its write sends
        # none (nor does it take the signal).
        assert _until(lambda: pipe_held(rfd) >= cap // 2 or proc.poll() is not None, 60)
        assert proc.poll() is None, proc.stderr.read().decode()
        beats = _heartbeats(trace)
        heard = _until(lambda: _heartbeats(trace) >= beats + 2, 10)
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(20)
        except subprocess.TimeoutExpired:
            pytest.fail("request did not stop on SIGTERM while its output took nothing")
        err = proc.stderr.read().decode()
        out = proc.stdout.read()  # what the pipe held
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert heard, "no heartbeats while request waited for its output"
    assert code == 130, err
    assert "Traceback" not in err
    assert len(out) >= cap - page, "request stopped before its output was full"
    whole = out.count(b"\n")
    written = [json.loads(line) for line in out.split(b"\n")[:whole]]
    assert 0 < whole < n
    # what the pipe holds whole was written, so accepted and counted; nothing else was
    (line,) = [ln for ln in err.splitlines() if ln.startswith('{"request"')]
    summary = json.loads(line)["request"]
    assert (summary["requests"], summary["accepted"], summary["replies"], summary["missing"],
            summary["exit"]) == (n, n, whole, n - whole, 130), summary
    # those not accepted that had come are given back: the one cut short at least
    assert 1 <= summary["given-back"] <= n - whole, summary
    assert not out.endswith(b"\n"), "the pipe ends with a whole line"
    cut = (f"stopped while the output took the reply to request {whole + 1}: its line is cut "
           "short there (not accepted: the peer keeps it)")
    assert summary["warnings"] == [cut], summary
    assert f"amqp: warning: {cut}\n" in err
    assert err.endswith("amqp: error: interrupted\n"), err
    left = amqp("recv", f"{url}/replies", "--drain", "--json", "-q")
    assert left.returncode == 0, left.stderr
    ids = [m["properties"]["correlation-id"] for m in written + json_lines(left.stdout)]
    # each reply exactly once: printed and accepted, or still on the node
    assert sorted(ids, key=lambda i: int(i[4:])) == [f"req-{i}" for i in range(1, n + 1)]


def test_a_reader_gone_part_way(serve: ServePeers) -> None:
    """The reader goes away with replies still to write (`amqp request … | head -c 1`):
    the run ends, the replies written whole before are accepted (their settlements were
    left unsent by the end: they came again on the next run), the others stay on the
    node."""
    url = serve("-q")
    cap = _pipe_size()
    n, proc = _request_into_a_pipe(url, cap)
    try:
        # replies written (a hang guard), then the reader goes
        assert _until(lambda: pipe_held(proc.stdout.fileno()) >= cap // 2  # type: ignore[union-attr]
                      or proc.poll() is not None, 60)
        proc.stdout.close()
        code = proc.wait(60)
        err = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # (7 should the requests' outcomes not have come yet: they are in doubt)
    assert code in (2, 7), err
    assert err.endswith("cannot write standard output: Broken pipe\n"), err
    (line,) = [ln for ln in err.splitlines() if ln.startswith('{"request"')]
    summary = json.loads(line)["request"]
    replies = summary["replies"]
    assert 0 < replies < n and summary["missing"] == n - replies, summary
    left = amqp("recv", f"{url}/replies", "--drain", "--json", "-q")
    assert left.returncode == 0, left.stderr
    ids = [m["properties"]["correlation-id"] for m in json_lines(left.stdout)]
    # those accepted are gone, the others are all there
    assert ids == [f"req-{i}" for i in range(replies + 1, n + 1)]
