"""`amqp serve --user U --password P` requires SASL PLAIN with those. An empty user was
no user: `--user "$U"` with $U unset started a server that took every client, anonymous
or not, while the operator asked for a login. An empty user or password is a usage
error now. And $AMQP_PASSWORD, the clients' password (used only with a user), stopped a
plain `amqp serve` with "--user and --password go together", an option never given: as
for the clients, it is not used without --user."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.net.clirun import amqp, cli_env
from tests.paths import REPO_ROOT


@pytest.mark.parametrize(("args", "env", "given"), [
    (["--user", "", "--password", "pw"], {}, "--user"),
    (["--user", "alice", "--password", ""], {}, "--password"),
], ids=["empty-user", "empty-password"])
def test_empty_credentials_are_a_usage_error(args: list[str], env: dict[str, str],
                                             given: str) -> None:
    r = amqp("serve", "--listen", "127.0.0.1:0", *args, env=env, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr == (f"amqp: error: {given} is empty: a server that requires SASL PLAIN "
                        "needs a user and a password\n")


def _listening_line(env: dict[str, str], *args: str) -> str:
    p = subprocess.Popen([sys.executable, "-m", "amqpcli", "serve", "--listen", "127.0.0.1:0",
                          *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         cwd=REPO_ROOT, env={**cli_env(), **env})
    try:
        assert p.stderr is not None
        return p.stderr.readline()
    finally:
        p.terminate()
        p.wait(30)


def test_the_clients_password_in_the_environment_is_not_used_without_a_user() -> None:
    line = _listening_line({"AMQP_PASSWORD": "Zq9Secret"})
    assert re.search(r"listening on 127\.0\.0\.1:\d+ \(SASL ANONYMOUS or PLAIN, or none\)",
                     line), line


def test_with_a_user_the_environments_password_is_required() -> None:
    line = _listening_line({"AMQP_PASSWORD": "Zq9Secret"}, "--user", "alice")
    assert "(SASL PLAIN required)" in line, line
