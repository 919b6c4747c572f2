"""Agreement with tshark: real captures reassemble to what tshark shows as TCP payloads,
and tshark reads what our writer writes. tshark must be installed (a missing tshark fails
these tests)."""

from __future__ import annotations

import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from capture_helpers import AMQP_HDR, collect, frames

from amqpcli.capture import C2S, S2C
from amqpcli.capture.writer import CaptureWriter, TcpConversation

CAPTURES = Path("/work/shared/testdata/captures")


def tshark(*args: str) -> str:
    return subprocess.run(["tshark", *args], check=True, capture_output=True,
                          text=True).stdout


def tshark_streams(path: Path) -> dict[tuple[int, int], bytes]:
    """(tcp.stream, source port) → the TCP payloads that side sent, concatenated."""
    out: dict[tuple[int, int], bytearray] = defaultdict(bytearray)
    for line in tshark("-r", str(path), "-T", "fields", "-e", "tcp.stream",
                       "-e", "tcp.srcport", "-e", "tcp.payload").splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[2]:
            out[(int(parts[0]), int(parts[1]))] += bytes.fromhex(parts[2].replace(":", ""))
    return {k: bytes(v) for k, v in out.items()}


@pytest.mark.parametrize("name, ports", [
    ("rabbitmq-sasl-plain-send-recv.pcapng", ()),
    ("amqp010-qpid-python-echo.pcapng", (5682,)),
])
def test_real_captures_match_tshark(name: str, ports: tuple[int, ...]) -> None:
    path = CAPTURES / name
    expected = tshark_streams(path)
    r = collect(path, ports=ports)
    ours: dict[tuple[int, int], bytes] = {}
    for f in r.flows:
        for d, port in ((C2S, f.client_port), (S2C, f.server_port)):
            s = r.stream(f.index, d)
            if s:
                ours[(f.index, port)] = s
    assert ours == expected
    assert sum(len(v) for v in ours.values()) > 1000
    assert not r.gaps


def test_tshark_reads_our_pcapng_and_pcap(tmp_path: Path) -> None:
    c_data = AMQP_HDR + frames(40, 300)
    s_data = AMQP_HDR + frames(10, 200)
    for fmt, kw in (("pcapng", {}), ("pcap", {"nanosecond": False})):
        p = tmp_path / f"x.{fmt}"
        with CaptureWriter(p, format=fmt, **kw) as w:  # type: ignore[arg-type]
            c = TcpConversation(w, mss=1000)
            c.handshake()
            c.send(C2S, c_data)
            c.send(S2C, s_data)
            c.close()
        # tshark sees one TCP conversation and no checksum or sequence problems
        conv = tshark("-r", str(p), "-q", "-z", "conv,tcp")
        assert "10.0.0.1:40000" in conv and "10.0.0.2:5672" in conv
        # (the frames are fake, so the AMQP dissector is kept out of it)
        problems = tshark("-r", str(p), "--disable-protocol", "amqp",
                          "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE",
                          "-Y", "tcp.analysis.flags || tcp.checksum.status == 0 || "
                          "ip.checksum.status == 0 || _ws.malformed || "
                          "_ws.expert.severity >= warning")
        assert problems == ""
        streams = tshark_streams(p)
        assert streams == {(0, 40000): c_data, (0, 5672): s_data}


def test_tshark_agrees_on_ipv6_vlan_and_cooked(tmp_path: Path) -> None:
    data = AMQP_HDR + frames(5, 100)
    cases: list[tuple[int, dict[str, object]]] = [
        (1, {"vlans": [5, 6], "client": ("fd00::1", 40000), "server": ("fd00::2", 5672),
             "ipv6_ext": True}),
        (113, {}),
        (276, {}),
        (0, {}),
        (1, {"fragment": 64, "ip_options": b"\x01\x01\x01\x00"}),
    ]
    for i, (linktype, kw) in enumerate(cases):
        p = tmp_path / f"case{i}.pcapng"
        with CaptureWriter(p, linktype=linktype) as w:
            c = TcpConversation(w, **kw)  # type: ignore[arg-type]
            c.handshake()
            c.send(C2S, data)
            c.close()
        assert tshark_streams(p) == {(0, 40000): data}, kw
        assert collect(p).stream(0, C2S) == data


def tshark_follow(path: Path, stream: int) -> dict[int, bytes]:
    """tshark's reassembled stream: source port → bytes that side sent."""
    out = tshark("-r", str(path), "-q", "-z", f"follow,tcp,raw,{stream}")
    nodes: dict[int, int] = {}
    data: dict[int, bytearray] = {0: bytearray(), 1: bytearray()}
    for line in out.splitlines():
        if line.startswith("Node "):
            n, addr = line[5:].split(": ")
            nodes[int(n)] = int(addr.rsplit(":", 1)[1])
        elif line and not line.startswith(("=", "Follow", "Filter")):
            side = 1 if line.startswith("\t") else 0
            data[side] += bytes.fromhex(line.strip())
    return {nodes[k]: bytes(v) for k, v in data.items()}


def test_messy_conversations_reassemble_like_tshark(tmp_path: Path) -> None:
    p = tmp_path / "messy.pcapng"
    with CaptureWriter(p) as w:
        for i, kw in enumerate([
            {"reorder": True, "duplicate": {1, 4}, "overlap": 30},
            {"overlap": 99, "duplicate": {0}},
            {"reorder": True, "mss": 3},
        ]):
            c = TcpConversation(w, client=("10.0.0.1", 40000 + i), mss=100,
                                isn=(0xFFFFFF00 + i, 0x7FFFFFF0), start_ns=10**18 + i)
            c.handshake()
            c.send(C2S, AMQP_HDR + frames(20, 50, tag=i), **kw)  # type: ignore[arg-type]
            c.send(S2C, AMQP_HDR + frames(7, 33, tag=i), **kw)  # type: ignore[arg-type]
            c.close()
    r = collect(p)
    assert len(r.flows) == 3
    for f in r.flows:
        ref = tshark_follow(p, f.index)
        assert ref[f.client_port] == r.stream(f.index, C2S) == AMQP_HDR + frames(20, 50, f.index)
        assert ref[f.server_port] == r.stream(f.index, S2C)
