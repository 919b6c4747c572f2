"""`recv --save-bodies DIR` on a disk that stalls (an NFS server gone away): the bodies are
saved off the event loop, so the connection's heartbeats go on and a stop signal is
taken; a message is settled only once its file is on disk, and a stop while the disk
holds a body settles what was saved and nothing else.

recv runs in a process of its own whose `os.fsync` of a body's file (not of the
directory) says so on a pipe, then waits for the test to let it go on through another."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration

# argv: the pipe to say "blocked" on, the pipe to wait on, BodyFiles.STOP_WAIT, amqp's args
_DRIVER = """
import os, stat, sys
from amqpcli.cli.savebodies import BodyFiles
blocked, release = int(sys.argv[1]), int(sys.argv[2])
BodyFiles.STOP_WAIT = float(sys.argv[3])
fsync = os.fsync
def stalled_fsync(fd):
    if stat.S_ISREG(os.fstat(fd).st_mode):  # a body's file, not the directory
        os.write(blocked, b".")
        os.read(release, 1)
    fsync(fd)
os.fsync = stalled_fsync
from amqpcli.cli.app import main
main(sys.argv[4:])
"""

# hang guards, not timings: what is waited for comes at once when the code is right
_BOUND = 20.0


class _StalledRecv:
    """`amqp ARGS` whose fsyncs of body files wait for `release`; `free` of them go
    through without waiting."""

    def __init__(self, args: list[str], free: int = 0, stop_wait: float = 5.0) -> None:
        self.blocked_r, blocked_w = os.pipe()
        release_r, self.release_w = os.pipe()
        self.release(free)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _DRIVER, str(blocked_w), str(release_r), str(stop_wait),
             *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
            env=cli_env(), pass_fds=(blocked_w, release_r))
        os.close(blocked_w)
        os.close(release_r)
        self.err = ""
        assert self.proc.stderr is not None
        stderr = self.proc.stderr

        def read_stderr() -> None:
            for line in stderr:
                self.err += line

        self.reader = threading.Thread(target=read_stderr, daemon=True)
        self.reader.start()

    def fsyncs(self, n: int) -> None:
        """Wait for the `n`th fsync of a body's file to have started."""
        for _ in range(n):
            ready, _, _ = select.select([self.blocked_r], [], [], _BOUND)
            assert ready, f"no fsync of a body came\n{self.err}"
            assert os.read(self.blocked_r, 1) == b".", f"recv ended\n{self.err}"

    def release(self, n: int = 1000) -> None:
        """Let `n` fsyncs go on."""
        if n:
            os.write(self.release_w, b"." * n)

    def said(self, text: str) -> bool:
        deadline = time.monotonic() + _BOUND
        while text not in self.err:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                return text in self.err
            time.sleep(0.02)
        return True

    def wait(self) -> tuple[int, str]:
        """The exit code and stderr (None: it did not end)."""
        try:
            code = self.proc.wait(_BOUND)
        except subprocess.TimeoutExpired:
            pytest.fail(f"recv did not end\n{self.err}")
        self.reader.join(_BOUND)
        return code, self.err

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.blocked_r)
        os.close(self.release_w)


def _send(q: str, n: int, tmp_path: Path) -> None:
    """Messages 1 to `n`: message-id "N", body "body N"."""
    src = tmp_path / "m.jsonl"
    src.write_text("".join(json.dumps({"properties": {"message-id": str(i)},
                                       "body": {"value": f"body {i}"}}) + "\n"
                           for i in range(1, n + 1)))
    r = amqp("send", q, "--from", str(src), "-q")
    assert r.returncode == 0, r.stderr


def _left(q: str) -> list[str]:
    """The message-ids the node holds still (taken)."""
    r = amqp("recv", q, "--drain", "--json", "-q")
    assert r.returncode == 0, r.stderr
    return [m["properties"]["message-id"] for m in json_lines(r.stdout)]


def _frames(trace: Path, what: str) -> int:
    """How many frames `what` recv sent, as `amqp serve --trace` shows them."""
    return len(re.findall(rf" -> \[\d+\]\s+{what}\b", trace.read_text()))


