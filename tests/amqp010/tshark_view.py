"""What tshark sees in a capture: per-direction TCP byte streams and, per AMQP frame, the
fields its dissector shows. Used to hold our 0-10 decoder against Wireshark's.

The byte streams come from tshark's `tcp.payload` (the capture has no retransmissions or
gaps), so that frames and tshark's view of them line up; test_echo_capture.py also checks
they equal what amqpcli.capture reassembles.
"""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

Key = tuple[int, str]  # (tcp stream index, "client" | "server")


@dataclass
class Direction:
    data: bytearray = field(default_factory=bytearray)
    chunks: list[tuple[float, int]] = field(default_factory=list)  # (time, end offset)
    frames: list[list[tuple[str, str, str]]] = field(default_factory=list)  # tshark fields


def _tshark(*args: str) -> str:
    return subprocess.run(["tshark", *args], capture_output=True, text=True, check=True).stdout


def read(path: Path, port: int) -> dict[Key, Direction]:
    decode_as = f"tcp.port=={port},amqp"
    out: dict[Key, Direction] = {}
    rows = _tshark("-r", str(path), "-d", decode_as, "-T", "fields", "-e", "frame.time_epoch",
                   "-e", "tcp.stream", "-e", "tcp.srcport", "-e", "tcp.payload")
    for line in rows.splitlines():
        t, stream, sport, payload = line.split("\t")
        if not payload:
            continue
        d = out.setdefault((int(stream), "server" if int(sport) == port else "client"),
                           Direction())
        d.data += bytes.fromhex(payload.replace(":", ""))
        d.chunks.append((float(t), len(d.data)))
    root = ET.fromstring(_tshark("-r", str(path), "-d", decode_as, "-T", "pdml"))
    for pkt in root.iter("packet"):
        tcp = {f.get("name"): f.get("show") for p in pkt.findall("proto")
               if p.get("name") == "tcp" for f in p.iter("field")}
        for proto in pkt.findall("proto"):
            if proto.get("name") != "amqp":
                continue
            key = (int(str(tcp["tcp.stream"])),
                   "server" if int(str(tcp["tcp.srcport"])) == port else "client")
            fields = [(str(f.get("name")), f.get("show") or "", f.get("showname") or "")
                      for f in proto.iter("field")]
            out.setdefault(key, Direction()).frames.append(fields)
    return out
