"""A minimal classic-pcap writer for one TCP connection's two byte streams, so tshark can
give a second opinion on frames we encode. (Test helper; the project's capture writer lives
in amqpcli.capture.)"""

from __future__ import annotations

import struct
from pathlib import Path

CLIENT_PORT, SERVER_PORT = 40000, 5672


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _packet(src_port: int, dst_port: int, seq: int, ack: int, flags: int, payload: bytes) -> bytes:
    tcp = struct.pack("!HHIIBBHHH", src_port, dst_port, seq, ack, 5 << 4, flags, 65535, 0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload), 0, 0x4000, 64, 6, 0,
                     bytes([127, 0, 0, 1]), bytes([127, 0, 0, 1]))
    ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
    eth = b"\0" * 12 + b"\x08\x00"
    return eth + ip + tcp + payload


def write(path: Path, chunks: list[tuple[str, bytes]]) -> None:
    """chunks: ("client" | "server", payload) in order; one TCP segment each (< 64 KiB)."""
    seq = {"client": 1000, "server": 5000}
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    packets = [_packet(CLIENT_PORT, SERVER_PORT, 999, 0, 0x02, b""),
               _packet(SERVER_PORT, CLIENT_PORT, 4999, 1000, 0x12, b""),
               _packet(CLIENT_PORT, SERVER_PORT, 1000, 5000, 0x10, b"")]
    for side, payload in chunks:
        other = "server" if side == "client" else "client"
        sport, dport = ((CLIENT_PORT, SERVER_PORT) if side == "client"
                        else (SERVER_PORT, CLIENT_PORT))
        packets.append(_packet(sport, dport, seq[side], seq[other], 0x18, payload))
        seq[side] += len(payload)
    for i, p in enumerate(packets):
        out += struct.pack("<IIII", 1_700_000_000 + i, 0, len(p), len(p)) + p
    path.write_bytes(bytes(out))
