"""A replay of a router's log (timed) and a proton frame trace (no times) together: one
log holding both (`cat router.log client.trace`, in either order), or the two files.

Its frames come in pcap-dump's order (its files one after the other, each in its lines'
order) and it plays by a clock that never goes back: the proton frames at 10 a second in
their place, the router's with their own spacing; ages and rates go by the router's
times, which the proton frames do not move. It played by the records' placeholder times:
the proton frames before the router's were at the epoch (a replay of 53 years, its frames
all at once) and after them at the router's last time (all at once)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from amqpcli.tui.adapter import frame_line
from amqpcli.tui.sources.replay import UNTIMED_FRAME_RATE, ReplaySource, load_capture
from tests.capture.test_tracelog import _pcap_dump
from tests.tui.test_replay_controller import FakeClock
from tests.tui.test_trace_log_times import PROTON_TRACE, ROUTER

STEP = 1 / UNTIMED_FRAME_RATE
ROUTER_SPAN = 0.2  # from the router log's first frame to its last (10:00:00.1001-.3001)
PROTON_FRAMES = 12


def _logs(tmp_path: Path, router_first: bool, apart: bool) -> list[str]:
    router, proton = tmp_path / "router.log", tmp_path / "client.trace"
    router.write_text(ROUTER)
    proton.write_text(PROTON_TRACE)
    order = [router, proton] if router_first else [proton, router]
    if not apart:
        both = tmp_path / "both.log"
        both.write_text("".join(p.read_text() for p in order))
        order = [both]
    return [str(p) for p in order]


def _source(logs: list[str], clock: FakeClock | None = None) -> ReplaySource:
    clock = clock or FakeClock()
    return ReplaySource(loaded=load_capture(logs[0] if len(logs) == 1 else logs),
                        clock=clock.time, sleep=clock.sleep)


CASES = pytest.mark.parametrize(("router_first", "apart"), [
    (True, False), (False, False), (True, True), (False, True),
], ids=["one-log-router-first", "one-log-proton-first", "two-logs-router-first",
        "two-logs-proton-first"])


@CASES
def test_the_frames_come_in_pcap_dump_s_order(tmp_path: Path, router_first: bool,
                                               apart: bool) -> None:
    logs = _logs(tmp_path, router_first, apart)
    src = _source(logs)
    assert src.controller is not None
    shown = [str(frame_line(rec, src.untimed)).split()[:2] for rec in src.controller.records]
    dumped = _pcap_dump(*logs)
    assert dumped.returncode == 0, dumped.stderr
    assert shown == [x.split()[:2] for x in dumped.stdout.splitlines()]
    proton = shown[-PROTON_FRAMES:] if router_first else shown[:PROTON_FRAMES]
    assert proton == [["-", "c2" if router_first else "c1"]] * PROTON_FRAMES


@CASES
def test_the_clock_never_goes_back_and_keeps_the_router_s_spacing(
        tmp_path: Path, router_first: bool, apart: bool) -> None:
    src = _source(_logs(tmp_path, router_first, apart))
    c = src.controller
    assert c is not None and src.timed
    untimed = src.untimed
    played: list[float] = []
    nows: list[float] = []
    for pos in range(len(c) + 1):
        c.seek(pos)
        seconds = src.bar_state()[2]
        assert seconds is not None
        played.append(seconds)
        nows.append(src.now())
    assert played[0] == 0.0
    assert all(a <= b for a, b in itertools.pairwise(played)), played  # never back
    assert all(a <= b for a, b in itertools.pairwise(nows)), nows
    assert src.bar_state()[3] == pytest.approx(ROUTER_SPAN + PROTON_FRAMES * STEP)
    recs = c.records
    for i in range(1, len(recs)):
        went = played[i + 1] - played[i]  # (played[p]: after the first p records)
        if recs[i].conn in untimed or recs[i - 1].conn in untimed:
            assert went == pytest.approx(STEP), i  # a steady 10 frames a second
        else:
            assert went == pytest.approx(recs[i].time - recs[i - 1].time), i
    # ages go by the router's times: its last, while the proton frames play after it
    router_times = [r.time for r in recs if r.conn not in untimed]
    if router_first:
        assert nows[-PROTON_FRAMES - 1:] == [router_times[-1]] * (PROTON_FRAMES + 1)
    else:
        assert nows[:PROTON_FRAMES + 1] == [router_times[0]] * (PROTON_FRAMES + 1)
    assert nows[-1] == router_times[-1]


@pytest.mark.parametrize("router_first", [True, False])
def test_it_plays_its_proton_frames_at_ten_a_second(tmp_path: Path,
                                                    router_first: bool) -> None:
    clock = FakeClock()
    src = _source(_logs(tmp_path, router_first, apart=False), clock)
    src.play()
    assert src._play_thread is not None
    src._play_thread.join()  # the fake clock never waits for real
    assert src.finished.is_set()
    assert src.controller is not None and src.controller.at_end
    # the router's 0.2 s, and a step for each proton frame (one of them the step
    # between the two logs)
    assert clock.now == pytest.approx(ROUTER_SPAN + PROTON_FRAMES * STEP, abs=1e-6)
    assert clock.sleeps and max(clock.sleeps) <= 0.05 + 1e-9
