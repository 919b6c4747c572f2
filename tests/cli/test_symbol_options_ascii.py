"""Options whose text goes on the wire as a symbol — a link's capabilities, a recv
filter's key, a reject outcome's condition — take ASCII only, as a symbol must be. Text
that is not was an internal error (exit 1) when the attach or the disposition carrying
it was encoded: for `recv -o reject:é`, once a message had come. It is a usage error
now, one line before connecting, in the words the other symbol options use."""

from __future__ import annotations

import pytest

from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers

NOWHERE = "amqp://127.0.0.1:1/q"  # (never reached: the options are refused first)


@pytest.mark.parametrize(("args", "what"), [
    (["send", NOWHERE, "x", "--capability", "quéue"], "--capability 'quéue'"),
    (["recv", NOWHERE, "--capability", "quéue"], "--capability 'quéue'"),
    (["browse", NOWHERE, "--capability", "quéue"], "--capability 'quéue'"),
    (["recv", NOWHERE, "--filter", 'sélector={"string": "x"}'], "--filter 'sélector'"),
    (["recv", NOWHERE, "-o", "reject:érreur=why"], "--outcome 'reject:érreur=why'"),
    (["recv", NOWHERE, "-o", "accept,reject:x:é"], "--outcome 'accept,reject:x:é'"),
], ids=["send-capability", "recv-capability", "browse-capability", "filter-key",
        "reject-condition", "reject-condition-in-a-pattern"])
def test_a_symbol_that_is_not_ascii_is_a_usage_error(args: list[str], what: str) -> None:
    r = amqp(*args)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith(f"amqp: error: {what}: symbol "), r.stderr
    assert "is not ASCII" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr


def test_an_ascii_condition_and_a_unicode_description_still_go(serve: ServePeers) -> None:
    url = serve()
    assert amqp("send", f"{url}/q", "x", "-q").returncode == 0
    r = amqp("recv", f"{url}/q", "-c", "1", "-t", "20", "-o", "reject:app:bad=pas bon é")
    assert r.returncode == 0, r.stderr
    assert "reject 1" in r.stderr, r.stderr


def test_the_message_is_left_with_the_peer(serve: ServePeers) -> None:
    url = serve()
    assert amqp("send", f"{url}/q", "kept", "-q").returncode == 0
    r = amqp("recv", f"{url}/q", "-c", "1", "-t", "20", "-o", "reject:é")
    assert r.returncode == 2, r.stderr
    r = amqp("recv", f"{url}/q", "-c", "1", "-t", "20", "--bodies-only")
    assert (r.returncode, r.stdout) == (0, "kept\n"), r.stderr
