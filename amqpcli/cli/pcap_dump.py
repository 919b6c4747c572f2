"""`amqp pcap-dump`: captures → frames, deliveries, links, connections, a summary.

Thin: `amqpcli.dissect` turns capture events into records, `amqpcli.render` draws them.
"""

import gc
import itertools
import json
import os
import signal
import sys
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from amqpcli.cli.app import app
from amqpcli.cli.commands import COMMANDS
from amqpcli.cli.options import check_given, check_path
from amqpcli.errors import Exit, UserError

if TYPE_CHECKING:  # the dissect pipeline loads when the command runs, not for --help
    from amqpcli.capture.live import TlsFlows
    from amqpcli.dissect import Dissector, Filter, Summary
    from amqpcli.dissect.journeys import Journeys
    from amqpcli.dissect.seen import SeenConns
    from amqpcli.dissect.stats import Passed

_OUT = "Output"
_SEL = "Filters"
_SRC = "Input"
_TAB = "Tables"
# One encoder for every JSON line: the settings `json.dumps` was given per record. The
# records are trees built fresh for each line, never cyclic: the check for cycles is
# skipped (about a tenth of the JSON text's cost).
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)


class Out:
    """Lines to stdout: coloured through rich on a terminal, plain and buffered when piped."""

    def __init__(self, color: bool | None, live: bool) -> None:
        tty = sys.stdout.isatty()
        if color is None:
            color = tty and not os.environ.get("NO_COLOR")
        self.color = color
        self.live = live
        self._buf: list[str] = []
        self._console: Any = None
        if color:
            from rich.console import Console

            # lines hold names and addresses from the capture: never markup or emoji codes
            self._console = Console(highlight=False, soft_wrap=True, force_terminal=True,
                                    markup=False, emoji=False)

    def line(self, text: str, rec: Any = None) -> None:
        if self._console is not None:
            from amqpcli.render.traffic import styled

            self._console.print(styled(text, rec) if rec is not None else text)
            return
        self._buf.append(text)
        if self.live or len(self._buf) >= 2048:
            self.flush()

    def json(self, obj: dict[str, Any]) -> None:
        text = _JSON.encode(obj)
        if not text.isascii():
            from amqpcli.render.jsonvalues import safe_json_text

            text = safe_json_text(text)
        self._buf.append(text)
        if self.live or len(self._buf) >= 1024:
            self.flush()

    def flush(self) -> None:
        if self._buf:
            sys.stdout.write("\n".join(self._buf) + "\n")
            self._buf.clear()
            if self.live:
                sys.stdout.flush()


class Stopping:
    """Ctrl-C or SIGTERM during a dump stops the reading, and what was seen is still
    shown: the records so far, what was left open at that point, the end views; then
    the run exits 130.

    It is the capture readers' `waiting` (entered around every wait for input): there
    the output is flushed first, so lines come as traffic flows, from a pipe too, and a
    signal ends the wait at once (nothing is half done in a wait). Anywhere else a signal
    only sets `stopped[0]`, which the dissector checks between capture events (the
    records of an event all go out: none the model took in is lost). A second
    signal is ignored: the end is on its way.

    A live capture first ends gently (`capturing`): the capture process stops and writes
    out what it captured, which is read to its end, so the packets already captured are
    not lost; a second signal then stops the reading at once."""

    def __init__(self, out: Out) -> None:
        self.out = out
        self.stopped = [False]
        self.interrupted = False
        self._in_wait = False
        self._end_capture: Callable[[], bool] | None = None
        self._previous: list[tuple[int, Any]] = []

    def capturing(self, end: Callable[[], bool]) -> None:
        """`end` ends the live capture gently (see `amqpcli.capture.live`)."""
        self._end_capture = end

    def __enter__(self) -> None:
        self.out.flush()
        sys.stdout.flush()
        if self.stopped[0]:
            raise KeyboardInterrupt
        self._in_wait = True

    def __exit__(self, *exc: object) -> None:
        self._in_wait = False

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.stopped[0]:
            return
        first, self.interrupted = not self.interrupted, True
        if first and self._end_capture is not None and self._end_capture():
            return  # the capture's own end comes through the reading
        self.stopped[0] = True
        if self._in_wait:
            raise KeyboardInterrupt

    def install(self) -> None:
        """Take SIGINT, SIGTERM and SIGHUP (a closed terminal; not when ignored, as under
        nohup), in the main thread: only it gets signals."""
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            if sig == signal.SIGHUP and signal.getsignal(sig) is signal.SIG_IGN:
                continue
            try:
                self._previous.append((sig, signal.signal(sig, self._on_signal)))
            except ValueError:  # not the main thread (threading is not imported for this)
                return

    def restore(self) -> None:
        for sig, handler in self._previous:
            signal.signal(sig, handler)
        self._previous.clear()


STDIN = "-"  # as a capture file: standard input


def _source(f: Path) -> Any:
    return sys.stdin.buffer if str(f) == STDIN else str(f)


