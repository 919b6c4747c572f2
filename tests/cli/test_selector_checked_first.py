"""recv and browse parse --selector before connecting, as pcap-dump does: a selector that
does not parse, or an empty one, is a usage error saying what is wrong and where (exit 2),
in pcap-dump's words, not 'cannot connect' (exit 3) or the broker's refusal of the link
(exit 4). Nothing listens on port 1."""

from __future__ import annotations

import pytest

from amqpcli.errors import Exit
from tests.net.clirun import amqp
from tests.paths import REPO_ROOT

U = "amqp://127.0.0.1:1/q"
CAPTURE = str(REPO_ROOT / "amqpcli" / "examples" / "serve-session.pcapng")
BAD = [
    ("color = 'red", "unexpected \"'\" at position 9"),
    ("a IN ()", "expected a value at position 7, found ')'"),
    ("", "empty selector"),
    ("   ", "empty selector"),
]


@pytest.mark.parametrize("command", [("recv", U, "-t", "1"), ("browse", U)])
@pytest.mark.parametrize(("selector", "says"), BAD)
def test_a_bad_selector_is_refused_before_connecting(command: tuple[str, ...],
                                                     selector: str, says: str) -> None:
    r = amqp(*command, "--selector", selector)
    assert r.returncode == Exit.USAGE, r.stderr
    assert r.stderr == f"amqp: error: --selector: {says}\n"


@pytest.mark.parametrize(("selector", "says"), BAD[:2])
def test_in_pcap_dumps_words(selector: str, says: str) -> None:
    r = amqp("pcap-dump", CAPTURE, "--selector", selector, "--summary")
    assert r.returncode == Exit.USAGE, r.stderr
    assert r.stderr == f"amqp: error: --selector: {says}\n"


def test_a_good_selector_goes_on_to_connect() -> None:
    r = amqp("recv", U, "-t", "1", "--selector", "color = 'red' AND n BETWEEN 2 AND 5")
    assert r.returncode == Exit.CONNECTION, r.stderr
