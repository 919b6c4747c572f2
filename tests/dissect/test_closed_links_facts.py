"""What stays of a link or connection that can change no more, in the views that read
links and connections at the end (`closed="facts"`: `--links`, `--connections`,
`--summary`, the link and address filters): only what those views read
(`LinkFacts`, `ConnectionFacts`), not the engine's model; and in the views that read
neither (`closed="release"`), nothing of a link retired on a connection still open. A
capture of many short connections, or one connection that attaches and detaches link
after link, must not keep every engine object it made. Every view prints the same."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import pytest

from amqpcli.codec import composites as c
from amqpcli.dissect import pipeline
from amqpcli.dissect.records import ConnectionFacts, FrameRecord, LinkFacts
from amqpcli.engine.connection import Connection
from amqpcli.engine.link import Link
from amqpcli.engine.session import Session
from tests.dissect.helpers import Script, printed_as_if_kept, write, write_connections
from tests.net.clirun import amqp_in_process as run

CHURN = 6  # links attached, used and detached one after another


def _churn(s: Script, first_id: int = 0) -> Script:
    """Links attached one after another on handle 0, each with two deliveries (one
    accepted, one rejected), then detached for good by both sides."""
    did = first_id
    for k in range(CHURN):
        s.sender_link(f"l{k}", f"q{k % 2}", 0, credit=10)
        s.transfer(did, f"m{did}", tag=b"d%d" % did).dispose(did, c.Accepted())
        did += 1
        s.transfer(did, f"m{did}", tag=b"d%d" % did).dispose(
            did, c.Rejected(error=c.Error(condition="amqp:decode-error")))
        did += 1
        s.c(c.Detach(handle=0, closed=True)).s(c.Detach(handle=0, closed=True))
    return s


def _kinds(s: Script) -> Script:
    """A refused link, a link suspended (detached closed=false) then resumed and closed,
    and one left attached (to its session's end or its connection's close)."""
    s.refused_link("refused", "nowhere", handle=1)
    s.sender_link("suspended", "q9", 2, credit=5)
    s.transfer(100, "in doubt", handle=2, tag=b"s1")
    s.c(c.Detach(handle=2, closed=False)).s(c.Detach(handle=2, closed=False))
    s.sender_link("suspended", "q9", 2, credit=5)
    s.c(c.Detach(handle=2, closed=True)).s(c.Detach(handle=2, closed=True))
    return s.sender_link("left", "q8", 3, credit=5)


def _many(tmp_path: Path) -> str:
    """Three connections closed both ways: link churn, and links of every kind, their
    ends told apart (a session's end, the connection's close, a close with an error)."""
    a = _kinds(_churn(Script().sasl_plain().open())).close()
    b = _kinds(Script().open()).c(c.End()).s(c.End()).close()
    d = _kinds(Script().open())
    d.c(c.Close(error=c.Error(condition="amqp:internal-error", description="boom")))
    d.s(c.Close())
    return write_connections(tmp_path / "many.pcapng", [a, b, d])


def _open(tmp_path: Path) -> str:
    """One connection that never closes, its links churning."""
    return str(write(tmp_path / "open.pcapng", _kinds(_churn(Script().open())), fin=False))


class _Made:
    """Weak references to every engine Connection, Session and Link the records of a
    reading showed: which of them are still alive, wherever the other tests left theirs."""

    def __init__(self) -> None:
        self.refs: list[weakref.ref[Any]] = []
        self._by_id: dict[int, weakref.ref[Any]] = {}  # (an id is reused once freed)

    def see(self, rec: Any) -> None:
        model = getattr(rec.conn.observer, "connection", None)
        for x in [model, *(getattr(ev, name, None) for ev in getattr(rec, "events", ())
                           for name in ("link", "session"))]:
            known = self._by_id.get(id(x))
            if x is not None and (known is None or known() is not x):
                self._by_id[id(x)] = ref = weakref.ref(x)
                self.refs.append(ref)

    def alive(self, *classes: type) -> int:
        gc.collect()
        return sum(1 for r in self.refs if r().__class__ in classes)


def _read(path: str, made: _Made | None = None, **kw: Any) -> pipeline.Dissector:
    """Read as the views do: each record let go once read (records hold the engine's
    events)."""
    dis = pipeline.Dissector(**kw)
    for rec in dis.read(path):
        if made is not None:
            made.see(rec)
    return dis


def _before_the_end(path: str, made: _Made | None = None, **kw: Any) -> pipeline.Dissector:
    """Read up to the last frame: what the capture's end (which ends every connection
    still open) has not touched yet."""
    frames = sum(1 for r in pipeline.Dissector().read(path) if isinstance(r, FrameRecord))
    dis = pipeline.Dissector(**kw)
    for rec in dis.read(path):
        if made is not None:
            made.see(rec)
        frames -= isinstance(rec, FrameRecord)
        if not frames:
            break
    rec = None
    return dis


def test_a_closed_connection_keeps_only_facts(tmp_path: Path) -> None:
    made = _Made()
    conns = _read(_many(tmp_path), made, closed="facts").conns
    assert len(conns) == 3 and all(len(x.closed) == 2 for x in conns)
    assert all(x.observer is None and x.facts.__class__ is ConnectionFacts for x in conns)
    assert [len(x.links) for x in conns] == [CHURN + 3, 3, 3]  # (resumed: the same link)
    assert all(ls.link.__class__ is LinkFacts for x in conns for ls in x.links)
    assert conns[2].model.close["client"].error.description == "boom"
    assert conns[0].model.sasl_mechanism == "PLAIN"
    assert len(made.refs) > 10 and made.alive(Connection, Session, Link) == 0
    made = _Made()
    kept = _read(_many(tmp_path), made)  # (the default keeps them: the TUI shows them)
    assert made.alive(Connection, Session, Link) > 10 and kept.conns[0].facts is None


@pytest.mark.parametrize("closed", ["facts", "release"])
def test_retired_links_of_an_open_connection_go(tmp_path: Path, closed: str) -> None:
    made = _Made()
    (conn,) = _before_the_end(_open(tmp_path), made, closed=closed).conns
    assert conn.observer is not None and conn.facts is None  # (still open)
    kinds = [ls.link.__class__.__name__ for ls in conn.links]
    if closed == "facts":
        # every link with its figures; those retired by a detach as facts, the one left
        # attached as the engine's own (the suspended one resumed on the same Link)
        assert [ls.name for ls in conn.links] == [f"l{k}" for k in range(CHURN)] + [
            "refused", "suspended", "left"]
        assert kinds == ["LinkFacts"] * (CHURN + 2) + ["Link"]
        assert [ls.deliveries for ls in conn.links[:CHURN]] == [2] * CHURN
    else:
        assert [ls.name for ls in conn.links] == ["left"]
    # the engine holds what is still attached, and the one a later attach may still
    # answer, no more: not one Link per link ever attached
    assert made.alive(Link) <= 2 < len(made.refs)


def test_a_link_suspended_stays_the_engines(tmp_path: Path) -> None:
    # detached with closed=false by both: it may be resumed, so it is not retired
    s = Script().open().sender_link("s", "q", 0)
    s.transfer(0, "x").c(c.Detach(handle=0, closed=False)).s(c.Detach(handle=0, closed=False))
    path = str(write(tmp_path / "susp.pcapng", s, fin=False))
    (ls,) = _before_the_end(path, closed="facts").conns[0].links
    assert ls.link.__class__ is Link and not ls.link.retired


VIEWS = [[], ["--deliveries"], ["--json"], ["--links"], ["--links", "--json"],
         ["--connections"], ["--connections", "--json"], ["--summary"],
         ["--summary", "--json"], ["--address", "q1"], ["--address", "q1", "--links"],
         ["--link", "l3", "--deliveries"], ["--link", "l*", "--summary"],
         ["--link", "suspended"], ["--address", "nowhere", "--summary"],
         ["--since", "2023-11-14T22:13:20.030Z", "--links"],
         ["--until", "2023-11-14T22:13:20.040Z", "--summary", "--link", "l*"]]


@pytest.mark.parametrize("view", VIEWS, ids=" ".join)
@pytest.mark.parametrize("capture", [_many, _open])
def test_views_print_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              view: list[str], capture: Any) -> None:
    code, out, err = printed_as_if_kept(monkeypatch, "pcap-dump", *view, capture(tmp_path))
    assert code == 0 and out, err  # (something to compare)


def test_the_views_read_the_facts(tmp_path: Path) -> None:
    # what the facts must carry shows in the end views
    code, out, _ = run("pcap-dump", "--links", _many(tmp_path))
    assert code == 0
    assert "link 'refused' (client sends)" in out and "state=refused" in out
    assert "state=ended-with-session" in out and "state=closed-with-connection" in out
    assert "deliveries 2 (" in out and "rejected=1" in out
    code, out, _ = run("pcap-dump", "--connections", _many(tmp_path))
    assert "amqp:internal-error (boom)" in out and "chose PLAIN" in out
