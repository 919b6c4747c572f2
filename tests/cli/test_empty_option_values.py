"""An empty connection value given is an error naming where it was given, not a default
taken unasked: a profile's `url = ""` connected to the default broker, `user = ""` logged
in anonymously, an empty path was the config file's folder ("cannot read password file
'/home/me/.config/amqp': Is a directory"), and an empty server_name or container_id was
said as the command-line option (--server-name), which the user never gave. `--user ''`
was no user either: an anonymous login without a word. And an integer key given a
float (`max_frame_size = 1e9`) was told it "must be a number"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net.clirun import amqp

NOWHERE = "amqp://127.0.0.1:1"  # (never reached: refused first)


def _run(tmp_path: Path, keys: str) -> tuple[int, str]:
    config = tmp_path / "config.toml"
    config.write_text(f"[profiles.p]\n{keys}\n")
    r = amqp("send", "@p/q", "x", env={"AMQP_CONFIG": str(config)})
    return r.returncode, r.stderr


@pytest.mark.parametrize("key", ["url", "user", "password_file", "ca_file", "cert_file",
                                 "key_file", "server_name", "container_id"])
def test_an_empty_profile_value_is_refused_by_its_key(tmp_path: Path, key: str) -> None:
    url = f'url = "{NOWHERE}"\n' if key != "url" else ""
    code, err = _run(tmp_path, f'{url}{key} = ""')
    assert code == 2, err
    assert err == (f"amqp: error: {tmp_path / 'config.toml'}: profile 'p': {key} is empty: "
                   "give a value or leave the key out\n")


def test_an_integer_key_given_a_float_says_integer(tmp_path: Path) -> None:
    code, err = _run(tmp_path, f'url = "{NOWHERE}"\nmax_frame_size = 1e9')
    assert code == 2, err
    assert err.endswith("profile 'p': max_frame_size must be an integer\n"), err


@pytest.mark.parametrize("command", [["send", f"{NOWHERE}/q", "x"],
                                     ["recv", f"{NOWHERE}/q", "-t", "1"]])
def test_an_empty_user_option_is_refused(command: list[str]) -> None:
    r = amqp(*command, "--user", "")
    assert r.returncode == 2, r.stderr
    assert r.stderr == ("amqp: error: --user needs a name (without --user the login is "
                        "anonymous)\n")
