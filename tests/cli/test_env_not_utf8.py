"""Connection settings from the environment that are not UTF-8 are one-line usage errors,
as the same on the command line are: `$AMQP_PASSWORD` hung until the connect timeout and
printed tracebacks of the SASL step, `$AMQP_URL` was an internal error. A password's
error names no byte of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net.clirun import amqp

NOT_UTF8 = b"s\xffcret".decode("utf-8", "surrogateescape")  # as Python holds such bytes


@pytest.mark.parametrize(("args", "env", "said"), [
    (["send", "-u", "bob", "amqp://127.0.0.1:9/q", "x"], {"AMQP_PASSWORD": NOT_UTF8},
     "$AMQP_PASSWORD is not UTF-8 text"),
    (["recv", "-u", "bob", "amqp://127.0.0.1:9/q"], {"AMQP_PASSWORD": NOT_UTF8},
     "$AMQP_PASSWORD is not UTF-8 text"),
    (["send", "x"], {"AMQP_URL": "amqp://h\udcff/q"},
     "$AMQP_URL is not UTF-8 text (byte 0xff at offset 8)"),
    (["send", "-u", "bob", "--password", NOT_UTF8, "amqp://127.0.0.1:9/q", "x"], {},
     "--password is not UTF-8 text"),
], ids=["send-password", "recv-password", "url", "option"])
def test_settings_that_are_not_utf8_are_usage_errors(
        args: list[str], env: dict[str, str], said: str) -> None:
    r = amqp(*args, env=env, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"amqp: error: {said}\n")


def test_a_profile_password_that_is_not_utf8(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[profiles.p]\nurl = "amqp://bob@127.0.0.1:9"\npassword_env = "P_PW"\n')
    r = amqp("send", "@p/q", "x", env={"AMQP_CONFIG": str(config), "P_PW": NOT_UTF8},
             timeout=60)
    said = "amqp: error: the profile's password is not UTF-8 text\n"
    assert (r.returncode, r.stderr) == (2, said)
    # set but not used: a --password given wins
    r = amqp("send", "-u", "bob", "--password", "ok", "amqp://127.0.0.1:9/q", "x",
             env={"AMQP_PASSWORD": NOT_UTF8}, timeout=60)
    assert r.returncode == 3 and "connection refused" in r.stderr
