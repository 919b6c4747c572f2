"""Named connections (profiles) from the config file, and how they become connection options.

The file is TOML, read with `tomllib`; its place is, first found:
``$AMQP_CONFIG``, ``$XDG_CONFIG_HOME/amqp/config.toml``, ``~/.config/amqp/config.toml``.

    [profiles.prod]
    url = "amqps://broker.example.com"
    user = "app"
    password_env = "PROD_AMQP_PASSWORD"     # or: password_file = "~/.secrets/prod"
    ca_file = "~/certs/ca.pem"
    container_id = "billing-tool"

A profile is used as ``@NAME`` or ``@NAME/ADDRESS`` where a URL goes, or with
``--profile NAME``. ``@NAME/ADDRESS`` follows the URL address rule: everything after the
first ``/``, verbatim and percent-decoded (``@prod//queue/x`` gives ``/queue/x``).

Precedence: an option given on the command line, then the profile, then the environment
(``AMQP_PASSWORD``), then defaults. Secrets are only referenced: a ``password`` key, or a
password inside the profile's URL, is refused. Nothing here ever prints a secret.

`apply_profile` is the one function the CLI calls: it takes the connection options by
name (as `amqpcli.cli.options.build_config` takes them) and returns them with the profile
filled in, so the code that builds connections needs no knowledge of profiles.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from amqpcli.errors import Exit, UserError

__all__ = [
    "Profile",
    "apply_profile",
    "config_path",
    "load_profiles",
    "profile_names",
    "split_profile_ref",
]

CONFIG_ENV = "AMQP_CONFIG"

# Keys a profile may hold -> the type its value must have. Paths are relative to the
# config file's directory, with ~ expanded.
_STR: tuple[type, ...] = (str,)
_BOOL: tuple[type, ...] = (bool,)
_NUM: tuple[type, ...] = (int, float)
_INT: tuple[type, ...] = (int,)
_KEYS: dict[str, tuple[type, ...]] = {
    "url": _STR,
    "user": _STR,
    "password_env": _STR,
    "password_file": _STR,
    "sasl_mechanism": _STR,
    "ca_file": _STR,
    "cert_file": _STR,
    "key_file": _STR,
    "server_name": _STR,
    "open_hostname": _STR,
    "insecure": _BOOL,
    "tls_upgrade": _BOOL,
    "container_id": _STR,
    "connect_timeout": _NUM,
    "idle_timeout": _NUM,
    "max_frame_size": _INT,
    "max_message_size": _INT,
}
_PATH_KEYS = ("password_file", "ca_file", "cert_file", "key_file")
# Keys whose empty value would be taken for something else, without a word: the default
# broker (url), an anonymous login (user), the config file's folder (a path). Each is an
# error naming the key, as its command-line option's is. (open_hostname, password_env and
# sasl_mechanism have words of their own.)
_NOT_EMPTY = ("url", "user", *_PATH_KEYS, "server_name", "container_id")

# Connection options a profile may fill, and the value that means "not given on the
# command line" (the option's default in amqpcli/cli/options.py).
_UNSET: dict[str, Any] = {
    "user": None,
    "sasl_mechanism": None,
    "ca_file": None,
    "cert_file": None,
    "key_file": None,
    "server_name": None,
    "open_hostname": None,
    "insecure": False,
    "tls_upgrade": False,
    "container_id": None,
    "connect_timeout": 10.0,
    "idle_timeout": None,
    "max_frame_size": None,
    "max_message_size": None,
}


@dataclass(frozen=True)
class Profile:
    """One named connection. Holds where to find the password, never the password."""

    name: str
    url: str | None = None
    user: str | None = None
    password_env: str | None = None
    password_file: str | None = None
    sasl_mechanism: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    server_name: str | None = None
    open_hostname: str | None = None
    insecure: bool = False
    tls_upgrade: bool = False
    container_id: str | None = None
    connect_timeout: float | None = None
    idle_timeout: float | None = None
    max_frame_size: int | None = None
    max_message_size: int | None = None


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the config file is (whether or not it exists)."""
    environ = os.environ if env is None else env
    explicit = environ.get(CONFIG_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = environ.get("XDG_CONFIG_HOME")
    # The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path(environ.get("HOME") or Path.home()) / ".config"
    return base / "amqp" / "config.toml"


def _read(path: Path, required: bool) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        if required:
            raise UserError(f"config file {str(path)!r} does not exist (${CONFIG_ENV})", Exit.USAGE) from None
        return {}
    except OSError as e:
        raise UserError(f"cannot read config file {str(path)!r}: {e.strerror}", Exit.USAGE) from None
    except tomllib.TOMLDecodeError as e:
        # The message says where, not what the line holds: it may be a secret.
        raise UserError(f"config file {str(path)!r} is not valid TOML: {e}", Exit.USAGE) from None
    except UnicodeDecodeError as e:
        raise UserError(f"config file {str(path)!r} is not valid TOML: not UTF-8 (byte "
                        f"0x{e.object[e.start]:02x} at offset {e.start})", Exit.USAGE) from None
    except RecursionError:
        # (tomllib parses arrays and inline tables within arrays and tables recursively)
        raise UserError(f"config file {str(path)!r} cannot be read: arrays or inline tables "
                        "nested too deeply", Exit.USAGE) from None


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_USUAL_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")  # an unset one is named in the error


def _profile(name: str, table: Any, path: Path) -> Profile:
    where = f"{path}: profile {name!r}"
    if not isinstance(table, dict):
        raise UserError(f"{where}: must be a table ([profiles.{name}])", Exit.USAGE)
    if "password" in table:
        raise UserError(
            f"{where}: a plain 'password' is not allowed; reference it instead with "
            "password_env = \"VARIABLE\" or password_file = \"PATH\"",
            Exit.USAGE,
        )
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise UserError(
            f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(_KEYS)})",
            Exit.USAGE,
        )
    values: dict[str, Any] = {}
    for key, value in table.items():
        want = _KEYS[key]
        # bool is an int in Python: keep true/false out of numeric keys.
        if not isinstance(value, want) or (isinstance(value, bool) and bool not in want):
            kind = {_STR: "a string", _BOOL: "true or false", _INT: "an integer"}.get(
                want, "a number")
            raise UserError(f"{where}: {key} must be {kind}", Exit.USAGE)
        if value == "" and key in _NOT_EMPTY:
            raise UserError(f"{where}: {key} is empty: give a value or leave the key out",
                            Exit.USAGE)
        if key in _PATH_KEYS:
            value = str((path.parent / Path(str(value)).expanduser()).resolve())
        values[key] = value
    _check_values(values, where)
    env_name = values.get("password_env")
    if env_name is not None and not _ENV_NAME.fullmatch(env_name):
        # not quoted: a value that is no variable's name may be the password itself
        raise UserError(f"{where}: password_env must name an environment variable "
                        "(letters, digits and _, not starting with a digit)", Exit.USAGE)
    if values.get("password_env") and values.get("password_file"):
        raise UserError(f"{where}: give password_env or password_file, not both", Exit.USAGE)
    url = values.get("url")
    if url is not None:
        _check_url(url, where)
    return Profile(name=name, **values)


