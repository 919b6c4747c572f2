"""When `$AMQP_URL` or `--profile` gives the URL, `amqp send`'s one positional argument
is the body (it was read as the URL: `AMQP_URL=… amqp send hello` failed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration


def _bodies(url: str) -> list[str]:
    r = amqp("recv", url, "--drain", "--json", "-q")
    return [m["body"]["data"][0]["binary-text"] for m in json_lines(r.stdout)]


def test_the_body_with_amqp_url(serve: ServePeers) -> None:
    url = serve("-q")
    r = amqp("send", "hello", env={"AMQP_URL": f"{url}/u1"})
    assert r.returncode == 0, r.stderr
    assert _bodies(f"{url}/u1") == ["hello"]
    # a URL given anyway still wins over the environment
    r = amqp("send", f"{url}/u2", "there", env={"AMQP_URL": f"{url}/u1"})
    assert r.returncode == 0, r.stderr
    assert _bodies(f"{url}/u2") == ["there"]


def test_the_body_with_a_profile(serve: ServePeers, tmp_path: Path) -> None:
    url = serve("-q")
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[profiles.loc]\nurl = "{url}"\n')
    env = {"AMQP_CONFIG": str(cfg)}
    r = amqp("send", "--profile", "loc", "--address", "p1", "hi", env=env)
    assert r.returncode == 0, r.stderr
    assert _bodies(f"{url}/p1") == ["hi"]
    r = amqp("send", "--profile", "nope", "--address", "p1", "hi", env=env)
    assert r.returncode == 2 and "no profile 'nope'" in r.stderr, r.stderr
