"""A URL byte that is not UTF-8 in its user or password is said without the byte or its
offset (`the URL is not UTF-8 text (byte 0xff at offset 18)` told the password's length
and its last byte); one after them is placed from the '@' that ends them, not from the
start (which would tell their length too); a URL without credentials keeps its offset."""

from __future__ import annotations

import pytest

from amqpcli.cli.options import check_url_text
from amqpcli.errors import UserError
from tests.net.clirun import amqp

FF = "\udcff"  # the byte 0xff as Python holds it from argv or the environment


@pytest.mark.parametrize("url", [
    f"amqp://u:Zq9Secret{FF}@h/q",
    f"amqp://u{FF}:Zq9Secret@h/q",
    f"amqps://u:Zq9{FF}Secret@h:5671",
    f"amqp://u:Zq9/Secr{FF}et@h/q",  # a '/' in the password: the '@' still ends it
    f"u:Zq9Secret{FF}@h/q",
    f"amqp://h1,amqp://u:Zq9Secret{FF}@h2/q",
    f"failover:(amqp://h1,amqp://u:Zq9Secret{FF}@h2/q)",
])
def test_a_bad_byte_in_the_credentials_is_not_placed(url: str) -> None:
    with pytest.raises(UserError) as info:
        check_url_text(url, "the URL")
    assert str(info.value) == "the URL's user or password is not UTF-8 text"


@pytest.mark.parametrize(("url", "said"), [
    (f"amqp://u:Zq9Secret@h{FF}/q", "byte 0xff at offset 2 from the '@' after the user and password"),
    (f"amqp://u:Zq9Secret@h/q{FF}", "byte 0xff at offset 4 from the '@' after the user and password"),
    (f"amqp://u:Zq9Secret@h1,amqp://h{FF}/q",
     "byte 0xff at offset 12 from the '@' after the user and password"),
    (f"amqp://h{FF}/q", "byte 0xff at offset 8"),
    (f"amqp://h/q{FF}@x", "byte 0xff at offset 10"),  # (an '@' in the address is no user's)
])
def test_a_bad_byte_elsewhere_is_placed(url: str, said: str) -> None:
    with pytest.raises(UserError) as info:
        check_url_text(url, "the URL")
    assert str(info.value) == f"the URL is not UTF-8 text ({said})"


@pytest.mark.parametrize(("args", "env", "said"), [
    (["send", f"amqp://u:Zq9Secret{FF}@h/q", "hi"], {},
     "the URL's user or password is not UTF-8 text"),
    (["recv", f"amqp://u:Zq9Secret{FF}@h/q"], {},
     "the URL's user or password is not UTF-8 text"),
    (["send", "hi"], {"AMQP_URL": f"amqp://u:Zq9Secret{FF}@h/q"},
     "$AMQP_URL's user or password is not UTF-8 text"),
], ids=["send", "recv", "env"])
def test_the_commands_say_it(args: list[str], env: dict[str, str], said: str) -> None:
    r = amqp(*args, env=env, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"amqp: error: {said}\n")
