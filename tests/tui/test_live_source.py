"""Live capture as a TUI source (tshark through the capture package) on loopback; quitting
ends every capture process it started."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.live import LiveSource
from tests import capture_procs as procs
from tests.paths import REPO_ROOT
from tests.peers.broker import Broker

TRIES = 60


def _send_one(port: int, body: str) -> None:
    conn = BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=30)
    try:
        conn.create_sender("live").send(Message(body=body))
    finally:
        conn.close()


def _poke(port: int) -> None:
    # One more packet matching the filter, so the capture thread sees that it must stop.
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass


@pytest.mark.integration
@pytest.mark.parametrize("fast", [False, True])
def test_live_capture_shows_connections(broker: Broker, fast: bool) -> None:
    assert os.geteuid() == 0, "live capture on lo needs root"
    port = int(broker.url.rsplit(":", 1)[1])
    src = LiveSource("lo", bpf_filter=f"tcp port {port}", fast=fast)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            # tshark takes a moment to start: send until a whole exchange was seen.
            for i in range(TRIES):
                await asyncio.to_thread(_send_one, port, f"live {i}")
                await pilot.pause(0.2)
                app.pull()
                links = [lk for c in app.conn_tree.conn_rows for s in c.sessions for lk in s.links]
                if any(lk.deliveries == 1 for lk in links):
                    break
            assert src.error is None
            links = [lk for c in app.conn_tree.conn_rows for s in c.sessions for lk in s.links]
            assert any(lk.deliveries == 1 and lk.role == "sender" for lk in links), app.conn_tree.conn_rows
            assert any(" transfer " in app.log_view.line_text(r) for r in src.store.since(0))
            src.stop()
            await asyncio.to_thread(_poke, port)

    seen: list[BaseException | None] = []
    hook = sys.unraisablehook
    sys.unraisablehook = lambda u: seen.append(u.exc_value)
    try:
        asyncio.run(run())
        assert src._thread is not None
        src._thread.join(30)
        gc.collect()
    finally:
        sys.unraisablehook = hook
    # the capture's pipes were closed with it: collected later, after their loop was
    # closed, each printed an "Exception ignored ... Event loop is closed" traceback
    assert not [e for e in seen if "Event loop is closed" in str(e)], seen


# When the TUI quits: at once (before any capture process started), once dumpcap runs
# (tshark is still starting: it lists the interfaces again before it starts), and once
# the whole capture runs and waits for packets.
QUIT_WHEN = [(False, "at-once"), (False, "dumpcap-up"), (False, "capturing"),
             (True, "at-once"), (True, "capturing")]


@pytest.mark.integration
@pytest.mark.parametrize(("fast", "when"), QUIT_WHEN,
                         ids=[f"{'fast' if f else 'tshark'}-{w}" for f, w in QUIT_WHEN])
def test_quitting_ends_every_capture_process(fast: bool, when: str) -> None:
    """`q` with a capture filter nothing matches (no packet ever wakes the reading): every
    dumpcap and tshark the capture started has ended, and been reaped, once the app is
    done. They run in sessions of their own: left running, nothing ended them."""
    assert os.geteuid() == 0, "live capture on lo needs root"
    flt = procs.unique_filter()
    src = LiveSource("lo", bpf_filter=flt, fast=fast)
    me = os.getpid()
    before = procs.captures_below(me)
    seen: set[procs.Proc] = set()

    def look() -> set[procs.Proc]:
        now = (procs.captures_below(me) - before) | procs.with_filter(flt)
        seen.update(now)
        return now

    def up() -> bool:
        now = look()
        if when == "at-once":
            return True
        if when == "dumpcap-up" or fast:
            return procs.dumpcap_capturing(now, flt)
        return procs.tshark_capturing(now)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(120, 40)) as pilot:
            guard = time.monotonic() + 300  # (against a hang: not a time limit)
            while time.monotonic() < guard:
                if up():
                    break
                await asyncio.sleep(0.1 if when == "capturing" else 0.005)
            else:
                pytest.fail(f"the capture did not start: {sorted(map(str, seen))}")
            await pilot.press("q")
        assert app.return_code == 0

    try:
        asyncio.run(run())
        look()
        assert src._thread is not None and not src._thread.is_alive(), \
            "the capture's reading thread still runs after quitting"
        assert src.error is None
        assert not procs.left(seen), [str(p) for p in procs.left(seen)]
        assert not procs.with_filter(flt)
    finally:
        procs.kill(procs.left(seen) + list(procs.with_filter(flt)))


@pytest.mark.integration
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["term", "hup"])
def test_a_signal_ends_every_capture_process(sig: int) -> None:
    """`amqp tui --live lo` (tshark) ended by SIGTERM, or by SIGHUP (its terminal
    closed): exit 130, and no dumpcap or tshark it started is left running."""
    assert os.geteuid() == 0, "live capture on lo needs root"
    flt = procs.unique_filter()
    env = {k: v for k, v in os.environ.items() if k not in ("AMQP_URL", "AMQP_DEBUG")}
    p = subprocess.Popen([sys.executable, "-m", "amqpcli", "tui", "--live", "lo",
                          "--capture-filter", flt],
                         cwd=REPO_ROOT, env={**env, "NO_COLOR": "1", "COLUMNS": "100",
                                             "LINES": "30"},
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    seen: set[procs.Proc] = set()
    try:
        guard = time.monotonic() + 300  # (against a hang: not a time limit)
        while time.monotonic() < guard:
            assert p.poll() is None, p.stderr.read() if p.stderr else b""
            seen.update(procs.captures_below(p.pid))
            if procs.tshark_capturing(seen):
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"the capture did not start: {sorted(map(str, seen))}")
        p.send_signal(sig)
        guard = time.monotonic() + 60
        while p.poll() is None and time.monotonic() < guard:
            seen.update(procs.captures_below(p.pid))  # what starts after the signal too
            time.sleep(0.05)
        _, err = p.communicate(timeout=1)
        assert p.returncode == 130, err
        assert not procs.left(seen), [str(x) for x in procs.left(seen)]
        assert not procs.with_filter(flt)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        procs.kill(procs.left(seen) + list(procs.with_filter(flt)))


@pytest.mark.integration
@pytest.mark.parametrize("fast", [False, True], ids=["tshark", "fast"])
def test_a_killed_tui_leaves_no_capture_process(fast: bool) -> None:
    """`amqp tui --live lo` killed (SIGKILL: nothing of ours runs): its capture
    processes, started by the capture's reading thread, get SIGTERM as it dies and end
    (tshark ends its own dumpcap)."""
    assert os.geteuid() == 0, "live capture on lo needs root"
    flt = procs.unique_filter()
    env = {k: v for k, v in os.environ.items() if k not in ("AMQP_URL", "AMQP_DEBUG")}
    p = subprocess.Popen([sys.executable, "-m", "amqpcli", "tui", "--live", "lo",
                          "--capture-filter", flt, *(["--fast-capture"] if fast else [])],
                         cwd=REPO_ROOT, env={**env, "NO_COLOR": "1", "COLUMNS": "100",
                                             "LINES": "30"},
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    left = procs.left_after_kill(p, flt, fast)
    assert not left, [str(x) for x in left]
