"""A capture that starts between the TCP handshake and a side's protocol header: the
roles come from the AMQP port (a header from the port's side is the server's answer), the
missed header is a `midstream` notice, not a violation, and the rest reads as usual."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dissect.helpers import basic, dissect, write


@pytest.mark.parametrize(("sasl", "skip"), [(True, 1), (False, 1)],
                         ids=["sasl-header-missed", "amqp-header-missed"])
def test_a_missed_client_header(tmp_path: Path, sasl: bool, skip: int) -> None:
    path = write(tmp_path / "cap.pcapng", basic(4, sasl=sasl), skip_first=skip)
    r = dissect(path)
    conn = r.dissector.conns[0]
    assert conn.client.endswith(":40000") and conn.server.endswith(":5672"), (
        conn.client, conn.server)
    assert r.violations == []
    notes = [n for n in r.notices if n.kind == "midstream"]
    assert [(n.side, n.conn is conn) for n in notes] == [("client", True)]
    assert conn.midstream
    assert [d.outcome for d in r.deliveries] == ["accepted"] * 4
    assert {f.side for f in r.frames} == {"client", "server"}


def test_a_capture_with_both_headers_but_no_handshake_has_no_notice(tmp_path: Path) -> None:
    path = write(tmp_path / "cap.pcapng", basic(2), handshake=False)
    r = dissect(path)
    assert r.violations == [] and [n for n in r.notices if n.kind == "midstream"] == []
    assert not r.dissector.conns[0].midstream
