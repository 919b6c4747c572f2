"""`amqp proxy LISTEN URL` (or `--listen LISTEN URL`): forward an application's connections to a broker, one line per frame."""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.core

from amqpcli.cli.app import app
from amqpcli.cli.commands import COMMANDS
from amqpcli.cli.options import build_config, check_path, check_seconds
from amqpcli.errors import Exit, UserError

if TYPE_CHECKING:  # the net layer loads when the command runs, not for --help
    from amqpcli.net.config import ConnectionConfig
    from amqpcli.proxy import ProxyNotice

_TLS = "TLS to the broker"

LISTEN_HELP = (
    "Where applications connect: PORT, HOST:PORT or [V6]:PORT. Loopback (127.0.0.1) unless "
    "a host is given (0.0.0.0 listens on every interface). Port 0 picks a free one (the "
    "'listening on' line names it)."
)
URL_HELP = "The broker: amqp://host[:port] or amqps://host[:port] (TLS to the broker)."


def upstream_config(
    url: str,
    *,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
    insecure: bool = False,
    server_name: str | None = None,
    connect_timeout: float = 10.0,
) -> ConnectionConfig:
    """The broker end of a proxy: only where to connect and how to do TLS matter (the
    application does its own SASL through the proxy)."""
    if "://" not in url:
        raise UserError(f"bad broker URL {url!r}: use amqp://host:port or amqps://host:port", Exit.USAGE)
    cfg = build_config(url, ca_file=ca_file, cert_file=cert_file, key_file=key_file,
                       insecure=insecure, server_name=server_name,
                       connect_timeout=connect_timeout, upgrade_offered=False)
    from amqpcli.net.url import parse_url

    ep = parse_url(url)  # the URL as written (not AMQP_PASSWORD)
    unused = [what for what, v in (("user", ep.user), ("password", ep.password),
                                   ("address", ep.address)) if v is not None]
    if unused:
        # each client brings its own SASL and addresses through the proxy: these would
        # be ignored without a word
        raise UserError(f"bad broker URL {ep.url()!r}: the proxy forwards each client's own "
                        f"connection, so its {', '.join(unused)} would not be used; give "
                        "amqp://host:port or amqps://host:port", Exit.USAGE)
    if cfg.endpoint.tls:
        # the TLS files are read now (send reads them before connecting): one that is
        # missing or no PEM is a usage error before listening, not a failure of every
        # application's connection; the connections use the context made here
        cfg.tls.context()
    return cfg


