"""`amqp tui --proxy … --record FILE` when FILE cannot be written: the source says so
(a file that takes nothing, at the start; one that fails later, as a notice and in its
status line), the TUI goes on."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from amqpcli.cli.proxy import upstream_config
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.messages import SourceNotice
from amqpcli.tui.sources.proxy import ProxySource


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_recording_to_dev_full_is_refused_in_the_tui() -> None:
    src = ProxySource(("127.0.0.1", 0), upstream_config("amqp://127.0.0.1:1"),
                      record="/dev/full")

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(120, 40)) as pilot:
            await asyncio.to_thread(src.ready.wait, 30)
            await pilot.pause(0.1)
            assert src.error == "cannot write /dev/full: no space left on device"
            assert src.status() == src.error

    asyncio.run(run())


def test_a_recording_that_stops_is_noted(tmp_path: Path) -> None:
    record = tmp_path / "p.pcapng"
    src = ProxySource(("127.0.0.1", 0), upstream_config("amqp://127.0.0.1:1"),
                      record=str(record))
    posted: list[object] = []
    src._post = posted.append  # type: ignore[method-assign]
    src._record_failed("file too large")
    (notice,) = posted
    assert isinstance(notice, SourceNotice) and notice.severity == "warning"
    assert notice.text == (f"cannot write the recording {record}: file too large; "
                           "recording stopped, still forwarding")
    assert src.status().endswith(f"recording {record} stopped (file too large)")
