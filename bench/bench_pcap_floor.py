"""The least work a Python pass over a capture can do, side by side with tshark.

    python bench/bench_pcap_floor.py CAPTURE.pcapng [--runs 3]

A lower bound for `amqp pcap-dump --frames-only`, not a product path: one loop, no
functions called per packet, reads a little-endian pcapng file whose packets are
Ethernet/IPv4/TCP, follows each TCP direction in order only (no retransmissions,
reordering, gaps or handshake), splits the AMQP frames and writes one line per frame with
the raw timestamp, the channel and the performative's name: no clock text, no fields, no
engine, no checks. Whatever a real reader adds (the cases above, errors, key fields,
the line's text, start-up) costs more, so the ratio against tshark printed here is more
than any Python reader of this kind can reach on the same machine.

Compared with `tshark -r F -T fields -e amqp.performative` (tshark's performatives-only
pass), each command its own process, taking turns run by run; CPU time is the process's
own (`os.wait4`), best of `--runs`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from struct import Struct

NAMES = {
    0x10: "open", 0x11: "begin", 0x12: "attach", 0x13: "flow", 0x14: "transfer",
    0x15: "disposition", 0x16: "detach", 0x17: "end", 0x18: "close",
    0x40: "sasl-mechanisms", 0x41: "sasl-init", 0x42: "sasl-challenge",
    0x43: "sasl-response", 0x44: "sasl-outcome",
}
AMQP_MAGIC = 0x414D5150  # "AMQP": a protocol header, not a frame size


def floor_pass(path: str) -> int:
    """Print one line per AMQP frame of `path`; return the number of frames."""
    with open(path, "rb") as f:
        buf = f.read()
    block = Struct("<II").unpack_from
    epb = Struct("<IIIIIII").unpack_from
    # from the EtherType: type, version/IHL, total length, protocol, addresses, ports,
    # sequence number, acknowledgement, data offset/flags
    headers = Struct("!HBxH4xxB2x4s4sHHIIH").unpack_from
    frame_header = Struct("!IBBH").unpack_from
    halves: dict[tuple[bytes, int, bytes, int], list[object]] = {}
    out: list[str] = []
    write = sys.stdout.write
    frames = 0
    pos, n = 0, len(buf)
    while pos + 12 <= n:
        btype, blen = block(buf, pos)
        if blen < 12:
            break
        if btype == 6:
            _t, _l, _iface, hi, lo, caplen, _orig = epb(buf, pos)
            start = pos + 28
            if caplen >= 54:
                et, vihl, _total, proto, src, dst, sport, dport, seq, _ack, off = headers(
                    buf, start + 12)
                payload = start + 34 + ((off >> 12) << 2)
                end = start + caplen
                if et == 0x800 and vihl == 0x45 and proto == 6 and end > payload:
                    key = (src, sport, dst, dport)
                    half = halves.get(key)
                    if half is None:
                        half = halves[key] = [seq, b""]
                    if seq == half[0]:
                        half[0] = (seq + end - payload) & 0xFFFFFFFF
                        data = buf[payload:end]
                        if half[1]:
                            data = half[1] + data  # type: ignore[operator]
                        ts = (hi << 32) | lo
                        q, m = 0, len(data)
                        while m - q >= 8:
                            size, doff, _ftype, channel = frame_header(data, q)
                            if size == AMQP_MAGIC:
                                q += 8
                                continue
                            if size < 8 or q + size > m:
                                break
                            b = q + doff * 4
                            code = data[b + 2] if size > doff * 4 + 2 else -1
                            out.append(f"{ts} [{channel}] {NAMES.get(code, 'heartbeat')}")
                            frames += 1
                            q += size
                        half[1] = data[q:]
        pos += blen
        if len(out) >= 4096:
            write("\n".join(out) + "\n")
            out.clear()
    if out:
        write("\n".join(out) + "\n")
    return frames


def cpu(cmd: list[str]) -> float:
    with open(os.devnull, "wb") as null:
        proc = subprocess.Popen(cmd, stdout=null, stderr=subprocess.DEVNULL)
        _pid, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pass-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.pass_only:
        print(floor_pass(str(args.capture)), file=sys.stderr)
        return
    commands = {
        "tshark -T fields -e amqp.performative":
            ["tshark", "-r", str(args.capture), "-T", "fields", "-e", "amqp.performative"],
        "floor pass (this file)":
            [sys.executable, __file__, str(args.capture), "--pass-only"],
    }
    times: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(args.runs):
        for label, cmd in commands.items():
            times[label].append(cpu(cmd))
    ref = min(times["tshark -T fields -e amqp.performative"])
    print(f"{args.capture}, best of {args.runs}; load average {os.getloadavg()[0]:.1f}\n")
    print("| command | CPU s | speed vs tshark (CPU) |")
    print("| --- | ---: | ---: |")
    for label, ts in times.items():
        print(f"| `{label}` | {min(ts):.2f} | {ref / min(ts):.2f} |")


if __name__ == "__main__":
    main()
