"""`amqp send --lines` / `--from` on an input that waits (a pipe, a terminal): each
message goes out when its line has come, the connection is served meanwhile, and Ctrl-C
or SIGTERM stop the run while it waits. An endless input ends in an error, not in the
machine's memory."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue

import pytest

from amqpcli.net.outgoing import TooLarge, read_lines, read_whole
from tests.net.clirun import json_lines
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration


def _send(url: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "send", url, *args], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env=cli_env())


def _lines_of(stream: io.TextIOBase) -> Queue[str]:
    lines: Queue[str] = Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _wait_for(lines: Queue[str], text: str) -> str:
    """The first line holding `text` (a run that never writes it fails here)."""
    seen = []
    while True:
        try:
            line = lines.get(timeout=60)
        except Empty:
            raise AssertionError(f"no line with {text!r} ({seen})") from None
        seen.append(line)
        if text in line:
            return line


@pytest.mark.parametrize("replay", [False, True])
def test_a_line_goes_out_before_the_next_has_come(serve: ServePeers, replay: bool) -> None:
    """The send loop read up to 256 lines before sending any: the first line of a pipe
    that then paused (`tail -f log | amqp send --lines`) stayed unsent until more came."""
    url = serve("-q") + "/waiting"
    p = _send(url, *(["--from", "-"] if replay else ["--lines"]), "--trace")
    assert p.stdin is not None and p.stderr is not None and p.stdout is not None
    trace = _lines_of(p.stderr)
    first = (json.dumps({"body": {"data": [{"binary-text": "one"}]}}) if replay else "one") + "\n"
    p.stdin.write(first)
    p.stdin.flush()
    assert "first=0" in _wait_for(trace, "disposition")  # sent and settled, input open
    p.stdin.write(first.replace("one", "two"))
    p.stdin.close()
    assert p.wait(60) == 0
    assert p.stdout.read().startswith("sent 2, accepted 2")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                         ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_stops_a_run_waiting_for_its_input(serve: ServePeers,
                                                    sig: signal.Signals) -> None:
    url = serve("-q") + "/waiting-stop"
    p = _send(url, "--lines", "--trace")
    assert p.stdin is not None and p.stderr is not None
    trace = _lines_of(p.stderr)
    p.stdin.write("one\n")
    p.stdin.flush()
    _wait_for(trace, "disposition")
    p.send_signal(sig)
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError("the run went on waiting for its input") from None
    assert p.returncode == 130
    assert out.startswith("sent 1, accepted 1, in doubt 0")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("replay", [False, True])
def test_a_signal_while_waiting_says_one_line(serve: ServePeers, sig: signal.Signals,
                                              replay: bool, tmp_path: Path) -> None:
    """The wait on the link left running by the interrupt ended with the close's error,
    which asyncio printed as "Task exception was never retrieved" and a traceback."""
    trace = tmp_path / "serve.trace"
    url = serve("-q", "--trace", stdout=trace) + "/waiting-quiet"
    p = _send(url, *(["--from", "-"] if replay else ["--lines"]), "-q")
    assert p.stdin is not None
    first = (json.dumps({"body": {"data": [{"binary-text": "one"}]}}) if replay else "one") + "\n"
    p.stdin.write(first)
    p.stdin.flush()
    # the line sent and settled (serve's disposition out), the run waiting for the next
    guard = time.monotonic() + 60  # (against a hang: not a time limit)
    while " <- [0]  disposition " not in trace.read_text():
        assert p.poll() is None and time.monotonic() < guard, "the line was never settled"
        time.sleep(0.01)
    time.sleep(0.3)  # (for the run to read it: a moment on loopback)
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError("the run went on waiting for its input") from None
    assert p.returncode == 130
    assert err == "amqp: error: interrupted\n"


def test_messages_from_a_pipe_all_arrive(serve: ServePeers, tmp_path: Path) -> None:
    url = serve("-q") + "/waiting-many"
    p = _send(url, "--lines", "-q")
    assert p.stdin is not None
    p.stdin.write("".join(f"line {i}\n" for i in range(2000)))
    p.stdin.close()
    assert p.wait(120) == 0
    r = subprocess.run([sys.executable, "-m", "amqpcli", "recv", url, "--drain", "--json",
                        "-q"], capture_output=True, text=True, cwd=REPO_ROOT, env=cli_env(),
                       timeout=120, check=False)
    bodies = [o["body"]["data"][0]["binary-text"] for o in json_lines(r.stdout)]
    assert bodies == [f"line {i}" for i in range(2000)]


@pytest.mark.parametrize("args, error", [
    (["--file", "/dev/zero"], "'/dev/zero': more than 256 MiB: too large for one message"),
    (["--lines", "--file", "/dev/zero"], "'/dev/zero': line 1 is longer than 256 MiB"),
    (["--from", "/dev/zero"], "'/dev/zero': line 1 is longer than 256 MiB"),
])
def test_an_endless_input_is_an_error(serve: ServePeers, args: list[str], error: str) -> None:
    url = serve("-q") + "/endless"
    r = subprocess.run([sys.executable, "-m", "amqpcli", "send", url, *args],
                       capture_output=True, text=True, cwd=REPO_ROOT, env=cli_env(),
                       timeout=120, check=False)
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == f"amqp: error: {error}"


def test_lines_are_read_whole_across_pieces() -> None:
    data = b"a\r\n" + b"x" * 3_000_000 + b"\n\nlast"
    got = list(read_lines(io.BytesIO(data)))
    assert got == [b"a\r\n", b"x" * 3_000_000 + b"\n", b"\n", b"last"]
    with pytest.raises(TooLarge, match="line 2 is longer than 1 MiB"):
        list(read_lines(io.BytesIO(b"ok\n" + b"y" * (3 << 20)), limit=1 << 20))
    with pytest.raises(TooLarge, match="line 1 is longer"):
        list(read_lines(io.BytesIO(b"y" * ((1 << 20) + 1) + b"\n"), limit=1 << 20))
    assert list(read_lines(io.BytesIO(b"y" * (1 << 20) + b"\n"), limit=1 << 20))
    with pytest.raises(TooLarge, match="more than 1 MiB"):
        read_whole(io.BytesIO(b"z" * ((1 << 20) + 1)), limit=1 << 20)
    assert read_whole(io.BytesIO(b"z" * (1 << 20)), limit=1 << 20) == b"z" * (1 << 20)
