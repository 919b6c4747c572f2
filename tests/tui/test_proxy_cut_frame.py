"""`amqp tui --proxy` of a client that died while sending a frame (its connection reset
inside it): the frame was cut short, a note as the TUI gives it reading the recording,
not a frame error nor a framing-error violation in the model."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from amqpcli.cli.proxy import upstream_config
from amqpcli.codec.frames import FrameError
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.proxy import ProxySource
from amqpcli.tui.watch import EndOfStream
from tests.net.servepeer import ServePeers
from tests.proxy.dying_client import die_mid_frame
from tests.tui.waiting import until


def _ends(src: ProxySource) -> dict[str, str]:
    """How each side's stream ended, as the store has it."""
    return {r.side: r.item.how for r in src.store.since(0) if isinstance(r.item, EndOfStream)}


def test_a_frame_cut_short_is_a_note_not_a_violation(serve: ServePeers) -> None:
    port = urlsplit(serve("--no-sasl")).port
    src = ProxySource(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{port}"))

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            await asyncio.to_thread(src.ready.wait, 30)
            assert src.bound is not None and src.error is None
            sent, size = await asyncio.to_thread(die_mid_frame, src.bound[1], reset=True)
            def warnings() -> list[str]:
                return [str(n.message) for n in app._notifications if n.severity == "warning"]

            await until(app, pilot, lambda: any("inside frame" in w for w in warnings()))
            await until(app, pilot, lambda: bool(src.watch.conns["c1"].ended))
            [note] = [w for w in warnings() if "inside frame" in w]
            assert note.startswith("c1 client: the connection was reset (RST) inside frame ")
            assert note.endswith(f" from the client (transfer, {sent} of {size} bytes)")
            cw = src.watch.conns["c1"]
            assert list(cw.violations) == [] and cw.violations_total == 0
            assert not [r for r in src.store.since(0) if isinstance(r.item, FrameError)]
            # the reset ended both streams, and is shown as one (it showed "fin")
            await until(app, pilot, lambda: len(_ends(src)) == 2)
            assert _ends(src) == {"client": "rst", "server": "rst"}

    asyncio.run(run())