class LinePrinter:
    """Prints each frame as the render package's one-line form (or JSON), flushing as it goes.

    The printing never stops the forwarding: when standard output cannot be written any
    more (its reader went away, `amqp proxy … | head`; a full disk), the printing stops
    with one note on stderr and the proxy goes on forwarding (and recording) the
    applications' connections until it is stopped. A stderr that cannot be written loses
    the notes, nothing else. A recording that cannot be written any more stops with a
    warning at once, the forwarding and printing going on; the run has then failed: once
    stopped, it ends with an error saying that the recording is incomplete (`stopped`)."""

    def __init__(self, as_json: bool, show_secrets: bool, record: str | None = None) -> None:
        self.as_json = as_json
        self.show_secrets = show_secrets
        self.record = record
        self.record_failed: str | None = None  # why the recording stopped early
        self.printing = True
        from amqpcli.render.redact import ChunkSecrets

        # pieces of deliveries in several frames that may hold a SASL secret
        self._pieces = ChunkSecrets()
        from amqpcli.render.items import TransferAssembler

        # the deliveries in several frames, joined as pcap-dump of the recording joins
        # them: in text the last frame shows the whole message; in JSON (which has every
        # piece's payload) that piece is not judged alone as a message
        self._whole = TransferAssembler(join=not as_json)

    def on_open(self, conn: Any) -> None:
        self._note(f"{conn.key} open {conn.describe()}")

    def on_close(self, conn: Any, how: str) -> None:
        for side in ("client", "server"):
            self._whole.forget((conn.key, side))
        self._note(f"{conn.key} {how} ({conn.bytes['client']} bytes up, {conn.bytes['server']} down)")

    def _note(self, text: str, prefix: str = "amqp proxy") -> None:
        try:
            sys.stderr.write(f"{prefix}: {text}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # no one reads the notes any more: the forwarding goes on

    def on_record_failure(self, why: str) -> None:
        """The recording cannot be written any more (`Recorder.on_failure`)."""
        self.record_failed = why
        self._note(f"cannot write the recording {self.record}: {why}; recording stopped, "
                   "still forwarding", "amqp: warning")

    def stopped(self) -> UserError | None:
        """Say that the proxy was stopped; the run's error, if its recording failed (it
        asked for a whole recording and has not got one: its output could not be
        written, exit 2, not the 130 of a proxy stopped as proxies are)."""
        self._note("stopped")
        if self.record_failed is None:
            return None
        return UserError(f"the recording {self.record} is incomplete: it stopped when it "
                         f"could not be written ({self.record_failed})", Exit.USAGE)

    def on_item(self, conn: Any, side: str, item: Any, t: float, events: list[Any]) -> None:
        if not self.printing:
            return
        from amqpcli.proxy import ProxyNotice

        if isinstance(item, ProxyNotice):
            line = self._notice(conn, side, item, t)
        elif self.as_json:
            from amqpcli.dissect.records import AMQP10
            from amqpcli.render.items import item_to_json
            from amqpcli.render.traffic import iso

            # the shape of `pcap-dump --json`'s frame records, but for `packet`: there is
            # no capture packet (pcap-dump of the --record file gives them)
            obj: dict[str, Any] = {"record": "frame", "protocol": AMQP10, "time": iso(t),
                                   "connection": conn.key, "from": side}
            if conn.frame_no:
                obj["frame"] = conn.frame_no
            hidden = self._pieces.hides((conn.key, side), item)
            fields = item_to_json(item, self.show_secrets, hidden=hidden,
                                  message=self._whole_message(conn, side, item),
                                  say_invalid=True)
            if "protocol" in fields:  # a protocol header's own protocol, as pcap-dump says
                fields["header"] = fields.pop("protocol")
            obj.update(fields)
            from amqpcli.render.jsonvalues import safe_json_text

            line = safe_json_text(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))
        else:
            from amqpcli.render.frameline import item_line

            line = item_line(item, time=t, connection=conn.key,
                             direction="->" if side == "client" else "<-",
                             show_secrets=self.show_secrets,
                             message=self._whole_message(conn, side, item),
                             say_invalid=True)
        self._write(line)
        self.on_events(conn, side, events)

    def _whole_message(self, conn: Any, side: str, item: Any) -> Any:
        """The whole message (or why there is none) when `item` ends a delivery sent in
        several transfers, else None. The proxy sees each connection from its first
        byte, so every transfer's delivery is known from its start (`say_invalid`)."""
        other = "server" if side == "client" else "client"
        return self._whole.offer(item, (conn.key, side), (conn.key, other))

    def on_events(self, conn: Any, side: str, events: list[Any]) -> None:
        """The protocol violations among the events a frame (or a stream's end) caused:
        pcap-dump's lines (records) of its recording, but for the packet number."""
        if not self.printing:
            return
        from amqpcli.engine.events import Violation

        for ev in events:
            if ev.__class__ is Violation:
                self._write(self._violation(conn, ev))
                if not self.printing:
                    return

    def _violation(self, conn: Any, ev: Any) -> str:
        from types import SimpleNamespace

        from amqpcli.dissect.records import AMQP10

        # what `violation_line`/`violation_json` read of pcap-dump's ViolationRecord
        rec = SimpleNamespace(conn=SimpleNamespace(label=conn.key, timed=True), protocol=AMQP10,
                              kind=ev.kind, side=ev.side, detail=ev.detail,
                              frame_no=ev.frame_no, packet=0, time=ev.time,
                              link=str(ev.link.name) if ev.link is not None else None)
        if not self.as_json:
            from amqpcli.render.traffic import violation_line

            return violation_line(rec)  # type: ignore[arg-type]
        from amqpcli.render.jsonvalues import safe_json_text
        from amqpcli.render.traffic import violation_json

        return safe_json_text(json.dumps(violation_json(rec),  # type: ignore[arg-type]
                                         ensure_ascii=False, separators=(",", ":")))

    def _write(self, line: str) -> None:
        try:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        except OSError as e:  # BrokenPipeError, or the app's StdoutWriteError
            self._stop_printing(e)

    def _notice(self, conn: Any, side: str, notice: ProxyNotice, t: float) -> str:
        """pcap-dump's notice line, or its notice record (but for `packet`, as frames)."""
        if not self.as_json:
            from amqpcli.render.traffic import note_line

            return note_line(t, conn.key, side, notice.text)
        from amqpcli.render.traffic import iso

        return json.dumps({"record": "notice", "time": iso(t), "connection": conn.key,
                           "side": side, "kind": notice.kind, "text": notice.text},
                          ensure_ascii=False, separators=(",", ":"))

    def _stop_printing(self, e: OSError) -> None:
        from amqpcli.cli.app import _quiet_stdout

        self.printing = False
        try:
            real = sys.stdout.fileno() == 1
        except (AttributeError, OSError, ValueError):
            real = False
        if real:
            # what is still buffered goes nowhere, and the exit's flush cannot fail again
            _quiet_stdout()
        why = ("standard output's reader went away" if isinstance(e, BrokenPipeError)
               else f"cannot write standard output: {(e.strerror or str(e)).lower()}")
        rec = f" and recording to {self.record}" if self.record and not self.record_failed else ""
        self._note(f"output stopped: {why}; still forwarding{rec} until stopped")


