"""`amqp tui URL --recv`: a peer's error description reaches the notification and the
title as `recv` reports it: one line, its line breaks and control characters escaped
once (`\\n`, not `\\\\n`, as the description now comes escaped), its spaces kept."""

from __future__ import annotations

import asyncio

import pytest

from amqpcli.cli.options import build_config
from amqpcli.render.types import one_line
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.client import ClientSource
from tests.net.onepeer import HANG_GUARD
from tests.net.test_peer_error_text import SAID, _peer
from tests.tui.waiting import until


def test_one_line_escapes_only_what_is_not_escaped_yet() -> None:
    assert one_line(SAID) == SAID
    assert one_line("a\nb  c\\d") == "a\\nb  c\\\\d"
    assert one_line("plain  text") == "plain  text"


@pytest.mark.integration
def test_the_peers_close_error_is_shown_as_recv_reports_it() -> None:
    port, th = _peer("close")
    src = ClientSource(build_config(f"amqp://127.0.0.1:{port}/q", sasl_mechanism="none"),
                       receive=True)

    async def run() -> None:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            await until(app, pilot, lambda: app.failed is not None)
            said = f"the peer closed the connection: {SAID}"
            assert app.failed == said
            assert str(app.sub_title) == said
            errors = [n.message for n in app._notifications if n.severity == "error"]
            assert errors == [said]

    asyncio.run(run())
    th.join(HANG_GUARD)
