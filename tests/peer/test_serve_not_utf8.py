"""`amqp serve` with a user or password that is not UTF-8 is refused at start-up, as
`amqp send`/`recv` refuse them: it started, then printed a traceback at every client's
login (UnicodeEncodeError, its position telling the password's length). A password's
error names no byte of it."""

from __future__ import annotations

import pytest

from tests.net.clirun import amqp

_HANG_GUARD = 20.0  # a value that is accepted starts a server that never exits
SECRET = b"Zq9Secret\xff".decode("utf-8", "surrogateescape")  # as Python holds such bytes


@pytest.mark.parametrize(("args", "env", "said"), [
    (["-u", "svc", "--password", SECRET], {}, "--password is not UTF-8 text"),
    (["-u", "svc"], {"AMQP_PASSWORD": SECRET}, "$AMQP_PASSWORD is not UTF-8 text"),
    (["-u", "s\udcffvc", "--password", "pw"], {},
     "--user is not UTF-8 text (byte 0xff at offset 1)"),
], ids=["option", "env", "user"])
def test_serve_refuses_text_that_is_not_utf8(args: list[str], env: dict[str, str],
                                             said: str) -> None:
    r = amqp("serve", "--listen", "127.0.0.1:16531", *args, env=env, timeout=_HANG_GUARD)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"amqp: error: {said}\n")
    assert "Zq9" not in r.stderr and "10" not in r.stderr
