"""A source shown as it comes runs as long as its user likes: it keeps the open connections
and the last `--keep-ended` ended ones, so neither memory nor each refresh's walk over
the tree grows with every connection ever seen. A replay keeps them all."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from proton.utils import BlockingConnection

from amqpcli.capture import read_capture
from amqpcli.cli.app import main
from amqpcli.cli.proxy import upstream_config
from amqpcli.tui.sources.framing import CaptureFramer
from amqpcli.tui.sources.live import StreamingSource
from amqpcli.tui.sources.proxy import ProxySource
from amqpcli.tui.sources.serve import ServeSource
from amqpcli.tui.watch import Watch
from tests.dissect.helpers import basic, write_connections

N = 6  # connections in the capture, one after another


class FileStream(StreamingSource):
    """A capture file's events as a live interface's would come: one after another."""

    def __init__(self, path: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.path = path

    def _events(self) -> Iterator[Any]:
        return read_capture(self.path, ports=sorted(self.framer.ports))


def _streamed(path: str, keep_ended: int) -> FileStream:
    src = FileStream(path, keep_ended=keep_ended)
    src._run()  # (the reading thread's loop, here: no app to tell)
    assert src.error is None
    return src


def _records(store: Any) -> list[tuple[str, str, float, str]]:
    return [(r.conn, r.side, r.time, type(r.item).__name__) for r in store.since(0)]


@pytest.fixture
def capture(tmp_path: Path) -> str:
    return write_connections(tmp_path / "six.pcapng", [basic(3) for _ in range(N)])


def test_a_stream_keeps_the_last_ended_connections(capture: str) -> None:
    src = _streamed(capture, keep_ended=2)
    assert [k for k, _ in src.connections()] == ["c5", "c6"]
    assert src.watch.dropped == N - 2
    assert src.watch.counts() == "2 connection(s), 4 ended earlier not kept"
    # the two kept are whole: every delivery, as pcap-dump sees them
    for _, cw in src.connections():
        assert [ls.deliveries for ls in cw.links] == [3]
    # and the framer let go of every connection it read: they all ended
    assert src.framer._dis.conns == [] and src.framer._dis.made == N
    assert src.framer._open == {} and src.framer._keys == {} and src.framer.labels == {}


def test_forgetting_changes_no_frame(capture: str) -> None:
    """The frame log holds what it held when the framer kept every connection: the same
    items, stream ends included, in the same order."""
    kept: list[tuple[str, str, float, Any]] = []
    framer = CaptureFramer(lambda k, s, t, item: kept.append((k, s, t, item)), lambda _: None)
    for ev in read_capture(capture, ports=sorted(framer.ports)):
        framer.event(ev)
    assert len(framer._dis.conns) == N  # (a replay's framer keeps them)
    assert framer._open == {}  # (but looks no more at those that ended, for their ends)
    src = _streamed(capture, keep_ended=0)
    assert _records(src.store) == [(k, s, t, type(i).__name__) for k, s, t, i in kept]
    assert src.connections() == [] and src.watch.dropped == N


def test_the_default_keeps_a_hundred() -> None:
    w = Watch(keep_ended=100)
    for i in range(150):
        w.conn(f"c{i}")
        w.end(f"c{i}")
        w.end(f"c{i}")  # (said twice: counted once)
    w.conn("open")
    assert len(w.conns) == 101 and w.dropped == 50
    assert list(w.conns) == [f"c{i}" for i in range(50, 150)] + ["open"]
    assert w.counts() == "101 connection(s), 50 ended earlier not kept"
    everything = Watch()  # a replay's
    for i in range(150):
        everything.conn(f"c{i}")
        everything.end(f"c{i}")
    assert len(everything.conns) == 150 and everything.counts() == "150 connection(s)"


def _until(what: Any, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not what():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


@pytest.mark.integration
def test_a_proxy_and_a_served_broker_keep_the_last_ended(free_port: int) -> None:
    """Proton clients open and close, one after another, through our proxy to our served
    broker: both keep the last two."""
    serve = ServeSource(("127.0.0.1", free_port), keep_ended=2)
    serve.start(None)
    assert serve.ready.wait(30) and serve.error is None
    proxy = ProxySource(("127.0.0.1", 0), upstream_config(f"amqp://127.0.0.1:{free_port}"),
                        keep_ended=2)
    proxy.start(None)
    try:
        assert proxy.ready.wait(30) and proxy.error is None and proxy.bound is not None
        port = proxy.bound[1]
        for _ in range(5):
            BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=30).close()
        _until(lambda: proxy.watch.dropped == 3 and serve.watch.dropped == 3)
        with proxy.lock:
            assert [k for k, _ in proxy.connections()] == ["c4", "c5"]
            assert "2 connection(s), 3 ended earlier not kept" in proxy.status()
        with serve.lock:
            assert len(serve.connections()) == 2
            assert "2 connection(s), 3 ended earlier not kept" in serve.status()
        # an open one stays, however many end after it
        held = BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=30)
        try:
            _until(lambda: len(proxy.connections()) == 3)
            for _ in range(3):
                BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=30).close()
            _until(lambda: proxy.watch.dropped == 6)
            with proxy.lock:
                assert [k for k, _ in proxy.connections()] == ["c6", "c8", "c9"]
        finally:
            held.close()
    finally:
        proxy.stop()
        serve.stop()


def test_the_option_reaches_the_live_sources(built: list[Any],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    main(["tui", "--serve", "--listen", "127.0.0.1:0", "--keep-ended", "7"])
    main(["tui", "amqp://127.0.0.1:1", "--proxy", "0", "--keep-ended", "0"])
    main(["tui", "--serve", "--listen", "127.0.0.1:0"])
    assert [s.watch.keep_ended for s in built] == [7, 0, 100]


@pytest.mark.parametrize(("args", "error"), [
    (["--serve", "--keep-ended", "-1"], "--keep-ended must be 0 or more"),
    (["amqp://127.0.0.1:1/q", "--recv", "--keep-ended", "5"],
     ("--keep-ended goes with a source shown as it comes, of many connections (--live, "
     "--proxy, --serve, a pipe: --pcap FIFO or -)")),
])
def test_the_option_is_checked(built: list[Any], capsys: pytest.CaptureFixture[str],
                               args: list[str], error: str) -> None:
    with pytest.raises(SystemExit) as e:
        main(["tui", *args])
    assert e.value.code == 2
    assert capsys.readouterr().err == f"amqp: error: {error}\n"


def test_a_replayed_file_keeps_every_connection(built: list[Any], capture: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["tui", "--pcap", capture, "--keep-ended", "5"])
    assert e.value.code == 2
    assert "--keep-ended goes with a source shown as it comes" in capsys.readouterr().err


def test_the_command_line_default_is_the_watch_s() -> None:
    from amqpcli.cli.tui import KEEP_ENDED as CLI_DEFAULT
    from amqpcli.tui.watch import KEEP_ENDED

    assert CLI_DEFAULT == KEEP_ENDED


def test_the_rates_follow_the_links_shown() -> None:
    """The rate meter forgets the links no longer in the tree (it kept a mark for every
    link ever shown)."""
    from amqpcli.tui.adapter import RateMeter, tree_rows

    rates = RateMeter()
    rates.rate("c1|s0.0|client|a", 3, 1.0)
    rates.rate("c2|s0.0|client|b", 5, 1.0)
    assert tree_rows([], 2.0, rates, False) == []
    assert rates._mark == {} and rates._rate == {}
