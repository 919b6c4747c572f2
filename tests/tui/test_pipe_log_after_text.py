"""`amqp tui --pcap FIFO` with a frame-trace log whose writer writes other text first (a
client's start-up line, a router's start-up lines): the pipe is read until its first
bytes tell what it is, as pcap-dump reads it (`amqpcli.capture.files.ReadOnce`), and the
log is shown. It used to be told by the writer's first write alone: 'not a capture file
or frame-trace log: text with no frame line in its first 200 lines'. While the reading
waits for a frame line, q still quits.

The writer waits for `go` before its second part; the test sets it once the source has
read the first (its stream's `got`), so the first part is all there was when it was read."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from amqpcli.cli.app import main
from amqpcli.tui.app import AmqpTui
from tests.tui.test_pipe_source import Writer, _links, _status
from tests.tui.test_trace_log_times import PROTON_TRACE
from tests.tui.waiting import until

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")

FIRST = b"client starting up\nconnecting to 127.0.0.1:5672\n"


def _fifo(tmp_path: Path, parts: list[bytes]) -> tuple[Path, Writer]:
    fifo = tmp_path / "input.fifo"
    os.mkfifo(fifo)
    return fifo, Writer(lambda: open(fifo, "wb", buffering=0), parts).start()


def _read(src: Any) -> int:
    stream = src._stream
    return 0 if stream is None else int(stream.got)


def test_a_log_after_other_text_is_shown(built: list[Any], tmp_path: Path) -> None:
    fifo, writer = _fifo(tmp_path, [FIRST, PROTON_TRACE.encode()])

    async def watch(src: Any) -> str:
        app = AmqpTui(src)
        async with app.run_test(size=(170, 44)) as pilot:
            await until(app, pilot, lambda: _read(src) == len(FIRST))
            assert not writer.closed.is_set()  # (the trace waits for `go`)
            writer.go.set()
            await until(app, pilot, lambda: "log ended" in _status(app) or bool(src.error))
            assert src.error is None and app.failed is None, src.error
            app.pull()
            assert [lk.deliveries for lk in _links(app)] == [2]
            status = _status(app)
            await pilot.press("q")
        return status

    try:
        main(["tui", "--pcap", str(fifo)])
        (src,) = built
        status = asyncio.run(watch(src))
    finally:
        writer.finish(fifo)
    assert writer.error is None
    assert status == f"{fifo}: log ended: 12 frames, 1 connection(s), times unknown"


def test_q_quits_while_the_text_waits_for_a_frame_line(tmp_path: Path) -> None:
    """Other text written, then nothing: the reading waits for what tells the log, and q
    quits at once; nothing was said to be wrong."""
    from amqpcli.tui.sources.pipe import PipeSource

    fifo, writer = _fifo(tmp_path, [FIRST, b"never written"])
    src = PipeSource(str(fifo))

    async def run() -> int | None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            await until(app, pilot, lambda: _read(src) == len(FIRST) or bool(src.error))
            await pilot.press("q")
        return app.return_code

    try:
        code = asyncio.run(run())
    finally:
        writer.finish(fifo)
    assert code == 0
    assert src._thread is not None
    src._thread.join(10)
    assert not src._thread.is_alive()
    assert src.error is None, src.error
