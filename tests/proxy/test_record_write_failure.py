"""`amqp proxy --record FILE` when FILE cannot be written: one that takes nothing
(/dev/full) is refused at the start (exit 2); one that fails later (here a file size
limit, as a disk that fills up) stops the recording with one warning at once while the
proxy goes on forwarding; stopped, the run has failed: its last line is the error that
the recording is incomplete, exit 2 (output that could not be written), not the 130 of a
proxy stopped as proxies are.

The proxy used to go on without a word and end with `amqp: internal error: OSError:
[Errno 28] No space left on device` (exit 1) when it was stopped; then it ended as any
stopped proxy does (130), its last line saying that the recording was incomplete."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT


@pytest.fixture
def serve() -> Iterator[ServePeers]:
    peers = ServePeers()
    yield peers
    peers.close()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_file_that_takes_nothing_is_refused_at_the_start() -> None:
    r = amqp("proxy", "127.0.0.1:0", "amqp://127.0.0.1:1", "--record", "/dev/full", timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr == "amqp: error: cannot write /dev/full: no space left on device\n"


def test_a_proxy_that_cannot_listen_leaves_the_file_alone(tmp_path: Path) -> None:
    """The recording is opened once the proxy listens: a port in use left an existing
    capture emptied (a header-only file), a new name a capture of nothing."""
    import socket

    kept = tmp_path / "keep.pcapng"
    kept.write_bytes(b"an earlier capture")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        for path in (kept, tmp_path / "new.pcapng"):
            r = amqp("proxy", f"127.0.0.1:{port}", "amqp://127.0.0.1:1", "--record", str(path),
                     timeout=60)
            assert r.returncode == 3, r.stderr
            assert "address already in use" in r.stderr
    assert kept.read_bytes() == b"an earlier capture"
    assert not (tmp_path / "new.pcapng").exists()


# `amqp ARGS` with a file size limit, which makes writes past it fail (EFBIG: Python
# ignores SIGXFSZ)
_LIMITED = ("import os, resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096)); "
            "os.execv(sys.executable, [sys.executable, '-m', 'amqpcli', *sys.argv[1:]])")


def test_a_recording_that_fails_stops_with_a_warning(serve: ServePeers, tmp_path: Path) -> None:
    upstream = serve()
    record = tmp_path / "p.pcapng"
    proc = subprocess.Popen(
        [sys.executable, "-c", _LIMITED, "proxy", "127.0.0.1:0", upstream, "--record",
         str(record)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env=cli_env(),
    )
    assert proc.stderr is not None
    lines: list[str] = []
    seen = threading.Condition()

    def read() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            with seen:
                lines.append(line)
                seen.notify_all()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def wait_for(pattern: str) -> re.Match[str]:
        with seen:
            for _ in range(600):
                for line in lines:
                    m = re.search(pattern, line)
                    if m:
                        return m
                if not seen.wait(0.1) and proc.poll() is not None:
                    break
        raise AssertionError(f"no {pattern!r} in: {''.join(lines)}")

    try:
        port = wait_for(r"listening on 127\.0\.0\.1:(\d+)").group(1)
        url = f"amqp://127.0.0.1:{port}/q"
        r = amqp("send", url, "x" * 20000, timeout=60)
        assert r.returncode == 0, r.stderr
        warning = wait_for(r"^amqp: warning: .*").group(0)
        assert warning == (f"amqp: warning: cannot write the recording {record}: file too "
                           "large; recording stopped, still forwarding"), warning
        # the forwarding goes on
        r = amqp("send", url, "again", timeout=60)
        assert r.returncode == 0, r.stderr
        wait_for(r"c2 closed")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        reader.join(10)
    err = "".join(lines)
    # the run failed (was 1: an internal error, then 130 as if all was well)
    assert proc.returncode == 2, err
    assert "internal error" not in err and "Traceback" not in err, err
    assert err.count("amqp: warning:") == 1, err
    assert err.count("incomplete") == 1, err  # said once, as the run's error
    assert err.splitlines()[-2:] == [
        "amqp proxy: stopped",
        (f"amqp: error: the recording {record} is incomplete: it stopped when it could not "
         "be written (file too large)")], err
    assert 0 < record.stat().st_size <= 4096