def _events(dis: "Dissector", files: list[Path], live: str | None, keylog: Path | None,
            bpf: str | None, count: int | None, stop: Stopping,
            fast: bool, tls: "TlsFlows | None" = None) -> Iterator[Any]:
    """Records from a live interface (`fast`: through dumpcap) or from TLS decryption
    (capture files are read by `_records`); `tls` is told what became of the TLS flows
    (with `keylog`)."""
    ports = sorted(dis.ports)
    if live is not None:
        from amqpcli.capture.live import decrypt_tls, dumpcap_capture, live_capture

        flt = bpf or "tcp and (" + " or ".join(f"port {p}" for p in {*ports, 5671}) + ")"
        if keylog is not None:
            ev: Iterable[Any] = decrypt_tls(None, str(keylog), interface=live, bpf_filter=flt,
                                            ports=ports, packet_count=count, waiting=stop,
                                            on_capturing=stop.capturing, report=tls)
        elif fast:
            ev = dumpcap_capture(live, flt, ports=ports, packet_count=count, waiting=stop,
                                 on_capturing=stop.capturing)
        else:
            ev = live_capture(live, flt, ports=ports, packet_count=count, waiting=stop,
                              on_capturing=stop.capturing)
    else:
        from amqpcli.capture.live import decrypt_tls

        current = [""]

        def decrypted(f: Path) -> Iterator[Any]:
            current[0] = str(f)
            return decrypt_tls(str(f), str(keylog), ports=ports, waiting=stop, report=tls)

        ev = itertools.chain.from_iterable(decrypted(f) for f in files)
    if keylog is None or tls is None:
        yield from dis.run(ev, stopped=stop.stopped)
        return
    from amqpcli.dissect import DeliveryRecord, FilePacket, Notice
    from amqpcli.render.types import printable

    # a TLS flow left encrypted with a key log given: there were no keys for it
    text = f"TLS: encrypted, not decoded (no keys for it in {printable(str(keylog))})"
    several = live is None and len(files) > 1
    for rec in dis.run(ev, stopped=stop.stopped):
        if isinstance(rec, Notice) and rec.kind == "encrypted" and rec.text.startswith("TLS:"):
            if rec.conn is not None:
                rec.conn.notes[:] = [text if n == rec.text else n for n in rec.conn.notes]
            rec.text = text
        if live is None and not isinstance(rec, DeliveryRecord) and not rec.packet:
            # the packet whose events made the record, as the file reader numbers them
            rec.packet = FilePacket(tls.packet, current[0]) if several else tls.packet
        yield rec


def _records(dis: "Dissector", files: list[Path], live: str | None, keylog: Path | None,
             bpf: str | None, count: int | None, stop: Stopping,
             fast: bool, tls: "TlsFlows | None" = None,
             found: Collection[str] = ()) -> Iterator[Any]:
    """The records of the run: capture files go straight to the reader (no generator of
    our own around it: one step less for every record), the rest through `_events`.
    `found`: the files found in folders or by globs (`expand`)."""
    if live is None and keylog is None:
        # one file goes straight to the reader (the merge of several costs memory it
        # need not)
        return dis.read(_source(files[0]) if len(files) == 1 else [_source(f) for f in files],
                        waiting=stop, stopped=stop.stopped, found=found)
    if keylog is None:
        return _events(dis, files, live, keylog, bpf, count, stop, fast)
    return _events(dis, files, live, keylog, bpf, count, stop, fast, tls)


def _tls_notes(dis: "Dissector", files: list[Path], keylog: Path | None,
               tls: "TlsFlows | None", stop: Stopping, found: Collection[str] = ()) -> None:
    """The TLS flows that were not read: with a key log, those it had no keys for (with
    their endpoints); without one, those on other ports than 5671 and the AMQP ports,
    which are not reported as connections (with their ports, found by reading the capture
    files again)."""
    from amqpcli.render.types import printable

    if tls is not None and keylog is not None:
        if tls.encrypted:
            n = len(tls.encrypted)
            shown = ", ".join(f"{c} -> {s}" for c, s in tls.encrypted[:5])
            more = f" and {n - 5} more" if n > 5 else ""
            them = "it" if n == 1 else "them"
            typer.echo(f"amqp: note: {_flows(n, 'TLS')} could not be decrypted: "
                       f"{printable(str(keylog))} has no keys for {them} ({shown}{more})",
                       err=True)
        return
    n = dis.other_flows.get("tls", 0)
    if not n:
        return
    ports = _tls_ports(dis, files, n, stop, found)
    where = f" on port{'s' if len(ports) > 1 else ''} {', '.join(map(str, ports))}" if (
        ports) else " on ports other than 5671 and the AMQP ones"
    typer.echo(f"amqp: note: {_flows(n, 'TLS')}{where} not read (give --tls-keylog FILE to "
               "decrypt them)", err=True)


def _flows(n: int, what: str) -> str:
    return f"{n} {what} flow{'' if n == 1 else 's'}"


def _tls_ports(dis: "Dissector", files: list[Path], n: int, stop: Stopping,
               found: Collection[str] = ()) -> list[int]:
    """The server ports of the `n` TLS flows the run left out, from a second reading of
    the capture files (our own reader: quick); none from standard input or an interface,
    which cannot be read again, or when the reading is stopped."""
    if stop.interrupted or not files or any(str(f) == STDIN for f in files):
        return []
    from amqpcli.capture import TLS, CaptureError, Opened, read_capture

    known = dis.ports | {5671}
    ports: set[int] = set()
    flows = 0
    events = read_capture([str(f) for f in files], ports=dis.ports, waiting=stop,
                          found=found)
    try:
        for ev in events:
            if ev.__class__ is Opened and ev.flow.protocol == TLS and (
                    ev.flow.server_port not in known):
                ports.add(ev.flow.server_port)
                flows += 1
                if flows >= n:
                    break
    except CaptureError:
        pass  # (a damaged file: the run said so) the ports found before the damage
    except KeyboardInterrupt:
        return []
    finally:
        events.close()  # type: ignore[attr-defined]
    return sorted(ports)


