"""`amqp tui`: watch links, unsettled maps and deliveries — from a capture, a proxy, a live
interface or our own connection."""

from __future__ import annotations

import errno
import math
import os
import stat
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, BinaryIO

import typer

from amqpcli.cli.app import app
from amqpcli.cli.commands import COMMANDS
from amqpcli.cli.options import (
    check_credit,
    check_given,
    check_path,
    check_seconds,
    connection_options,
    given_connection_options,
    option_given,
    profile_settings,
)
from amqpcli.errors import Exit, UserError

if TYPE_CHECKING:  # the net layer loads when the command runs, not for --help
    from amqpcli.net.config import ConnectionConfig
    from amqpcli.net.url import Endpoint

_SRC = "Source (pick one)"
_VIEW = "View"

EPILOG = (
    "Examples:\n\n"
    "  amqp tui --pcap traffic.pcapng\n\n"
    "  ssh host tcpdump -U -w - port 5672 | amqp tui --pcap -      (shown as it is captured)\n\n"
    "  amqp tui --proxy 5673 amqp://broker:5672      (point the application at 127.0.0.1:5673)\n\n"
    "  amqp tui amqp://localhost//queue/orders --recv\n\n"
    "  amqp tui --serve --listen 5673      (settle each message an application sends by hand)\n\n"
    "Keys: ? in the app lists them all.\n\n"
    "Exit status: 0 when quit; 130 after Ctrl-C, SIGTERM or SIGHUP; after a source failed "
    "(its error in the title), that error's line and code (3: a URL that refuses, a port "
    "taken), however it was quit."
)


def choose_source(
    *,
    url_given: bool,
    pcap: str | None,
    proxy: str | None,
    live: str | None,
    recv: bool,
    send: bool,
    serve: bool,
    profile_given: bool = False,
    env_url: bool = False,
) -> str:
    """Which source the options ask for; one only. A broker is named by the URL argument,
    --profile or $AMQP_URL; the capture and serve sources refuse the first two."""
    picked = [name for name, on in (("pcap", pcap is not None), ("proxy", proxy is not None),
                                     ("live", live is not None), ("recv", recv), ("send", send),
                                     ("serve", serve)) if on]
    if len(picked) > 1:
        raise UserError("pick one source: " + ", ".join(f"--{p}" for p in picked), Exit.USAGE)
    if not picked:
        raise UserError(
            "nothing to watch: give --pcap FILE, --proxy LISTEN URL, --live IFACE, or URL --recv/--send",
            Exit.USAGE,
        )
    src = picked[0]
    if src in ("proxy", "recv", "send") and not (url_given or profile_given or env_url):
        raise UserError(f"--{src} needs a broker URL (or --profile NAME, or $AMQP_URL)", Exit.USAGE)
    if src in ("pcap", "live", "serve") and (url_given or profile_given):
        raise UserError(f"--{src} takes no URL{' nor --profile' if profile_given else ''}", Exit.USAGE)
    return src


# The connection options the proxy has a use for: where and how to reach the broker. Our
# own connection (--recv, --send) uses every one; a capture and --serve none.
_PROXY_OPTIONS = frozenset(("host", "port", "ca_file", "cert_file", "key_file", "insecure",
                            "server_name", "connect_timeout"))
_PROXY_WHY = ("through --proxy each application makes its own connection (its SASL, its "
              "open); the proxy only reaches the broker at URL (TLS: amqps://)")
_CONNECTS_NOWHERE = {
    "pcap": "--pcap replays a capture and connects nowhere",
    "live": "--live captures from an interface and connects nowhere",
    "serve": "--serve plays the broker, which applications connect to (--listen), and "
             "connects nowhere",
}


