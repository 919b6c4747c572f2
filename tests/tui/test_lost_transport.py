"""A connection whose transport ended without the AMQP close exchange (a broker killed
mid-transfer: its kernel ends both TCP streams, with FIN or RST, and no close was sent)
says so, `[opened, lost]`, as docs/tui.md has it, and how each stream ended, as
`pcap-dump --connections` says `no close` and `tcp: client fin, server fin`; one that
closed stays `[closed]`."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.capture.tcp import S2C
from amqpcli.codec import composites as c
from amqpcli.tui import adapter
from tests.dissect.helpers import Script, write
from tests.tui.replaying import replayed


def _killed(tmp_path: Path, **kw: object) -> Path:
    s = Script().open().sender_link()
    s.at(1.0).transfer(0)
    s.at(1.01).dispose(0, c.Accepted())
    s.at(1.02).transfer(1)  # the broker dies here: no close from either side
    return write(tmp_path / "killed.pcapng", s, **kw)  # type: ignore[arg-type]


def _tree(src: object) -> object:
    (crow,) = src.snapshot(None, None, src.now()).tree  # type: ignore[attr-defined]
    return crow


def _fields(src: object) -> dict[str, tuple[str, str]]:
    cd = src.snapshot(None, None, src.now(), conn="c1").conn  # type: ignore[attr-defined]
    return {k: (a, b) for k, a, b in cd.fields}


@pytest.mark.parametrize(("kw", "ends"), [
    ({}, ("fin", "fin")), ({"rst": S2C}, ("reset-by-peer", "rst"))])  # (the server reset it)
def test_a_transport_that_ended_without_a_close_is_lost(
        tmp_path: Path, kw: dict[str, object], ends: tuple[str, str]) -> None:
    src = replayed(_killed(tmp_path, **kw))
    crow = _tree(src)
    assert crow.label.startswith("c1 [opened, lost] ")  # type: ignore[attr-defined]
    assert (f"the transport ended without a close: client {ends[0]}, server {ends[1]}"
            in crow.warnings)  # type: ignore[attr-defined]
    (srow,) = crow.sessions  # type: ignore[attr-defined]
    assert srow.label == "session ch 0/0 [mapped, connection lost]"
    assert _fields(src)["stream ended"] == (f"{ends[0]}, no close", f"{ends[1]}, no close")


def test_a_proxied_connection_that_tcp_closed_without_a_close_is_lost(
        tmp_path: Path) -> None:
    """The proxy calls a connection whose two TCP streams ended `closed`: without the
    AMQP close exchange that is no close (it read `[opened, closed]`, no warning)."""
    src = replayed(_killed(tmp_path))
    cw = dict(src.connections())["c1"]
    cw.ended = "closed"  # as the proxy source marks it
    assert adapter.conn_state(cw) == "opened, lost"


def test_a_connection_that_closed_is_not_lost(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    s.at(1.0).transfer(0)
    s.at(1.01).dispose(0, c.Accepted())
    src = replayed(write(tmp_path / "closed.pcapng", s.close()))
    crow = _tree(src)
    assert crow.label.startswith("c1 [closed] ")  # type: ignore[attr-defined]
    assert crow.warnings == []  # type: ignore[attr-defined]
    assert _fields(src)["stream ended"] == ("fin", "fin")
    cw = dict(src.connections())["c1"]
    cw.ended = "closed"
    assert adapter.conn_state(cw) == "closed"


def test_the_end_of_the_capture_is_not_a_lost_connection(tmp_path: Path) -> None:
    """A capture that stops while the connection is up: no FIN, no RST, nothing lost."""
    s = Script().open().sender_link()
    s.at(1.0).transfer(0)
    src = replayed(write(tmp_path / "cut.pcapng", s, fin=False))
    crow = _tree(src)
    assert crow.label.startswith("c1 [opened] ")  # type: ignore[attr-defined]
    assert crow.warnings == []  # type: ignore[attr-defined]
