"""Where to connect and as whom: URLs, the options that override them, and secrets.

A URL is ``amqp[s]://[user[:password]@]host[:port][/address]``. An empty host is the
default one, unless the URL has credentials (they would go where the URL does not say).

The address rule: the URL path minus its first ``/`` (the one that separates it from the
host) is the address, verbatim and percent-decoded. So ``amqp://h/orders`` gives
``orders`` and ``amqp://h//queue/orders`` (or ``amqp://h/%2Fqueue%2Forders``) gives
``/queue/orders`` — the form RabbitMQ needs. ``--address`` takes the address verbatim and
wins over the URL.

A failover list is several URLs, each with its scheme, separated by commas
(``amqp://a:5672,amqp://b:5672/orders``), or the same inside ``failover:(…)`` as JMS
clients write it. Each connect tries the hosts in turn (`ConnectionConfig.next_host`); they
share one scheme, one set of credentials and one address, whichever URL gives them.

Precedence for every field: an explicit option, then the URL, then the environment
(``AMQP_URL`` for the whole URL, ``AMQP_PASSWORD`` for the password), then defaults.
The password is kept out of ``repr`` and ``str``; only `Endpoint.password` reveals it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from urllib.parse import unquote, urlsplit

from amqpcli.errors import Exit, UserError, cut_middle

__all__ = ["DEFAULT_PORT", "DEFAULT_TLS_PORT", "Endpoint", "failover_urls", "parse_url", "parse_urls",
           "resolve_endpoint"]

DEFAULT_PORT = 5672
DEFAULT_TLS_PORT = 5671
_SCHEMES = {"amqp": False, "amqps": True}


@dataclass(frozen=True)
class Endpoint:
    """One peer to connect to. `tls` means TLS first (``amqps://``)."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    tls: bool = False
    user: str | None = None
    password: str | None = field(default=None, repr=False, compare=True)
    address: str | None = None
    # the other hosts of a failover list, in order (each with this one's scheme,
    # credentials and address, and no alternates of its own)
    alternates: tuple[Endpoint, ...] = ()

    def __repr__(self) -> str:
        pw = ", password=***" if self.password is not None else ""
        more = f", alternates={list(self.alternates)!r}" if self.alternates else ""
        return (
            f"Endpoint(host={self.host!r}, port={self.port}, tls={self.tls}, "
            f"user={self.user!r}{pw}, address={self.address!r}{more})"
        )

    def hosts(self) -> tuple[Endpoint, ...]:
        """Every host to try, in order: this one, then its failover alternates."""
        if not self.alternates:
            return (self,)
        return (replace(self, alternates=()), *self.alternates)

    @property
    def hostport(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def url(self, show_secrets: bool = False) -> str:
        """The URL back, with the password as ``***`` unless `show_secrets`."""
        scheme = "amqps" if self.tls else "amqp"
        cred = ""
        if self.user is not None:
            cred = _q(self.user)
            if self.password is not None:
                cred += ":" + (_q(self.password) if show_secrets else "***")
            cred += "@"
        path = "/" + _q(self.address, safe="/") if self.address else ""
        more = "".join("," + a.url(show_secrets) for a in self.alternates)
        return f"{scheme}://{cred}{self.hostport}{path}{more}"

    __str__ = url


def _q(s: str, safe: str = "") -> str:
    from urllib.parse import quote

    return quote(s, safe=safe)


# a comma that starts the next URL of a failover list (so a comma in an address stays)
_NEXT_URL = re.compile(r"(,\s*)(?=amqps?://)", re.IGNORECASE)
_FAILOVER = re.compile(r"failover:(?P<rest>.*)", re.IGNORECASE | re.DOTALL)


def failover_urls(url: str) -> list[str] | None:
    """The URLs of a failover list (``URL,URL…`` or ``failover:(URL,URL…)``), or None for
    a single URL."""
    text = url.strip()
    m = _FAILOVER.fullmatch(text)
    if m is not None:
        rest = m.group("rest").strip()
        if not rest.startswith("("):
            raise UserError(f"bad URL {_quoted(url)}: write a failover list as "
                            "failover:(amqp://HOST1,amqp://HOST2)", Exit.USAGE)
        if rest.endswith(")"):
            inner = rest[1:-1]
        elif re.search(r"\)\s*\?", rest):
            # (what follows is not shown: a ')' in a password may be what ended the list)
            raise UserError(f"bad URL {_quoted(url)}: options after failover:(…) are not "
                            "read (--reconnect N sets the attempts; the address goes in a "
                            "URL of the list or --address)", Exit.USAGE)
        else:
            raise UserError(f"bad URL {_quoted(url)}: failover:( without its ')' at the end",
                            Exit.USAGE)
        if not inner.strip():
            raise UserError(f"bad URL {_quoted(url)}: failover:() names no host",
                            Exit.USAGE)
        return _NEXT_URL.split(inner.strip())[::2]
    items = _NEXT_URL.split(text)[::2]
    return items if len(items) > 1 else None


def parse_urls(url: str, *, address_given: bool = False,
               credentials_given: bool = False) -> Endpoint:
    """`parse_url` of one URL or of a failover list (the first host's `Endpoint`, the
    others its `alternates`). The hosts of a list share one scheme (a plain one would get
    the credentials in clear), one set of credentials and one address: whichever URL
    gives them gives them for all, and two that differ are a usage error — unless an
    option gives them for all (`address_given`: --address; `credentials_given`: a user
    and a password). Every URL of a list names its host: an empty one (``$HOST2`` unset)
    is not the default host, which would get the list's credentials."""
    items = failover_urls(url)
    if items is None:
        return parse_url(url)
    shown = _quoted(url)
    eps = []
    for i, item in enumerate(items):
        try:
            eps.append(parse_url(item))
        except UserError as e:
            if _split_password(items, i):
                # (not shown: any part of it may be the password's)
                raise UserError(f"bad failover list: URL {i + 1} of it has a bad host or "
                                "port, or a password holds ',amqp://' (percent-encode it: "
                                "%2C%2F%2F)", Exit.USAGE) from None
            raise e from None
        if not urlsplit(item if "://" in item else "amqp://" + item).hostname:
            raise UserError(f"bad URL {shown}: every URL of a failover list names its host "
                            f"({_quoted(item)} does not)", Exit.USAGE)
    if len({ep.tls for ep in eps}) > 1:
        raise UserError(f"bad URL {shown}: a failover list mixes amqp:// and amqps://: "
                        "give every host the same scheme", Exit.USAGE)
    creds = {(ep.user, ep.password) for ep in eps if ep.user is not None}
    if len(creds) > 1 and not credentials_given:
        raise UserError(f"bad URL {shown}: the hosts of a failover list give different "
                        "credentials: give them once (in one URL, or --user with "
                        "--password or --password-file)", Exit.USAGE)
    addresses = {ep.address for ep in eps if ep.address is not None}
    if len(addresses) > 1 and not address_given:
        raise UserError(f"bad URL {shown}: the hosts of a failover list name different "
                        "addresses: give it once (in one URL, or --address)", Exit.USAGE)
    user, password = next(iter(creds), (None, None))
    shared = {"user": user, "password": password, "address": next(iter(addresses), None)}
    eps = [replace(ep, **shared) for ep in eps]  # type: ignore[arg-type]
    return replace(eps[0], alternates=tuple(eps[1:]))


def _split_password(items: list[str], i: int) -> bool:
    """Whether URL `i` of a list, which did not parse, may be the first part of a URL
    whose password held ``,amqp://`` (cut there): its authority has a ':' and no '@', and
    a later one has an '@'. Its error would show the password's first part as a port."""
    def authority(item: str) -> str:
        rest = item.partition("://")[2]
        return rest[:_authority_end(rest)]

    head = authority(items[i])
    return ":" in head and "@" not in head and any("@" in authority(x) for x in items[i + 1:])


def parse_url(url: str) -> Endpoint:
    """Parse an ``amqp://`` or ``amqps://`` URL; a bare ``host[:port][/addr]`` means amqp.
    A failover list is refused here (`parse_urls` reads one)."""
    text = url.strip()
    if failover_urls(text) is not None:
        raise UserError(f"bad URL {_quoted(url)}: a failover list (several URLs) is not "
                        "taken here: give one URL", Exit.USAGE)
    if _SCHEME_ONE_SLASH.match(text):
        raise UserError(f"bad URL {_quoted(url)}: write the scheme as amqp:// or amqps://",
                        Exit.USAGE)
    if "://" not in text:
        text = "amqp://" + text
    scheme_text, _, rest = text.partition("://")
    if scheme_text.lower() not in _SCHEMES:
        raise UserError(
            f"bad URL {_quoted(url)}: scheme must be amqp or amqps, not {scheme_text!r}",
            Exit.USAGE,
        )
    # the authority is checked here, before urlsplit, whose errors are its own words
    # ("Invalid IPv6 URL", "Port out of range 0-65535")
    hostport = rest[:_authority_end(rest)].rpartition("@")[2]
    m = _HOSTPORT.fullmatch(hostport)
    port_text: str = (m.group("port") or "") if m is not None else ""
    bad_port = bool(port_text) and not (  # "h:" is the default port, as RFC 3986 allows
        port_text.isascii() and port_text.isdigit() and 0 < int(port_text) < 65536)
    if (m is None or bad_port) and _cut_credentials(rest) is not None:
        # a user or password holding an unencoded '/', '?' or '#' ends the authority early:
        # the password's first part would be read as the host or port (and shown)
        raise UserError(f"bad URL {_quoted(url)}: the user or password holds an unencoded "
                        "'/', '?' or '#': percent-encode it (%2F, %3F, %23)", Exit.USAGE)
    if "," in hostport:
        raise UserError(f"bad URL {_quoted(url)}: a ',' in the host or port (a failover "
                        "list starts every URL with its scheme: amqp://h1,amqp://h2/q)",
                        Exit.USAGE)
    if m is None:
        raise UserError(f"bad URL {_quoted(url)}: bad host {hostport!r} (host, host:port,"
                        " [IPv6] or [IPv6]:port)", Exit.USAGE)
    if _NOT_IN_HOST.search(hostport):
        raise UserError(f"bad URL {_quoted(url)}: bad host {hostport!r} (spaces and control "
                        "characters are not part of a host name)", Exit.USAGE)
    if "\t" in text or "\r" in text or "\n" in text:  # urlsplit would drop them unsaid
        raise UserError(f"bad URL {_quoted(url)}: a tab or line break in it (percent-encode "
                        "it: %09, %0D, %0A)", Exit.USAGE)
    if bad_port:
        raise UserError(f"bad URL {_quoted(url)}: bad port {port_text!r} (1-65535)",
                        Exit.USAGE)
    port = int(port_text) if port_text else None
    try:
        parts = urlsplit(text)
    except ValueError:  # brackets in the user or password: urlsplit reads them as a host's
        raise UserError(f"bad URL {_quoted(url)}: the user or password holds an unencoded "
                        "'[' or ']': percent-encode it (%5B, %5D)", Exit.USAGE) from None
    tail = rest[_authority_end(rest):]  # (an empty query or fragment is dropped by urlsplit)
    if parts.query or parts.fragment or "?" in tail or "#" in tail:
        raise UserError(
            f"bad URL {_quoted(url)}: '?' and '#' are not allowed; percent-encode them "
            "or use --address",
            Exit.USAGE,
        )
    tls = _SCHEMES[scheme_text.lower()]
    # an IPv6 zone (fe80::1%25eth0) is percent-encoded in a URL (RFC 6874)
    host = _decode(parts.hostname, url, "host") if parts.hostname else None
    if host is not None and _NOT_IN_HOST.search(host):
        raise UserError(f"bad URL {_quoted(url)}: bad host {host!r} (spaces and control "
                        "characters are not part of a host name)", Exit.USAGE)
    user = _decode(parts.username, url, "user") if parts.username else None
    password = _decode(parts.password, url, "password") if parts.password is not None else None
    if password is not None and user is None:
        # PLAIN needs a user: without one the password would be dropped for ANONYMOUS
        raise UserError(f"bad URL {_quoted(url)}: a password needs a user "
                        "(amqp://USER:PASSWORD@host)", Exit.USAGE)
    if host is None and user is not None:
        # a host left out (amqp://u:p@$HOST/q with $HOST empty): not the credentials to
        # the default host
        raise UserError(f"bad URL {_quoted(url)}: credentials but no host "
                        "(amqp://USER:PASSWORD@HOST)", Exit.USAGE)
    path = parts.path
    address = _decode(path[1:], url, "address") if len(path) > 1 else None
    return Endpoint(
        host=host or "127.0.0.1",
        port=port if port is not None else (DEFAULT_TLS_PORT if tls else DEFAULT_PORT),
        tls=tls,
        user=user,
        password=password,
        address=address,
    )


_SCHEME_ONE_SLASH = re.compile(r"amqps?:/(?!/)", re.IGNORECASE)
# what may follow the credentials: a name or IPv4 address, or a bracketed IPv6 address
# (with a percent-encoded zone), then an optional port (its digits checked apart, to say so)
_HOSTPORT = re.compile(r"(?:[^\[\]:@/]*|\[[0-9A-Fa-f:.]+(?:%25[^\]]+)?\])(?::(?P<port>.*))?",
                       re.DOTALL)
# Whitespace and control characters: in no host name (after percent-decoding, too).
_NOT_IN_HOST = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


def _cut_credentials(rest: str) -> int | None:
    """Where the credentials end (the '@') in a URL's `rest` (after ``://``) whose user or
    password holds an unencoded '/', '?' or '#': the authority before the first of those
    has no '@' but a ':', and an '@' comes later. None otherwise."""
    end = _authority_end(rest)
    if "@" in rest[:end] or ":" not in rest[:end]:
        return None
    at = rest.rfind("@")
    return at if at > end else None


_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _decode(text: str, url: str, what: str) -> str:
    """Percent-decode strictly: a ``%`` not followed by two hex digits, or escapes that are
    not UTF-8, are a bad URL (``unquote`` would keep the ``%`` or put in U+FFFD)."""
    bad = _PERCENT.search(text)
    if bad is not None:
        raise UserError(
            f"bad URL {_quoted(url)}: bad percent-encoding in the {what} "
            f"({text[bad.start():bad.start() + 3]!r}; write a literal % as %25)"
            if what != "password" else
            f"bad URL {_quoted(url)}: bad percent-encoding in the password (write a literal % as %25)",
            Exit.USAGE,
        )
    try:
        return unquote(text, errors="strict")
    except UnicodeDecodeError:
        raise UserError(
            f"bad URL {_quoted(url)}: the percent-encoded {what} is not UTF-8",
            Exit.USAGE,
        ) from None


def _quoted(url: str) -> str:
    """The URL for an error message: redacted, quoted, cut in the middle when long."""
    return cut_middle(repr(_redact(url)))


_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"()]+")
# one taken for a file name, its '//' made '/' (`amqp:/user:secret@host`)
_PATH_URL_IN_TEXT = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*:/[^\s/:@'\"()]*:)[^\s@'\"()]*@")


def mask_urls(text: str) -> str:
    """`text` (an error message that repeats what was typed) with the password of every
    URL in it replaced by ``***``."""
    text = _URL_IN_TEXT.sub(lambda m: _redact(m.group(0)), text)
    return _PATH_URL_IN_TEXT.sub(lambda m: m.group(1) + "***@", text)


def _redact(url: str) -> str:
    """The URL as given, with any password replaced by ``***`` (for error messages); a
    password holding an unencoded '/', '?' or '#' is masked up to the URL's last '@'.
    Each URL of a failover list is masked so."""
    parts = _NEXT_URL.split(url)
    if len(parts) > 1:
        return "".join(p if i % 2 else _redact_one(p) for i, p in enumerate(parts))
    return _redact_one(url)


def credentials_end(rest: str) -> int:
    """Where the user and password of a URL's `rest` (what follows ``://``) end: the
    index of the '@' that closes them, -1 when it has none. A password holding an
    unencoded '/', '?' or '#' reaches up to the last '@'."""
    at = rest.rfind("@", 0, _authority_end(rest))
    if at < 0:
        at = _cut_credentials(rest) or -1
    return at


def url_passwords(text: str) -> list[str]:
    """The passwords of the URLs in `text` (a command-line argument), as typed and
    percent-decoded: registered as secrets before anything can quote them."""
    out: list[str] = []
    for url in _NEXT_URL.split(text)[::2]:  # (each URL of a failover list)
        for m in _URL_IN_ARG.finditer(url):
            rest = url[m.end():]
            at = credentials_end(rest)
            cred = rest[:at] if at >= 0 else ""
            if ":" in cred:
                password = cred.split(":", 1)[1]
                out += [password, unquote(password)]
    return out


_URL_IN_ARG = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def _redact_one(url: str) -> str:
    head, sep, rest = url.partition("://")
    if not sep:
        head, rest = "", url
    at = credentials_end(rest)
    if at < 0:
        return url
    cred = rest[:at]
    if ":" in cred:
        cred = cred.split(":", 1)[0] + ":***"
    return f"{head}{sep}{cred}{rest[at:]}"


def _authority_end(rest: str) -> int:
    """Where the authority of a URL's `rest` (after ``://``) ends: its first '/', '?' or
    '#'."""
    ends = [i for i in (rest.find(c) for c in "/?#") if i >= 0]
    return min(ends) if ends else len(rest)


PASSWORD_FILE_MAX = 64 * 1024  # bytes: a password file larger than this is refused


def read_password_file(path: str | os.PathLike[str], what: str = "password file") -> str:
    """The first line of a password file: what comes before its first ``\n`` (a ``\r``
    just before it is dropped too); any other character, a form feed or a U+2028 among
    them, is part of the password. The file is UTF-8 text of at most 64 KiB and its first
    line is not empty. No error says anything about the password: not its length, not
    where in it a bad byte is."""
    name = str(path)
    try:
        with open(path, "rb") as f:
            data = f.read(PASSWORD_FILE_MAX + 1)
    except OSError as e:
        raise UserError(f"cannot read {what} {name!r}: {e.strerror or e}", Exit.USAGE) \
            from None
    if len(data) > PASSWORD_FILE_MAX:
        raise UserError(f"{what} {name!r} is larger than {PASSWORD_FILE_MAX // 1024} KiB: "
                        "the password is its first line", Exit.USAGE)
    first = data.split(b"\n", 1)[0]
    if first.endswith(b"\r"):
        first = first[:-1]
    try:
        password = first.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{what} {name!r}: the first line is not UTF-8 text", Exit.USAGE) \
            from None
    if not password:
        raise UserError(f"{what} {name!r}: the first line is empty", Exit.USAGE)
    return password


def resolve_endpoint(
    url: str | None,
    *,
    host: str | None = None,
    port: int | None = None,
    user: str | None = None,
    password: str | None = None,
    password_file: str | None = None,
    address: str | None = None,
    env: dict[str, str] | None = None,
) -> Endpoint:
    """Combine a URL (or ``AMQP_URL``), explicit options and the environment."""
    environ = os.environ if env is None else env
    if url is None:
        url = environ.get("AMQP_URL")
    ep = parse_urls(url, address_given=address is not None, credentials_given=(
        user is not None and (password is not None or password_file is not None))
    ) if url else Endpoint()
    if ep.alternates and (host is not None or port is not None):
        given = "--host" if host is not None else "--port"
        raise UserError(f"{given} names one host: it does not go with a failover list "
                        "(give each host's URL in the list)", Exit.USAGE)
    if password is not None and password_file is not None:
        raise UserError("give --password or --password-file, not both", Exit.USAGE)
    if password_file is not None:
        password = read_password_file(password_file)
    changes: dict[str, object] = {}
    if host is not None:
        changes["host"] = host
    if port is not None:
        if not 0 < port < 65536:
            raise UserError(f"bad port {port}: must be 1-65535", Exit.USAGE)
        changes["port"] = port
    if user is not None:
        changes["user"] = user
    if password is not None:
        changes["password"] = password
    elif ep.password is None and environ.get("AMQP_PASSWORD") is not None:
        changes["password"] = environ["AMQP_PASSWORD"]
    if address is not None:
        changes["address"] = address
    if changes and ep.alternates:  # (never --host or --port: refused above)
        changes["alternates"] = tuple(replace(a, **changes) for a in ep.alternates)  # type: ignore[arg-type]
    return replace(ep, **changes) if changes else ep  # type: ignore[arg-type]
