"""pcap-dump over the frame-trace log of real proton peers (PN_TRACE_FRM=1) against
`amqp serve`: the deliveries and outcomes the peers saw."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SENDER = r'''
import sys
from proton import Message
from proton.handlers import MessagingHandler
from proton.reactor import Container

class Send(MessagingHandler):
    def __init__(self):
        super().__init__()
        self.sent = 0
        self.outcomes = {}
    def on_start(self, e):
        c = e.container.connect(sys.argv[1], user="guest", password="secret",
                                allowed_mechs="PLAIN")
        e.container.create_sender(c, "orders")
    def on_sendable(self, e):
        while e.sender.credit and self.sent < 4:
            self.sent += 1
            e.sender.send(Message(body={"n": self.sent, "s": 'a "quoted"\nline'},
                                  properties={"k": self.sent}))
    def _done(self, e, what):
        self.outcomes[e.delivery.tag] = what
        if len(self.outcomes) == 4:
            print(" ".join(self.outcomes[t] for t in sorted(self.outcomes)))
            e.connection.close()
    def on_accepted(self, e): self._done(e, "accepted")
    def on_rejected(self, e): self._done(e, "rejected")
    def on_released(self, e): self._done(e, "released")

Container(Send()).run()
'''

RECEIVER = r'''
import sys
from proton.handlers import MessagingHandler
from proton.reactor import Container

class Recv(MessagingHandler):
    def __init__(self):
        super().__init__()
        self.got = 0
    def on_start(self, e):
        e.container.create_receiver(e.container.connect(sys.argv[1]), "orders")
    def on_message(self, e):
        self.got += 1
        if self.got == int(sys.argv[2]):
            e.connection.close()

Container(Recv()).run()
'''


@pytest.fixture
def serve():
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "serve", "-l", "127.0.0.1:0",
                             "--reject", "at:2"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    assert "listening on" in line, line
    url = "amqp://" + line.split("listening on ")[1].split()[0]
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def _traced(script: str, *args: str, log: Path) -> str:
    env = dict(os.environ, PN_TRACE_FRM="1")
    with open(log, "ab") as err:
        r = subprocess.run([sys.executable, "-c", script, *args], env=env, check=True,
                           stdout=subprocess.PIPE, stderr=err, timeout=120, text=True)
    return r.stdout


def test_deliveries_of_a_proton_trace(serve: str, tmp_path: Path) -> None:
    log = tmp_path / "client.trace"
    outcomes = _traced(SENDER, serve, log=log).split()
    _traced(RECEIVER, serve, "3", log=log)
    assert outcomes == ["accepted", "rejected", "accepted", "accepted"]
    r = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(log),
                        "--deliveries", "--json"], capture_output=True, text=True,
                       timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert "warning" not in r.stderr, r.stderr
    deliveries = [json.loads(x) for x in r.stdout.splitlines()]
    deliveries = [d for d in deliveries if d.get("record") == "delivery"]
    # (printed as each ends: in the order of their ids here)
    deliveries.sort(key=lambda d: (d["connection"], d["delivery-id"]))
    sent = [d for d in deliveries if d["connection"] == "c1"]
    received = [d for d in deliveries if d["connection"] == "c2"]
    assert [d["outcome"] for d in sent] == outcomes
    assert all(d["from"] == "client" and d["address"] == "orders" for d in sent)
    # the three accepted messages, delivered by the server and accepted by the receiver
    assert [d["outcome"] for d in received] == ["accepted"] * 3
    assert all(d["from"] == "server" for d in received)
    assert [d["message"]["application-properties"]["k"] for d in received] == [1, 3, 4]
    # the password is masked, as in a capture
    frames = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(log)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert 'initial-response=b"\\x00guest\\x00***"' in frames.stdout
    assert "secret" not in frames.stdout
    shown = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(log),
                            "--show-secrets"], capture_output=True, text=True, timeout=120,
                           check=False)
    assert "secret" in shown.stdout
