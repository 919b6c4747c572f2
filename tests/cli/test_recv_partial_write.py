"""A write out that fails part way through a run of messages: the messages written whole
before the failure are settled (accepted), the others go back to the peer, and none is
settled unwritten."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from amqpcli.errors import Exit, UserError
from amqpcli.net.client import Incoming
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.receiving import OutputError, RecvPlan, run_recv
from amqpcli.net.url import resolve_endpoint
from tests.net.clirun import amqp, json_lines, pipe_held
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT


def _id(inc: Incoming) -> str:
    return str(inc.delivery.message().properties.message_id)


class _RunSink:
    """Writes runs; the one holding message FAIL_AT fails there (those before it in
    the run were written)."""

    FAIL_AT = "3"

    def __init__(self) -> None:
        self.written: list[str] = []
        self.runs: list[int] = []

    def write_many(self, incomings: Sequence[Incoming]) -> None:
        self.runs.append(len(incomings))
        for n, inc in enumerate(incomings):
            if _id(inc) == self.FAIL_AT:
                raise OutputError("cannot write standard output: Broken pipe", Exit.USAGE, n)
            self.written.append(_id(inc))

    def write(self, incoming: Incoming) -> None:
        self.write_many([incoming])

    def close(self) -> None:
        pass


class _OneAtATimeSink(_RunSink):
    """A sink with `write` only: a failed write is a plain UserError."""

    write_many = None  # type: ignore[assignment]

    def write(self, incoming: Incoming) -> None:
        if _id(incoming) == self.FAIL_AT:
            raise UserError("cannot write standard output: Broken pipe", Exit.USAGE)
        self.written.append(_id(incoming))


@pytest.mark.integration
@pytest.mark.parametrize("sink_type", [_RunSink, _OneAtATimeSink])
@pytest.mark.parametrize("outcomes", ["accept", "accept,release"])
def test_the_messages_written_before_the_failure_are_settled(
        serve: ServePeers, sink_type: type[_RunSink], outcomes: str) -> None:
    from amqpcli.net.receiving import parse_outcomes

    url = serve("-q")
    r = amqp("send", f"{url}/pw", "x", "--count", "8", "--message-id", "{n}")
    assert r.returncode == 0, r.stderr
    sink = sink_type()
    cfg = ConnectionConfig(endpoint=resolve_endpoint(f"{url}/pw"))
    plan = RecvPlan(address="pw", timeout=5, credit=100,
                    outcomes=tuple(parse_outcomes(outcomes)))
    s = run_recv(cfg, plan, sink)
    assert isinstance(s.failure, UserError) and s.failure.code == Exit.USAGE
    assert sink.written == ["1", "2"]
    assert s.received == 2
    if outcomes == "accept":
        assert s.outcomes == {"accept": 2}
        left = ["3", "4", "5", "6", "7", "8"]
    else:  # the pattern goes on where it was: 1 accepted, 2 released
        assert s.outcomes == {"accept": 1, "release": 1}
        left = ["2", "3", "4", "5", "6", "7", "8"]
    again = amqp("recv", f"{url}/pw", "--timeout", "2", "--json", "-q")
    got = [m["properties"]["message-id"] for m in json_lines(again.stdout)]
    assert sorted(got, key=int) == left, got


def _waiting(pid: int) -> bool:
    """Whether the process's main thread sleeps in its event loop's wait (for the network
    or, with its messages all there, for a full pipe to take more)."""
    try:
        where = Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False
    return "epoll" in where or "ep_poll" in where  # (do_epoll_wait; ep_poll on older kernels)


@pytest.mark.integration
@pytest.mark.skipif(not Path("/proc/self/wchan").exists(), reason="needs Linux's /proc/PID/wchan")
def test_recv_into_a_pipe_whose_reader_goes_away(serve: ServePeers) -> None:
    """`amqp recv --json | head -1` going away while recv waits for the full pipe to take
    more: what is wholly in the pipe is accepted, the rest stays on the node."""
    import fcntl

    url = serve("-q")
    n = 30
    r = amqp("send", f"{url}/pipe", "y" * 5000, "--count", str(n))
    assert r.returncode == 0, r.stderr
    peek = amqp("browse", f"{url}/pipe", "--count", "1", "--json", "-q")
    size = len(peek.stdout.splitlines(keepends=True)[0].encode())  # every line the same
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "recv", f"{url}/pipe", "--json",
                             "--timeout", "30", "--credit", str(n)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO_ROOT,
                            env=cli_env())
    assert proc.stdout is not None and proc.stderr is not None
    try:
        rfd = proc.stdout.fileno()
        cap = fcntl.fcntl(rfd, fcntl.F_GETPIPE_SZ)
        assert n * size > cap  # more than the pipe holds
        page = os.sysconf("SC_PAGE_SIZE")  # (full, a pipe may have part of its last page free)

        def held() -> int:
            return pipe_held(rfd)

        deadline = time.monotonic() + 60
        while not (held() >= cap - page and _waiting(proc.pid)):
            assert time.monotonic() < deadline and proc.poll() is None, "recv never waited"
            time.sleep(0.01)
        # Waiting: the pipe holds the first `held_bytes` bytes of the output, no more come.
        held_bytes = held()
        proc.stdout.close()  # the reader goes away, the write stops part way
        err = proc.stderr.read().decode()
        assert proc.wait(60) == 2, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    whole = held_bytes // size
    assert "cannot write standard output" in err
    if whole:
        assert f"received {whole}, accept {whole}" in err, (held_bytes, size, err)
    else:  # not even the first message got out: the error alone
        assert "received" not in err, err
    again = amqp("recv", f"{url}/pipe", "--timeout", "2", "--json", "-q")
    assert len(json_lines(again.stdout)) == n - whole
    assert json.loads(peek.stdout.splitlines()[0])["body"] == json_lines(again.stdout)[0]["body"]
