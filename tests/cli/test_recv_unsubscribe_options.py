"""`recv --unsubscribe` removes a durable subscription and receives nothing: an option
about receiving or writing messages with it is a usage error naming it, as other
meaningless combinations are, not accepted and ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net.clirun import amqp_in_process
from tests.peers.net import free_port

SUB = ("--unsubscribe", "--subscription", "zz")


@pytest.fixture
def url() -> str:
    return f"amqp://127.0.0.1:{free_port()}/topic"  # nothing listens: exit 3 once it tries


@pytest.mark.parametrize(("args", "named"), [
    (("--count", "5"), "--count"),
    (("--timeout", "2"), "--timeout"),
    (("--drain",), "--drain"),
    (("--outcome", "reject"), "--outcome"),
    (("--presettled",), "--presettled"),
    (("--settle-mode", "second"), "--settle-mode"),
    (("--copy",), "--copy"),
    (("--dynamic",), "--dynamic"),
    (("--json",), "--json"),
    (("--out", "OUT"), "--out"),
    (("--count", "5", "--json", "--out", "OUT"), "--count, --json, --out"),
])
def test_options_it_does_not_use_are_refused(url: str, args: tuple[str, ...], named: str,
                                             tmp_path: Path) -> None:
    out_file = tmp_path / "out.jsonl"
    args = tuple(str(out_file) if a == "OUT" else a for a in args)
    code, out, err = amqp_in_process("recv", url, *SUB, *args)
    assert (code, out) == (2, "")
    assert err == ("amqp: error: --unsubscribe removes the subscription and receives "
                   f"nothing: it takes no {named}\n")
    assert not out_file.exists()


def test_what_it_uses_is_taken(url: str) -> None:
    code, _, err = amqp_in_process("recv", url, *SUB, "--container-id", "c", "-q")
    assert code == 3, err  # it went on to connect
