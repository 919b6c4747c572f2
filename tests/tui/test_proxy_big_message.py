"""A big message through the TUI's proxy: the frame log does not keep every frame's
payload (a 150 MB message once grew the process by gigabytes); the lines still say how
many bytes each frame carried, and the delivery (the Delivery tab's) has the message."""

from __future__ import annotations

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqpcli.cli.proxy import upstream_config
from amqpcli.codec.frames import Frame
from amqpcli.tui.adapter import frame_line
from amqpcli.tui.sources.proxy import PAYLOAD_LIMIT, ProxySource
from amqpcli.tui.store import ElidedPayload
from tests.peers.broker import Broker

SIZE = 4 * 1024 * 1024


@pytest.mark.integration
def test_the_frame_log_keeps_no_big_payload(broker: Broker) -> None:
    body = bytes(range(256)) * (SIZE // 256)
    broker.put("big", Message(body=body))
    src = ProxySource(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{broker.port}"))
    src.start(None)
    try:
        assert src.ready.wait(30) and src.bound is not None
        conn = BlockingConnection(f"amqp://127.0.0.1:{src.bound[1]}", timeout=30)
        try:
            got = conn.create_receiver("big").receive(timeout=30)
        finally:
            conn.close()
        assert got.body == body
        with src.lock:
            records = src.store.since(0)
            transfers = [r for r in records if isinstance(r.item, Frame) and r.item.payload]
            kept = sum(len(r.item.payload) for r in transfers
                       if not isinstance(r.item.payload, ElidedPayload))
            carried = sum(len(r.item.payload) for r in transfers)
        assert carried > SIZE  # every frame still says its size
        assert kept <= PAYLOAD_LIMIT * 4  # the small frames only, not the message's bytes
        line = frame_line(transfers[-1]).plain
        assert f"({len(transfers[-1].item.payload)} bytes)" in line
    finally:
        src.stop()