def _is_utf8(path: str) -> bool:
    """Whether a path from the command line is UTF-8 text (bytes that are not come as
    surrogates)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_stdin(files: list[Path], out_dir: str | None, keylog: Path | None) -> None:
    """`-` (standard input) at most once, piped, and with what can read a stream."""
    n = sum(1 for f in files if str(f) == STDIN)
    if not n:
        return
    if n > 1:
        raise UserError("- (standard input) can be given once", Exit.USAGE)
    if out_dir is not None:
        raise UserError("--out reads capture files and folders, not standard input", Exit.USAGE)
    if keylog is not None:
        raise UserError("--tls-keylog decrypts capture files, not standard input", Exit.USAGE)
    if sys.stdin is None or sys.stdin.closed:
        raise UserError("standard input is closed", Exit.USAGE)
    if sys.stdin.isatty():
        raise UserError("standard input is a terminal; pipe a capture into it "
                        "(tcpdump -U -w - port 5672 | amqp pcap-dump -)", Exit.USAGE)


def _wants_tables(files: list[Path] | None, out_dir: Any, summary: bool) -> bool:
    try:
        from amqpcli.pipeline.run import wants_tables
    except ModuleNotFoundError as e:  # (a dependency, unless installed without them)
        if e.name != "pyarrow":
            raise
        raise UserError("the tables of --out, and --summary of folders, are read and "
                        "written with pyarrow, which is not installed: pip install pyarrow",
                        Exit.USAGE) from None

    return wants_tables(files, out_dir, summary)


@app.command("pcap-dump", help=COMMANDS["pcap-dump"].help, epilog=(
    "Examples:\n\n"
    "  amqp pcap-dump traffic.pcapng\n\n"
    "  amqp pcap-dump traffic.pcapng --deliveries --state rejected\n\n"
    "  amqp pcap-dump a.pcap b.pcap.gz --summary\n\n"
    "  amqp pcap-dump captures/ --out tables --engine spark\n\n"
    "  amqp pcap-dump --live lo --amqp-port 5673"))
def pcap_dump(
    files: Annotated[list[str] | None, typer.Argument(help="Capture files (pcap, pcapng, gzipped); several are merged by time; - reads standard input (tcpdump -U -w - ... | amqp pcap-dump -). Or frame-trace logs: proton's PN_TRACE_FRM=1 output, router logs (see docs/trace-logs.md); a folder gives its captures, or its logs (*.log, *.txt, *.trace, gzipped too, whose first lines are one), never both.", show_default=False)] = None,
    port: Annotated[list[int] | None, typer.Option("--amqp-port", help="Also read flows on this TCP port as AMQP 1.0 without a protocol header (5672 always is).", rich_help_panel=_SRC)] = None,
    port_alias: Annotated[list[int] | None, typer.Option("--port", "-p", hidden=True)] = None,  # the old spelling of --amqp-port
    tls_keylog: Annotated[str | None, typer.Option("--tls-keylog", metavar="PATH", help="Decrypt TLS flows with the session keys in this key log file (SSLKEYLOGFILE format), through tshark.", rich_help_panel=_SRC)] = None,
    live: Annotated[str | None, typer.Option("--live", help="Capture live on this interface (needs capture rights) and print as traffic flows.", rich_help_panel=_SRC)] = None,
    capture_filter: Annotated[str | None, typer.Option("--capture-filter", help="With --live: BPF capture filter (default: the AMQP ports).", rich_help_panel=_SRC)] = None,
    bpf_alias: Annotated[str | None, typer.Option("--bpf", hidden=True)] = None,  # the old spelling of --capture-filter
    count: Annotated[int | None, typer.Option("--count", "-c", help="With --live: stop after this many packets.", rich_help_panel=_SRC)] = None,
    fast_capture: Annotated[bool, typer.Option("--fast-capture", help="With --live: dumpcap into our own reader instead of tshark's dissection (keeps up with busy links).", rich_help_panel=_SRC)] = False,
    deliveries: Annotated[bool, typer.Option("--deliveries", "-d", help="One line per delivery: link, id, tag, size, outcome, who settled, latency.", rich_help_panel=_OUT)] = False,
    messages: Annotated[bool, typer.Option("--messages", "-m", help="Each message followed across connections by its bare message, at the end: its deliveries (producer to broker, broker to consumer, again) with outcomes and the time between them.", rich_help_panel=_OUT)] = False,
    links: Annotated[bool, typer.Option("--links", help="Every link at the end: handles, termini, credit, outcomes, latency (AMQP 0-10: every destination, with its subscription and outcomes).", rich_help_panel=_OUT)] = False,
    connections: Annotated[bool, typer.Option("--connections", help="Every connection at the end: endpoints, open, SASL, close.", rich_help_panel=_OUT)] = False,
    summary: Annotated[bool, typer.Option("--summary", help="Counts by performative and outcome, latency per link, credit stalls, violations.", rich_help_panel=_OUT)] = False,
    frames: Annotated[bool, typer.Option("--frames", help="Frame lines too when another view is chosen (they are the default).", rich_help_panel=_OUT)] = False,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object per line (lossless; messages as `recv --json` writes them).", rich_help_panel=_OUT)] = False,
    brief: Annotated[bool, typer.Option("--frames-only", "--brief", help="Decode performatives only, not messages: frame lines without bodies.", rich_help_panel=_OUT)] = False,
    bodies: Annotated[bool, typer.Option("--bodies", help="Message bodies on delivery lines too.", rich_help_panel=_OUT)] = False,
    show_secrets: Annotated[bool, typer.Option("--show-secrets", help="Show SASL passwords and credentials (masked by default).", rich_help_panel=_OUT)] = False,
    color: Annotated[bool | None, typer.Option("--color/--no-color", help="Colour (default: on a terminal, unless NO_COLOR is set).", rich_help_panel=_OUT, show_default=False)] = None,
    stall: Annotated[float, typer.Option("--stall", help="Seconds without credit, while the sender waits, that count as a credit stall.", rich_help_panel=_OUT)] = 1.0,
    connection: Annotated[list[str] | None, typer.Option("--connection", "-C", help="Only this connection: c1, an IP address, ip:port, [ipv6]:port, :port or a network such as 10.0.0.0/24; of a frame-trace log also its id as the log writes it ([C3], 0x5581c0a3e2a0) (repeatable).", rich_help_panel=_SEL)] = None,
    address: Annotated[list[str] | None, typer.Option("--address", "-a", help="Only links to this node address (glob, repeatable).", rich_help_panel=_SEL)] = None,
    link: Annotated[list[str] | None, typer.Option("--link", help="Only links with this name (glob, repeatable).", rich_help_panel=_SEL)] = None,
    performative: Annotated[list[str] | None, typer.Option("--performative", help="Only these frames: transfer, flow, sasl-init, heartbeat, message.transfer, ... (comma-separated or repeated).", rich_help_panel=_SEL)] = None,
    state: Annotated[list[str] | None, typer.Option("--state", help="Only deliveries with this outcome, frames carrying this state: accepted, rejected, released, modified, unsettled, ...", rich_help_panel=_SEL)] = None,
    selector: Annotated[str | None, typer.Option("--selector", "-s", help="Only messages this JMS-style selector selects (as recv --selector asks a broker): their deliveries and transfer frames, e.g. \"color = 'red' AND JMSPriority > 4\".", rich_help_panel=_SEL)] = None,
    since: Annotated[str | None, typer.Option("--since", help="From this time: seconds from the start, HH:MM:SS[.f] or ISO 8601 (UTC).", rich_help_panel=_SEL)] = None,
    until: Annotated[str | None, typer.Option("--until", help="Up to this time (same forms).", rich_help_panel=_SEL)] = None,
    # --- tables (amqpcli.pipeline) ---
    out_dir: Annotated[str | None, typer.Option("--out", help="Write tables (connections, sessions, links, frames, deliveries, violations) of the whole capture set into this new folder; CAPTURES may be files, folders or globs, of captures or of frame-trace logs. --summary DIR reads such a folder back.", rich_help_panel=_TAB, show_default=False)] = None,
    out_format: Annotated[str, typer.Option("--format", help="Table format: parquet or ndjson.", rich_help_panel=_TAB)] = "parquet",
    engine_name: Annotated[str, typer.Option("--engine", help="local (in-process) or spark.", rich_help_panel=_TAB)] = "local",
    master: Annotated[str, typer.Option("--master", help="Spark master URL for --engine spark.", rich_help_panel=_TAB)] = "local[*]",
    spark_conf: Annotated[list[str] | None, typer.Option("--conf", help="A Spark setting key=value (repeatable).", rich_help_panel=_TAB, show_default=False)] = None,
) -> None:
    port = [*(port or ()), *(port_alias or ())] or None
    # the paths as given: Typer would read '' as '.' (the current folder)
    for name in files or ():
        check_path(name, "FILES", "capture file")
    check_path(tls_keylog, "--tls-keylog")
    check_given(live, "--live", "an interface name")
    for bpf_text in (capture_filter, bpf_alias):
        check_given(bpf_text, "--capture-filter", "a BPF filter",
                    "leave the option out for the default: the AMQP ports")
    paths = [Path(f) for f in files or ()]
    keylog = Path(tls_keylog) if tls_keylog is not None else None
    bpf = capture_filter if capture_filter is not None else bpf_alias
    from amqpcli.dissect import Dissector, Filter, Summary
    from amqpcli.dissect.seen import SeenConns

    for p in port or ():
        if not 0 < p < 65536:
            raise UserError(f"--amqp-port {p}: not a TCP port (1 to 65535)", Exit.USAGE)
    if not stall > 0:  # (nan too)
        raise UserError("--stall must be positive", Exit.USAGE)
    if count is not None and (live is None or count < 1):
        raise UserError("--count N (N at least 1) goes with --live", Exit.USAGE)
    if bpf is not None and live is None:
        raise UserError("--capture-filter goes with --live (to filter a capture file: "
                        "--connection, --address, --link, --performative)", Exit.USAGE)
    if (master != "local[*]" or spark_conf) and engine_name != "spark":
        raise UserError("--master and --conf go with --engine spark", Exit.USAGE)
    if out_dir is not None and not out_dir.strip():
        raise UserError("--out: the folder name is empty", Exit.USAGE)
    if out_dir is not None and not _is_utf8(out_dir):
        # (the table writers, pyarrow's and Spark's, take no other path)
        raise UserError("--out: the folder's path is not UTF-8 text", Exit.USAGE)
    _check_stdin(paths, out_dir, keylog)
    if fast_capture and (live is None or keylog is not None):
        raise UserError("--fast-capture goes with --live, without --tls-keylog (tshark "
                        "decrypts)", Exit.USAGE)
    # the tables path imports pyarrow: only for --out, or --summary of output folders
    # (or a URI, which only an output folder is: `Path` folds its `//` to `/`)
    if (out_dir is not None or (summary and paths and any(
            f.is_dir() or ":/" in str(f) for f in paths))) and (
            _wants_tables(paths, out_dir, summary)):
        # whole tables of the whole set: these options would be quietly ignored
        ignored = [name for name, given in (
            ("--connection", connection), ("--address", address), ("--link", link),
            ("--performative", performative), ("--state", state), ("--selector", selector),
            ("--since", since),
            ("--until", until), ("--deliveries", deliveries), ("--messages", messages),
            ("--links", links),
            ("--connections", connections), ("--frames", frames), ("--frames-only", brief),
            ("--bodies", bodies), ("--live", live), ("--fast-capture", fast_capture),
            ("--tls-keylog", keylog),
            ("--capture-filter", bpf)) if given]
        if ignored:
            what = "--out" if out_dir is not None else "--summary of table folders"
            raise UserError(f"{', '.join(ignored)}: not with {what}, which covers the whole "
                            "capture set (filter the tables instead)", Exit.USAGE)
        from amqpcli.cli.app import debug_enabled
        from amqpcli.pipeline.run import cli as tables_cli

        tables_cli(paths, out_dir, fmt=out_format, engine=engine_name, master=master,
                   conf=spark_conf or [], summary=summary, json_out=json_out,
                   ports=tuple(port or ()), stall=stall, debug=debug_enabled())
        return
    if out_format != "parquet" or engine_name != "local":
        raise UserError("--format and --engine go with --out DIR (or --summary of such a "
                        "folder)", Exit.USAGE)
    if not paths and live is None:
        raise UserError("give capture files, or --live INTERFACE", Exit.USAGE)
    if paths and live is not None:
        raise UserError("give capture files or --live, not both", Exit.USAGE)
    found: Collection[str] = ()  # the files found in folders or by globs, not named
    if any(f.is_dir() or any(ch in str(f) for ch in "*?[") for f in paths):
        # folders and quoted globs, as --out takes them: their capture files, merged
        from amqpcli.pipeline.inputs import expand

        given = [str(f) for f in paths if str(f) != STDIN]
        expanded = expand(given)
        found = expanded.found
        paths = [Path(p) for p in expanded] + [f for f in paths if str(f) == STDIN]
    else:
        # (expand checks the files named beside folders and globs itself; one it found
        # in them that cannot be opened, a dangling link too, is read as a damaged file)
        for f in paths:
            if str(f) != STDIN and not f.exists():
                raise UserError(f"{f}: no such file", Exit.USAGE)
    if keylog is not None:
        from amqpcli.capture.live import check_keylog

        # (live, the clients may not have written their keys yet)
        check_keylog(str(keylog), may_grow=live is not None)
    show_frames = frames or not (deliveries or messages or links or connections or summary)
    flt = Filter(connections=connection or (), addresses=address or (), links=link or (),
                 performatives=performative or (), states=state or (), since=since,
                 until=until, selector=selector)
    # frames only, and nothing that needs the engine: skip it (the fast path)
    engine = not (brief and show_frames and not (deliveries or messages or links or connections
                                                 or summary)
                  and not state and not link and not address)
    seen = SeenConns(flt)
    full = not brief
    # (one for both passes of _loop: a delivery's frames may be read in each)
    pieces = _Pieces(json_out, show_secrets) if show_frames and full else None
    # delivery records feed the delivery lines and the summary, and their figures per link
    # the tables at the end; the frame view needs neither. Link and address filters find
    # the links of a frame through its engine events, the steps of deliveries included.
    dis = Dissector(keep_payload=(json_out and deliveries) or bodies or messages
                    or selector is not None,
                    stall_threshold=stall, ports=port or (), engine=engine,
                    delivery_records=deliveries or messages or links or connections or summary,
                    delivery_updates=flt.by_link, credit_timeline=links and json_out,
                    latencies=links or summary,
                    # (the end views and the "matched no link" notes read closed
                    # connections' links and open/close; the other views only the
                    # tallies of `seen`)
                    closed="facts" if links or connections or summary or flt.by_link
                    else "forget", on_forget=lambda c: _forget(c, seen, pieces))
    out = Out(None if not json_out else False, live is not None) if color is None else Out(
        color and not json_out, live is not None)
    summ = Summary() if summary else None
    journeys = None
    if messages:
        from amqpcli.dissect.journeys import Journeys

        journeys = Journeys()
    passed = None
    if flt.within and (links or connections or summary):
        from amqpcli.dissect.stats import Passed

        passed = Passed(flt)
    # hundreds of thousands of short-lived objects and almost no cycles: the young
    # generation is collected less often (7-9 % of the CPU time; memory unchanged)
    thresholds = gc.get_threshold()
    gc.set_threshold(50_000, 20, 100)
    stop = Stopping(out)
    tls = None
    if keylog is not None:
        from amqpcli.capture.live import TlsFlows

        tls = TlsFlows()
    stop.install()
    try:
        try:
            records = _records(dis, paths, live, keylog, bpf, count, stop, fast_capture, tls,
                               found)
            try:
                _loop(dis, records, out, flt, summ, show_frames, deliveries, json_out, full,
                      bodies, show_secrets, passed, pieces, journeys)
            except KeyboardInterrupt:
                if not stop.stopped[0]:
                    raise
            if stop.stopped[0]:
                close = getattr(records, "close", None)  # (a generator: files, captures)
                if close is not None:
                    close()
                # what was open when the reading stopped: deliveries left unsettled, ...
                _loop(dis, dis.finish(), out, flt, summ, show_frames, deliveries, json_out,
                      full, bodies, show_secrets, passed, pieces, journeys)
        finally:
            gc.set_threshold(*thresholds)
            out.flush()
        if journeys is not None:
            _messages_view(journeys, out, json_out, show_secrets, filtering=flt.active)
        if links or connections or summ is not None:
            _end_views(dis, out, flt, summ, links, connections, json_out, stall, passed)
        out.flush()
        _tls_notes(dis, paths, keylog, tls, stop, found)
    finally:
        stop.restore()
    if stop.interrupted:
        raise typer.Exit(int(Exit.INTERRUPTED))
    seen.add_all(dis.conns)  # (those not forgotten)
    _notes(dis, seen, flt, messages)
    _exit_status(dis, seen, paths or [Path(live or "")],
                 tls.packets if tls is not None else None)


def _forget(conn: Any, seen: "SeenConns", pieces: "_Pieces | None") -> None:
    """A connection closed both ways that no view reads again: tallied, and let go."""
    seen.add(conn)
    if pieces is not None:
        pieces.forget(conn)


def _notes(dis: "Dissector", seen: "SeenConns", flt: "Filter", messages: bool = False
           ) -> None:
    """Why a filter showed nothing, when that is certain: a connection, an address or a
    link name that is not there, a time range outside the capture, AMQP 0-10 connections
    that `--selector` and `--messages` (AMQP 1.0 only) do not read."""
    from amqpcli.render.types import printable

    old = seen.chosen_010
    if old and (messages or flt.selector is not None):
        what = " and ".join(o for o, given in (("--selector", flt.selector is not None),
                                               ("--messages", messages)) if given)
        verb = "read" if " and " in what else "reads"
        typer.echo(f"amqp: note: {what} {verb} AMQP 1.0 only: {old} AMQP 0-10 connection"
                   f"{'s' if old > 1 else ''} left out", err=True)

    for x in seen.unnamed() if seen.count else ():
        typer.echo(f"amqp: note: --connection {printable(x)} matched no connection (there "
                   f"are {seen.labels})", err=True)
    # (not when --connection chose nothing: that note says why; the link filters keep
    # every connection: `closed="facts"`)
    if seen.chosen:
        where = " of the connections --connection chose" if flt.connections else ""
        for option, x, near in flt.unmatched_links(dis.conns):
            hint = f" (did you mean {near!r}?)" if near is not None else ""
            typer.echo(f"amqp: note: {option} {printable(x)} matched no link{where}{hint}",
                       err=True)
    outside = None if dis.first_time is None else flt.time_outside(dis.first_time,
                                                                    dis.last_time)
    if outside is not None:
        from amqpcli.render.traffic import iso

        typer.echo(f"amqp: note: {outside} (the capture runs from {iso(dis.first_time)} to "
                   f"{iso(dis.last_time)})", err=True)


# the notices of a connection joined mid-stream or bytes lost: a transfer after them may
# be the tail of a delivery whose first frames the capture does not hold (`_Pieces.sure`)
_LOSSY = frozenset(("midstream", "gap", "resync", "skipped"))


_OTHER_SIDE = {"client": "server", "server": "client"}


class _Pieces:
    """The frames of a delivery sent in several transfers, as the frame views need them
    (fed every such frame record in order, those a filter leaves out too): in JSON,
    whether a payload may hold a SASL secret (`ChunkSecrets`), and on its last frame a
    `NotAMessage` without an error (that piece is not decoded alone as a message); in
    text, the whole message on its last frame, whose line summarises it as `amqp decode
    --brief` does."""

    __slots__ = ("attach", "cut", "known", "open", "opens", "secrets", "transfer", "whole")

    def __init__(self, json_out: bool, show_secrets: bool) -> None:
        from amqpcli.codec.composites import Attach, Open, Transfer
        from amqpcli.render.items import TransferAssembler
        from amqpcli.render.redact import ChunkSecrets

        self.transfer = Transfer  # what to feed: a transfer with `more`, or any while `open`
        self.open = False  # a delivery in several frames is in progress
        self.secrets = ChunkSecrets() if json_out and not show_secrets else None
        # (JSON has each frame's payload: there it only says which frame ends a delivery)
        self.whole = TransferAssembler(join=not json_out)
        self.attach = Attach  # (what `sure` is fed, with transfers)
        self.opens = Open  # (the container-ids the joins know a link by)
        # of a connection that joined mid-stream or lost bytes: by stream, then by
        # (channel, handle), how much the connection had lost (gaps, resyncs, bytes
        # skipped) when that link's last delivery ended or the link was attached
        self.known: dict[Any, dict[Any, int]] = {}
        # of a frame-trace log that cut payloads short: the deliveries under way, by
        # (connection, side, channel, handle), a piece of which the log cut
        self.cut: set[tuple[Any, ...]] = set()

    def cut_by_log(self, rec: Any, sure: bool, whole: Any) -> tuple[bool, Any]:
        """(sure, whole) for a transfer record of a log connection that cut payloads
        short (`Conn.cut_payloads`): a payload the log cut is no message's bytes to judge,
        nor is what the pieces of a delivery with a cut one join into."""
        from amqpcli.render.invalid import NotAMessage
        from amqpcli.render.redact import handle_key

        body: Any = rec.item.body
        key = (rec.conn, rec.side, rec.item.channel, handle_key(body.handle))
        cut = rec.frame_no in rec.conn.cut_payloads
        if cut:
            sure = False
        if body.more and not body.aborted:
            if cut:
                self.cut.add(key)
            return sure, whole
        if key in self.cut:
            self.cut.discard(key)
            cut = True
        if cut and whole.__class__ is NotAMessage and whole.error is not None:
            whole = NotAMessage(None, whole.size)
        return sure, whole

    def sure(self, rec: Any) -> bool:
        """Whether a frame record of a connection that joined mid-stream or lost bytes
        (called for those only; fed every transfer and attach of theirs in order) is known to hold the
        first frame of its delivery, if it is a transfer: its link was attached, or its
        previous delivery ended, since the connection last lost bytes. Else a transfer
        that seems a whole delivery may be the tail of one (a delivery-id repeated on
        every frame), and its payload is not judged as a whole message."""
        from amqpcli.render.redact import handle_key

        item = rec.item
        body: Any = getattr(item, "body", None)
        cls = body.__class__
        if cls is not self.transfer and cls is not self.attach:
            return True
        conn = rec.conn
        lost = conn.gaps + conn.resyncs + conn.skipped_bytes
        stream = self.known.get((conn, rec.side))
        if stream is None:
            stream = self.known[(conn, rec.side)] = {}
        key = (item.channel, handle_key(body.handle))
        if cls is self.attach:
            stream[key] = lost
            return True
        known = stream.get(key) == lost
        if not body.more or body.aborted:
            stream[key] = lost  # the next transfer begins a delivery
        return known

    def forget(self, conn: Any) -> None:
        """`conn` closed both ways and is let go: what `sure` knew of its streams too."""
        self.known.pop((conn, "client"), None)
        self.known.pop((conn, "server"), None)
        self.whole.forget((conn, "client"))
        self.whole.forget((conn, "server"))
        if self.cut:
            self.cut = {k for k in self.cut if k[0] is not conn}

    def attached(self, rec: Any) -> None:
        """An attach or an open: the joins follow a link's deliveries across its
        attachments, under another handle or on another connection (a delivery resumed
        goes on, or starts again, as the receiver's attach says)."""
        self.whole.feed(rec.item, (rec.conn, rec.side), (rec.conn, _OTHER_SIDE[rec.side]))
        self.open = self.whole.pending_any()  # (a delivery left unfinished taken up again)

    def feed(self, rec: Any) -> tuple[bool, Any]:
        """(whether its payload is hidden, the whole message it ends or None)."""
        item = rec.item
        where = (rec.conn, rec.side)
        whole = self.whole.feed(item, where, (rec.conn, _OTHER_SIDE[rec.side]))
        self.open = self.whole.pending_any()
        return self.secrets is not None and self.secrets.hides(where, item), whole

def _loop(dis: "Dissector", records: Iterator[Any], out: Out, flt: "Filter", summ: "Summary | None",
          show_frames: bool, show_deliveries: bool, json_out: bool, full: bool, bodies: bool,
          show_secrets: bool, passed: "Passed | None", pieces: _Pieces | None,
          journeys: "Journeys | None" = None) -> None:
    from amqpcli.dissect import DeliveryRecord, FrameRecord, Notice, ViolationRecord
    from amqpcli.render.invalid import NotAMessage
    from amqpcli.render.traffic import (
        notice_json,
        notice_line,
        record_json,
        record_line,
        violation_json,
        violation_line,
    )

    if show_deliveries:
        from amqpcli.render.deliveries import delivery_json, delivery_line

    filtering = flt.active
    transfer = None if pieces is None else pieces.transfer
    attach = None if pieces is None else pieces.attach
    opens = None if pieces is None else pieces.opens
    # a connection joined mid-stream or lost bytes (its notice came): until then no frame
    # needs `pieces.sure`
    lossy = False
    resolved = False
    line = out.line
    # plain and buffered (stdout not a terminal, not live): frame lines go straight into
    # the buffer, as Out.line would put them
    plain = out._console is None and not out.live
    buf = out._buf
    for rec in records:  # (they end when a signal stops the reading: see Stopping)
        if not resolved and dis.first_time is not None:
            flt.resolve(dis.first_time, timed=rec.conn is None or rec.conn.timed)
            resolved = True
        cls = rec.__class__
        if cls is FrameRecord:
            hidden, whole, sure = False, None, True
            if pieces is not None:  # (before the filter: the pieces it leaves out count)
                body: Any = getattr(rec.item, "body", None)
                kind = body.__class__
                if kind is transfer and (body.more or pieces.open):
                    hidden, whole = pieces.feed(rec)
                elif kind is attach or kind is opens:
                    pieces.attached(rec)
                if lossy and (kind is transfer or kind is attach):
                    conn = rec.conn
                    if conn.midstream or conn.gaps or conn.resyncs or conn.skipped_bytes:
                        sure = pieces.sure(rec)
                        if (not sure and whole.__class__ is NotAMessage
                                and whole.error is not None):
                            whole = NotAMessage(None, whole.size)  # joined across lost bytes
                if kind is transfer and rec.conn.cut_payloads:
                    sure, whole = pieces.cut_by_log(rec, sure, whole)
            if filtering and not flt.frame(rec):
                continue
            if passed is not None:
                passed.add(rec)
            if summ is not None:
                summ.add(rec)
            if show_frames:
                if json_out:
                    out.json(record_json(rec, show_secrets=show_secrets, bodies=full,
                                         hidden=hidden, message=whole, say_invalid=sure))
                elif plain:
                    buf.append(record_line(rec, show_secrets=show_secrets, bodies=full,
                                           message=whole, say_invalid=sure))
                    if len(buf) >= 2048:
                        out.flush()
                else:
                    line(record_line(rec, show_secrets=show_secrets, bodies=full,
                                     message=whole, say_invalid=sure), rec)
        elif cls is DeliveryRecord:
            chosen = not filtering or flt.delivery(rec)
            if journeys is not None:  # (every hop: a message is shown if one is chosen)
                journeys.add(rec, chosen)
            if not chosen:
                continue
            if passed is not None:
                passed.add(rec)
            if summ is not None:
                summ.add(rec)
            if show_deliveries:
                if json_out:
                    out.json(delivery_json(rec, message=bodies or full,
                                           show_secrets=show_secrets))
                else:
                    line(delivery_line(rec, bodies=bodies))
        elif cls is ViolationRecord:
            if filtering and not flt.violation(rec):
                continue
            if passed is not None:
                passed.add(rec)
            if summ is not None:
                summ.add(rec)
            if show_frames or show_deliveries:
                if json_out:
                    out.json(violation_json(rec))
                else:
                    line(violation_line(rec), rec)
        elif cls is Notice:
            if rec.kind in _LOSSY:  # (before the filter: the frames after it count)
                lossy = True
            if filtering and not flt.notice(rec):
                continue
            if passed is not None:
                passed.add(rec)
            if summ is not None:
                summ.add(rec)
            if json_out:
                out.json(notice_json(rec))
            elif rec.kind != "capture-error" and (show_frames or show_deliveries
                                                   or rec.kind == "encrypted"):
                line(notice_line(rec), rec)  # a capture error ends the run with its message


def _messages_view(journeys: "Journeys", out: Out, json_out: bool, show_secrets: bool,
                   filtering: bool) -> None:
    """`--messages`: each message with its hops, then (as text) a line of totals; with
    filters, the messages one of whose deliveries they chose."""
    from amqpcli.render.journeys import journey_json, journey_line, journeys_summary

    shown = [j for j in journeys if j.chosen or not filtering]
    for j in shown:
        if json_out:
            out.json(journey_json(j, show_secrets))
        else:
            out.line(journey_line(j, show_secrets))
    if not json_out:
        out.line(journeys_summary(journeys, shown))


def _end_views(dis: "Dissector", out: Out, flt: "Filter", summ: "Summary | None", links: bool,
               connections: bool, json_out: bool, stall: float,
               passed: "Passed | None" = None) -> None:
    """The views at the end; with `passed` (filters that pick records inside connections
    and links) only the connections and links those records belong to."""
    from amqpcli.dissect.records import AMQP010
    from amqpcli.render.deliveries import (
        connection_json,
        connection_lines,
        link_json,
        link_lines,
    )
    from amqpcli.render.summary import summary_json, summary_lines

    if links:
        for c in dis.conns:
            if not flt.chosen_conn(c) or (passed is not None and not passed.conn(c)):
                continue
            if c.protocol == AMQP010:
                _destinations(c, out, flt, json_out, passed)
                continue
            for ls in c.links:
                if not flt.link_stats(ls) or (passed is not None and passed.link(ls) is None):
                    continue
                if json_out:
                    out.json(link_json(c, ls))
                else:
                    for text in link_lines(c, ls):
                        out.line(text)
    if connections:
        for c in dis.conns:
            if not flt.chosen_conn(c) or (passed is not None and not passed.conn(c)):
                continue
            if json_out:
                out.json(connection_json(c))
            else:
                for text in connection_lines(c):
                    out.line(text)
    if summ is not None:
        summ.finish(dis.conns, flt, passed)
        if json_out:
            out.json(summary_json(summ))
        else:
            for text in summary_lines(summ, stall_threshold=stall):
                out.line(text)


def _destinations(c: Any, out: Out, flt: "Filter", json_out: bool,
                  passed: "Passed | None") -> None:
    """`--links` of an AMQP 0-10 connection, which has no links: its destinations (what
    one side sent to one destination on one session, with the subscription that opened
    it), as the filters choose them as they choose links."""
    from amqpcli.amqp010 import destinations
    from amqpcli.render.amqp010 import destination_json, destination_line

    for d in destinations(c.observer.model):
        if not flt.link_name(d.destination, (d.destination,)) or (
                passed is not None and not passed.destination(c, d.destination, d.sender)):
            continue
        if json_out:
            out.json(destination_json(c.label, d))
        else:
            out.line(destination_line(c.label, d))


def _exit_status(dis: "Dissector", seen: "SeenConns", sources: list[Path],
                 packets: int | None = None) -> None:
    """Exit 8 (after everything readable was printed) for a damaged capture, one without
    AMQP, or AMQP bytes that did not decode. `packets`: how many were read, when not by
    the dissector's reader (tshark's, for TLS decryption)."""
    if dis.capture_errors:
        from amqpcli.capture.reader import first_of

        # the first damaged file in path order, and how many more (as --out names them)
        read = dis.packets if packets is None else packets
        raise UserError(f"{first_of(dis.capture_errors)}; " + (
            "what could be read was printed" if read else "no packet could be read"),
            Exit.DECODE)
    if not seen.count:
        names = ", ".join("standard input" if str(s) == STDIN else str(s) for s in sources)
        others = ", ".join(f"{n} {p}" for p, n in sorted(dis.other_flows.items()))
        flows = sum(dis.other_flows.values())
        n = dis.packets if packets is None else packets
        what = f"{flows} TCP flow{'' if flows == 1 else 's'}: {others}" if others else (
            f"{n} packet{'' if n == 1 else 's'}, no TCP flows")
        raise UserError(f"no AMQP traffic in {names} ({what})", Exit.DECODE)
    errors = seen.frame_errors
    skipped = seen.skipped_bytes
    if errors or skipped:
        bits = []
        if errors:
            bits.append(f"{errors} frame{'s' * (errors != 1)} could not be decoded")
        if skipped:
            bits.append(f"{skipped} byte{'s were' if skipped != 1 else ' was'} skipped")
        one = (errors == 1 and not skipped) or (skipped == 1 and not errors)
        where = "it was" if one else "they were"
        raise UserError("; ".join(bits) + f" (shown where {where} found)", Exit.DECODE)
