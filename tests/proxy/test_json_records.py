"""`amqp proxy --json` frame records have the shape of `pcap-dump --json`'s: the same
members with the same values as pcap-dump gives for the proxy's own recording, `protocol`
and the per-connection `frame` number included (they were missing), all but `packet`:
there is no capture packet behind a proxied frame."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from proton import Message
from proton.utils import BlockingConnection

from tests.peers.broker import Broker


@pytest.mark.integration
def test_json_frames_are_pcap_dumps_of_the_recording(broker: Broker, tmp_path: Path) -> None:
    record = tmp_path / "p.pcapng"
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "proxy", "127.0.0.1:0",
                             broker.url, "--record", str(record), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    try:
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", proc.stderr.readline())
        assert m
        for n in range(2):
            conn = BlockingConnection(f"amqp://127.0.0.1:{m.group(1)}", timeout=30)
            try:
                sender = conn.create_sender("q")
                sender.send(Message(body=f"m{n}"))
            finally:
                conn.close()
            while f"c{n + 1} closed" not in proc.stderr.readline():
                pass
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    proxied = [json.loads(x) for x in out.splitlines()]
    dump = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(record), "--json"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert dump.returncode == 0, dump.stderr
    recorded = [o for o in map(json.loads, dump.stdout.splitlines()) if o["record"] == "frame"]
    assert all("packet" in o for o in recorded)
    for o in recorded:
        del o["packet"]
    assert proxied == recorded
    assert [list(o) for o in proxied] == [list(o) for o in recorded]  # in the same order
    # what was missing
    assert {o["protocol"] for o in proxied} == {"amqp-1.0"}
    for key in ("c1", "c2"):
        mine = [o for o in proxied if o["connection"] == key]
        assert all("frame" not in o for o in mine if "header" in o)  # as pcap-dump
        numbers = [o["frame"] for o in mine if "header" not in o]
        assert numbers == list(range(1, len(numbers) + 1)), numbers  # both sides counted