def _check_values(values: dict[str, Any], where: str) -> None:
    """The checks the command line's options get, said of the file and profile they are
    in (an error naming `--idle-timeout` would send the user to the wrong place)."""
    from amqpcli.cli.options import (
        check_idle_timeout,
        check_max_frame_size,
        check_max_message_size,
        check_seconds,
    )

    for key, check in (("connect_timeout", check_seconds), ("idle_timeout", check_idle_timeout)):
        if key in values:
            try:
                check(values[key], key)
            except UserError as e:
                raise UserError(f"{where}: {e}", Exit.USAGE) from None
    try:
        check_max_frame_size(values.get("max_frame_size"), "max_frame_size")
        check_max_message_size(values.get("max_message_size"), "max_message_size")
    except UserError as e:
        raise UserError(f"{where}: {e}", Exit.USAGE) from None
    if values.get("open_hostname") == "":
        raise UserError(f"{where}: open_hostname needs a name (RabbitMQ's vhost NAME: "
                        "vhost:NAME)", Exit.USAGE)
    mech = values.get("sasl_mechanism")
    if mech is not None:
        from amqpcli.net.config import MECHANISMS

        if mech.upper() not in MECHANISMS:  # (a user may come from the URL: not checked)
            raise UserError(f"{where}: sasl_mechanism {mech!r} is none of "
                            f"{', '.join(MECHANISMS)}", Exit.USAGE)


def _check_url(url: str, where: str) -> None:
    from amqpcli.net.url import _quoted, parse_urls

    try:
        ep = parse_urls(url)
    except UserError as e:
        raise UserError(f"{where}: {e}", Exit.USAGE) from None
    if ep.password is not None:
        raise UserError(
            f"{where}: the url {_quoted(url)} holds a password; remove it and reference it "
            "with password_env = \"VARIABLE\" or password_file = \"PATH\"",
            Exit.USAGE,
        )


