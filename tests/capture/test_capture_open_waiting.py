"""A capture file is opened inside the reader's `waiting`: a named pipe's open waits for
its writer, and a reader that stops on a signal (pcap-dump) stops only inside `waiting`."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from capture_helpers import AMQP_HDR, frames

from amqpcli.capture import C2S, S2C, read_packets
from amqpcli.capture import files as capture_files
from amqpcli.capture.writer import CaptureWriter, TcpConversation


def _capture(path: Path) -> Path:
    with CaptureWriter(path) as w:
        c = TcpConversation(w, mss=200)
        c.handshake()
        c.send(C2S, AMQP_HDR + frames(10, 90, tag=3))
        c.send(S2C, AMQP_HDR + frames(10, 150, tag=9))
        c.close()
    return path


def test_the_open_is_inside_waiting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A named pipe's open waits for its writer: a reader that stops on a signal stops
    # only inside `waiting`, so the open must be there (it was before it).
    p = _capture(tmp_path / "a.pcapng")
    events: list[str] = []
    real_open = open

    def tracking_open(*a: Any, **kw: Any) -> Any:
        events.append("open")
        return real_open(*a, **kw)

    class Waiting:
        def __enter__(self) -> None:
            events.append("enter")

        def __exit__(self, *exc: object) -> None:
            events.append("exit")

    monkeypatch.setattr(capture_files, "open", tracking_open, raising=False)
    list(read_packets(p, waiting=Waiting()))
    assert events[:3] == ["enter", "open", "exit"]


def test_a_stop_while_a_named_pipe_waits_for_its_writer(tmp_path: Path) -> None:
    # `waiting` raises on enter once stopped (as pcap-dump's does): nothing blocks
    fifo = tmp_path / "f.pcapng"
    os.mkfifo(fifo)

    class Stopped:
        def __enter__(self) -> None:
            raise KeyboardInterrupt

        def __exit__(self, *exc: object) -> None:
            pass

    done: list[BaseException] = []

    def read() -> None:
        try:
            list(read_packets(fifo, waiting=Stopped()))
        except BaseException as e:  # noqa: BLE001 - what stopped it is the result
            done.append(e)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(60)
    blocked = t.is_alive()
    if blocked:  # the open waited for the writer, past the stop: give it one to end
        with open(fifo, "wb"):
            pass
        t.join(60)
    assert not blocked
    assert done and isinstance(done[0], KeyboardInterrupt)
