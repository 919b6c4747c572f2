"""A connection whose both directions closed lets go of its frame readers and engine
feed (`Dissector._handlers`), and, for the views that read no connection's model at the
end (`closed="release"`), of its engine model and links too; `pcap-dump`'s views that
print connections as they go forget it altogether (`closed="forget"`: what their notes
and exit status read of it is tallied, `SeenConns`). A capture of many short
connections must not keep what each one was, and every such view prints the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.dissect.records import Conn
from tests.dissect.helpers import basic, dissect, printed_as_if_kept, write_connections
from tests.paths import CAPTURES_DIR


def _capture(tmp_path: Path) -> str:
    return write_connections(tmp_path / "many.pcapng", [basic(2) for _ in range(5)])


def test_closed_connections_keep_no_readers(tmp_path: Path) -> None:
    res = dissect(Path(_capture(tmp_path)))
    dis = res.dissector
    assert len(dis.conns) == 5 and all(len(c.closed) == 2 for c in dis.conns)
    assert dis._handlers == {}  # nothing open is left to read with, nor its entry
    assert [d.outcome for d in res.deliveries] == ["accepted"] * 10
    assert all(c.deliveries == 2 and c.links and c.observer for c in dis.conns)


def test_nor_their_models_where_no_view_reads_them(tmp_path: Path) -> None:
    res = dissect(Path(_capture(tmp_path)), closed="release")
    assert [d.outcome for d in res.deliveries] == ["accepted"] * 10
    conns = res.dissector.conns
    assert all(c.observer is None and not c.links for c in conns)
    assert [c.deliveries for c in conns] == [2] * 5 and all(c.frames["client"] for c in conns)


@pytest.mark.parametrize("view", [[], ["--deliveries"], ["--json"], ["--deliveries", "--json"],
                                  ["--messages"], ["--deliveries", "--bodies"],
                                  ["--links"], ["--connections"], ["--summary"],
                                  ["--address", "nowhere"], ["--link", "l*", "--deliveries"]])
def test_views_print_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              view: list[str]) -> None:
    _code, out, err = printed_as_if_kept(monkeypatch, "pcap-dump", *view, _capture(tmp_path))
    assert out or err  # (a filter may print a note only)


def test_a_half_closed_flow_not_yet_read_is_read_after(tmp_path: Path) -> None:
    # A flow on the AMQP port with no protocol header: the client's FIN comes before any
    # byte of it; the server's frames after it are read all the same.
    from amqpcli.capture.writer import ACK, C2S, FIN, S2C, CaptureWriter, TcpConversation
    from amqpcli.codec import composites as c
    from amqpcli.codec.frames import encode_frame

    flow = c.Flow(next_incoming_id=0, incoming_window=10, next_outgoing_id=0,
                  outgoing_window=10)
    data = b"".join(encode_frame(flow, 0) for _ in range(3)) + encode_frame(c.Close(), 0)
    path = tmp_path / "half.pcapng"
    with CaptureWriter(path) as w:
        conv = TcpConversation(w)
        conv.handshake()
        conv.packet(C2S, conv.seq[C2S], flags=FIN | ACK)
        conv.seq[C2S] += 1
        conv.send(S2C, data)
        conv.packet(S2C, conv.seq[S2C], flags=FIN | ACK)
    res = dissect(path)
    assert res.names() == ["flow", "flow", "flow", "close"]


@pytest.mark.parametrize("view", [[], ["--deliveries"], ["--json"], ["--messages"], ["--links"],
                                  ["--connections"], ["--summary"]])
def test_views_of_a_0_10_capture_print_the_same(monkeypatch: pytest.MonkeyPatch,
                                                view: list[str]) -> None:
    cap = str(CAPTURES_DIR / "amqp010-qpid-python-echo.pcapng")
    code, _out, err = printed_as_if_kept(monkeypatch, "pcap-dump", *view, cap)
    assert code == 0, err


def test_probes_that_never_sent_a_byte_leave_nothing(tmp_path: Path) -> None:
    # connections to the AMQP port that open and close (or are reset) with no byte, as a
    # port scan or a health check makes them: nothing is kept of one once both its sides
    # closed; one closed by one side only may still be read (above)
    from amqpcli.capture.writer import CaptureWriter, TcpConversation

    path = tmp_path / "probes.pcapng"
    with CaptureWriter(path) as w:
        for i in range(20):
            conv = TcpConversation(w, client=("10.0.0.1", 41000 + i), server=("10.0.0.2", 5672),
                                   start_ns=1_700_000_000_000_000_000 + i * 1_000_000)
            conv.handshake()
            if i % 2:
                conv.close()
            else:
                conv.reset()
    res = dissect(path)
    assert not res.dissector.conns and not res.frames
    assert res.dissector._handlers == {}


def _bad(tmp_path: Path) -> str:
    """Four connections, all closed: two with bytes that do not decode (a frame, and
    bytes that are no frame header), two fine."""
    from amqpcli.capture.tcp import C2S

    bad_frame = b"\x00\x00\x00\x09\x02\x00\x00\x00\xff"  # (format code 0xff)
    a = basic(1).raw(C2S, bad_frame)
    b = basic(1)
    b.steps.insert(-2, (C2S, b"garbage!more", b.steps[-2][2]))
    return write_connections(tmp_path / "bad.pcapng", [basic(1), a, b, basic(2)])


@pytest.mark.parametrize("view", [[], ["--deliveries"], ["--json"], ["--messages"],
                                  ["--frames-only"], ["--connection", "c9"],
                                  ["--connection", "c2", "--deliveries"],
                                  ["--connection", "c9", "--connection", "c3", "--json"],
                                  ["--connection", "10.0.0.1:40003"],
                                  ["--connection", "10.0.0.9", "--messages"],
                                  ["--performative", "close"]], ids=" ".join)
def test_forgetting_prints_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    view: list[str]) -> None:
    code, _out, err = printed_as_if_kept(monkeypatch, "pcap-dump", *view, _bad(tmp_path))
    assert code == 8 and "2 frames could not be decoded" in err


@pytest.mark.parametrize("view", [["--messages"], ["--selector", "a = 1"],
                                  ["--connection", "c7", "--deliveries"]], ids=" ".join)
def test_forgetting_a_0_10_capture_prints_the_same(monkeypatch: pytest.MonkeyPatch,
                                                   view: list[str]) -> None:
    cap = str(CAPTURES_DIR / "amqp010-qpid-python-echo.pcapng")
    assert "note:" in printed_as_if_kept(monkeypatch, "pcap-dump", *view, cap)[2]


def test_forgotten_connections_are_tallied_not_kept(tmp_path: Path) -> None:
    from amqpcli.dissect.filters import Filter
    from amqpcli.dissect.pipeline import Dissector
    from amqpcli.dissect.seen import SeenConns

    seen = SeenConns(Filter(connections=["c2", "c9"]))
    dis = Dissector(closed="forget", on_forget=seen.add)
    for _ in dis.read(_bad(tmp_path)):
        pass
    assert dis.conns == [] and dis.made == 4  # (every one closed both ways)
    assert (seen.count, seen.labels, seen.frame_errors) == (4, "c1 to c4", 2)
    assert seen.chosen == 1 and seen.unnamed() == ["c9"]
    assert seen.flt._conn_cache == {}  # (nothing of them kept there either)


def test_the_tally_counts_bytes_skipped_as_the_exit_status_did() -> None:
    # only where no gap or mid-stream start explains them
    from amqpcli.dissect.filters import Filter
    from amqpcli.dissect.seen import SeenConns

    seen = SeenConns(Filter())
    for i, (midstream, gaps) in enumerate([(False, 0), (True, 0), (False, 2)], 1):
        c = Conn(i, f"c{i}", "10.0.0.1:1", "10.0.0.2:5672", "amqp-1.0", 0.0,
                 midstream=midstream, gaps=gaps, skipped_bytes=10 * i)
        seen.add(c)
    assert (seen.skipped_bytes, seen.chosen, seen.labels) == (10, 3, "c1 to c3")
