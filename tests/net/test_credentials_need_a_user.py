"""A password given with no user, and credentials with `--sasl-mechanism ANONYMOUS`, are
usage errors (exit 2), as `amqp://:pw@h/q` and `--sasl-mechanism NONE` with a user are:
each would have logged in anonymously and dropped the password without a word.
`$AMQP_PASSWORD` is only the fallback for a login that has a user: alone it is not an
error, nor is a profile's password."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net.clirun import amqp_in_process
from tests.peers.net import free_port

SECRET = "S3cretX"


@pytest.fixture
def url() -> str:
    return f"amqp://127.0.0.1:{free_port()}/q"  # nothing listens: exit 3 once it tries


def test_password_without_a_user(url: str, tmp_path: Path) -> None:
    pw = tmp_path / "pw"
    pw.write_text(SECRET + "\n")
    for args, option in ((("--password", SECRET), "--password"),
                         (("--password-file", str(pw)), "--password-file")):
        code, _, err = amqp_in_process("send", url, "x", *args)
        assert (code, err) == (2, (f"amqp: error: {option} needs a user (URL user@ or --user): "
                                  "without one the login is anonymous\n"))
        code, _, err = amqp_in_process("recv", url, *args)
        assert code == 2 and err.startswith(f"amqp: error: {option} needs a user")
    # with a user, from the URL or --user, it is a login like any other
    user_url = url.replace("amqp://", "amqp://me@")
    assert amqp_in_process("send", user_url, "x", "--password", SECRET)[0] == 3
    assert amqp_in_process("send", url, "x", "--user", "me", "--password-file", str(pw))[0] == 3


@pytest.mark.parametrize("args", [
    ("amqp://me:{pw}@127.0.0.1:{port}/q",),
    ("amqp://127.0.0.1:{port}/q", "--user", "me"),
    ("amqp://127.0.0.1:{port}/q", "--user", "me", "--password", "{pw}"),
])
def test_anonymous_with_credentials(args: tuple[str, ...]) -> None:
    port = free_port()
    argv = [a.format(pw=SECRET, port=port) for a in args]
    code, _, err = amqp_in_process("send", *argv, "x", "--sasl-mechanism", "ANONYMOUS")
    assert (code, err) == (2, ("amqp: error: --sasl-mechanism anonymous sends no credentials: "
                              "drop the user (or use PLAIN)\n"))
    assert SECRET not in err


def test_amqp_password_alone_and_a_profiles_password_are_no_error(
        url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMQP_PASSWORD", SECRET)
    code, _, err = amqp_in_process("send", url, "x")
    assert code == 3, err
    code, _, err = amqp_in_process("send", url, "x", "--sasl-mechanism", "ANONYMOUS")
    assert code == 3, err
    monkeypatch.delenv("AMQP_PASSWORD")
    config = tmp_path / "config.toml"
    config.write_text(f'[profiles.p]\nurl = "{url.rsplit("/", 1)[0]}"\npassword_env = "P_PW"\n')
    monkeypatch.setenv("AMQP_CONFIG", str(config))
    monkeypatch.setenv("P_PW", SECRET)
    code, _, err = amqp_in_process("send", "@p/q", "x")
    assert code == 3, err
    # and the profile's user makes a command line password a login
    config.write_text(f'[profiles.p]\nurl = "{url.rsplit("/", 1)[0]}"\nuser = "me"\n')
    code, _, err = amqp_in_process("send", "@p/q", "x", "--password", SECRET)
    assert code == 3, err
