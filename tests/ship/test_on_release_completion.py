"""`amqp send --on-release` completes its values, fail and retry, in bash, zsh and fish
(it completed nothing: the option is a plain string, and its values were not named for
the completion scripts as those of --body-type or --outcome are). The scripts'
other values are in tests/ship/test_completions.py."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.ship.test_completions import bash_complete, fish_complete, zsh_complete

LINES = ["amqp send --on-release ", "amqp send --on-release r"]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("complete")
    amqp = Path(sys.executable).parent / "amqp"
    if not amqp.exists():
        pytest.fail(f"{amqp} missing: the package is not installed in this environment")
    return {"PATH": f"{amqp.parent}:/usr/bin:/bin", "HOME": str(home),
            "AMQP_CONFIG": str(home / "config.toml"), "XDG_CONFIG_HOME": str(home),
            "TERM": "dumb"}


def test_bash(env: dict[str, str]) -> None:
    got = bash_complete(LINES, env, Path(env["HOME"]))
    assert got[LINES[0]] == {"fail", "retry"}
    assert got[LINES[1]] == {"retry"}


def test_zsh(env: dict[str, str]) -> None:
    got = zsh_complete(LINES[:1], env, Path(env["HOME"]))
    assert {"fail", "retry"} <= set(re.findall(r"[\w.:/@-]+", got[LINES[0]])), got


def test_fish(env: dict[str, str]) -> None:
    assert fish_complete(LINES[0], env, Path(env["HOME"])) == {"fail", "retry"}
