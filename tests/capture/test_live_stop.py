"""`amqp pcap-dump --live` stopped by Ctrl-C or SIGTERM: "amqp: interrupted", exit 130, and
nothing else on stderr (no asyncio "Task exception was never retrieved" traceback from
pyshark's read task, no tshark "crash"), and no dumpcap or tshark left running. Live
capture on lo needs root.

The signal comes once tshark's capture runs and waits for its first packet, or while
tshark is still starting (dumpcap runs; tshark lists the interfaces before it starts):
then the capture processes that start after the signal are ended as they start. (That
stop used to end only dumpcap, and tshark, started after it, waited forever on the pipe
between them, which our process held open.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import capture_procs as procs
from tests.paths import REPO_ROOT


@pytest.mark.parametrize("when", ["capturing", "starting"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_stopping_a_live_capture_is_quiet(sig: signal.Signals, when: str) -> None:
    assert os.geteuid() == 0, "live capture on lo needs root"
    flt = procs.unique_filter()
    env = {k: v for k, v in os.environ.items() if k not in ("AMQP_URL", "AMQP_DEBUG")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "pcap-dump", "--live", "lo", "--capture-filter", flt],
        cwd=REPO_ROOT, env={**env, "NO_COLOR": "1"}, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # the signal reaches amqp only, as `kill PID` would
    )
    seen: set[procs.Proc] = set()
    try:
        guard = time.monotonic() + 300  # (against a hang: not a time limit)
        while time.monotonic() < guard:
            assert proc.poll() is None, proc.communicate()
            seen.update(procs.captures_below(proc.pid))
            if (procs.tshark_capturing(seen) if when == "capturing"
                    else procs.dumpcap_capturing(seen, flt)):
                break
            time.sleep(0.01)
        else:
            pytest.fail(f"the capture did not start: {sorted(map(str, seen))}")
        proc.send_signal(sig)
        guard = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < guard:
            seen.update(procs.captures_below(proc.pid))  # what starts after the signal too
            time.sleep(0.01)
        _, err = proc.communicate(timeout=1)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        left = procs.left(seen) + list(procs.with_filter(flt))
        procs.kill(left)
    assert proc.returncode == 130, err
    assert err == "amqp: interrupted\n"
    assert not left, [str(p) for p in left]


# how the capture runs: tshark (pyshark's dumpcap into it), tshark decrypting TLS, dumpcap
KILLED_CAPTURES = {"tshark": [], "tls-keylog": ["--tls-keylog", "{keylog}"],
                   "fast": ["--fast-capture"]}


@pytest.mark.parametrize("how", list(KILLED_CAPTURES))
def test_a_killed_live_capture_leaves_no_capture_process(how: str, tmp_path: Path) -> None:
    """SIGKILL gives `amqp` no chance to end its capture processes (they run in sessions
    of their own): on Linux each gets SIGTERM as it dies (tshark ends its own dumpcap)."""
    assert os.geteuid() == 0, "live capture on lo needs root"
    flt = procs.unique_filter()
    keylog = tmp_path / "keys.log"
    keylog.write_text("")  # (a live capture's clients write their keys as they connect)
    options = [x.format(keylog=keylog) for x in KILLED_CAPTURES[how]]
    fast = how == "fast"
    env = {k: v for k, v in os.environ.items() if k not in ("AMQP_URL", "AMQP_DEBUG")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "pcap-dump", "--live", "lo", "--capture-filter", flt,
         *options],
        cwd=REPO_ROOT, env={**env, "NO_COLOR": "1"}, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        left = procs.left_after_kill(proc, flt, fast)
    finally:
        if proc.stderr is not None:
            proc.stderr.close()
    assert not left, [str(p) for p in left]