class _ProxyCommand(typer.core.TyperCommand):
    """A negative number where LISTEN goes (`amqp proxy -1 URL`, a port meant as "any")
    is a bad port, said as `parse_listen` says it: Click takes anything after a dash for
    an option and said "No such option: -1"."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        given = list(args)  # (the parser takes the words off `args` as it goes)
        try:
            return super().parse_args(ctx, args)
        except Exception as e:  # (Click's NoSuchOption: typer vendors its own click)
            name = getattr(e, "option_name", None)
            if (type(e).__name__ == "NoSuchOption" and name and re.fullmatch(r"-\d+", name)
                    and self._in_listens_place(given, name)):
                from amqpcli.proxy import parse_listen

                parse_listen(name)  # raises: the port is out of range
            raise

    def _in_listens_place(self, args: list[str], word: str) -> bool:
        """Whether `word` comes where LISTEN does: before any argument, and no --listen."""
        takes_value = {opt for p in self.params if p.param_type_name == "option"
                       and not getattr(p, "is_flag", False) for opt in p.opts}
        words = iter(args)
        for a in words:
            if a == word:
                return True
            if a in ("--listen", "-l") or a.startswith("--listen=") or not a.startswith("-"):
                return False
            if a in takes_value:
                next(words, None)
        return False


async def run_proxy(listen: tuple[str, int], cfg: ConnectionConfig, record: str | None,
                    printer: LinePrinter, half_close_timeout: float = 30.0) -> None:
    from amqpcli.proxy import Proxy, Recorder

    proxy = Proxy(listen, cfg, on_open=printer.on_open, on_item=printer.on_item,
                  on_close=printer.on_close, on_events=printer.on_events,
                  half_close_timeout=half_close_timeout)
    try:
        host, port = await proxy.start()
        if record:  # opened once listening: a proxy that cannot start empties no file
            proxy.recorder = Recorder(record, on_failure=printer.on_record_failure)
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        printer._note(f"listening on {where}, forwarding to {cfg.endpoint.hostport}"
                      f"{' (TLS)' if cfg.endpoint.tls else ''}"
                      f"{f', recording to {record}' if record else ''}")
        await proxy.serve()
    finally:
        await proxy.close()


@app.command(help=COMMANDS["proxy"].help, cls=_ProxyCommand,
             epilog="Examples:\n\n  amqp proxy --listen 5673 amqp://broker:5672\n\n"
             "  amqp proxy 5673 amqps://broker:5671 --record session.pcapng --json")
def proxy(
    listen: Annotated[str | None, typer.Argument(help=LISTEN_HELP + " Or give it with --listen; then URL is the only argument.", show_default=False)] = None,
    url: Annotated[str | None, typer.Argument(help=URL_HELP, show_default=False)] = None,
    listen_opt: Annotated[str | None, typer.Option("--listen", "-l", help=LISTEN_HELP, show_default=False)] = None,
    record: Annotated[str | None, typer.Option("--record", "-w", help="Also write the traffic to this pcapng file: raw, so a SASL PLAIN password is in it in clear. An existing file is replaced.")] = None,
    tui: Annotated[bool, typer.Option("--tui", help="Watch in the TUI instead of printing lines.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per frame (lossless).")] = False,
    show_secrets: Annotated[bool, typer.Option("--show-secrets", help="Show SASL passwords and credentials (masked by default).")] = False,
    ca_file: Annotated[str | None, typer.Option("--ca-file", help="CA certificates (PEM) to verify the broker.", rich_help_panel=_TLS)] = None,
    cert_file: Annotated[str | None, typer.Option("--cert", help="Client certificate (PEM) for the broker.", rich_help_panel=_TLS)] = None,
    key_file: Annotated[str | None, typer.Option("--key", help="Its private key (PEM), if not in --cert.", rich_help_panel=_TLS)] = None,
    insecure: Annotated[bool, typer.Option("--insecure", help="Do not verify the broker's certificate.", rich_help_panel=_TLS)] = False,
    server_name: Annotated[str | None, typer.Option("--server-name", help="TLS SNI and name to verify.", rich_help_panel=_TLS)] = None,
    connect_timeout: Annotated[float, typer.Option("--connect-timeout", help="Seconds to reach the broker.")] = 10.0,
    half_close_timeout: Annotated[float, typer.Option("--half-close-timeout", help="Seconds a side may send nothing once the other has closed its side of a connection, before the proxy ends it (0: wait for ever).")] = 30.0,
) -> None:
    from amqpcli.proxy import parse_listen

    check_path(record, "--record")
    check_seconds(half_close_timeout, "--half-close-timeout", zero=True)
    if tui:
        # options for the printed lines, which the TUI does not print: not quietly ignored
        ignored = [name for name, given in (("--json", as_json), ("--show-secrets", show_secrets))
                   if given]
        if ignored:
            raise UserError(f"{', '.join(ignored)}: not with --tui, which prints no lines",
                            Exit.USAGE)
    if listen_opt is not None:
        if url is not None:
            raise UserError("LISTEN given twice (--listen and an argument): give the broker URL only", Exit.USAGE)
        listen, url = listen_opt, listen
    if listen is None or url is None:
        raise UserError("give where to listen and the broker: amqp proxy [--listen] LISTEN URL", Exit.USAGE)
    where = parse_listen(listen)
    cfg = upstream_config(url, ca_file=ca_file, cert_file=cert_file, key_file=key_file,
                          insecure=insecure, server_name=server_name,
                          connect_timeout=connect_timeout)
    if tui:
        from amqpcli.tui.app import run
        from amqpcli.tui.sources.proxy import ProxySource

        run(ProxySource(where, cfg, record=record, half_close_timeout=half_close_timeout))
        return
    from amqpcli.net.receiving import run_interruptible

    printer = LinePrinter(as_json, show_secrets, record)
    try:
        # Ctrl-C or SIGTERM cancels the run once (a second signal does not cut the close
        # short), as for recv
        run_interruptible(run_proxy(where, cfg, record, printer, half_close_timeout))
    except KeyboardInterrupt:
        # Ctrl-C (or SIGTERM) is how a proxy is stopped: the recording was closed on the way
        # out. Still an interruption by the exit-status table: 130, after the clean stop,
        # unless the run failed (its recording).
        failed = printer.stopped()
        if failed is not None:
            raise failed from None
        sys.exit(int(Exit.INTERRUPTED))
