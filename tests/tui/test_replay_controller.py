"""The replay controller: forward, back, seek by time, checkpoints stay bounded."""

from __future__ import annotations

import pytest

from amqpcli.tui.replay import ReplayController
from amqpcli.tui.store import FrameRecord, FrameStore


def _records(n: int) -> list[FrameRecord]:
    return [FrameRecord(i, 1000.0 + i * 0.5, "c1", "client", i) for i in range(n)]


def _controller(n: int, **kw: int) -> ReplayController[list[int]]:
    return ReplayController(_records(n), list, lambda m, r: m.append(r.item), **kw)


def test_forward_and_back_match_a_fresh_feed() -> None:
    rc = _controller(1000, interval=100)
    rc.seek(750)
    assert rc.model == list(range(750))
    rc.seek(333)
    assert rc.model == list(range(333))
    # Going back restored checkpoint 300 and fed only 33 records.
    assert rc.refed == 33
    rc.step(-1)
    assert rc.model == list(range(332)) and rc.position == 332
    rc.step(5)
    assert rc.model == list(range(337))


def test_checkpoints_are_not_shared_with_the_live_model() -> None:
    rc = _controller(500, interval=100)
    rc.seek(450)
    rc.seek(150)
    rc.seek(450)
    rc.seek(120)
    assert rc.model == list(range(120))


def test_checkpoints_stay_bounded() -> None:
    rc = _controller(10_000, interval=10, max_checkpoints=8)
    rc.seek(10_000)
    assert len(rc.checkpoints) <= 8
    assert all(p % rc.interval == 0 for p in rc.checkpoints)
    rc.seek(4321)
    assert rc.model == list(range(4321))


def test_seek_by_time_and_play_until() -> None:
    rc = _controller(100)
    assert rc.seek_time(1000.0 + 10 * 0.5) == 11  # records with time <= t
    assert rc.current_time == 1005.0
    assert rc.play_until(1000.0 + 20 * 0.5, limit=3) == 3
    assert rc.position == 14
    assert rc.play_until(1e12) == 86 and rc.at_end
    assert rc.seek(-5) == 0 and rc.model == []


def test_uncopyable_model_falls_back_to_refeeding_from_start() -> None:
    def boom(m: list[int]) -> list[int]:
        raise TypeError("no copy")

    rc = ReplayController(_records(300), list, lambda m, r: m.append(r.item), interval=50, clone=boom)
    rc.seek(300)
    assert rc.clone_failed
    rc.seek(10)
    assert rc.model == list(range(10))


def test_frame_store_trims_the_front_and_keeps_sequence_numbers() -> None:
    st = FrameStore(limit=100)
    for i in range(1000):
        st.append(float(i), "c", "client", i)
    assert st.end_seq == 1000
    assert len(st) <= 150 and st.first_seq == 1000 - len(st)
    rec = st.get(999)
    assert rec is not None and rec.item == 999
    assert st.get(0) is None
    st.truncate(990)
    assert st.end_seq == 990
    assert [r.seq for r in st.since(985)] == [985, 986, 987, 988, 989]


class FakeClock:
    """Wall time that moves only when the player sleeps; records every sleep."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> bool:
        self.sleeps.append(seconds)
        self.now += seconds
        return False


def test_playing_follows_the_capture_clock_and_shortens_idle_stretches() -> None:
    from amqpcli.codec.frames import FrameReader, encode_protocol_header
    from amqpcli.tui.sources.replay import MAX_IDLE, Loaded, ReplaySource

    header = FrameReader().feed(encode_protocol_header("amqp"))[0]
    # Three items; a 40-second silence between the second and the third.
    times = [1000.0, 1000.05, 1040.05]
    recs = [FrameRecord(i, t, "c0", "client" if i % 2 == 0 else "server", header)
            for i, t in enumerate(times)]
    clock = FakeClock()
    src = ReplaySource(loaded=Loaded(records=recs), clock=clock.time, sleep=clock.sleep)
    src.play()
    assert src._play_thread is not None
    src._play_thread.join()  # the fake clock never waits for real
    assert src.finished.is_set()
    assert src.controller is not None and src.controller.position == 3
    assert not src.playing
    # Played at speed 1 the 40 s silence would take 40 s; it takes MAX_IDLE: the first
    # gap (50 ms) as it was, then one second for the silence, in steps of at most 50 ms.
    assert clock.now == pytest.approx(0.05 + MAX_IDLE, abs=1e-6)
    assert clock.sleeps and max(clock.sleeps) <= 0.05 + 1e-9


def test_playing_at_double_speed_halves_the_waits() -> None:
    from amqpcli.codec.frames import FrameReader, encode_protocol_header
    from amqpcli.tui.sources.replay import Loaded, ReplaySource

    header = FrameReader().feed(encode_protocol_header("amqp"))[0]
    recs = [FrameRecord(i, 1000.0 + i * 0.2, "c0", "client", header) for i in range(4)]
    clock = FakeClock()
    src = ReplaySource(loaded=Loaded(records=recs), speed=2.0, clock=clock.time,
                       sleep=clock.sleep)
    src.play()
    assert src._play_thread is not None
    src._play_thread.join()
    assert src.controller is not None and src.controller.position == 4
    assert clock.now == pytest.approx(0.3, abs=1e-6)  # 0.6 s of capture at speed 2
