"""An AMQP 0-10 capture in the TUI (it opened as "0 frames", with only a notice that it had
no AMQP 1.0 frames): the frame log has the lines pcap-dump prints for it; the tree has the
connection with its protocol, its sessions and the destinations messages went to, counted
as pcap-dump counts them; a destination shows its subscription and unsettled messages, a
message its timeline and body; a notice says what is AMQP 1.0 only."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from amqpcli.amqp010 import PROTOCOL_HEADER, Command, Control, Struct, encode_assembly
from amqpcli.amqp010.values import SequenceSet
from amqpcli.tui.app import AmqpTui
from amqpcli.tui.sources.replay import ReplaySource, load_capture
from amqpcli.tui.watch import EndOfStream
from amqpcli.tui.widgets.framelog import FrameLog
from amqpcli.tui.widgets.link import LinkPanel
from tests.dissect.helpers import C2S, S2C, Script, write
from tests.net.clirun import amqp_in_process
from tests.tui.replaying import replay_app, replayed
from tests.tui.screen import screen_text

PASSWORD = b"Xq9zKw"


@pytest.fixture
def echo(testdata: Path) -> Path:
    return testdata / "captures" / "amqp010-qpid-python-echo.pcapng"


def _subscribed(path: Path) -> Path:
    """PLAIN login; the client subscribes to destination d1 (queue q1) with credit for one
    message; the server sends two (the second beyond credit); the client accepts the first."""
    s = Script()

    def c(method: Control | Command, ch: int = 0, **kw: object) -> None:
        s.raw(C2S, encode_assembly(method, ch, **kw))  # type: ignore[arg-type]

    def srv(method: Control | Command, ch: int = 0, **kw: object) -> None:
        s.raw(S2C, encode_assembly(method, ch, **kw))  # type: ignore[arg-type]

    s.raw(C2S, PROTOCOL_HEADER).raw(S2C, PROTOCOL_HEADER)
    srv(Control.make("connection.start", mechanisms=["PLAIN"]))
    c(Control.make("connection.start-ok", mechanism="PLAIN", response=b"\0alice\0" + PASSWORD))
    srv(Control.make("connection.tune", channel_max=10))
    c(Control.make("connection.tune-ok", channel_max=10))
    c(Control.make("connection.open", virtual_host="/"))
    srv(Control.make("connection.open-ok"))
    c(Control.make("session.attach", name=b"s1"), 1)
    srv(Control.make("session.attached", name=b"s1"), 1)
    c(Control.make("session.command-point", command_id=0, command_offset=0), 1)
    srv(Control.make("session.command-point", command_id=0, command_offset=0), 1)
    c(Command.make("message.subscribe", queue="q1", destination="d1"), 1)
    c(Command.make("message.set-flow-mode", destination="d1", flow_mode=0), 1)  # credit
    c(Command.make("message.flow", destination="d1", unit=0, value=1), 1)
    c(Command.make("message.flow", destination="d1", unit=1), 1)  # bytes: no limit
    for i in range(2):
        srv(Command.make("message.transfer", destination="d1"), 1,
            header=(Struct.make("message.delivery-properties", routing_key="q1"),),
            body=f"body {i}".encode())
    c(Command.make("message.accept", transfers=SequenceSet.of(0)), 1)
    return write(path, s)


def _frame_lines(app: AmqpTui, src: ReplaySource) -> list[str]:
    log = app.query_one(FrameLog)
    return [log.line_text(r) for r in src.controller.records[: src.controller.position]  # type: ignore[union-attr]
            if not isinstance(r.item, EndOfStream)]


def test_the_frame_log_has_pcap_dumps_lines_and_the_tree_the_sessions(echo: Path) -> None:
    loaded = load_capture(echo)
    assert any(n.startswith("c1 (") and "speaks AMQP 0-10" in n and "AMQP 1.0 only" in n
               for n in loaded.notes), loaded.notes
    src = replayed(echo)

    async def run() -> tuple[list[str], list[str], str]:
        app = AmqpTui(src)
        async with app.run_test(size=(140, 44)) as pilot:
            await pilot.pause()
            app.pull()
            (conn,) = app.conn_tree.conn_rows
            tree = [conn.label] + [s.label for s in conn.sessions] + [
                f"{lk.role} {lk.name} d:{lk.deliveries} u:{lk.unsettled}"
                for s in conn.sessions for lk in s.links]
            return _frame_lines(app, src), tree, str(app.sub_title)

    lines, tree, title = asyncio.run(run())
    code, out, _ = amqp_in_process("pcap-dump", str(echo))
    assert code == 0 and lines == out.splitlines()
    assert title.endswith(": 32 frames, 1 connection(s)")
    assert tree == [
        "c1 [closed] AMQP 0-10 127.0.0.1:51736 -> 127.0.0.1:5682",
        "session lab-session ch 1 [closed with the connection]",
        "session lab-idle ch 2 [detached]",
        # as pcap-dump -d: the server's echoes were never completed
        "sender echo d:3 u:0", "receiver echo d:3 u:3", "sender lab-queue d:1 u:0",
    ]


def test_a_destination_its_subscription_and_a_message(tmp_path: Path) -> None:
    app = replay_app(_subscribed(tmp_path / "sub.pcapng"))

    async def run() -> tuple[str, str, str]:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            app.pull()
            (conn,) = app.conn_tree.conn_rows
            assert len(conn.violations) == 1 and "beyond message credit" in conn.violations[0]
            (link,) = conn.sessions[0].links
            assert (link.role, link.name, link.deliveries, link.unsettled, link.credit) == (
                "receiver", "d1", 2, 1, 0)
            assert app.select_link(link.key)
            await pilot.pause()
            app.pull()
            await pilot.pause()
            panel = app.query_one(LinkPanel)
            assert panel.detail is not None and not panel.query_one("#link-termini").display
            flow = dict(panel.detail.flow)
            assert flow["subscription"] == "queue q1" and flow["flow-mode"] == "credit"
            assert flow["credit"] == "0 messages" and flow["states"] == "accepted 1, unsettled 1"
            assert [r.delivery_id for r in panel.detail.unsettled] == ["1"]
            link_tab = screen_text(app)
            app.delivery_key = panel.detail.unsettled[0].key
            await pilot.press("2")
            app.pull()
            await pilot.pause()
            delivery_tab = screen_text(app)
            assert app.conn_tree.select_key("c1")
            await pilot.press("1")
            await pilot.pause()
            app.pull()
            await pilot.pause()
            log = "\n".join(_frame_lines(app, app.source))  # type: ignore[arg-type]
            return link_tab, delivery_tab, screen_text(app) + log

    link_tab, delivery_tab, conn_tab = asyncio.run(run())
    assert "connection.start-ok" in conn_tab and "message.accept" in conn_tab  # the log
    assert "d1   server → client" in link_tab
    assert "message.transfer 1 to d1 on session s1" in delivery_tab
    assert "routing-key: q1" in delivery_tab and 'body: b"body 1"' in delivery_tab
    assert "AMQP 0-10   [opened]" in conn_tab and "mechanism: PLAIN" in conn_tab
    assert "virtual-host: /" in conn_tab
    assert PASSWORD.decode() not in conn_tab and "alice" in conn_tab  # masked, in the log too


def test_stepping_back_restores_the_destinations(tmp_path: Path) -> None:
    path = _subscribed(tmp_path / "sub.pcapng")
    src = ReplaySource(loaded=load_capture(path), interval=4)  # checkpoints every 4 records
    fresh = ReplaySource(loaded=load_capture(path))
    c, f = src.controller, fresh.controller
    assert c is not None and f is not None
    c.seek(len(c))
    assert len(c.checkpoints) >= 3
    for target in (len(c) - 3, 16, 3):
        c.seek(target)
        f.seek(0)
        f.seek(target)
        assert _tree(src) == _tree(fresh), target


def _tree(src: ReplaySource) -> list[object]:
    from amqpcli.tui.adapter import RateMeter, tree_rows

    with src.lock:
        rows = tree_rows(src.connections(), 0.0, RateMeter(), False)
    return [(r.label, [(s.label, [(lk.key, lk.deliveries, lk.unsettled, lk.credit)
                                  for lk in s.links]) for s in r.sessions]) for r in rows]