def _until(ready: object) -> bool:
    deadline = time.monotonic() + _BOUND
    while not ready():  # type: ignore[operator]
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_heartbeats_go_on_and_nothing_is_settled_while_the_disk_stalls(
        serve: ServePeers, tmp_path: Path) -> None:
    trace = tmp_path / "trace.txt"
    # silent for a second, recv would be closed by the peer
    url = serve("-q", "--idle-timeout", "1", "--trace", stdout=trace)
    q = f"{url}/q"
    _send(q, 3, tmp_path)
    out = tmp_path / "bodies"
    run = _StalledRecv(["recv", q, "--drain", "--save-bodies", str(out)])
    try:
        run.fsyncs(1)  # the first body's file: held
        beats = _frames(trace, "heartbeat")
        # six of them, three seconds: past the peer's limit (twice its idle-timeout)
        heard = _until(lambda: _frames(trace, "heartbeat") >= beats + 6)
        running = run.proc.poll() is None
        settled = _frames(trace, "disposition")
        named = sorted(n for n in os.listdir(out) if not n.startswith("."))
        run.release()
        code, err = run.wait()
    finally:
        run.close()
    assert heard, f"no heartbeats while the disk held a body\n{run.err}"
    assert running
    assert (settled, named) == (0, []), "settled, or named, before the file was on disk"
    assert code == 0, err
    assert "received 3, accept 3" in err
    assert _frames(trace, "disposition") >= 1
    assert sorted(os.listdir(out)) == ["000001.bin", "000002.bin", "000003.bin"]
    assert (out / "000003.bin").read_bytes() == b"body 3"
    assert _left(q) == []


def test_a_stop_while_the_disk_stalls_settles_the_body_under_way_once_saved(
        serve: ServePeers, tmp_path: Path) -> None:
    """Ctrl-C while the disk holds message 2's file: it is finished (the disk comes back
    within the wait), saved and settled; message 3 is not begun, and stays on the node."""
    q = f"{serve('-q')}/q"
    _send(q, 3, tmp_path)
    out = tmp_path / "bodies"
    run = _StalledRecv(["recv", q, "--save-bodies", str(out)], free=1)
    try:
        run.fsyncs(2)  # message 1's went through, message 2's is held
        run.proc.send_signal(signal.SIGINT)
        waiting = run.said("--save-bodies: stopped while saving: waiting up to 5s for the "
                           "disk to finish message 2's file")
        run.release()
        code, err = run.wait()
    finally:
        run.close()
    assert waiting, f"the stop was not taken while the disk held a body\n{run.err}"
    assert code == 130, err
    assert "Traceback" not in err
    assert "received 2, accept 2" in err, err
    assert sorted(os.listdir(out)) == ["000001.bin", "000002.bin"]
    assert (out / "000002.bin").read_bytes() == b"body 2"
    assert _left(q) == ["3"]


def test_a_stop_gives_up_on_a_disk_that_stays_stalled(serve: ServePeers,
                                                      tmp_path: Path) -> None:
    """Ctrl-C while the disk holds message 1's file, and it does not come back: the run
    ends after the wait, none of it settled, and says so."""
    q = f"{serve('-q')}/q"
    _send(q, 3, tmp_path)
    out = tmp_path / "bodies"
    run = _StalledRecv(["recv", q, "--save-bodies", str(out)], stop_wait=1)
    try:
        run.fsyncs(1)
        run.proc.send_signal(signal.SIGINT)
        code, err = run.wait()  # (the fsync still held)
    finally:
        run.close()
    assert code == 130, err
    assert "Traceback" not in err
    assert ("--save-bodies: the disk had not finished message 1's file 1s after the stop: "
            "message 1 is not saved (not settled: the node delivers it again)") in err, err
    assert "received 0" in err, err
    assert [n for n in os.listdir(out) if not n.startswith(".")] == []  # (a .part may stay)
    assert _left(q) == ["1", "2", "3"]
