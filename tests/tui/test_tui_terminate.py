"""`timeout 60 amqp tui …` ends the TUI with SIGTERM and then SIGCONT: exit 130 and one
line, not an internal error from the redraw handler running after the event loop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

from tests.paths import REPO_ROOT


def test_sigterm_then_sigcont_ends_the_tui_cleanly() -> None:
    example = REPO_ROOT / "amqpcli" / "examples" / "serve-session.pcapng"
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "LINES": "30"}
    p = subprocess.Popen([sys.executable, "-m", "amqpcli", "tui", "--pcap", str(example)],
                         cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    drawn = threading.Event()
    chunks: list[bytes] = []

    def read(stream: object) -> None:
        for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]
            chunks.append(chunk)
            if b"frame" in b"".join(chunks[-3:]):  # the status bar: the app is running
                drawn.set()

    readers = [threading.Thread(target=read, args=(s,), daemon=True) for s in (p.stdout, p.stderr)]
    for t in readers:
        t.start()
    try:
        assert drawn.wait(60), b"".join(chunks)[-500:]
        p.send_signal(signal.SIGTERM)
        p.send_signal(signal.SIGCONT)  # as timeout(1) does
        assert p.wait(60) == 130
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    for t in readers:
        t.join(10)
    text = b"".join(chunks).decode(errors="replace")
    assert "amqp: interrupted" in text
    assert "internal error" not in text and "Traceback" not in text
