"""A paced `amqp recv --rate` stopped by SIGTERM (or Ctrl-C) settles what it wrote before
it closes, and its summary counts as accepted only what it settled: the messages it
accepted are gone from the node, every other one is still there."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.net.clirun import amqp, amqp_stopped
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration

SENT = 1000


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _summary(stderr: str) -> dict[str, Any]:
    return json.loads(next(x for x in stderr.splitlines() if x.startswith("{")))["recv"]  # type: ignore[no-any-return]


def test_sigterm_during_a_paced_recv_settles_what_it_counts(serve: ServePeers,
                                                           tmp_path: Path) -> None:
    url = f"{serve()}/paced"
    r = amqp("send", url, "x", "--count", str(SENT), "--message-id", "{n}", "-q")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "o.jsonl"
    # Past the first window of credit (a second at the rate: 200), into the second.
    code, err = amqp_stopped(["recv", url, "--rate", "200", "--out", str(out),
                              "--json-summary"],
                             lambda: _lines(out) >= 250, signal.SIGTERM, poll=0.05)
    assert code == 130, err
    summary = _summary(err)
    written = _lines(out)
    accepted = summary["outcomes"]["accept"]
    assert summary["received"] == written == accepted, err
    # What it said it accepted is what the node no longer has.
    rest = amqp("recv", url, "-t", "2", "--json-summary", "--out", str(tmp_path / "rest"))
    assert rest.returncode == 0, rest.stderr
    left = _summary(rest.stderr)["received"]
    assert accepted + left == SENT, (err, rest.stderr)


def test_a_presettled_message_waiting_for_its_turn_is_counted_lost(serve: ServePeers,
                                                                  tmp_path: Path) -> None:
    """A pre-settled message taken from the link and waiting for its `--rate` turn when
    the run stops is gone from the node and never written: counted and said as lost, not
    dropped without a word."""
    url = f"{serve()}/paced-presettled"
    sent = 10
    r = amqp("send", url, "x", "--count", str(sent), "-q")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "o.jsonl"
    # (after the second line, the next message waits a second for its turn)
    code, err = amqp_stopped(["recv", url, "--presettled", "--rate", "1", "--out", str(out),
                              "--json-summary"], lambda: _lines(out) >= 2, signal.SIGINT)
    assert code == 130, err
    summary = _summary(err)
    written = _lines(out)
    lost = summary.get("pre-settled-lost", 0)
    assert summary["received"] == summary["pre-settled"] == written + lost, err
    rest = amqp("recv", url, "-t", "2", "--json-summary", "--out", str(tmp_path / "rest"))
    assert rest.returncode == 0, rest.stderr
    assert written + lost + _summary(rest.stderr)["received"] == sent, (err, rest.stderr)
