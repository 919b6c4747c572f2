"""The proxy between a python-qpid-proton client and RabbitMQ.

Two wiretaps (plain byte relays) sit on either side of the proxy: what the client sent
must reach the broker byte for byte, and the other way round. The proxy's own model
(fed from its copy of the bytes) must report what the capture reader and a fresh
observer report for the proxy's recording of the same traffic.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqpcli.capture import Data, read_capture
from amqpcli.cli.proxy import upstream_config
from amqpcli.engine.events import DeliverySettled, LinkAttached, Violation
from amqpcli.engine.observer import Observer
from amqpcli.proxy import Proxy, Recorder
from tests.proxy.relay import LoopThread, Relay

N = 20


def _summary(events: list[Any]) -> dict[str, Any]:
    return {
        # (how many of each: the live order of two directions' events at one moment may
        # differ from the recording's, merged by time)
        "kinds": sorted(type(e).__name__ for e in events),
        "links": sorted(e.link.name for e in events if isinstance(e, LinkAttached)),
        "settled": [(e.delivery.link.name, e.delivery.delivery_id, e.delivery.outcome)
                    for e in events if isinstance(e, DeliverySettled)],
        "violations": [e.kind for e in events if isinstance(e, Violation)],
    }


@pytest.mark.integration
def test_proxy_carries_proton_traffic_to_rabbitmq_untouched(
    rabbitmq_url: str, loop_thread: LoopThread, tmp_path: Path
) -> None:
    broker = urlsplit(rabbitmq_url)
    record = tmp_path / "proxy.pcapng"
    seen: list[Any] = []
    ended: list[Any] = []  # the connections, as on_close hands them over

    async def setup() -> tuple[Relay, Proxy, Relay]:
        near_broker = Relay((broker.hostname or "127.0.0.1", broker.port or 5672))
        await near_broker.start()
        proxy = Proxy(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{near_broker.port}"),
                      on_item=lambda conn, side, item, t, events: seen.extend(events),
                      on_events=lambda conn, side, events: seen.extend(events),
                      on_close=lambda conn, how: ended.append(conn),
                      recorder=Recorder(record))
        bound = await proxy.start()
        near_app = Relay(bound)
        await near_app.start()
        return near_broker, proxy, near_app

    near_broker, proxy, near_app = loop_thread.run(setup())
    address = f"/queue/amqpcli-proxy-{uuid.uuid4().hex[:8]}"
    conn = BlockingConnection(f"amqp://guest:guest@127.0.0.1:{near_app.port}", timeout=30,
                              allowed_mechs="PLAIN", allow_insecure_mechs=True)
    try:
        sender = conn.create_sender(address)
        for i in range(N):
            sender.send(Message(body=f"hello {i}", id=f"m{i}"))  # waits for the outcome
        receiver = conn.create_receiver(address, credit=N)
        bodies = []
        for _ in range(N):
            msg = receiver.receive(timeout=30)
            bodies.append(msg.body)
            receiver.accept()
    finally:
        conn.close()
    assert bodies == [f"hello {i}" for i in range(N)]
    loop_thread.run(near_app.done.wait())
    loop_thread.run(near_broker.done.wait())
    loop_thread.run(proxy.wait_idle())
    loop_thread.run(proxy.close())
    for r in (near_app, near_broker):
        loop_thread.run(r.close())

    # Byte-identical in both directions.
    assert len(near_app.up) > 0 and len(near_app.down) > 0
    assert bytes(near_app.up) == bytes(near_broker.up)
    assert bytes(near_app.down) == bytes(near_broker.down)

    # The proxy's model against the recording read back through the capture reader.
    observer = Observer()
    replayed: list[Any] = []
    flows = set()
    for ev in read_capture(record):
        if isinstance(ev, Data):
            flows.add(ev.flow.index)
            side = "client" if int(ev.direction) == 0 else "server"
            replayed.extend(observer.feed_bytes(side, ev.data, ev.time_ns / 1e9))
    replayed.extend(observer.close(0.0))
    assert flows == {0}
    live = _summary(seen)
    again = _summary(replayed)
    assert live == again
    # RabbitMQ 3.10 may send a frame or two after its close (it was seen to send one,
    # then two); the proxy passes them on and both models say so. Nothing else may be
    # wrong on the wire.
    late = [(e.side, e.kind) for e in seen if isinstance(e, Violation)]
    assert set(late) <= {("server", "frame-after-close")} and len(late) <= 2, late
    assert len(live["settled"]) == 2 * N
    assert {o for _, _, o in live["settled"]} == {"accepted"}
    assert not proxy.connections  # (ended: handed to on_close, then dropped)
    model = ended[0].observer.connection
    assert model.frames == observer.connection.frames
    assert model.state == "closed" == observer.connection.state
