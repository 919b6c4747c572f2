"""`amqp recv --txn-size N` stopped by Ctrl-C (or SIGTERM) with messages written in its open
transaction discharges it before it closes, as the end of `--count` does: what it wrote
is committed, not delivered again. It used to close with the transaction open (the node
rolls it back: the messages came again, duplicates of what was written)."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_recv_rate_interrupt import _lines, _summary
from tests.net.clirun import amqp, amqp_stopped
from tests.net.servepeer import ServePeers
from tests.peers import Broker

pytestmark = pytest.mark.integration

SENT = 100
TXN = 1000  # more than are sent: the open transaction holds every message written


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP],
                         ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_an_interrupt_commits_what_was_written(serve: ServePeers, tmp_path: Path,
                                              sig: signal.Signals) -> None:
    url = f"{serve()}/txi"
    r = amqp("send", url, "x", "--count", str(SENT), "--sequence", "-q")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "o.jsonl"
    # (some written, all in the one open transaction)
    code, err = amqp_stopped(["recv", url, "--txn-size", str(TXN), "--rate", "20", "--out",
                              str(out), "--json-summary"], lambda: _lines(out) >= 13, sig)
    assert code == 130, err
    assert "not committed" not in err
    written = _lines(out)
    summary = _summary(err)
    assert summary["received"] == written
    assert summary["transactions"]["committed"] == 1
    # the rest, and nothing written already, comes to the next run
    rest = amqp("recv", url, "-t", "2", "--json-summary", "--out", str(tmp_path / "rest"),
                "--verify-sequence")
    assert rest.returncode == 0, rest.stderr
    assert _summary(rest.stderr)["received"] == SENT - written, (err, rest.stderr)


def test_an_interrupt_during_a_discharge_does_not_send_another(
        peers: Callable[..., Any], tmp_path: Path) -> None:
    """The interrupt comes while the discharge of a full transaction waits for its answer:
    that discharge is the transaction's end (answered or in doubt), not followed by a
    second one for the same transaction."""
    from proton import Message

    broker = peers(Broker(discharge_delay=4.0))  # (the signal comes well within it)
    broker.put("q", *(Message(body=f"m{i}") for i in range(20)))
    out = tmp_path / "o.jsonl"
    code, err = amqp_stopped(["recv", f"{broker.url}/q", "--txn-size", "5", "--out",
                              str(out), "--json-summary"],
                             lambda: broker.discharges() >= 1, signal.SIGINT)
    assert code == 130, err
    # The run waited for the answer: committed, nothing in doubt, nothing written that
    # was not settled in it (the rest of what had come was not written: it stays).
    summary = _summary(err)
    assert summary["received"] == _lines(out) == 5, err
    assert summary["transactions"]["committed"] == 1 and "warnings" not in summary, err
    assert broker.discharges() == 1, err
    assert broker.transactions()["committed"] == 1
    assert broker.queue_bodies("q") == [f"m{i}" for i in range(5, 20)]
