"""A frame-trace log in the TUI: a proton trace (no times) shows its times and latencies
as unknown (`-`) in the frame log, the link's unsettled ages, the delivery's timeline and
latency, the tree's rates, the replay bar and the status line, and plays at a steady rate
of frames; a router log (with times) keeps its times."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from amqpcli.tui.sources.replay import UNTIMED_FRAME_RATE, ReplaySource, load_capture
from tests.capture.test_tracelog import ROUTER_LOG
from tests.tui.replaying import replay_app
from tests.tui.screen import screen_text
from tests.tui.test_replay_controller import FakeClock

# proton's PN_TRACE_FRM=1 text: a sender's two transfers, the first accepted
PROTON_TRACE = """\
[0x5581]: AMQP:FRAME:  -> AMQP
[0x5581]: AMQP:FRAME:0 -> @open(16) [container-id="a", channel-max=0x7fff]
[0x5581]: AMQP:FRAME:0 -> @begin(17) [next-outgoing-id=0x0, incoming-window=0x7fffffff, outgoing-window=0x7fffffff]
[0x5581]: AMQP:FRAME:0 -> @attach(18) [name="orders-sender", handle=0x0, role=false, snd-settle-mode=0x2, rcv-settle-mode=0x0, source=@source(40) [durable=0x0], target=@target(41) [address="orders", durable=0x0], initial-delivery-count=0x0]
[0x5581]: AMQP:FRAME:  <- AMQP
[0x5581]: AMQP:FRAME:0 <- @open(16) [container-id="b", channel-max=0xff]
[0x5581]: AMQP:FRAME:0 <- @begin(17) [remote-channel=0x0, next-outgoing-id=0x0, incoming-window=0x800, outgoing-window=0x800]
[0x5581]: AMQP:FRAME:0 <- @attach(18) [name="orders-sender", handle=0x0, role=true, snd-settle-mode=0x2, rcv-settle-mode=0x0, source=@source(40) [durable=0x0], target=@target(41) [address="orders", durable=0x0]]
[0x5581]: AMQP:FRAME:0 <- @flow(19) [next-incoming-id=0x0, incoming-window=0x800, next-outgoing-id=0x0, outgoing-window=0x800, handle=0x0, delivery-count=0x0, link-credit=0x64, drain=false]
[0x5581]: AMQP:FRAME:0 -> @transfer(20) [handle=0x0, delivery-id=0x0, delivery-tag=b"1", message-format=0x0] (10) \\x00Sw\\xa1\\x05hello
[0x5581]: AMQP:FRAME:0 -> @transfer(20) [handle=0x0, delivery-id=0x1, delivery-tag=b"2", message-format=0x0] (10) \\x00Sw\\xa1\\x05world
[0x5581]: AMQP:FRAME:0 <- @disposition(21) [role=true, first=0x0, settled=true, state=@accepted(36) []]
"""

# (without its line that does not parse, which is noted)
ROUTER = "".join(x for x in ROUTER_LOG.splitlines(keepends=True) if "brok!" not in x)

# what a time of 0 (the epoch) or a span of 0 looked like on the screen
_EPOCH = ("1970", "00:00:00.000000", "0.000 ms", "0.0 ms", "0.000s", "0ms", "µs")


def _screens(log: Path, link: str, tag: bytes) -> dict[str, str]:
    """The screen of each view of the replayed log: the link tab on `link`, the delivery
    tab on its delivery `tag`, the frame log, the connection pane of c1."""
    app = replay_app(log)
    shown: dict[str, str] = {}

    async def run() -> None:
        async with app.run_test(size=(170, 40)) as pilot:
            await app.workers.wait_for_complete()
            assert app.conn_tree.link_keys == [link]
            assert app.select_link(link)
            await pilot.pause()
            app.pull()
            shown["link"] = screen_text(app)
            app.delivery_key = f"{link}|{tag.hex()}"
            app.tabs.active = "delivery"
            app.pull()
            await pilot.pause()
            shown["delivery"] = screen_text(app)
            app.tabs.active = "frames"
            app.pull()
            await pilot.pause()
            shown["frames"] = screen_text(app)
            app.link_key, app.conn_key = None, "c1"
            app.tabs.active = "link"
            app.pull()
            await pilot.pause()
            shown["connection"] = screen_text(app)

    asyncio.run(run())
    return shown


def test_a_proton_trace_shows_unknown_times(tmp_path: Path) -> None:
    log = tmp_path / "client.trace"
    log.write_text(PROTON_TRACE)
    shown = _screens(log, "c1|s0.0|client|orders-sender", b"1")
    for view, text in shown.items():
        for said in _EPOCH:
            assert said not in text, (view, said, text)
        assert "times unknown" in text, (view, text)  # the status line
        assert " t -  " in text, (view, text)  # the replay bar: no seconds played
        assert "-/s" in text, (view, text)  # the tree: no rate
    # the frame log: `-` where the time goes, every line
    lines = [x.split("│", 1)[1].strip() for x in shown["frames"].splitlines()
             if " c1 " in x.split("│", 1)[-1]]
    assert len(lines) == 12 and all(x.startswith("- c1 ") for x in lines), lines
    # the unsettled delivery's age, the settled one's timeline and latency
    assert any(x.split("│", 1)[1].split()[:3] == ["1", 'b"2"', "-"]
               for x in shown["link"].splitlines() if "│" in x), shown["link"]
    assert "settled after - by server" in shown["delivery"], shown["delivery"]
    steps = [x.split("│", 1)[1].split()[:3] for x in shown["delivery"].splitlines()
             if "c1 frame" in x]
    assert steps == [["-", "client", "transfer"], ["-", "server", "disposition"]], steps


def test_a_router_log_keeps_its_times(tmp_path: Path) -> None:
    log = tmp_path / "router.log"
    log.write_text(ROUTER)
    shown = _screens(log, "c1|s0.0|client|sender-1", b"1")
    assert "10:00:00.100100 c1 " in shown["frames"], shown["frames"]
    assert "- c1 " not in shown["frames"]
    assert "settled after 12.5 ms by server" in shown["delivery"], shown["delivery"]
    assert "+12.5ms" in shown["delivery"], shown["delivery"]
    for text in shown.values():
        assert "1970" not in text and "times unknown" not in text
        assert " t+0.200s/0.200s " in text, text  # the bar: the log's span


def _untimed_source(tmp_path: Path, speed: float, clock: FakeClock) -> ReplaySource:
    log = tmp_path / "client.trace"
    log.write_text(PROTON_TRACE)
    return ReplaySource(loaded=load_capture(log), speed=speed, clock=clock.time,
                        sleep=clock.sleep)


@pytest.mark.parametrize("speed", [1.0, 4.0])
def test_a_proton_trace_plays_at_a_steady_rate_of_frames(tmp_path: Path,
                                                          speed: float) -> None:
    clock = FakeClock()
    src = _untimed_source(tmp_path, speed, clock)
    src.play()
    assert src._play_thread is not None
    src._play_thread.join()  # the fake clock never waits for real
    assert src.finished.is_set()
    assert src.controller is not None and src.controller.position == 12
    # twelve frames, the first at once: eleven steps of a frame each, times the speed
    assert clock.now == pytest.approx(11 / UNTIMED_FRAME_RATE / speed, abs=1e-6)
    assert clock.sleeps and max(clock.sleeps) <= 0.05 + 1e-9


def test_a_proton_trace_has_no_times_to_jump_to(tmp_path: Path) -> None:
    src = _untimed_source(tmp_path, 1.0, FakeClock())
    with pytest.raises(ValueError, match="no times"):
        src.parse_goto("t+1")
    assert src.parse_goto("5") == 5
    assert src.bar_state()[2:4] == (None, None)