def refuse_unused_connection_options(given: dict[str, str], src: str) -> None:
    """A connection option (`given`: name to flag) the source has no use for is a usage
    error: ignored, it would leave whoever gave it believing it took effect."""
    if src == "recv":
        return
    if src == "send":
        if "max_message_size" in given:  # (a sender receives no messages)
            raise UserError(f"{given['max_message_size']} goes with --recv: --send receives "
                            "no messages", Exit.USAGE)
        return
    unused = [flag for name, flag in given.items()
              if src != "proxy" or name not in _PROXY_OPTIONS]
    if not unused:
        return
    if src == "proxy":
        where = "--recv or --send"
        why = _PROXY_WHY
    else:
        proxy_too = all(name in _PROXY_OPTIONS for name in given)
        where = "--proxy, --recv or --send" if proxy_too else "--recv or --send"
        why = _CONNECTS_NOWHERE[src]
    raise UserError(f"{', '.join(unused)} {'goes' if len(unused) == 1 else 'go'} with "
                    f"{where}: {why}", Exit.USAGE)


def warn_unused_profile_keys(ctx: typer.Context) -> None:
    """A profile's settings --proxy has no use for are said, not refused: a profile is
    kept for every command (send and recv use them all), an option is given for this one."""
    settings = profile_settings(ctx)
    if settings is None:
        return
    name, keys = settings
    unused = [k for k in keys if k != "url" and k not in _PROXY_OPTIONS]
    if unused:
        print(f"amqp: warning: profile {name!r}: {', '.join(unused)} not used: {_PROXY_WHY}",
              file=sys.stderr, flush=True)


def proxy_upstream_url(ctx: typer.Context, endpoint: Endpoint) -> str:
    """The broker URL the proxy connects to. A profile's URL may carry a user and an
    address for the commands that connect themselves: said and left out, as its other
    keys are. `@NAME/ADDRESS` asks for an address here: refused as written."""
    from dataclasses import replace

    from amqpcli.config import split_profile_ref

    settings = profile_settings(ctx)
    if settings is None:  # a URL as typed: `upstream_config` judges it
        return endpoint.url(show_secrets=True)
    url = ctx.params.get("url")
    ref = split_profile_ref(url if url is not None else os.environ.get("AMQP_URL"))
    if ref is not None and ref[1] is not None:
        where = " (from $AMQP_URL)" if url is None else ""
        raise UserError(f"@{ref[0]}/{ref[1]}{where}: the proxy forwards each client's own "
                        f"connection, so the address {ref[1]!r} would not be used; give "
                        f"@{ref[0]}", Exit.USAGE)
    if endpoint.alternates:
        raise UserError(f"profile {settings[0]!r}: its url is a failover list, and the "
                        "proxy reaches one broker: give its URL (amqp://host:port)",
                        Exit.USAGE)
    unused = [what for what, v in (("user", endpoint.user), ("address", endpoint.address))
              if v is not None]
    if unused:
        print(f"amqp: warning: profile {settings[0]!r}: the url's {' and '.join(unused)} "
              f"not used: {_PROXY_WHY}", file=sys.stderr, flush=True)

    def bare(ep: Endpoint) -> Endpoint:
        return replace(ep, user=None, password=None, address=None,
                       alternates=tuple(bare(a) for a in ep.alternates))

    return bare(endpoint).url()


STDIN = "-"  # as --pcap: standard input


def is_pipe(path: str) -> bool:
    """Whether `path` is a named pipe (FIFO): read as it is written, not replayed."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _is_stdin(path: str) -> bool:
    """Whether `path` names standard input (`/dev/stdin`, `/proc/self/fd/0`, or a link to
    one). By name, not by what it opens: `--pcap /dev/null` with standard input from
    /dev/null is that device, not `-`."""
    names = {"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", f"/proc/{os.getpid()}/fd/0"}
    p = os.path.abspath(path)
    for _ in range(40):  # (the kernel's own limit on links followed)
        if p in names:
            return True
        try:
            target = os.readlink(p)
        except OSError:  # not a link (or gone): it names what it is
            return False
        p = os.path.normpath(os.path.join(os.path.dirname(p), target))
    return False


def _named_stdin(fd: int) -> BinaryIO:
    """Standard input's file, open, named as pcap-dump names it in its errors."""
    f = open(fd, "rb")  # noqa: SIM115 - the replay reads it to its end
    f.raw.name = "<stdin>"  # type: ignore[attr-defined]
    return f


