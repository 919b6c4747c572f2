"""Named connections: where the config file is, what a profile may hold, how `@NAME/ADDRESS`
and `--profile` become connection options, and that secrets are only referenced."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.cli.options import build_config
from amqpcli.config import (
    apply_profile,
    config_path,
    load_profiles,
    profile_names,
    split_profile_ref,
)
from amqpcli.errors import UserError

SECRET = "s3cr3t-Pa55"


def _defaults(**given: object) -> dict[str, object]:
    """build_config's keyword arguments as the CLI hands them over when nothing is given."""
    kw: dict[str, object] = {
        "url": None, "address": None, "host": None, "port": None, "user": None,
        "password": None, "password_file": None, "sasl_mechanism": None, "tls_upgrade": False,
        "ca_file": None, "cert_file": None, "key_file": None, "insecure": False,
        "server_name": None, "open_hostname": None, "connect_timeout": 10.0, "idle_timeout": None,
        "container_id": None, "max_frame_size": None, "reconnect": 0, "profile": None,
    }
    kw.update(given)
    return kw


def _write(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return {"AMQP_CONFIG": str(path)}


PROD = """
[profiles.prod]
url = "amqps://broker.example.com:5999//queue/default"
user = "app"
password_env = "PROD_PW"
sasl_mechanism = "PLAIN"
ca_file = "certs/ca.pem"
container_id = "billing"
idle_timeout = 30

[profiles.local]
url = "amqp://127.0.0.1"
"""


def test_config_path_order() -> None:
    assert config_path({"AMQP_CONFIG": "/x/c.toml", "XDG_CONFIG_HOME": "/xdg"}) == Path("/x/c.toml")
    assert config_path({"XDG_CONFIG_HOME": "/xdg", "HOME": "/h"}) == Path("/xdg/amqp/config.toml")
    assert config_path({"HOME": "/h"}) == Path("/h/.config/amqp/config.toml")
    # A relative XDG_CONFIG_HOME is invalid by the XDG spec and ignored.
    assert config_path({"XDG_CONFIG_HOME": "rel", "HOME": "/h"}) == Path("/h/.config/amqp/config.toml")


def test_split_profile_ref() -> None:
    assert split_profile_ref("@prod") == ("prod", None)
    assert split_profile_ref("@prod/") == ("prod", None)
    assert split_profile_ref("@prod/orders") == ("prod", "orders")
    assert split_profile_ref("@prod//queue/orders") == ("prod", "/queue/orders")
    assert split_profile_ref("@prod/a%2Fb") == ("prod", "a/b")
    assert split_profile_ref("amqp://h/q") is None
    assert split_profile_ref(None) is None
    with pytest.raises(UserError):
        split_profile_ref("@/q")


def test_profile_fills_options_and_address(tmp_path: Path) -> None:
    env = {**_write(tmp_path, PROD), "PROD_PW": SECRET}
    out = apply_profile(_defaults(url="@prod/orders"), env)
    assert out["url"] == "amqps://broker.example.com:5999//queue/default"
    assert out["address"] == "orders"
    assert out["user"] == "app"
    assert out["password"] == SECRET
    assert out["sasl_mechanism"] == "PLAIN"
    assert out["ca_file"] == str((tmp_path / "certs" / "ca.pem").resolve())
    assert out["container_id"] == "billing"
    assert out["idle_timeout"] == 30
    assert "profile" not in out
    cfg = build_config(**out)
    assert cfg.endpoint.host == "broker.example.com" and cfg.endpoint.port == 5999
    assert cfg.endpoint.tls and cfg.endpoint.address == "orders"
    assert cfg.endpoint.password == SECRET
    assert cfg.container_id == "billing" and cfg.tls.ca_file and cfg.mechanism() == "PLAIN"
    assert SECRET not in repr(cfg) and SECRET not in str(cfg.endpoint)


def test_profile_url_address_is_kept_without_one(tmp_path: Path) -> None:
    env = {**_write(tmp_path, PROD), "PROD_PW": SECRET}
    cfg = build_config(**apply_profile(_defaults(url="@prod"), env))
    assert cfg.endpoint.address == "/queue/default"
    cfg = build_config(**apply_profile(_defaults(profile="prod"), env))
    assert cfg.endpoint.address == "/queue/default"


def test_command_line_wins_over_profile(tmp_path: Path) -> None:
    env = {**_write(tmp_path, PROD), "PROD_PW": SECRET}
    out = apply_profile(
        _defaults(profile="prod", address="x", user="other", password="given",
                  container_id="mine", connect_timeout=3.0, host="h2"),
        env,
    )
    assert (out["address"], out["user"], out["password"], out["container_id"]) == ("x", "other", "given", "mine")
    assert out["connect_timeout"] == 3.0
    cfg = build_config(**out)
    assert cfg.endpoint.host == "h2" and cfg.endpoint.password == "given"


def test_open_hostname_from_profile_or_command_line(tmp_path: Path) -> None:
    # plain amqp:// (it is no TLS option); the command line wins over the profile
    env = _write(tmp_path, '[profiles.p]\nurl = "amqp://h"\nopen_hostname = "vhost:a"\n')
    assert build_config(**apply_profile(_defaults(url="@p/q"), env)).hostname == "vhost:a"
    out = apply_profile(_defaults(url="@p/q", open_hostname="vhost:b"), env)
    assert build_config(**out).hostname == "vhost:b"


def test_password_file_reference(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text(SECRET + "\n")
    env = _write(tmp_path, '[profiles.p]\nurl = "amqp://u@h"\npassword_file = "pw"\n')
    cfg = build_config(**apply_profile(_defaults(url="@p/q"), env))
    assert cfg.endpoint.user == "u" and cfg.endpoint.password == SECRET


def test_amqp_url_may_name_a_profile(tmp_path: Path) -> None:
    env = {**_write(tmp_path, PROD), "AMQP_URL": "@local/q1"}
    out = apply_profile(_defaults(), env)
    assert out["url"] == "amqp://127.0.0.1" and out["address"] == "q1"


def test_no_profile_leaves_options_alone(tmp_path: Path) -> None:
    env = _write(tmp_path, PROD)
    given = _defaults(url="amqp://h/q")
    out = apply_profile(given, env)
    assert out == {k: v for k, v in given.items() if k != "profile"}


@pytest.mark.parametrize(
    ("text", "options", "env_extra", "needle"),
    [
        (f'[profiles.p]\nurl = "amqp://h"\npassword = "{SECRET}"\n', {"url": "@p"}, {}, "password_env"),
        (f'[profiles.p]\nurl = "amqp://u:{SECRET}@h"\n', {"url": "@p"}, {}, "password_env"),
        ('[profiles.p]\nurl = "amqp://h"\nca_flie = "x"\n', {"url": "@p"}, {}, "unknown key"),
        ('[profiles.p]\nurl = "amqp://h"\ninsecure = "yes"\n', {"url": "@p"}, {}, "true or false"),
        ('[profiles.p]\nurl = "http://h"\n', {"url": "@p"}, {}, "scheme"),
        ('[profiles.p]\nurl = "amqp://u@h"\npassword_env = "NOPE"\n', {"url": "@p"}, {}, "NOPE is not set"),
        ('[profiles.p]\nurl = "amqp://h"\n', {"url": "@q"}, {}, "no profile 'q'"),
        ('[profiles.p]\nurl = "amqp://h"\n', {"url": "amqp://x", "profile": "p"}, {}, "not both"),
        ('[profiles.p]\nurl = "amqp://h"\n', {"url": "@p", "profile": "other"}, {}, "different profiles"),
        (f'[profiles.p\nurl = "amqp://u:{SECRET}@h"\n', {"url": "@p"}, {}, "not valid TOML"),
        ('[profile.p]\nurl = "amqp://h"\n', {"url": "@p"}, {}, "unknown table(s) or key(s) profile"),
        ('[profiles.p]\nurl = "amqp://h"\nidle_timeout = -5\n', {"url": "@p"}, {},
         "profile 'p': idle_timeout must be a finite number of seconds"),
        ('[profiles.p]\nurl = "amqp://h"\nmax_frame_size = 100\n', {"url": "@p"}, {},
         "profile 'p': max_frame_size must be between 512"),
        ('[profiles.p]\nurl = "amqp://h"\nsasl_mechanism = "CRAM"\n', {"url": "@p"}, {},
         "profile 'p': sasl_mechanism 'CRAM' is none of"),
        ('[profiles.p]\nurl = "amqp://h"\nopen_hostname = ""\n', {"url": "@p"}, {},
         "profile 'p': open_hostname needs a name"),
    ],
)
def test_refusals_are_one_line_and_never_show_secrets(
    tmp_path: Path, text: str, options: dict[str, str], env_extra: dict[str, str], needle: str
) -> None:
    env = {**_write(tmp_path, text), **env_extra}
    with pytest.raises(UserError) as info:
        apply_profile(_defaults(**options), env)
    msg = str(info.value)
    assert needle in msg
    assert "\n" not in msg
    assert SECRET not in msg


def test_a_config_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_bytes(b"\xff\xfe[profiles.a]\n")
    env = {"AMQP_CONFIG": str(tmp_path / "config.toml")}
    with pytest.raises(UserError, match=r"not valid TOML: not UTF-8 \(byte 0xff at offset 0\)"):
        load_profiles(env)
    assert profile_names(env) == []  # completion stays quiet


def test_missing_file_is_an_error_only_when_named(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        load_profiles({"AMQP_CONFIG": str(tmp_path / "nope.toml")})
    assert load_profiles({"XDG_CONFIG_HOME": str(tmp_path)}) == {}


def test_profile_names_never_fail(tmp_path: Path) -> None:
    env = _write(tmp_path, PROD)
    assert profile_names(env) == ["local", "prod"]
    (tmp_path / "config.toml").write_text("[[[ not toml")
    assert profile_names(env) == []
    assert profile_names({"AMQP_CONFIG": str(tmp_path / "missing.toml")}) == []


def test_profile_names_are_none_from_a_file_every_command_refuses(tmp_path: Path) -> None:
    # a stored password refuses the whole file: TAB completed names that then failed
    env = _write(tmp_path, PROD + '\n[profiles.bad]\npassword = "s3cret"\n')
    with pytest.raises(UserError):
        load_profiles(env)
    assert profile_names(env) == []
