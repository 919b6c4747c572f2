"""Named connections through the real command: `@NAME/ADDRESS` and `--profile` in send, recv
and browse against the proton broker, and a profile's password (by reference) against
RabbitMQ, never printed, not even with --debug."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines, queue_name
from tests.peers import Broker

pytestmark = pytest.mark.integration


def _config(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return {"AMQP_CONFIG": str(path)}


def test_send_recv_browse_through_a_profile(broker: Broker, tmp_path: Path) -> None:
    env = _config(tmp_path, f'[profiles.t]\nurl = "{broker.url}/unused"\ncontainer_id = "from-profile"\n')
    r = amqp("send", "@t/q1", "hello", "--count", "2", env=env)
    assert r.returncode == 0, r.stderr
    assert broker.queue_bodies("q1") == [b"hello", b"hello"]
    assert "from-profile" in {c.container_id for c in broker.connections()}

    r = amqp("browse", "--profile", "t", "--address", "q1", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert len(json_lines(r.stdout)) == 2

    r = amqp("recv", "@t/q1", "-c", "2", "-t", "10", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert len(json_lines(r.stdout)) == 2
    assert broker.queue_bodies("q1") == []

    # The profile's own address, when @NAME gives none.
    r = amqp("send", "@t", "x", env=env)
    assert r.returncode == 0, r.stderr
    assert broker.queue_bodies("unused") == [b"x"]

    # $AMQP_URL may name the profile too.
    r = amqp("send", input=b"y", env={**env, "AMQP_URL": "@t/q2"})
    assert r.returncode == 0, r.stderr
    assert broker.queue_bodies("q2") == [b"y"]


def test_profile_errors_are_one_line(tmp_path: Path) -> None:
    env = _config(tmp_path, '[profiles.t]\nurl = "amqp://u:hunter2@127.0.0.1"\n')
    r = amqp("send", "@t/q", "x", env=env)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "password_env" in r.stderr and "hunter2" not in r.stderr
    # A password anywhere in the file is refused, whichever profile is asked for.
    r = amqp("recv", "@nope/q", env=env)
    assert r.returncode == 2 and "password_env" in r.stderr
    env = _config(tmp_path, '[profiles.t]\nurl = "amqp://127.0.0.1"\n')
    r = amqp("recv", "@nope/q", env=env)
    assert r.returncode == 2 and "no profile 'nope'" in r.stderr


def test_profile_password_by_reference_is_never_printed(rabbitmq_url: str, tmp_path: Path) -> None:
    from urllib.parse import urlsplit

    parts = urlsplit(rabbitmq_url)
    url = f"amqp://{parts.username}@{parts.hostname}:{parts.port}"
    env = {
        **_config(tmp_path, f'[profiles.r]\nurl = "{url}"\npassword_env = "R_PW"\n'),
        "R_PW": parts.password or "",
    }
    q = f"/queue/{queue_name('profile')}"
    r = amqp("--debug", "send", f"@r/{q}", "hello", env=env)
    assert r.returncode == 0, r.stderr
    r = amqp("--debug", "recv", f"@r/{q}", "-c", "1", "-t", "10", "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert len(json_lines(r.stdout)) == 1

    secret = "Wrong-Secret-93"
    for args in (["--debug", "send", f"@r/{q}", "x"], ["send", f"@r/{q}", "x"],
                 ["--debug", "recv", f"@r/{q}", "-c", "1", "-t", "5"]):
        r = amqp(*args, env={**env, "R_PW": secret})
        # SASL refused: a connection error, the same status with --debug (and a traceback)
        assert r.returncode == 3, r.stderr
        assert "SASL PLAIN authentication failed" in r.stderr
        assert secret not in r.stdout + r.stderr
