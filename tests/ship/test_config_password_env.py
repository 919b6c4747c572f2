"""A profile's `password_env` holding the password itself (a mistake easily made) is not
echoed: it was, in `password_env Zq9Secret is not set`. A value that is no environment
variable's name is refused unquoted; an unset name is said only in the upper case names
of variables usually have."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.config import apply_profile
from amqpcli.errors import UserError
from tests.net.clirun import amqp
from tests.ship.test_config import _defaults, _write

NOT_A_NAME = "amqp: error: {path}: profile 'p': password_env must name an environment " \
    "variable (letters, digits and _, not starting with a digit)\n"


@pytest.mark.parametrize("value", ["Zq9 Secret!", "9Zq9Secret", "Zq9-Secret", "", "Zq9Secret\n",
                                   "Zq9Sécret"])
def test_a_value_that_is_no_name_is_refused_unquoted(tmp_path: Path, value: str) -> None:
    text = f'[profiles.p]\nuser = "u"\npassword_env = {json.dumps(value)}\n'  # (TOML takes it)
    env = _write(tmp_path, text)
    with pytest.raises(UserError) as info:
        apply_profile(_defaults(url="@p/q"), env)
    said = str(info.value)
    assert said.endswith("profile 'p': password_env must name an environment variable "
                         "(letters, digits and _, not starting with a digit)"), said
    if value:
        assert "Zq9" not in said and "Secret" not in said and "cret" not in said


def test_the_cli_says_it_in_one_line(tmp_path: Path) -> None:
    env = _write(tmp_path, '[profiles.p]\nuser = "u"\npassword_env = "Zq9 Secret!"\n')
    r = amqp("send", "@p/q", "hi", env=env, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (
        2, "", NOT_A_NAME.format(path=env["AMQP_CONFIG"]))


def test_an_unset_name_not_in_upper_case_is_not_shown(tmp_path: Path) -> None:
    env = _write(tmp_path, '[profiles.p]\nuser = "u"\npassword_env = "Zq9Secret"\n')
    r = amqp("send", "@p/q", "hi", env=env, timeout=60)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == ("amqp: error: profile 'p': password_env names a variable that is not "
                        "set (its name not shown: one not in upper case may be a password)\n")
    assert "Zq9" not in r.stderr


def test_an_unset_usual_name_is_still_named(tmp_path: Path) -> None:
    env = _write(tmp_path, '[profiles.p]\nuser = "u"\npassword_env = "PROD_AMQP_PW_2"\n')
    with pytest.raises(UserError, match="password_env PROD_AMQP_PW_2 is not set"):
        apply_profile(_defaults(url="@p/q"), env)


@pytest.mark.parametrize("name", ["PROD_PW", "Zq9Secret", "_x1"])
def test_a_set_variable_of_any_name_gives_the_password(tmp_path: Path, name: str) -> None:
    env = {**_write(tmp_path, f'[profiles.p]\nuser = "u"\npassword_env = "{name}"\n'),
           name: "pw"}
    assert apply_profile(_defaults(url="@p/q"), env)["password"] == "pw"