def stdin_capture() -> int:
    """`--pcap -`: a descriptor of standard input, the capture, for the source to read;
    the terminal (/dev/tty) takes its place as standard input, where the screen reads its
    keys (it would read the capture's bytes as keys). Refused, as `pcap-dump -` refuses
    it, when standard input is closed or is the terminal itself."""
    try:
        os.fstat(0)
    except OSError:
        raise UserError("--pcap -: standard input is closed", Exit.USAGE) from None
    if os.isatty(0):
        raise UserError("--pcap -: standard input is a terminal; pipe a capture into it "
                        "(tcpdump -U -w - port 5672 | amqp tui --pcap -)", Exit.USAGE)
    try:
        tty = os.open("/dev/tty", os.O_RDWR)
    except OSError as e:
        raise UserError("--pcap -: the keys are read from the terminal while standard input "
                        f"carries the capture, and there is none (/dev/tty: {e.strerror})",
                        Exit.USAGE) from None
    data = os.dup(0)
    os.dup2(tty, 0)
    os.close(tty)
    return data


# amqpcli.tui.watch.KEEP_ENDED (the TUI's modules are imported only when it runs)
KEEP_ENDED = 100
_KEEP_ENDED_GOES_WITH = ("--keep-ended goes with a source shown as it comes, of many "
                         "connections (--live, --proxy, --serve, a pipe: --pcap FIFO or -)")


