"""SASL mechanism choice, reconnect backoff, TLS context and the shared CLI options."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from amqpcli.cli.options import connection_options, parse_key_value, parse_value
from amqpcli.codec import types as t
from amqpcli.errors import Exit, UserError
from amqpcli.net.config import ConnectionConfig, ReconnectPolicy, TlsConfig, choose_mechanism


@pytest.mark.parametrize(
    ("explicit", "user", "cert", "want"),
    [
        (None, None, False, "ANONYMOUS"),
        (None, "guest", False, "PLAIN"),
        (None, None, True, "EXTERNAL"),
        (None, "guest", True, "PLAIN"),
        ("anonymous", None, False, "ANONYMOUS"),
        ("EXTERNAL", None, False, "EXTERNAL"),
    ],
)
def test_choose_mechanism(explicit: str | None, user: str | None, cert: bool, want: str) -> None:
    assert choose_mechanism(explicit, user, cert) == want


def test_bad_mechanisms() -> None:
    with pytest.raises(UserError):
        choose_mechanism("CRAM-MD5", "u", False)
    with pytest.raises(UserError):
        choose_mechanism("PLAIN", None, False)
    # ANONYMOUS would drop the user's credentials without a word, as NONE would
    for mech in ("anonymous", "NONE"):
        with pytest.raises(UserError, match="sends no credentials: drop the user"):
            choose_mechanism(mech, "guest", False)


def test_backoff_doubles_up_to_the_maximum() -> None:
    assert not ReconnectPolicy(limit=0).delays()
    d = ReconnectPolicy(limit=5, initial=1, maximum=5).delays()
    assert [d.pop() for _ in range(5)] == [1, 2, 4, 5, 5] and not d
    huge = ReconnectPolicy(limit=10**23).delays()  # made as taken: no list of 10**23
    assert [huge.pop() for _ in range(8)][-2:] == [10.0, 10.0] and huge.left == 10**23 - 8


def test_tls_context_verifies_by_default() -> None:
    ctx = TlsConfig().context()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    ctx = TlsConfig(verify=False).context()
    assert ctx.verify_mode == ssl.CERT_NONE and not ctx.check_hostname
    with pytest.raises(UserError):
        TlsConfig(ca_file="/nonexistent/ca.pem").context()


def test_tls_file_errors_name_the_file_and_what_is_wrong(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_bytes(b"not a certificate\n")
    cases = [
        (TlsConfig(ca_file=str(tmp_path / "none.pem")),
         f"--ca-file {tmp_path}/none.pem: no such file or directory"),
        (TlsConfig(ca_file=str(junk)), f"--ca-file {junk}: no PEM certificates in it"),
        (TlsConfig(cert_file=str(tmp_path)), f"--cert {tmp_path}: is a directory"),
        (TlsConfig(cert_file=str(junk), key_file=str(junk)),
         f"--cert {junk}, --key {junk}: not a PEM certificate with its private key"),
    ]
    for cfg, text in cases:
        with pytest.raises(UserError) as err:
            cfg.context()
        assert str(err.value).startswith(f"TLS setup failed: {text}")
        assert err.value.code == Exit.USAGE


def _app() -> tuple[typer.Typer, list[ConnectionConfig]]:
    seen: list[ConnectionConfig] = []
    app = typer.Typer()

    @app.command()
    @connection_options
    def cmd(conn: ConnectionConfig, count: int = typer.Option(1, "--count")) -> None:
        seen.append(conn)
        print(f"count={count}")

    @app.command()
    def other() -> None:
        pass

    return app, seen


def test_connection_options_build_one_config() -> None:
    app, seen = _app()
    r = CliRunner().invoke(
        app,
        ["cmd", "amqps://u:pw@h:1//queue/x", "--count", "3", "--idle-timeout", "4",
         "--container-id", "c1", "--max-frame-size", "4096", "--reconnect", "2", "--insecure"],
    )
    assert r.exit_code == 0, r.output
    assert "count=3" in r.output
    (conn,) = seen
    assert conn.endpoint.address == "/queue/x" and conn.endpoint.password == "pw"
    assert conn.idle_timeout == 4 and conn.container_id == "c1" and conn.max_frame_size == 4096
    assert conn.reconnect.limit == 2 and not conn.tls.verify
    assert conn.mechanism() == "PLAIN"


def test_connection_option_errors_are_usage_errors() -> None:
    app, _ = _app()
    r = CliRunner().invoke(app, ["cmd", "amqp://h", "--max-frame-size", "100"])
    assert isinstance(r.exception, UserError) and r.exception.code == Exit.USAGE


@pytest.mark.parametrize(
    ("item", "key", "value", "cls"),
    [
        ("a=5", "a", "5", str),
        ("a:int=5", "a", 5, t.Int),
        ("a:ulong=0x10", "a", 16, t.ULong),
        ("a:symbol=x", "a", t.Symbol("x"), t.Symbol),
        ("a:bool=true", "a", True, bool),
        ("a:binary=hex:0001", "a", b"\x00\x01", bytes),
        ("x:y:long=-1", "x:y", -1, t.Long),
        ("a:double=1.5", "a", 1.5, float),
        ("a=b=c", "a", "b=c", str),
    ],
)
def test_parse_key_value(item: str, key: str, value: object, cls: type) -> None:
    k, v = parse_key_value(item, "--property")
    assert k == key and v == value and type(v) is cls


@pytest.mark.parametrize("item", ["novalue", "=x", "a:int=x", "a:ubyte=256", "a:nosuch=1"])
def test_parse_key_value_errors(item: str) -> None:
    with pytest.raises(UserError):
        parse_key_value(item, "--property")


def test_parse_value() -> None:
    assert type(parse_value("int:7", "body")) is t.Int
    assert parse_value("http://x", "body") == "http://x"
    assert type(parse_value("string:int:7", "body")) is str
