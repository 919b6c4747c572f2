"""`.` and `,` move one frame: the records of a replay that are no frames (a stream's end,
bytes the capture lost) are stepped over, not stopped at, so every step changes the frame
the bar shows. They used to take a step each, the frame staying the same."""

from __future__ import annotations

import asyncio
from pathlib import Path

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.codec.types import UInt, UShort
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.replay import ReplaySource, load_capture
from tests.tui.terminal import terminal_keys


def _capture(path: Path) -> None:
    begin = c.Begin(next_outgoing_id=UInt(0), incoming_window=UInt(100), outgoing_window=UInt(100))
    answer = c.Begin(remote_channel=UShort(0), next_outgoing_id=UInt(0),
                     incoming_window=UInt(100), outgoing_window=UInt(100))
    with CaptureWriter(path, linktype=101) as w:
        one = TcpConversation(w, ("127.0.0.1", 40001), ("127.0.0.1", 5672), step_ns=1_000_000)
        one.handshake()
        one.send(C2S, encode_protocol_header("amqp") + encode_frame(c.Open(container_id="a")),
                 mss=65000, ack=False)
        one.send(S2C, encode_protocol_header("amqp") + encode_frame(c.Open(container_id="b")),
                 mss=65000, ack=False)
        one.close()  # both streams end (FIN): records, no frames
        two = TcpConversation(w, ("127.0.0.1", 40002), ("127.0.0.1", 5672), step_ns=1_000_000,
                              start_ns=1_700_000_001_000_000_000)
        two.handshake()
        two.send(C2S, encode_protocol_header("amqp") + encode_frame(c.Open(container_id="c")),
                 mss=65000, ack=False)
        two.send(S2C, encode_protocol_header("amqp") + encode_frame(c.Open(container_id="d")),
                 mss=65000, ack=False)
        two.send(C2S, encode_frame(begin), mss=65000, ack=False, drop={0})  # lost: a gap
        two.send(C2S, encode_frame(begin), mss=65000, ack=False)
        two.send(S2C, encode_frame(answer), mss=65000, ack=False)
        two.close()


def test_each_step_moves_one_frame(tmp_path: Path) -> None:
    path = tmp_path / "ends.pcapng"
    _capture(path)
    src = ReplaySource(loaded=load_capture(path))
    assert src.controller is not None
    total = src.frames_before[-1]
    assert len(src.controller) > total  # the streams' ends and the gap are records too

    async def run() -> tuple[list[int], list[int]]:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 40)) as pilot:
            forward, back = [], []
            for _ in range(total + 2):
                await pilot.press(*terminal_keys("."))
                await app.workers.wait_for_complete()
                forward.append(src.bar_state()[0])
            assert src.controller is not None and src.controller.at_end
            for _ in range(total + 2):
                await pilot.press(*terminal_keys(","))
                await app.workers.wait_for_complete()
                back.append(src.bar_state()[0])
            return forward, back

    forward, back = asyncio.run(run())
    assert forward == [*range(1, total + 1), total, total]
    assert back == [*range(total - 1, -1, -1), 0, 0]


def test_a_step_of_a_hundred_counts_frames(tmp_path: Path) -> None:
    path = tmp_path / "ends.pcapng"
    _capture(path)
    src = ReplaySource(loaded=load_capture(path))
    assert src.controller is not None
    src.step(3)
    assert src.bar_state()[0] == 3
    src.step(100)
    assert src.controller.at_end  # the streams' ends after the last frame played too
    src.step(-100)
    assert src.controller.position == 0
