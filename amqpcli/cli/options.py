"""Options shared by networked commands, declared once.

`connection_options` is a decorator: it adds the URL argument and every connection option
to a command's signature and hands the command one `ConnectionConfig` as ``conn``.
Typed-value parsing (``key:int=5``) used by several commands also lives here.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import os
import re
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from amqpcli.errors import Exit, UserError, cut_middle

if TYPE_CHECKING:  # the net layer, the codec and profiles load when a command runs, not for --help
    from amqpcli.codec import types as t
    from amqpcli.net.config import ConnectionConfig

F = TypeVar("F", bound=Callable[..., Any])

URL_HELP = (
    "amqp[s]://[user[:password]@]host[:port][/address]. The address is the URL path minus "
    "its first '/', verbatim and percent-decoded: amqp://h/orders gives 'orders', "
    "amqp://h//queue/orders gives '/queue/orders' (RabbitMQ). Default: $AMQP_URL. "
    "@NAME/ADDRESS: the named connection NAME from the config file (docs/config.md). "
    "A failover list, URL,URL,… or failover:(URL,URL,…), names the brokers of one "
    "service: each connect goes round them."
)

_P = inspect.Parameter
_CONN = "Connection"

# name -> (default Option/Argument, annotation). One declaration per option.
_CONNECTION_PARAMS: list[tuple[str, Any, Any]] = [
    ("url", typer.Argument(None, help=URL_HELP, show_default=False), str | None),
    ("address", typer.Option(None, "--address", "-a", help="Node address, verbatim (wins over the URL path).", rich_help_panel=_CONN), str | None),
    ("host", typer.Option(None, "--host", help="Host (wins over the URL).", rich_help_panel=_CONN), str | None),
    ("port", typer.Option(None, "--port", help="Port (default 5672, amqps 5671).", rich_help_panel=_CONN), int | None),
    ("user", typer.Option(None, "--user", "-u", help="SASL user (wins over the URL).", rich_help_panel=_CONN), str | None),
    ("password", typer.Option(None, "--password", help="SASL password (prefer $AMQP_PASSWORD or --password-file).", rich_help_panel=_CONN, show_default=False), str | None),
    ("password_file", typer.Option(None, "--password-file", help="Read the password from the first line of this file.", rich_help_panel=_CONN), str | None),
    ("sasl_mechanism", typer.Option(None, "--sasl-mechanism", help="ANONYMOUS, PLAIN, EXTERNAL, or NONE for no SASL layer (default: PLAIN with a user, EXTERNAL with a client certificate, else ANONYMOUS).", rich_help_panel=_CONN), str | None),
    ("tls_upgrade", typer.Option(False, "--tls-upgrade", help="With amqp://: negotiate TLS through the AMQP TLS header (protocol id 2). amqps:// is TLS first.", rich_help_panel=_CONN), bool),
    ("ca_file", typer.Option(None, "--ca-file", help="CA certificates (PEM) to verify the peer.", rich_help_panel=_CONN), str | None),
    ("cert_file", typer.Option(None, "--cert", help="Client certificate (PEM).", rich_help_panel=_CONN), str | None),
    ("key_file", typer.Option(None, "--key", help="Client private key (PEM), if not in --cert.", rich_help_panel=_CONN), str | None),
    ("insecure", typer.Option(False, "--insecure", help="Do not verify the peer's certificate or name.", rich_help_panel=_CONN), bool),
    ("server_name", typer.Option(None, "--server-name", help="TLS SNI and the name to verify (default: the host); also the hostname of our open unless --open-hostname gives one.", rich_help_panel=_CONN), str | None),
    ("open_hostname", typer.Option(None, "--open-hostname", help="The hostname our open (and sasl-init) carries, as given, TLS or not: a broker may pick a virtual host by it (RabbitMQ: vhost:NAME). Default: --server-name, else the host.", rich_help_panel=_CONN), str | None),
    ("connect_timeout", typer.Option(10.0, "--connect-timeout", help="Seconds to connect, including TLS, SASL and open.", rich_help_panel=_CONN), float),
    ("idle_timeout", typer.Option(None, "--idle-timeout", help="Close the connection when the peer is silent this many seconds (the open asks it for heartbeats at half that).", rich_help_panel=_CONN), float | None),
    ("container_id", typer.Option(None, "--container-id", help="Our container-id (default: random; a subscription needs a stable one).", rich_help_panel=_CONN), str | None),
    ("max_frame_size", typer.Option(None, "--max-frame-size", help="Largest frame we accept, in bytes (min 512).", rich_help_panel=_CONN), int | None),
    ("max_message_size", typer.Option(None, "--max-message-size", help="Largest message we receive, in bytes: our receiving links say so in their attach, and a peer that sends a larger one has the link ended (amqp:link:message-size-exceeded; the message stays with it). Default: no limit.", rich_help_panel=_CONN), int | None),
    ("reconnect", typer.Option(0, "--reconnect", help="Try up to N times in a row when connecting fails or the connection is lost (backoff 0.2 s doubling to 10 s); a connection that got somewhere starts the count over.", rich_help_panel=_CONN), int),
    ("trace", typer.Option(False, "--trace", help="Print every frame both ways on stderr as it happens, one line each (SASL passwords masked).", rich_help_panel=_CONN), bool),
    # Named connections (amqpcli/config.py); also reached as @NAME[/ADDRESS] for the URL.
    ("profile", typer.Option(None, "--profile", help="Use the named connection NAME from the config file (docs/config.md); the URL argument may also be @NAME/ADDRESS.", rich_help_panel=_CONN, show_default=False), str | None),
]


def check_seconds(value: float | None, option: str, zero: bool = False) -> None:
    """A duration option must be a finite number of seconds, positive (or 0 with `zero`):
    nan, inf and negatives are usage errors. None (not given) passes."""
    if value is None:
        return
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        raise UserError(
            f"{option} must be a finite number of seconds, {'0 or more' if zero else 'more than 0'} "
            f"(got {value:g})", Exit.USAGE)


# idle-time-out is a uint of milliseconds (Part 2 §2.7.1); this keeps what we advertise well
# inside it (`amqp serve` and the clients alike)
MAX_IDLE_TIMEOUT = 4_000_000


def check_idle_timeout(value: float | None, option: str) -> None:
    """An idle timeout we would advertise: as `check_seconds`, and at most
    `MAX_IDLE_TIMEOUT` seconds (above that our open could not be encoded). None passes."""
    check_seconds(value, option)
    if value is not None and value > MAX_IDLE_TIMEOUT:
        said = f"{value:g}"
        if float(said) != value:  # (not 4e+06 for 4000001: the bound would seem met)
            said = f"{value:.15g}"
        raise UserError(f"{option} must be at most {MAX_IDLE_TIMEOUT} seconds (got {said})",
                        Exit.USAGE)


# AMQP 1.0: max-frame-size is a uint (Part 2 §2.7.1) of at least MIN-MAX-FRAME-SIZE (§2.4.1).
MIN_MAX_FRAME_SIZE = 512
UINT_MAX = 0xFFFFFFFF
ULONG_MAX = 0xFFFFFFFFFFFFFFFF
# Link credit: past 2**31 the serial-number arithmetic of delivery-count (Part 2 §2.6.7,
# RFC 1982) cannot tell more from less.
MAX_CREDIT = 2**31 - 1


def check_max_frame_size(value: int | None, what: str) -> None:
    """A max-frame-size we would advertise: 512 to 4294967295 bytes, or a usage error
    (above a uint our open could not be encoded). None (not given) passes."""
    if value is not None and not MIN_MAX_FRAME_SIZE <= value <= UINT_MAX:
        raise UserError(f"{what} must be between {MIN_MAX_FRAME_SIZE} and {UINT_MAX}",
                        Exit.USAGE)


def check_max_message_size(value: int | None, what: str) -> None:
    """A max-message-size our receiving links would advertise: 1 to 18446744073709551615
    bytes (a ulong; 0 would say "no limit", which not giving it says), or a usage error.
    None (not given) passes."""
    if value is not None and not 1 <= value <= ULONG_MAX:
        raise UserError(f"{what} must be between 1 and {ULONG_MAX}", Exit.USAGE)


def check_credit(value: int | None, what: str, least: int = 1) -> None:
    """Link credit we would grant: `least` to `MAX_CREDIT`, or a usage error. None (not
    given) passes."""
    if value is not None and not least <= value <= MAX_CREDIT:
        raise UserError(f"{what} must be between {least} and {MAX_CREDIT}", Exit.USAGE)


def check_text(value: str | None, what: str) -> None:
    """Text from the command line must be UTF-8 to go on the wire: bytes that are not
    (kept by Python as lone surrogates) are a usage error naming the first of them."""
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raw = value[e.start:e.end].encode("utf-8", "surrogateescape")
        raise UserError(f"{what} is not UTF-8 text (byte 0x{raw[0]:02x} at offset "
                        f"{e.start})", Exit.USAGE) from None


def check_url_text(value: str | None, what: str) -> None:
    """As `check_text` for a URL (or a failover list), giving no clue to a password: a
    byte in a URL's user or password is not named, nor where it is; a byte after them is
    placed from the '@' that ends them (an offset from the start would tell their
    length)."""
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        spans = _credentials(value)
        if any(start <= e.start < at for start, at in spans):
            raise UserError(f"{what}'s user or password is not UTF-8 text", Exit.USAGE) from None
        before = [at for _, at in spans if at < e.start]
        if before:
            raw = value[e.start:e.end].encode("utf-8", "surrogateescape")
            raise UserError(f"{what} is not UTF-8 text (byte 0x{raw[0]:02x} at offset "
                            f"{e.start - before[-1]} from the '@' after the user and password)",
                            Exit.USAGE) from None
    check_text(value, what)


def _credentials(url: str) -> list[tuple[int, int]]:
    """(start, end) of the user and password of each URL of `url` (one or a failover
    list) that has them, the end at the '@' closing them: found as net.url finds them to
    mask them in its messages."""
    from amqpcli.net.url import _NEXT_URL, credentials_end

    out = []
    start = 0
    for m in [*_NEXT_URL.finditer(url), None]:
        end = len(url) if m is None else m.start()
        k = url.find("://", start, end)
        rest_at = k + 3 if k >= 0 else start
        at = credentials_end(url[rest_at:end])
        if at >= 0:
            out.append((rest_at, rest_at + at))
        if m is not None:
            start = m.end()
    return out


def check_secret(value: str | None, what: str) -> None:
    """As `check_text`, without naming the byte: it is a byte of a secret."""
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UserError(f"{what} is not UTF-8 text", Exit.USAGE) from None


def check_symbol(value: str, what: str) -> None:
    """Text that goes on the wire as a symbol (a capability, a filter's key): ASCII, as a
    symbol must be, or a usage error in the encoder's words — found before connecting,
    not as an internal error when the frame carrying it is encoded."""
    from amqpcli.codec.types import Symbol
    from amqpcli.net.outgoing import check_encodes

    check_encodes(Symbol(value), what)


def check_link_options(link_name: str | None, capabilities: Sequence[str]) -> None:
    """`--link-name` and `--capability` (send, recv, browse): UTF-8 and not empty (an empty
    link name would be the peer's to refuse, an empty capability means nothing); a
    capability is a symbol."""
    check_text(link_name, "--link-name")
    if link_name == "":
        raise UserError("--link-name needs a name", Exit.USAGE)
    for cap in capabilities:
        check_text(cap, "--capability")
        if not cap:
            raise UserError("--capability needs a name (topic, queue, shared, ...)", Exit.USAGE)
        check_symbol(cap, f"--capability {cap!r}")


def check_path(value: str | os.PathLike[str] | None, what: str, kind: str = "file") -> None:
    """A path given empty (`--record ''`, an argument `''`) is a usage error naming the
    option: left alone it was the current folder (Typer reads '' as the path '.'), a file
    that cannot be opened, or an option quietly not taken (an empty name is false).
    None (not given) passes."""
    if value is not None and not os.fspath(value):
        raise UserError(f"{what}: the {kind} name is empty", Exit.USAGE)


def check_given(value: str | None, what: str, needed: str, hint: str = "") -> None:
    """Text an option cannot do without (an interface, a capture filter): empty or blank is
    a usage error naming the option, as for the view filters (`--live ''` reached dumpcap
    as an interface without a name; `--capture-filter ''` captured everything), and so is
    text that is not UTF-8. None (not given) passes."""
    if value is None:
        return
    if not value.strip():
        raise UserError(f"{what}: {needed} is needed (got {value!r}{'; ' if hint else ''}"
                        f"{hint})", Exit.USAGE)
    check_text(value, what)


def check_positive(value: float | None, option: str) -> None:
    """A rate-like option: a finite number above 0."""
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise UserError(f"{option} must be a finite number more than 0 (got {value:g})", Exit.USAGE)


def _stderr_tracer() -> Callable[[str, str, Any, float], None]:
    import sys

    from amqpcli.cli.app import stderr_failed
    from amqpcli.cli.trace import frame_tracer

    # stderr drops what it cannot write (cli/app.py): a lost line ends the tracing
    return frame_tracer(lambda: None if stderr_failed() else sys.stderr)


def build_config(
    url: str | None = None,
    address: str | None = None,
    host: str | None = None,
    port: int | None = None,
    user: str | None = None,
    password: str | None = None,
    password_file: str | None = None,
    sasl_mechanism: str | None = None,
    tls_upgrade: bool = False,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
    insecure: bool = False,
    server_name: str | None = None,
    open_hostname: str | None = None,
    connect_timeout: float = 10.0,
    idle_timeout: float | None = None,
    container_id: str | None = None,
    max_frame_size: int | None = None,
    max_message_size: int | None = None,
    reconnect: int = 0,
    trace: bool = False,
    *,
    upgrade_offered: bool = True,
    password_from_profile: bool = False,
) -> ConnectionConfig:
    """The `ConnectionConfig` of a command's connection options, each checked. TLS options
    (`--ca-file`, `--cert`, `--key`, `--server-name`) need a TLS connection: with a plain
    `amqp://` URL and no `--tls-upgrade` they are a usage error, not quietly ignored (the
    traffic, a PLAIN password included, would go in clear). `upgrade_offered`: whether
    the command has `--tls-upgrade` (the error suggests it). A `--password` or
    `--password-file` with no user is a usage error, as `amqp://:pw@h` is: without a user
    the login is anonymous and the password is never sent (`password_from_profile`: the
    password is a profile's, not an option's; `$AMQP_PASSWORD` is only a fallback)."""
    from amqpcli.net.config import ConnectionConfig, ReconnectPolicy, TlsConfig
    from amqpcli.net.url import resolve_endpoint

    check_url_text(url if url is not None else os.environ.get("AMQP_URL"),
                   "the URL" if url is not None else "$AMQP_URL")
    for text, what in ((address, "--address"), (host, "--host"), (user, "--user"),
                       (container_id, "--container-id"), (open_hostname, "--open-hostname")):
        check_text(text, what)
    check_secret(password, "the profile's password" if password_from_profile else "--password")
    if password is None and password_file is None:
        check_secret(os.environ.get("AMQP_PASSWORD"), "$AMQP_PASSWORD")
    if user == "":
        # (it was no user at all: the login anonymous, a --password with it refused)
        raise UserError("--user needs a name (without --user the login is anonymous)",
                        Exit.USAGE)
    if host == "":
        # no host at all, not a name that does not resolve (an empty host in the URL is
        # the default one: --host is there to name one)
        raise UserError("--host needs a name or address", Exit.USAGE)
    if server_name == "":
        # (it fell back to the host without a word: the certificate checked for another name)
        raise UserError("--server-name needs a name", Exit.USAGE)
    if container_id == "":
        # an empty id is no id: a durable subscription could not be found again by it
        raise UserError("--container-id needs an id", Exit.USAGE)
    if open_hostname == "":
        # an empty hostname names no host: the broker's default would be used unasked
        raise UserError("--open-hostname needs a name (RabbitMQ's vhost NAME: vhost:NAME)",
                        Exit.USAGE)
    for path, what in ((password_file, "--password-file"), (ca_file, "--ca-file"),
                       (cert_file, "--cert"), (key_file, "--key")):
        check_path(path, what)
    ep = resolve_endpoint(
        url, host=host, port=port, user=user, password=password,
        password_file=password_file, address=address,
    )
    if (password is not None or password_file is not None) and not password_from_profile \
            and not ep.user:
        given = "--password" if password is not None else "--password-file"
        raise UserError(f"{given} needs a user (URL user@ or --user): without one the login "
                        "is anonymous", Exit.USAGE)
    for what, text in (("user", ep.user), ("password", ep.password)):
        if text is not None and "\0" in text:
            # (a URL's %00, a password file's or a profile's NUL: the PLAIN response would
            # split elsewhere, and the peer's refusal read as a wrong password)
            raise UserError(f"the {what} holds a NUL character, which SASL PLAIN cannot "
                            "carry: it separates the user from the password (RFC 4616)",
                            Exit.USAGE)
    tls_options = [what for what, v in (("--ca-file", ca_file), ("--cert", cert_file),
                                        ("--key", key_file), ("--server-name", server_name),
                                        ("--insecure", insecure or None))
                   if v is not None]
    if tls_upgrade and ep.tls:
        # (amqps:// is TLS from the first byte: there is nothing to upgrade)
        raise UserError(f"--tls-upgrade is for amqp://: amqps://{ep.hostport} is TLS first",
                        Exit.USAGE)
    if tls_options and not (ep.tls or tls_upgrade):
        named = (f"{tls_options[0]} is a TLS option" if len(tls_options) == 1
                 else f"{', '.join(tls_options)} are TLS options")
        raise UserError(f"{named}, but amqp://{ep.hostport} is plain TCP: use amqps://"
                        f"{' (or --tls-upgrade)' if upgrade_offered else ''} for TLS",
                        Exit.USAGE)
    if server_name is not None:
        from amqpcli.net.connect import name_refused

        refused = name_refused(server_name)
        if refused is not None:  # (TLS would refuse it only once connected)
            raise UserError(f"--server-name {cut_middle(server_name)!r} is not a host name "
                            f"({refused})", Exit.USAGE)
    if key_file is not None and cert_file is None:
        # the key alone sends no client certificate: it would be ignored without a word
        raise UserError("--key needs --cert (the client certificate it goes with)", Exit.USAGE)
    check_max_frame_size(max_frame_size, "--max-frame-size")
    check_max_message_size(max_message_size, "--max-message-size")
    check_seconds(connect_timeout, "--connect-timeout")
    check_idle_timeout(idle_timeout, "--idle-timeout")
    if reconnect < 0:
        raise UserError("--reconnect must be 0 or more", Exit.USAGE)
    cfg = ConnectionConfig(
        endpoint=ep,
        sasl_mechanism=sasl_mechanism,
        tls=TlsConfig(ca_file=ca_file, cert_file=cert_file, key_file=key_file,
                      verify=not insecure, server_name=server_name),
        tls_upgrade=tls_upgrade,
        connect_timeout=connect_timeout,
        idle_timeout=idle_timeout,
        container_id=container_id,
        max_frame_size=max_frame_size,
        max_message_size=max_message_size,
        reconnect=ReconnectPolicy(limit=reconnect),
        hostname=open_hostname,
        trace=_stderr_tracer() if trace else None,
    )
    cfg.mechanism()  # a bad --sasl-mechanism is a usage error before we connect
    return cfg


# Parameter names the decorator adds: the option's own name with this prefix (the URL
# argument keeps "url"), so a command's own parameters (a "port" of its own) never clash.
_PREFIX = "conn_"


def _param_name(name: str) -> str:
    return name if name == "url" else _PREFIX + name


def _resolved(p: inspect.Parameter, func: Callable[..., Any]) -> inspect.Parameter:
    if not isinstance(p.annotation, str):
        return p
    ann = eval(p.annotation, func.__globals__)  # as inspect.signature(eval_str=True) does
    return p.replace(annotation=ann)


def connection_options(func: F | None = None, *, without: Collection[str] = (),
                       body: str | None = None, lazy: bool = False) -> Any:
    """Add the URL argument and the connection options to a Typer command
    (`@connection_options`, or `@connection_options(without=("reconnect",))` for a
    command that has no use for some of them: an option that would do nothing is not
    offered).

    `body`: the command's positional argument after the URL. When the URL comes from
    `$AMQP_URL` or `--profile`, a lone positional that is no URL (no `amqp://`,
    `amqps://` or `@NAME`) is that argument: `AMQP_URL=… amqp send hello`.

    The command declares a parameter ``conn: ConnectionConfig``; the wrapper builds it
    from the options, so no command repeats them. The URL is ``ctx.params["url"]``.
    `lazy`: ``conn`` is a function that builds it, for a command that connects only in
    some of its modes (`amqp tui`): it refuses the options a mode has no use for
    (`given_connection_options`) before their own checks speak of a connection that
    mode never makes.
    """
    if func is None:
        return lambda f: _with_connection_options(f, without, body, lazy)
    return _with_connection_options(func, without, body, lazy)


def given_connection_options(ctx: typer.Context) -> dict[str, str]:
    """The connection options given to the command (not their defaults, nor a profile's
    settings), name to flag (`{"cert_file": "--cert"}`), the URL and --profile aside."""
    names = {_param_name(name): name for name, _, _ in _CONNECTION_PARAMS
             if name not in ("url", "profile")}
    return {names[p.name]: next(o for o in p.opts if o.startswith("--"))
            for p in ctx.command.params
            if p.name in names and option_given(ctx, p.name)}


def profile_settings(ctx: typer.Context) -> tuple[str, list[str]] | None:
    """The profile the command's connection comes from (`--profile`, `@NAME` as the URL
    or in `$AMQP_URL`), and the keys it sets, in the config file's order; None without
    one."""
    from amqpcli.config import get_profile, split_profile_ref

    url = ctx.params.get("url")
    ref = split_profile_ref(url if url is not None else os.environ.get("AMQP_URL"))
    name = ref[0] if ref is not None else ctx.params.get(_param_name("profile"))
    if name is None:
        return None
    prof = get_profile(name)
    # (a false bool is the default said again: it asks for nothing)
    return name, [f.name for f in dataclasses.fields(prof)
                  if f.name != "name" and getattr(prof, f.name) not in (None, False)]


def option_given(ctx: typer.Context, name: str) -> bool:
    """Whether the parameter `name` was given (not its default)."""
    source = ctx.get_parameter_source(name)  # (click's ParameterSource: typer may vendor it)
    return source is not None and source.name != "DEFAULT"


def _url_shaped(text: str) -> bool:
    return text.startswith("@") or "://" in text


def _with_connection_options(func: F, without: Collection[str], body: str | None,
                             lazy: bool) -> F:
    # Resolve string annotations here, in the command's module, not in this one; not the
    # one of ``conn`` (ConnectionConfig), so command modules need not import the net layer.
    sig = inspect.signature(func)
    own = [_resolved(p, func) for p in sig.parameters.values() if p.name != "conn"]
    offered = [(name, default, ann) for name, default, ann in _CONNECTION_PARAMS
               if name not in without]
    added = [
        _P(_param_name(name), _P.KEYWORD_ONLY, default=default, annotation=ann)
        for name, default, ann in offered
    ]
    names = {_param_name(name): name for name, _, _ in offered}
    clash = sorted(names.keys() & {p.name for p in own})
    if clash:
        raise TypeError(f"{func.__name__}: parameter(s) {', '.join(clash)} clash with the connection options")

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        from amqpcli.config import apply_profile

        conn_kw = {names[k]: kwargs.pop(k) for k in list(kwargs) if k in names}
        url = conn_kw.get("url")
        if (body is not None and kwargs.get(body) is None and url is not None
                and not _url_shaped(url)
                and (conn_kw.get("profile") is not None or os.environ.get("AMQP_URL"))):
            kwargs[body], conn_kw["url"] = url, None  # the URL comes from elsewhere
        given = conn_kw.get("password") is not None or conn_kw.get("password_file") is not None

        def build(only: Collection[str] | None = None) -> ConnectionConfig:
            # `only`: the options a mode uses; a profile's others are left out, its
            # password not even looked up when the mode takes none
            kw = apply_profile(conn_kw, password=only is None or "password" in only)
            # (a named connection's settings for an option not offered here do not apply)
            kw = {k: v for k, v in kw.items() if k not in without and (
                only is None or k in only)}
            return build_config(**kw, password_from_profile=not given)

        return func(conn=build if lazy else build(), **kwargs)

    # The URL argument comes first so `amqp send URL BODY` reads naturally; a leading
    # typer.Context stays first.
    ctx_params = [p for p in own if p.annotation is typer.Context]
    rest = [p.replace(kind=_P.KEYWORD_ONLY) for p in own if p not in ctx_params]
    params = [p.replace(kind=_P.KEYWORD_ONLY) for p in ctx_params] + [added[0]] + rest + added[1:]
    wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


# --- typed values: "5", "int:5", "symbol:x", "uuid:…" -------------------------------

# What a value that does not parse is told, in place of the parser's own text (Python's
# "invalid literal for int() with base 10", "Invalid isoformat string"): what is wrong and
# what is taken.
_NOT_INTEGER = "not an integer (decimal, or 0x hex, 0o octal, 0b binary; no _ separators)"
_NOT_NUMBER = "not a number (decimal as in 2.5 or -1e-3, or inf, -inf, nan)"
_NOT_TIME = ("not a time: give ISO 8601 (2024-05-01T12:00:00Z, 2024-05-01T14:00:00+02:00, "
             "2024-05-01), milliseconds since the epoch, now, or now+DURATION / "
             "now-DURATION (now+60s, now-5m; units ms, s, m, h)")
_NOT_UUID = "not a UUID: 32 hex digits, hyphens optional (123e4567-e89b-12d3-a456-426614174000)"
_NOT_HEX = "not hex: after hex:, pairs of hex digits (hex:00ff)"
_NOT_BOOLEAN = "not a boolean (true, false, yes, no, 1 or 0)"

# A decimal integer as int() reads one (signs, spaces around, any Unicode digits): when
# int() still refuses it, it has more digits than Python converts (4300 by default),
# which is past the range of every AMQP integer type.
_DECIMAL = re.compile(r"\s*[+-]?(\d+)\s*")
_TIMESTAMP_RANGE = (-0x8000000000000000, 0x7FFFFFFFFFFFFFFF)
# datetime's complaints about one field of a well-formed time ("month must be in 1..12",
# "day is out of range for month"): said as they are; any other is _NOT_TIME.
_TIME_FIELD = re.compile(r"(year|month|day|hour|minute|second)\b")


def _out_of_range(type_name: str, lo: int, hi: int) -> ValueError:
    return ValueError(f"out of range for {type_name} ({lo} to {hi})")


def _bool(s: str) -> bool:
    low = s.lower()
    if low in ("true", "1", "yes"):
        return True
    if low in ("false", "0", "no"):
        return False
    raise ValueError(_NOT_BOOLEAN)


def _binary(s: str) -> bytes:
    if s.startswith("hex:"):
        try:
            return bytes.fromhex(s[4:])
        except ValueError:
            raise ValueError(_NOT_HEX) from None
    return s.encode("utf-8")


def _uuid(text: str) -> Any:
    import uuid

    try:
        return uuid.UUID(text)
    except ValueError:
        raise ValueError(_NOT_UUID) from None


# now+DURATION / now-DURATION: a time relative to when the value is made (a scheduled
# delivery's x-opt-scheduled-enqueue-time a minute ahead: now+60s)
_RELATIVE_TIME = re.compile(r"now(?:([+-])([0-9]{1,15}(?:\.[0-9]{1,9})?)(ms|s|m|h))?")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}


def _timestamp(text: str) -> t.Timestamp:
    """Milliseconds since the epoch, ISO 8601 (UTC unless it says otherwise), ``now``, or
    ``now+DURATION`` / ``now-DURATION`` (a number and a unit: ms, s, m or h)."""
    from amqpcli.codec import types as t

    relative = _RELATIVE_TIME.fullmatch(text)
    if relative is not None:
        import time

        sign, amount, unit = relative.groups()
        offset = 0 if sign is None else round(float(amount) * _UNIT_MS[unit])
        ms = int(time.time() * 1000) + (-offset if sign == "-" else offset)
        if not _TIMESTAMP_RANGE[0] <= ms <= _TIMESTAMP_RANGE[1]:
            raise _out_of_range("timestamp", *_TIMESTAMP_RANGE)
        return t.Timestamp(ms)
    try:
        return t.Timestamp(int(text))
    except ValueError:
        if _DECIMAL.fullmatch(text):  # too many digits for int()
            raise _out_of_range("timestamp", *_TIMESTAMP_RANGE) from None
    from amqpcli.render.types import parse_iso_time

    try:
        return t.Timestamp(parse_iso_time(text))
    except ValueError as e:
        field = str(e) if _TIME_FIELD.match(str(e)) else None
        raise ValueError(f"not a time: {field}" if field else _NOT_TIME) from None


def _null(text: str) -> None:
    if text:
        raise ValueError("null takes no value (write null: or KEY:null=)")


# How deep a JSON value may nest (`json:` values, JSON message bodies, `send --from`
# lines): twice the codec's limit for AMQP values (a typed value takes two levels,
# `{"list": [...]}`), and well within Python's recursion limit.
JSON_DEPTH = 200


def json_within_depth(text: str | bytes) -> Any:
    """`json.loads`, refusing nesting deeper than `JSON_DEPTH` (ValueError) rather than
    failing deep inside the parser or the conversion with a RecursionError. Bytes are
    UTF-8 (a UnicodeDecodeError at the byte that is not; a UTF-8 byte-order mark at the
    start is dropped): json.loads would take NULs in them for UTF-16 or UTF-32 text."""
    import json

    if isinstance(text, bytes):
        text = text.decode("utf-8").removeprefix("\ufeff")
    try:
        obj = json.loads(text)
    except RecursionError:
        raise ValueError(f"nested more than {JSON_DEPTH} deep") from None
    level = [obj]
    for _ in range(JSON_DEPTH):
        inner = [v for o in level if isinstance(o, (list, dict))
                 for v in (o.values() if isinstance(o, dict) else o)]
        if not inner:
            return obj
        level = inner
    raise ValueError(f"nested more than {JSON_DEPTH} deep")


def _json(text: str) -> Any:
    """A value in the lossless JSON format of docs/message-format.md; nested deeper than
    `JSON_DEPTH` is an error (ValueError), not a RecursionError in the parser or the
    conversion."""
    import json

    from amqpcli.render.jsonvalues import JsonValueError, from_json

    try:
        obj = json_within_depth(text)
    except json.JSONDecodeError as e:
        # where in the value, as a body's error says it (not JSON's "line 1 … (char 0)")
        at = f"column {e.colno}" if "\n" not in text else f"line {e.lineno} column {e.colno}"
        raise ValueError(f"not JSON: {e.msg} at {at}") from None
    try:
        return from_json(obj)
    except JsonValueError as e:
        raise ValueError(str(e)) from None


# The type names `typed_value` knows. Names only, so that telling "int:5" from a string
# needs no codec; `_converters` maps each to the AMQP type of amqpcli.codec.
TYPE_NAMES = frozenset({
    "string", "str", "symbol", "binary", "bool", "boolean", "ubyte", "ushort", "uint",
    "ulong", "byte", "short", "int", "long", "float", "double", "char", "timestamp", "uuid",
    "null", "json",
})
# AMQP types with no TYPE:VALUE form here: refused by name (as `json:` they can be given),
# so that "decimal32:1" is not taken for a string.
_JSON_ONLY = frozenset({"decimal32", "decimal64", "decimal128", "list", "map", "array"})


_INFINITY = frozenset(("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"))


def _double(text: str) -> float:
    """A double; a number past its range is an error (Python reads it as infinity), an
    infinity asked for by name is not."""
    return _finite_unless_named(text, "a double (at most ±1.7976931348623157e+308)")


def _float(text: str) -> t.Float:
    """A float, as `_double` takes a double: a number past even a double's range (Python
    reads it as infinity) is an error, an infinity asked for by name is not. (A finite
    number past a float's range is refused when the value is checked for encoding.)"""
    from amqpcli.codec import types as t

    return t.Float(_finite_unless_named(text, "a float (at most ±3.4028234663852886e+38)"))


def _finite_unless_named(text: str, range_said: str) -> float:
    """`text` as a double, refusing one Python reads as infinity unless it says so."""
    try:
        v = float(text)
    except ValueError:
        raise ValueError(_NOT_NUMBER) from None
    if math.isinf(v) and text.strip().lower() not in _INFINITY:
        raise ValueError(f"out of range for {range_said}")
    return v


def _integer(text: str, type_name: str, lo: int, hi: int) -> int:
    """An integer of `type_name` (`lo` to `hi`) in decimal (leading zeros allowed: `0{n}`
    gives 01, 02…) or, with its prefix, hex, octal or binary (0x1f, 0o17, 0b101); no `_`
    separators."""
    digits = text.strip().lstrip("+-")
    if "_" in text:
        raise ValueError(_NOT_INTEGER)
    try:
        v = int(text, 0 if digits[:2].lower() in ("0x", "0o", "0b") else 10)
    except ValueError:
        decimal = _DECIMAL.fullmatch(text)
        if decimal is None:
            raise ValueError(_NOT_INTEGER) from None
        if len(decimal[1].lstrip("0")) <= len(str(hi)):  # (thousands of leading zeros)
            raise ValueError(f"too many digits to read ({len(decimal[1])}, leading zeros "
                             "included)") from None
        raise _out_of_range(type_name, lo, hi) from None
    if not lo <= v <= hi:
        raise _out_of_range(type_name, lo, hi)
    return v


@functools.cache
def _converters() -> tuple[dict[str, Callable[[str], Any]], dict[type, tuple[int, int]]]:
    """(type name -> converter, integer type -> its range), built on first use."""
    from amqpcli.codec import types as t

    types: dict[str, Callable[[str], Any]] = {
        "string": str,
        "str": str,
        "symbol": t.Symbol,
        "binary": _binary,
        "bool": _bool,
        "boolean": _bool,
        "ubyte": t.UByte,
        "ushort": t.UShort,
        "uint": t.UInt,
        "ulong": t.ULong,
        "byte": t.Byte,
        "short": t.Short,
        "int": t.Int,
        "long": t.Long,
        "float": _float,
        "double": _double,
        "char": t.Char,
        "timestamp": t.Timestamp,
        "uuid": _uuid,
        "null": _null,
        "json": _json,
    }
    ranges: dict[type, tuple[int, int]] = {
        t.UByte: (0, 0xFF), t.UShort: (0, 0xFFFF), t.UInt: (0, 0xFFFFFFFF),
        t.ULong: (0, 0xFFFFFFFFFFFFFFFF), t.Byte: (-0x80, 0x7F), t.Short: (-0x8000, 0x7FFF),
        t.Int: (-0x80000000, 0x7FFFFFFF), t.Long: (-0x8000000000000000, 0x7FFFFFFFFFFFFFFF),
    }
    return types, ranges


def typed_value(type_name: str | None, text: str, what: str) -> Any:
    """Convert `text` to the AMQP type `type_name` (None: string)."""
    if type_name is None:
        return text
    from amqpcli.codec import types as t

    types, ranges = _converters()
    conv = types.get(type_name.lower())
    if type_name.lower() in _JSON_ONLY:
        raise UserError(f"{what}: {type_name} has no TYPE:VALUE form: give the value as "
                        "json:… in the lossless JSON format (docs/message-format.md)",
                        Exit.USAGE)
    if conv is None:
        raise UserError(
            f"{what}: unknown type {type_name!r} (one of: {', '.join(sorted(TYPE_NAMES))})",
            Exit.USAGE,
        )
    try:
        if conv in ranges:
            return conv(_integer(text, type_name, *ranges[conv]))
        if conv is t.Timestamp:
            return _timestamp(text)
        if conv is t.Char and len(text) != 1:
            raise ValueError("a char is one character")
        return conv(text)
    except ValueError as e:
        raise UserError(f"{what}: bad {type_name} value {cut_middle(text)!r}: {e}",
                        Exit.USAGE) from None


def parse_key_value(item: str, what: str) -> tuple[str, Any]:
    """``key=value`` or ``key:type=value`` → (key, typed value)."""
    key, sep, text = item.partition("=")
    if not sep or not key:
        raise UserError(f"{what}: expected KEY=VALUE or KEY:TYPE=VALUE, got {item!r}", Exit.USAGE)
    type_name = None
    if ":" in key:
        key, type_name = key.rsplit(":", 1)
    return key, typed_value(type_name, text, f"{what} {key!r}")


def parse_value(item: str, what: str) -> Any:
    """``value`` (a string) or ``type:value``, for bodies and single values."""
    head, sep, rest = item.partition(":")
    if sep and (head.lower() in TYPE_NAMES or head.lower() in _JSON_ONLY):
        return typed_value(head, rest, what)
    return item
