"""`amqp tui --pcap FIFO` (and `--pcap -`, `<(…)`) peeks at what the pipe carries, as
`amqp pcap-dump` peeks at it (`amqpcli.capture.files.ReadOnce`): a capture, or a
frame-trace log (proton's `PN_TRACE_FRM=1` text, a router's log), each shown as it is
written; text that is neither is pcap-dump's error. The log used to be read as a capture:
'not a capture file: starts with 5b307835 (expected a pcap or pcapng magic number)'.

The writer waits between its parts until the test lets it go on, so "shown before the
writer closed" is an order of events, not a race."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from amqpcli.cli.app import main
from amqpcli.tui.app import AmqpTui
from tests.dissect.helpers import basic
from tests.tui.screen import screen_text
from tests.tui.test_pipe_source import (
    N,
    Writer,
    _headless,
    _links,
    _status,
    capture_parts,
    up_to_the_link,
)
from tests.tui.test_trace_log_times import PROTON_TRACE, ROUTER
from tests.tui.waiting import until

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")


def _log_parts(log: str, cut_after: str) -> list[bytes]:
    """The log in two parts: its lines up to the first holding `cut_after`, the rest."""
    lines = log.splitlines(keepends=True)
    cut = next(i for i, x in enumerate(lines) if cut_after in x) + 1
    return ["".join(lines[:cut]).encode(), "".join(lines[cut:]).encode()]


async def _frame_lines(app: AmqpTui, pilot: Any) -> list[str]:
    """The frame log's lines of c1, from the time on."""
    app.tabs.active = "frames"
    app.pull()
    await pilot.pause()
    text = screen_text(app)
    return [x.split("│", 1)[1].strip() for x in text.splitlines()
            if " c1 " in x.split("│", 1)[-1]]


async def _watch(src: Any, writer: Writer, name: str, what: str, deliveries: int) -> list[str]:
    """The link shows while the writer holds the pipe open; once it closed it, every
    delivery shows and the status says the capture (or log) ended. The frame log's c1
    lines at the end."""
    app = AmqpTui(src)
    async with app.run_test(size=(170, 44)) as pilot:
        await until(app, pilot, lambda: bool(_links(app)))
        assert not writer.closed.is_set()  # (it waits for `go`)
        assert _status(app).startswith(f"streaming from {name}: "), _status(app)
        writer.go.set()
        await until(app, pilot, lambda: f"{what} ended" in _status(app))
        assert writer.closed.is_set() and writer.error is None
        app.pull()
        assert [lk.deliveries for lk in _links(app)] == [deliveries]
        assert app.failed is None
        lines = await _frame_lines(app, pilot)
        status = _status(app)
        await pilot.press("q")
    return [status, *lines]


def _fifo(tmp_path: Path, parts: list[bytes]) -> tuple[Path, Writer]:
    fifo = tmp_path / "input.fifo"
    os.mkfifo(fifo)
    return fifo, Writer(lambda: open(fifo, "wb", buffering=0), parts).start()


def _shown_from_a_pipe(started: list[Any], tmp_path: Path, log: str
                       ) -> tuple[Path, str, list[str]]:
    """`amqp tui --pcap FIFO` while `log` is written into the FIFO in two parts: the FIFO,
    the status once the writer ended, and the frame lines shown."""
    fifo, writer = _fifo(tmp_path, _log_parts(log, "@flow"))
    try:
        main(["tui", "--pcap", str(fifo)])
        (src,) = started
        status, *lines = asyncio.run(_watch(src, writer, str(fifo), "log", 2))
    finally:
        writer.finish(fifo)
    return fifo, status, lines


def test_a_proton_trace_in_a_named_pipe_is_shown_as_it_is_written(
        built: list[Any], tmp_path: Path) -> None:
    fifo, status, lines = _shown_from_a_pipe(built, tmp_path, PROTON_TRACE)
    assert status == f"{fifo}: log ended: 12 frames, 1 connection(s), times unknown"
    # proton's trace has no times: `-` where the time goes, as a replay of it shows
    assert len(lines) == 12 and all(x.startswith("- c1 ") for x in lines), lines


def test_a_router_log_in_a_named_pipe_keeps_its_times(
        built: list[Any], tmp_path: Path) -> None:
    fifo, status, lines = _shown_from_a_pipe(built, tmp_path, ROUTER)
    assert status == f"{fifo}: log ended: 15 frames, 1 connection(s)"
    assert lines[0].startswith("10:00:00.100100 c1 "), lines
    assert not any(x.startswith("- ") for x in lines), lines


def test_a_capture_in_a_named_pipe_is_still_shown_as_it_is_written(
        built: list[Any], tmp_path: Path) -> None:
    script = basic(N)
    fifo, writer = _fifo(tmp_path, list(capture_parts(tmp_path, script,
                                                      up_to_the_link(script))))
    try:
        main(["tui", "--pcap", str(fifo)])
        (src,) = built
        status, *_ = asyncio.run(_watch(src, writer, str(fifo), "capture", N))
    finally:
        writer.finish(fifo)
    assert status.startswith(f"{fifo}: capture ended: ") and "times" not in status


@pytest.mark.parametrize(("data", "what"), [
    (b"hello, this is not a capture\n", "text with no frame line in its first 200 lines"),
    (b"", "empty"),
])
def test_text_in_a_named_pipe_is_said_to_be_neither(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path, data: bytes, what: str) -> None:
    """As `amqp pcap-dump FIFO` says it: a one-line error once the screen closed, exit 8."""
    fifo, writer = _fifo(tmp_path, [data])
    seen: list[str] = []
    monkeypatch.setattr("amqpcli.tui.app.run",
                        _headless(seen, lambda app: app.failed is not None))
    try:
        with pytest.raises(SystemExit) as e:
            main(["tui", "--pcap", str(fifo)])
    finally:
        writer.finish(fifo)
    error = f"{fifo}: not a capture file or frame-trace log: {what}"
    assert seen == [error]
    assert e.value.code == 8
    assert capsys.readouterr().err == f"amqp: error: {error}\n"  # one line, no traceback
