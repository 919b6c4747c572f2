"""`recv --presettled` whose output fails part way (a full disk): the peer settled every
message when it sent it, so those not written are lost. The summary counts every message
received and says how many were lost unwritten, the error keeps its exit code and says
how many were written, and no credit is granted after the failure."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from amqpcli.cli.recv import recv_exit
from amqpcli.errors import Exit
from amqpcli.net.client import Incoming
from amqpcli.net.config import ConnectionConfig
from amqpcli.net.receiving import OutputError, RecvPlan, run_recv
from amqpcli.net.url import resolve_endpoint
from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers


def _id(inc: Incoming) -> str:
    return str(inc.delivery.message().properties.message_id)


class _FullDisk:
    """Writes `room` messages, then every write fails (ENOSPC) with none of its run
    written whole."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.written: list[str] = []

    def write_many(self, incomings: Sequence[Incoming]) -> None:
        for n, inc in enumerate(incomings):
            if len(self.written) >= self.room:
                raise OutputError("cannot write out.jsonl: No space left on device",
                                  Exit.USAGE, n)
            self.written.append(_id(inc))

    def write(self, incoming: Incoming) -> None:
        self.write_many([incoming])

    def close(self) -> None:
        pass


def _fill(url: str, queue: str, n: int) -> None:
    r = amqp("send", f"{url}/{queue}", "x" * 100, "--count", str(n), "--message-id", "{n}")
    assert r.returncode == 0, r.stderr


def _left(url: str, queue: str) -> list[str]:
    r = amqp("recv", f"{url}/{queue}", "--timeout", "2", "--json", "-q")
    return [m["properties"]["message-id"] for m in json_lines(r.stdout)]


@pytest.mark.integration
def test_presettled_messages_not_written_are_counted_as_lost(serve: ServePeers) -> None:
    url = serve("-q")
    _fill(url, "full", 30)
    sink = _FullDisk(5)
    warnings: list[str] = []
    cfg = ConnectionConfig(endpoint=resolve_endpoint(f"{url}/full"))
    # credit 100: the peer sends all 30 pre-settled at once, whatever we do after
    plan = RecvPlan(address="full", timeout=5, credit=100, presettled=True)
    s = run_recv(cfg, plan, sink, on_warning=warnings.append)
    assert sink.written == ["1", "2", "3", "4", "5"]
    assert isinstance(s.failure, OutputError) and s.failure.code == Exit.USAGE
    assert s.received == 30 and s.presettled == 30
    assert s.presettled_lost == 25 and s.written == 5
    assert "received 30, pre-settled 30 (25 of them lost: not written)" in s.text()
    assert s.to_json()["pre-settled-lost"] == 25
    assert any("25 pre-settled message(s) lost" in w for w in warnings), warnings
    code, why = recv_exit(s, None)
    assert code == Exit.USAGE
    assert why == "cannot write out.jsonl: No space left on device (after 5 message(s))"
    assert _left(url, "full") == []  # at most once: they are gone from the node


@pytest.mark.integration
def test_no_credit_after_the_write_fails(serve: ServePeers) -> None:
    url = serve("-q")
    _fill(url, "window", 30)
    sink = _FullDisk(2)
    cfg = ConnectionConfig(endpoint=resolve_endpoint(f"{url}/window"))
    plan = RecvPlan(address="window", timeout=5, credit=5, presettled=True)
    s = run_recv(cfg, plan, sink)
    assert isinstance(s.failure, OutputError)
    # the first window only: 2 written, the other 3 of it lost, the rest never sent
    assert sink.written == ["1", "2"]
    assert s.received == 5 and s.presettled_lost == 3
    assert _left(url, "window") == [str(n) for n in range(6, 31)]


@pytest.mark.integration
def test_cli_summary_says_the_loss(serve: ServePeers) -> None:
    """The command on /dev/full: nothing can be written, every message received is lost
    and said to be; the exit code is the write error's."""
    url = serve("-q")
    _fill(url, "cli", 10)
    r = amqp("recv", f"{url}/cli", "--presettled", "--out", "/dev/full", "--count", "10",
             "-t", "5")
    assert r.returncode == Exit.USAGE, r.stderr
    assert "received 10, pre-settled 10 (10 of them lost: not written)" in r.stderr
    assert "10 pre-settled message(s) lost" in r.stderr
    assert "Traceback" not in r.stderr
    assert _left(url, "cli") == []
