"""A connection whose both directions closed lets go of its frame readers and engine
feed (`Dissector._handlers`): a capture of many short connections must not keep what
each one was reading with. Its records and its end-of-capture figures stay."""

from __future__ import annotations

from pathlib import Path

from tests.dissect.helpers import basic, dissect, write_connections


def test_closed_connections_keep_no_readers(tmp_path: Path) -> None:
    cap = write_connections(tmp_path / "many.pcapng", [basic(2) for _ in range(5)])
    res = dissect(Path(cap))
    dis = res.dissector
    assert len(dis.conns) == 5 and all(len(c.closed) == 2 for c in dis.conns)
    assert set(dis._handlers.values()) == {None}  # nothing open is left to read with
    assert [d.outcome for d in res.deliveries] == ["accepted"] * 10
    assert all(c.deliveries == 2 for c in dis.conns)