def load_profiles(env: Mapping[str, str] | None = None) -> dict[str, Profile]:
    """Every profile in the config file (none if there is no file, unless $AMQP_CONFIG
    names one that is missing: that is an error)."""
    environ = os.environ if env is None else env
    path = config_path(environ)
    data = _read(path, required=bool(environ.get(CONFIG_ENV)))
    profiles = data.get("profiles", {})
    if not isinstance(profiles, dict):
        raise UserError(f"{path}: 'profiles' must be a table ([profiles.NAME])", Exit.USAGE)
    unknown = sorted(set(data) - {"profiles"})
    if unknown:  # [profile.a] for [profiles.a]: a typo would hide every profile in it
        raise UserError(f"{path}: unknown table(s) or key(s) {', '.join(unknown)} (known: "
                        "profiles, as [profiles.NAME])", Exit.USAGE)
    return {name: _profile(name, table, path) for name, table in profiles.items()}


def profile_names(env: Mapping[str, str] | None = None) -> list[str]:
    """Profile names for shell completion, never an error: none from a file every command
    refuses (a stored password, an unknown key), whose names would complete only to fail."""
    environ = os.environ if env is None else env
    try:
        return sorted(load_profiles(environ))
    except UserError:
        return []


def split_profile_ref(text: str | None) -> tuple[str, str | None] | None:
    """``@NAME`` → (NAME, None); ``@NAME/ADDRESS`` → (NAME, ADDRESS); anything else → None."""
    if not text or not text.startswith("@"):
        return None
    name, sep, rest = text[1:].partition("/")
    if not name:
        raise UserError(f"bad profile reference {text!r}: use @NAME or @NAME/ADDRESS", Exit.USAGE)
    return name, (unquote(rest) if sep and rest else None)


def get_profile(name: str, env: Mapping[str, str] | None = None) -> Profile:
    environ = os.environ if env is None else env
    profiles = load_profiles(environ)
    if name not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        raise UserError(
            f"no profile {name!r} in {config_path(environ)} (profiles: {known})", Exit.USAGE
        )
    return profiles[name]


def apply_profile(options: Mapping[str, Any], env: Mapping[str, str] | None = None, *,
                  password: bool = True) -> dict[str, Any]:
    """The connection options with a profile filled in.

    `options` are `build_config`'s keyword arguments plus ``profile``. The profile comes
    from ``profile`` (``--profile``), or from a URL of the form ``@NAME[/ADDRESS]`` (the
    URL argument, else ``$AMQP_URL``). Without one the options come back unchanged (minus
    ``profile``). Options given on the command line win over the profile's values.
    Without `password` the profile's password is not looked up (for a mode that makes no
    connection of its own: an unset `password_env` does not stop it).
    """
    environ = os.environ if env is None else env
    out = dict(options)
    name: str | None = out.pop("profile", None)
    url = out.get("url")
    ref = split_profile_ref(url if url is not None else environ.get("AMQP_URL"))
    if ref is not None:
        if name is not None and name != ref[0]:
            raise UserError(f"--profile {name} and @{ref[0]} name different profiles", Exit.USAGE)
        name = ref[0]
    elif name is not None and url is not None:
        raise UserError("give a URL or --profile, not both (use @NAME/ADDRESS or --address)", Exit.USAGE)
    if name is None:
        return out
    prof = get_profile(name, environ)
    out["url"] = prof.url or "amqp://127.0.0.1"
    if ref is not None and ref[1] is not None and out.get("address") is None:
        out["address"] = ref[1]
    for key, unset in _UNSET.items():
        value = getattr(prof, key)
        if out.get(key, unset) == unset and value is not None and value != unset:
            out[key] = value
    if password and out.get("password") is None and out.get("password_file") is None:
        if prof.password_file is not None:
            out["password_file"] = prof.password_file
        elif prof.password_env is not None:
            secret = environ.get(prof.password_env)
            if secret is None:
                if _USUAL_ENV_NAME.fullmatch(prof.password_env):
                    raise UserError(f"profile {name!r}: password_env {prof.password_env} is "
                                    "not set", Exit.USAGE)
                # (Zq9Secret is a name too: a password put there by mistake)
                raise UserError(f"profile {name!r}: password_env names a variable that is not "
                                "set (its name not shown: one not in upper case may be a "
                                "password)", Exit.USAGE)
            out["password"] = secret
    return out


def print_profile_names() -> None:
    """What the shell completion scripts call (``amqp --list-profiles``): one name a line."""
    names = profile_names()
    if names:
        sys.stdout.write("\n".join(names) + "\n")
