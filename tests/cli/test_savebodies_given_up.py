"""`BodyFiles.write_many_async` stopped while the disk holds a body and does not give it
back within the wait: the run is given up on, none of it counted as saved, and when the
disk comes back the files it named are removed (their messages were not settled) and the
numbering goes on after them."""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from amqpcli.cli.savebodies import BodyFiles
from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.net.receiving import WriteStopped


class _Incoming:
    """What BodyFiles reads of a message that arrived."""

    settled = False
    message_format = 0

    def __init__(self, number: int) -> None:
        self.number = number
        self.payload = Message(c.AmqpValue(value=f"body {number}")).encode()


def _messages(*numbers: int) -> list[Any]:
    return [_Incoming(n) for n in numbers]


@pytest.mark.parametrize(("presettled", "fate"), [
    ((), "not settled: the node delivers them again"),
    ((1,), ("1 of them pre-settled: lost; the others not settled: the node delivers them "
            "again")),
], ids=["unsettled", "mixed"])
def test_a_run_given_up_on_is_undone_when_the_disk_comes_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, presettled: tuple[int, ...],
        fate: str) -> None:
    out = tmp_path / "bodies"
    warnings: list[str] = []
    files = BodyFiles(str(out), warnings.append)
    files.QUIET_WAIT, files.STOP_WAIT = 0.1, 0.2
    held, back = threading.Event(), threading.Event()
    fsync = os.fsync
    bodies = 0

    def stalled_fsync(fd: int) -> None:
        """The second body's file is held until `back`."""
        nonlocal bodies
        if stat.S_ISREG(os.fstat(fd).st_mode):
            bodies += 1
            if bodies == 2:
                held.set()
                assert back.wait(30), "never let go on"
        fsync(fd)

    monkeypatch.setattr(os, "fsync", stalled_fsync)

    async def stopped_while_held() -> WriteStopped:
        run = _messages(1, 2, 3)
        for m in run:
            m.settled = m.number in presettled
        task = asyncio.create_task(files.write_many_async(run))
        while not held.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(WriteStopped) as e:
            await task
        return e.value

    stop = asyncio.run(stopped_while_held())
    assert (stop.written, stop.cut) == (0, False)
    assert files.count == 0
    assert warnings[-1] == (
        "--save-bodies: the disk had not finished message 2's file 0.2s after the stop: "
        f"messages 1 to 2 are not saved ({fate}); "
        f"000001.bin may stay in {str(out)!r} all the same")
    assert sorted(n for n in os.listdir(out) if not n.startswith(".")) == ["000001.bin"]
    back.set()
    for thread in threading.enumerate():
        if thread.name == "amqp-save-bodies":
            thread.join(30)
    assert os.listdir(out) == []  # message 2 got no name, message 1's was taken back
    files.write_many(_messages(4))
    # numbered on after the names given out before (never one a given-up run may hold)
    assert os.listdir(out) == ["000002.bin"]
    assert (out / "000002.bin").read_bytes() == b"body 4"
    assert (files.count, files.first) == (1, "000002.bin")
    files.close()
