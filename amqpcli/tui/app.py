"""The Textual app: one layout for every source, refreshed from the model at a steady rate.

Layout: the connection tree on the left; on the right three tabs (link, delivery, frames);
a replay bar when the source is a capture; the footer with the keys that work here.

The app never repaints per frame: a timer (10 Hz by default) asks the source for a
`Snapshot` of what is selected, under the source's lock, and hands it to the widgets.
Replay moves and client actions run in thread workers so the UI never waits on them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, TabbedContent, TabPane

from amqpcli.errors import Exit, UserError
from amqpcli.render.types import one_line
from amqpcli.tui import keys
from amqpcli.tui.messages import DeliverySelected, LinkSelected, SourceFailed, SourceNotice
from amqpcli.tui.sources.base import Source, Unsupported
from amqpcli.tui.store import FrameRecord
from amqpcli.tui.widgets.delivery import DeliveryPanel
from amqpcli.tui.widgets.framelog import FilterCheck, Formatter, FrameLog
from amqpcli.tui.widgets.help import HelpScreen
from amqpcli.tui.widgets.link import LinkPanel, UnsettledTable
from amqpcli.tui.widgets.replaybar import ReplayBar
from amqpcli.tui.widgets.safe import printable
from amqpcli.tui.widgets.tree import ConnectionTree

WIDE = 110  # columns from which the tree and the tabs sit side by side


def default_formatter(source: Source) -> Formatter:
    """The frame log's lines, `-` for the time of a connection the source has no times
    of (asked at each line: a replay knows them once loaded)."""
    from amqpcli.tui.adapter import frame_line

    def line(rec: FrameRecord) -> Text:
        return frame_line(rec, source.untimed)

    return line


class AmqpTui(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "amqp tui"
    BINDINGS = keys.bindings()
    # The screen's class by its width: below WIDE columns the tree goes above the tabs.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE, "-wide")]  # noqa: RUF012 - as Textual declares it

    def __init__(
        self,
        source: Source,
        *,
        refresh_hz: float = 10.0,
        formatter: Formatter | None = None,
        credit_step: int = 10,
    ) -> None:
        super().__init__()
        self.source = source
        self.refresh_hz = refresh_hz
        self.formatter = formatter or default_formatter(source)
        self.credit_step = credit_step
        self.link_key: str | None = None
        self.conn_key: str | None = None  # the connection under the tree's cursor
        # The delivery opened (Enter on a row of the unsettled table): the Delivery tab
        # shows it until another is opened, whatever the table's cursor does meanwhile
        # (rows leave it as their deliveries settle) and whichever link is selected.
        self.delivery_key: str | None = None
        self.failure: UserError | None = None  # why the source stopped for good
        self.crashed: BaseException | None = None  # what ended the app, a bug of ours
        self.refreshes = 0
        self.sub_title = source.title

    def get_driver_class(self) -> type[Driver]:
        """Textual's, but on a POSIX terminal one that cannot hang when the terminal goes
        (`amqpcli.tui.terminal`)."""
        from textual.drivers.linux_driver import LinuxDriver

        from amqpcli.tui.terminal import TerminalDriver

        driver = super().get_driver_class()
        return TerminalDriver if driver is LinuxDriver else driver

    # -- stopping ---------------------------------------------------------------------------

    def on_load(self) -> None:
        """SIGTERM (`kill`, `timeout`) ends the app through its own loop, as `q` does: the
        command-wide handler raises KeyboardInterrupt wherever the main thread is, which
        inside the app's start-up (mounting widgets) surfaced as an error of the app."""
        import asyncio
        import signal

        def terminated() -> None:
            # (the SIGCONT that timeout(1) sends after its SIGTERM, and a hang-up after its
            # SIGHUP, resumes nothing: `TerminalDriver`)
            self.exit(return_code=TERMINATED)

        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, terminated)
        if signal.getsignal(signal.SIGHUP) is not signal.SIG_IGN:  # (nohup)
            loop.add_signal_handler(signal.SIGHUP, terminated)  # its terminal closed

    def _fatal_error(self) -> None:
        """A bug of ours: the app ends and `run` reports it as one line (with --debug, a
        traceback without local variables). Textual's own crash screen prints each frame's
        local variables: frame bytes, SASL credentials."""
        self.crashed = self._exception
        self.bell()
        self._close_messages_no_wait()

    def action_interrupt(self) -> None:
        """Ctrl-C: the terminal gives it to the app as a key, not SIGINT. It quits as `q`
        does, and the command then exits as interrupted (130), as after SIGTERM."""
        self.exit(return_code=TERMINATED)

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            yield ConnectionTree(id="tree")
            with TabbedContent(id="tabs", initial="link"):
                with TabPane("Link", id="link"):
                    yield LinkPanel(id="link-panel")
                with TabPane("Delivery", id="delivery"):
                    yield DeliveryPanel(id="delivery-panel")
                with TabPane("Frames", id="frames"), Vertical():
                    yield Input(placeholder="filter: word -word side:client ch:0 conn:…", id="filter",
                                validators=[FilterCheck()])
                    yield FrameLog(self.formatter, id="log")
        if self.source.kind == "replay":
            yield ReplayBar(id="replay-bar")
        yield Footer()

    def on_mount(self) -> None:
        # Kept, not queried: while a modal is on top, queries search the modal.
        self.conn_tree = self.query_one(ConnectionTree)
        self.link_panel = self.query_one(LinkPanel)
        self.unsettled = self.query_one(UnsettledTable)
        self.delivery_panel = self.query_one(DeliveryPanel)
        self.log_view = self.query_one(FrameLog)
        self.tabs = self.query_one(TabbedContent)
        self.filter_input = self.query_one("#filter", Input)
        self.footer = self.query_one(Footer)
        self.footer.compact = self.size.width < WIDE
        bars = self.query(ReplayBar)
        self.replay_bar = bars.first() if bars else None
        self.log_view.attach(self.source.frames)
        self.conn_tree.focus()
        try:
            self.source.start(self)
        except Exception as e:  # noqa: BLE001 - a source that cannot start says why, in one line
            self.failure = e if isinstance(e, UserError) else UserError(str(e), Exit.FAILURE)
            self.say(str(e), "error", timeout=30)
        self.set_interval(1.0 / self.refresh_hz, self.pull)
        self.pull()

    @property
    def failed(self) -> str | None:
        """The source's failure as the title shows it (None while it works)."""
        return None if self.failure is None else str(self.failure)

    def on_unmount(self) -> None:
        self.source.stop()

    def on_resize(self, event: events.Resize) -> None:
        footer = getattr(self, "footer", None)
        if footer is not None:
            footer.compact = event.size.width < WIDE  # less room between the keys

    # -- the steady refresh -----------------------------------------------------------------

    def pull(self) -> None:
        """Copy the selected parts of the model into the widgets."""
        if not hasattr(self, "conn_tree") or not self.link_panel.is_attached:
            return  # not mounted yet, or shutting down
        snap = self.source.snapshot(self.link_key, self.delivery_key, self.source.now(),
                                    conn=self.conn_key)
        try:
            self.conn_tree.update_rows(snap.tree)
            self.link_panel.show(snap.link, snap.conn)
            self.delivery_panel.show(snap.delivery, self.delivery_key)
        except NoMatches:  # a timer tick racing the app's shutdown
            return
        log = self.log_view
        log.sync()
        status = self.source.status()
        if log.frozen:
            status += f"  [frozen: {log.pending} new]"
        if self.failed:
            status = self.failed
        self.sub_title = one_line(status)
        if self.replay_bar is not None:
            src: Any = self.source
            self.replay_bar.show(*src.bar_state())
        self.refreshes += 1

    def say(self, text: str, severity: str = "information", timeout: float | None = None) -> None:
        """A notification whose text may come from a peer (an error description, a link
        name, a file name): never read as markup, control characters escaped (once: an
        error description comes escaped already)."""
        self.notify(one_line(text), severity=severity, timeout=timeout,  # type: ignore[arg-type]
                    markup=False)

    # -- selection --------------------------------------------------------------------------

    @on(LinkSelected)
    def _link_selected(self, event: LinkSelected) -> None:
        changed = event.key != self.link_key or event.conn != self.conn_key
        self.conn_key = event.conn
        self.link_key = event.key
        if changed:
            self.pull()

    @on(DeliverySelected)
    def _delivery_selected(self, event: DeliverySelected) -> None:
        if not event.open:
            return  # a highlight: the tab keeps what was opened
        if event.key is not None:
            self.delivery_key = event.key
        self.tabs.active = "delivery"
        self.pull()

    @on(SourceNotice)
    def _notice(self, event: SourceNotice) -> None:
        self.say(event.text, event.severity)

    @on(SourceFailed)
    def _failed(self, event: SourceFailed) -> None:
        self.failure = event.error
        self.say(event.text, "error", timeout=30)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.log_view.set_filter(event.value)
        # a term that cannot hold (side:bogus, ch:x) is ignored: said under the input
        # while typing (quoted and escaped already), and as a notice on Enter only (not
        # at each key of a half-typed one)
        problems = self.log_view.filter.problems
        self.filter_input.border_subtitle = Text("; ".join(problems)) if problems else None

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        problems = self.log_view.filter.problems
        if problems:
            self.say("filter: " + "; ".join(problems), "warning")
        self.log_view.focus()

    # -- key gating -------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        group = keys.action_group(action)
        if group == "everywhere":
            return True
        return group in self.source.key_groups

    # -- actions: everywhere ----------------------------------------------------------------

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_tab(self, tab: str) -> None:
        self.tabs.active = tab

    def action_toggle_tree(self) -> None:
        tree = self.conn_tree
        tree.display = not tree.display
        if not tree.display and tree.has_focus:
            self.screen.focus_next()

    def action_filter(self) -> None:
        self.tabs.active = "frames"
        self.filter_input.focus()

    def action_freeze(self) -> None:
        log = self.log_view
        log.set_frozen(not log.frozen)
        self.notify("frame log frozen (frames keep arriving)" if log.frozen else "frame log follows")

    def action_raw(self) -> None:
        panel = self.delivery_panel
        panel.raw = not panel.raw

    def select_link(self, key: str) -> bool:
        """Move the tree's cursor to a link (for the palette and tests)."""
        self.pull()
        if not self.conn_tree.select_key(key):
            return False
        if self.conn_tree.kind_of(key) == "link" and key != self.link_key:
            self.link_key = key
            self.pull()
        return True

    # -- actions: replay --------------------------------------------------------------------

    def action_play(self) -> None:
        self.source.toggle_play()  # type: ignore[attr-defined]

    def action_step(self, n: int) -> None:
        self._replay_move(lambda s: s.step(n))

    def action_speed(self, factor: float) -> None:
        self.source.scale_speed(factor)  # type: ignore[attr-defined]

    def action_goto(self) -> None:
        from amqpcli.tui.widgets.prompt import Prompt

        def done(text: str | None) -> None:
            if text:
                self.goto(text)

        self.push_screen(Prompt("Jump to frame N, to a connection's frame N (c3:N), or to "
                                "t+SECONDS from the start:"), done)

    def goto(self, spec: str) -> None:
        src: Any = self.source
        try:
            target = src.parse_goto(spec)
        except ValueError as e:
            self.say(str(e), "warning")
            return
        self._replay_move(lambda s: s.seek(target))

    @work(thread=True, exclusive=True, group="replay-move")
    def _replay_move(self, move: Any) -> None:
        move(self.source)
        self.call_from_thread(self.pull)

    # -- actions: our own links -------------------------------------------------------------

    def _act(self, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Unsupported as e:
            self.say(str(e), "warning")

    def action_credit(self) -> None:
        if self._need_link():
            self._act(self.source.grant_credit, self.link_key, self.credit_step)

    def action_drain(self) -> None:
        if self._need_link():
            self._act(self.source.drain, self.link_key)

    def settle_target(self) -> str | None:
        """The delivery the settle keys act on: on the Link tab the unsettled table's row
        under the cursor, elsewhere the delivery opened (the one the Delivery tab shows).

        The row is read from the table when the key is pressed: when the row under the
        cursor leaves (its delivery settled), the cursor shows the next row without a
        highlight event, and that row is the one the next key is for."""
        if self.tabs.active == "link":
            return self.unsettled.cursor_key if self.link_panel.detail is not None else None
        return self.delivery_key

    def action_settle(self, outcome: str) -> None:
        target = self.settle_target()
        if target is None:
            self.notify("select a delivery in the link's unsettled table first", severity="warning")
            return
        self._act(self.source.settle, target, outcome)
        self.pull()

    def action_send(self) -> None:
        if self._need_link():
            self._act(self.source.send, self.link_key)

    def _need_link(self) -> bool:
        if self.link_key is None:
            self.notify("select a link in the tree first", severity="warning")
            return False
        return True

    # -- command palette --------------------------------------------------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for k, action, label, help_text, group, _ in keys.KEYS:
            if group != "everywhere" and group not in self.source.key_groups:
                continue
            if action in ("quit", "interrupt", "help"):
                continue
            yield SystemCommand(label, help_text, lambda a=action: self.run_action(a))
        for key in self.conn_tree.link_keys:
            yield SystemCommand(printable(f"Link {key}"), "show this link",
                                lambda k=key: self.select_link(k))

    # -- for tests and benchmarks -----------------------------------------------------------

    def status_text(self) -> Text:
        return Text(str(self.sub_title))


TERMINATED = 130  # the app's return code after SIGTERM: the command's exit for an interrupt


def run(source: Source, **kw: Any) -> None:
    app = AmqpTui(source, **kw)
    app.run()
    exit_as(app)


def exit_as(app: AmqpTui) -> None:
    """End the command as the app ended, once it has left the screen: a bug of ours, then
    the source's failure (whichever way the user quit after it: the run ended there), then
    an interrupt; else the command exits 0."""
    if app.crashed is not None:
        raise app.crashed  # (the command's "internal error" line, exit 1)
    if app.failure is not None:
        raise app.failure  # its line on stderr, its exit status (3 for a refused URL, ...)
    if app.return_code == TERMINATED:
        raise KeyboardInterrupt  # "amqp: interrupted", exit 130, as for Ctrl-C elsewhere

