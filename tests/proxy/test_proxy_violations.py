"""`amqp proxy` prints the protocol violations its engine observer finds, as `amqp
pcap-dump` of its recording does (text and JSON), numbered by the proxy's frame numbers:
a client sending three transfers before any credit is three transfer-beyond-credit."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.message import Message
from tests.proxy.dying_client import read_to_end, read_until_flow, sender_opening

PROXY = [sys.executable, "-m", "amqpcli", "proxy"]


def _listening(stream: object) -> int:
    line = stream.readline()  # type: ignore[attr-defined]
    m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
    assert m, line
    return int(m.group(1))


def _eager_sender(port: int) -> None:
    """Open, begin, attach a sending link and send 3 transfers at once, before any flow;
    then read until the peer's flow came, and close."""
    transfers = b"".join(
        encode_frame(c.Transfer(handle=0, delivery_id=i, delivery_tag=b"t%d" % i,
                                message_format=0, settled=True), 0,
                     Message(body=b"m%d" % i).encode()) for i in range(3))
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(sender_opening("eager") + transfers)
        read_until_flow(sock)
        sock.sendall(encode_frame(c.Close()))
        read_to_end(sock)


@pytest.mark.parametrize("as_json", [False, True])
def test_violations_are_printed_as_pcap_dump_prints_them(tmp_path: Path, as_json: bool) -> None:
    serve = subprocess.Popen([sys.executable, "-m", "amqpcli", "serve", "-l", "127.0.0.1:0",
                              "--no-sasl", "--credit", "2", "-q"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    proxy = None
    try:
        upstream = _listening(serve.stdout)
        record = tmp_path / "p.pcapng"
        proxy = subprocess.Popen(PROXY + ["127.0.0.1:0", f"amqp://127.0.0.1:{upstream}",
                                          "--record", str(record)]
                                 + (["--json"] if as_json else []),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        port = _listening(proxy.stderr)
        _eager_sender(port)
        proxy.send_signal(signal.SIGINT)
        out, _ = proxy.communicate(timeout=60)
    finally:
        for p in (proxy, serve):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    dump = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(record)]
                          + (["--json"] if as_json else []),
                          check=True, capture_output=True, text=True, timeout=60).stdout
    if as_json:
        ours = [json.loads(x) for x in out.splitlines() if '"violation"' in x]
        theirs = [json.loads(x) for x in dump.splitlines() if '"violation"' in x]
        assert len(ours) == 3
        for v in theirs:
            v.pop("packet")
        assert ours == theirs, ours
    else:
        ours = [x for x in out.splitlines() if "!! violation" in x]
        theirs = [re.sub(r", packet \d+", "", x) for x in dump.splitlines() if "!! violation" in x]
        assert len(ours) == 3 and "transfer-beyond-credit by client" in ours[0]
        assert ours == theirs, ours
