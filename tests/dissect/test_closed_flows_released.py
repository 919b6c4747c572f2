"""A connection whose both directions closed lets go of its frame readers and engine
feed (`Dissector._handlers`), and, for the views that read no connection's model at the
end (`closed="release"`), of its engine model and links too: a capture of many short
connections must not keep what each one was. Its records and figures stay, and every
such view prints the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.dissect.records import Conn
from tests.dissect.helpers import basic, dissect, write_connections
from tests.net.clirun import amqp_in_process as run
from tests.paths import CAPTURES_DIR


def _capture(tmp_path: Path) -> str:
    return write_connections(tmp_path / "many.pcapng", [basic(2) for _ in range(5)])


def test_closed_connections_keep_no_readers(tmp_path: Path) -> None:
    res = dissect(Path(_capture(tmp_path)))
    dis = res.dissector
    assert len(dis.conns) == 5 and all(len(c.closed) == 2 for c in dis.conns)
    assert set(dis._handlers.values()) == {None}  # nothing open is left to read with
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
    cap = _capture(tmp_path)
    released = run("pcap-dump", *view, cap)
    monkeypatch.setattr(Conn, "release", lambda self: None)
    kept = run("pcap-dump", *view, cap)
    assert released == kept and (released[1] or released[2])  # (a filter may print a note only)


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
    released = run("pcap-dump", *view, cap)
    monkeypatch.setattr(Conn, "release", lambda self: None)
    assert released == run("pcap-dump", *view, cap) and released[0] == 0, released[2]


def test_probes_that_never_sent_a_byte_leave_nothing(tmp_path: Path) -> None:
    # connections to the AMQP port that open and close (or are reset) with no byte, as a
    # port scan or a health check makes them: nothing is kept of one once both its sides
    # closed; one closed by one side only may still be read (above)
    from amqpcli.capture.writer import CaptureWriter, TcpConversation
    from amqpcli.dissect.pipeline import _Deferred

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
    assert not [h for h in res.dissector._handlers.values() if isinstance(h, _Deferred)]
