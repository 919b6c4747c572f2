"""`amqp pcap-dump` of a recorded capture with transactions rolled back: `amqp serve`
on the loopback, `recv --txn-size 2 --rollback` and `send --txn-size 2 --rollback`
through it, dumpcap recording. A transactional outcome takes effect only if its
transaction commits (Part 4): the messages stay in the queue, and every view says they
were rolled back; the declares and discharges are no messages."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.cli.test_pcap_dump_recorded import dump, recording
from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration


def test_rolled_back_transactions(serve: ServePeers, tmp_path: Path) -> None:
    url = serve()
    port = urlsplit(url).port
    assert port is not None
    with recording(port, tmp_path / "txn.pcapng") as cap:
        r = amqp("send", f"{url}/q3", "tx {n}", "--expand", "-c", "3")
        assert r.returncode == 0, r.stderr
        r = amqp("recv", f"{url}/q3", "--drain", "--txn-size", "2", "--rollback")
        assert r.returncode == 0, r.stderr
        r = amqp("send", f"{url}/q4", "st {n}", "--expand", "-c", "3", "--txn-size", "2",
                 "--rollback")
        assert r.returncode == 0, r.stderr
    dels = dump(cap, "--deliveries", port=port)
    msgs = [d for d in dels if "coordinator" not in d]
    # c1: the plain sends, accepted; c2: received in rolled-back transactions; c3: sent
    # in rolled-back transactions
    assert [(d["connection"], d["outcome"]) for d in msgs] == [
        ("c1", "accepted")] * 3 + [("c2", "rolled-back")] * 3 + [("c3", "rolled-back")] * 3
    assert all(d["txn-result"] == "rolled-back" for d in msgs[3:])
    assert all(d["state"]["transactional-state"]["outcome"] == {"accepted": {}}
               for d in msgs[3:])
    reqs = [(d["connection"], d["coordinator"], d["outcome"]) for d in dels
            if "coordinator" in d]
    assert reqs == [(c, k, o) for c in ("c2", "c3") for k, o in (
        ("declare", "declared"), ("discharge", "accepted")) * 2]

    (summary,) = dump(cap, "--summary", port=port, record="summary")
    assert summary["deliveries"] == 9
    assert summary["by-outcome"] == {"accepted": 3, "rolled-back": 6}
    assert summary["transactions"] == {"declared": 4, "rolled-back": 4}
    links = dump(cap, "--links", port=port, record="link")
    coordinators = [ln for ln in links if ln["name"] == "amqp-txn"]
    assert [ln["outcomes"] for ln in coordinators] == [{}, {}]
    assert [ln["transactions"] for ln in coordinators] == [
        {"declared": 2, "rolled-back": 2}] * 2

    r = amqp("pcap-dump", str(cap), "--amqp-port", str(port), "-d")
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if " c2 <- " in x]
    assert len(lines) == 3
    assert all(' rolled-back (accepted in txn b"txn-' in x for x in lines)
    r = amqp("pcap-dump", str(cap), "--amqp-port", str(port), "-m")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("c2 <- q3 rolled-back (accepted in txn") == 3
    assert "accepted in txn" not in r.stdout.replace("rolled-back (accepted in txn", "")
    # the messages are still in the queue
    r = amqp("recv", f"{url}/q3", "--drain", "--json")
    assert r.returncode == 0, r.stderr
    assert len([json.loads(x) for x in r.stdout.splitlines()]) == 3