@app.command(help=COMMANDS["tui"].help, epilog=EPILOG)
# without --reconnect and --trace: it shows drops and frames itself; lazy: only some
# sources connect (the others refuse the options first)
@connection_options(without=("reconnect", "trace"), lazy=True)
def tui(
    ctx: typer.Context,
    conn: Callable[..., ConnectionConfig],
    pcap: Annotated[str | None, typer.Option("--pcap", help="Replay this capture file (pcap/pcapng) or frame-trace log (proton's PN_TRACE_FRM=1 output, a router's log: see docs/trace-logs.md), or a folder's capture files merged by time (or its logs: *.log, *.txt, *.trace, gzipped too, whose first lines are one); a named pipe (FIFO) or - (a pipe into standard input) is shown as it is written, capture or log, as --live shows packets; a file redirected into standard input is replayed.", rich_help_panel=_SRC)] = None,
    proxy: Annotated[str | None, typer.Option("--proxy", metavar="LISTEN", help="Proxy LISTEN (PORT or HOST:PORT, loopback by default) to the broker at URL.", rich_help_panel=_SRC)] = None,
    live: Annotated[str | None, typer.Option("--live", metavar="IFACE", help="Capture live on this interface (needs tshark).", rich_help_panel=_SRC)] = None,
    recv: Annotated[bool, typer.Option("--recv", help="Our own receiving link from URL's address; grant credit and settle by key.", rich_help_panel=_SRC)] = False,
    send: Annotated[bool, typer.Option("--send", help="Our own sending link to URL's address; send by key.", rich_help_panel=_SRC)] = False,
    serve: Annotated[bool, typer.Option("--serve", help="Play the broker: every message an application sends waits for you to settle it.", rich_help_panel=_SRC)] = False,
    listen: Annotated[str, typer.Option("--listen", "-l", help="With --serve: PORT, HOST:PORT or [V6]:PORT (loopback unless a host is given).", rich_help_panel=_SRC)] = "127.0.0.1:5672",
    record: Annotated[str | None, typer.Option("--record", "-w", help="With --proxy: also write the traffic to this pcapng file: raw, so a SASL PLAIN password is in it in clear.", rich_help_panel=_SRC)] = None,
    half_close_timeout: Annotated[float, typer.Option("--half-close-timeout", help="With --proxy: seconds a side may send nothing once the other has closed its side of a connection, before the proxy ends it (0: wait for ever).", rich_help_panel=_SRC)] = 30.0,
    port: Annotated[list[int] | None, typer.Option("--amqp-port", help="With --pcap/--live: also treat this TCP port as AMQP (repeatable).", rich_help_panel=_SRC)] = None,
    capture_filter: Annotated[str, typer.Option("--capture-filter", help="With --live: BPF filter for the capture.", rich_help_panel=_SRC)] = "tcp",
    fast_capture: Annotated[bool, typer.Option("--fast-capture", help="With --live: dumpcap into our own reader instead of tshark's dissection (keeps up with busy links).", rich_help_panel=_SRC)] = False,
    speed: Annotated[float, typer.Option("--speed", help="Replay speed (1 = as recorded; 0 = as fast as possible).", rich_help_panel=_VIEW)] = 1.0,
    play: Annotated[bool, typer.Option("--play", help="Start playing the replay at once.", rich_help_panel=_VIEW)] = False,
    history: Annotated[int, typer.Option("--history", help="Settled deliveries kept per connection for viewing (older ones are only counted).", rich_help_panel=_VIEW)] = 1000,
    frame_log: Annotated[int, typer.Option("--frame-log", help="Frames kept in the frame log of live sources.", rich_help_panel=_VIEW)] = 200_000,
    frames_alias: Annotated[int | None, typer.Option("--frames", hidden=True)] = None,  # the old spelling of --frame-log
    keep_ended: Annotated[int, typer.Option("--keep-ended", help="Ended connections kept for viewing by a source shown as it comes (--proxy, --serve, --live, a pipe): the most recent ones; older ones are only counted.", rich_help_panel=_VIEW)] = KEEP_ENDED,
    credit: Annotated[int, typer.Option("--credit", help="Credit granted by the c key (our receiving link).", rich_help_panel=_VIEW)] = 10,
    refresh: Annotated[float, typer.Option("--refresh", help="View updates per second.", rich_help_panel=_VIEW)] = 10.0,
) -> None:
    check_path(pcap, "--pcap", "capture file")
    check_path(record, "--record")
    check_given(live, "--live", "an interface name")
    check_given(capture_filter, "--capture-filter", "a BPF filter",
                "leave the option out for the default, tcp")
    url_given = ctx.params.get("url") is not None
    src = choose_source(url_given=url_given, pcap=pcap, proxy=proxy, live=live, recv=recv,
                        send=send, serve=serve,
                        profile_given=ctx.params.get("conn_profile") is not None,
                        env_url=bool(os.environ.get("AMQP_URL")))
    refuse_unused_connection_options(given_connection_options(ctx), src)
    frames = frames_alias if frames_alias is not None else frame_log
    if history < 1 or frames < 16:
        raise UserError("--history must be at least 1 and --frame-log at least 16", Exit.USAGE)
    if keep_ended < 0:
        raise UserError("--keep-ended must be 0 or more", Exit.USAGE)
    if not 0.5 <= refresh <= 60:
        raise UserError("--refresh must be between 0.5 and 60", Exit.USAGE)
    check_credit(credit, "--credit")
    check_seconds(half_close_timeout, "--half-close-timeout", zero=True)
    if not (math.isfinite(speed) and speed >= 0):
        raise UserError("--speed must be 0 (as fast as possible) or more", Exit.USAGE)
    for p in port or ():
        if not 0 < p < 65536:
            raise UserError(f"--amqp-port {p}: not a TCP port (1 to 65535)", Exit.USAGE)
    # an option of another source would be quietly ignored
    for given, option, sources in (
            (record is not None, "--record", ("proxy",)),
            (option_given(ctx, "half_close_timeout"), "--half-close-timeout", ("proxy",)),
            (option_given(ctx, "listen"), "--listen", ("serve",)),
            (fast_capture, "--fast-capture", ("live",)),
            (option_given(ctx, "capture_filter"), "--capture-filter", ("live",)),
            (play, "--play", ("pcap",)),
            (option_given(ctx, "speed"), "--speed", ("pcap",)),
            (option_given(ctx, "credit"), "--credit", ("recv",)),
            (bool(port), "--amqp-port", ("pcap", "live"))):
        if given and src not in sources:
            raise UserError(f"{option} goes with --{' or --'.join(sources)}", Exit.USAGE)
    if option_given(ctx, "keep_ended") and src not in ("proxy", "serve", "live", "pcap"):
        raise UserError(_KEEP_ENDED_GOES_WITH, Exit.USAGE)
    from amqpcli.tui.app import run

    stdin: int | None = None  # --pcap -: standard input's descriptor, the capture
    if src == "pcap" and pcap is not None and (pcap == STDIN or _is_stdin(pcap)):
        pcap = STDIN  # /dev/stdin: the keys must come from the terminal all the same
        stdin = stdin_capture()
    # a file redirected into standard input (`< cap.pcapng`) is whole already: replayed as
    # the file would be; a pipe is followed as it is written
    stdin_is_file = stdin is not None and stat.S_ISREG(os.fstat(stdin).st_mode)
    if src == "pcap" and pcap is not None and not stdin_is_file and (
            stdin is not None or is_pipe(pcap)):
        from amqpcli.tui.sources.pipe import PipeSource

        what = "standard input" if pcap == STDIN else f"{pcap} (a named pipe)"
        for given, option in ((play, "--play"), (option_given(ctx, "speed"), "--speed")):
            if given:
                raise UserError(f"{option} replays a capture file; {what} is shown as it is "
                                "written", Exit.USAGE)
        if pcap != STDIN and not os.access(pcap, os.R_OK):
            raise UserError(f"{pcap}: cannot open: {os.strerror(errno.EACCES)}", Exit.USAGE)
        # the named pipe is opened by the source, where waiting for its writer can be
        # stopped (q, Ctrl-C): the screen opens at once
        pipe = PipeSource(pcap if stdin is None else stdin, ports=port or (),
                          history=history, frames=frames, keep_ended=keep_ended)
        run(pipe, refresh_hz=refresh)
    elif src == "pcap":
        from amqpcli.tui.sources.replay import ReplaySource

        assert pcap is not None
        if option_given(ctx, "frame_log") or frames_alias is not None:
            raise UserError("--frame-log goes with a source shown as it comes (--live, "
                            "--proxy, --recv, --send, --serve, a pipe): a capture file is "
                            "replayed whole", Exit.USAGE)
        if option_given(ctx, "keep_ended"):
            raise UserError(f"{_KEEP_ENDED_GOES_WITH}: a capture file is replayed whole, "
                            "every connection kept", Exit.USAGE)
        replay = ReplaySource(pcap if stdin is None else _named_stdin(stdin), ports=port or (),
                              history=history, speed=speed, autoplay=play)
        # up to the first frame: a capture with nothing readable is a one-line error (exit
        # 8, as in pcap-dump) before the screen opens; a folder is its capture files
        replay.open()
        run(replay, refresh_hz=refresh)
    elif src == "proxy":
        from amqpcli.cli.proxy import upstream_config
        from amqpcli.proxy import parse_listen
        from amqpcli.tui.sources.proxy import ProxySource

        assert proxy is not None
        broker = conn(only=_PROXY_OPTIONS | {"url", "address"})
        upstream = proxy_upstream_url(ctx, broker.endpoint)  # (its refusals before warnings)
        warn_unused_profile_keys(ctx)
        tls = broker.tls
        cfg = upstream_config(upstream, ca_file=tls.ca_file,
                              cert_file=tls.cert_file, key_file=tls.key_file,
                              insecure=not tls.verify, server_name=tls.server_name,
                              connect_timeout=broker.connect_timeout)
        run(ProxySource(parse_listen(proxy), cfg, record=record, history=history, frames=frames,
                        half_close_timeout=half_close_timeout, keep_ended=keep_ended),
            refresh_hz=refresh)
    elif src in ("recv", "send"):
        from amqpcli.tui.sources.client import ClientSource

        run(ClientSource(conn(), receive=src == "recv", history=history, frames=frames),
            refresh_hz=refresh, credit_step=credit)
    elif src == "live":
        from amqpcli.tui.sources.live import LiveSource

        assert live is not None
        capture = LiveSource(live, ports=port or (), bpf_filter=capture_filter,
                             fast=fast_capture, history=history, frames=frames,
                             keep_ended=keep_ended)
        try:
            run(capture, refresh_hz=refresh)
        finally:
            # (the app stops its source as it quits; whatever ended it, the capture
            # processes, in sessions of their own, must not outlive us)
            capture.stop()
    else:
        from amqpcli.proxy import parse_listen
        from amqpcli.tui.sources.serve import ServeSource

        run(ServeSource(parse_listen(listen), history=history, frames=frames,
                        keep_ended=keep_ended), refresh_hz=refresh)
