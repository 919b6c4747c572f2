"""The proxy's recording of a connection whose application came over IPv6 while the
broker was reached over IPv4 (`amqp proxy '[::1]:5673' amqp://127.0.0.1:5672`), or the
other way round (`localhost` resolving to ::1 for the broker): one TCP conversation with
both directions, the IPv4 end written as its IPv4-mapped IPv6 address. It was written
as two halves of different families (the broker's packets IPv4 to 0.0.0.0, the
application's IPv6 to a mangled address), so `amqp pcap-dump` of it saw the client's
frames only: `server: no open; no close; 0 frames`."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.proxy import Recorder

HEADER = encode_protocol_header("amqp")


@dataclass
class _Conn:
    serial: int
    client: tuple[str, int]
    upstream: tuple[str, int]
    started: float = 1_700_000_000.0


@pytest.mark.parametrize(("client", "broker"), [
    (("::1", 40000), ("127.0.0.1", 5672)),
    (("127.0.0.1", 40000), ("::1", 5672)),
])
def test_one_conversation_across_address_families(tmp_path: Path, client: tuple[str, int],
                                                  broker: tuple[str, int]) -> None:
    path = tmp_path / "mixed.pcapng"
    rec = Recorder(path)
    conn = _Conn(0, client, broker)
    rec.open(conn)
    rec.data(conn, "client", HEADER + encode_frame(c.Open(container_id="app")), conn.started + 0.1)
    rec.data(conn, "server", HEADER + encode_frame(c.Open(container_id="broker")),
             conn.started + 0.2)
    rec.data(conn, "client", encode_frame(c.Close()), conn.started + 0.3)
    rec.data(conn, "server", encode_frame(c.Close()), conn.started + 0.4)
    rec.fin(conn, "client", conn.started + 0.5)
    rec.fin(conn, "server", conn.started + 0.6)
    rec.close()
    dump = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(path)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert dump.returncode == 0, dump.stdout + dump.stderr
    lines = dump.stdout.splitlines()
    assert [x.split(" ", 1)[1] for x in lines if " open " in x or " close" in x] == [
        'c1 -> [0]  open        container-id="app"',
        'c1 <- [0]  open        container-id="broker"',
        "c1 -> [0]  close",
        "c1 <- [0]  close",
    ], dump.stdout
    conns = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(path),
                            "--connections"], capture_output=True, text=True, timeout=60,
                           check=True).stdout
    assert conns.count("amqp-1.0") == 1 and "tcp: client fin, server fin" in conns, conns
