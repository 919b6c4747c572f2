"""Writing captures: pcapng and classic pcap files, and synthetic TCP conversations.

`CaptureWriter` writes packet records (pcapng: several interfaces with their own link
types and timestamp resolutions, EPB/SPB/obsolete packet blocks, either byte order;
pcap: micro- or nanosecond timestamps, either byte order; gzip on request).
`TcpConversation` turns a byte conversation between two endpoints into packets with a
handshake, sequence and acknowledgement numbers, MSS segmenting and FIN/RST, and can
misbehave on purpose (reorder, duplicate, overlap, drop segments, start mid-stream) to
exercise readers. Frames are Ethernet, Linux cooked v1/v2, raw IP, null or loop around
IPv4 (optionally with options, VLAN tags, fragmentation) or IPv6 (optionally with an
extension header); IP and TCP checksums are correct.
"""

from __future__ import annotations

import gzip
import ipaddress
import os
import sys
from array import array
from collections.abc import Collection, Sequence
from struct import pack
from types import TracebackType
from typing import IO, BinaryIO, Self

from amqpcli.capture.decode import ACK, FIN, PSH, RST, SYN
from amqpcli.capture.tcp import C2S, S2C, Direction

# -- writing records -------------------------------------------------------------------------


class CaptureWriter:
    """Writes a pcapng (default) or pcap file. Use as a context manager or call close().

    * `linktype`: link type of interface 0 (the only one in pcap).
    * `nanosecond`: pcap timestamps in ns (else µs); for pcapng, interface 0's
      `if_tsresol` is `tsresol` (default 9, i.e. ns; 6 is µs; 0x80|n is 2**-n).
    * `byte_order`: "<" or ">"; `compress`: gzip the whole file.
    """

    def __init__(self, target: str | os.PathLike[str] | BinaryIO, *, format: str = "pcapng",
                 linktype: int = 1, nanosecond: bool = True, tsresol: int = 9,
                 byte_order: str = "<", compress: bool = False, snaplen: int = 262144) -> None:
        if format not in ("pcap", "pcapng"):
            raise ValueError(f"unknown capture format {format!r}")
        self.format = format
        self._o = byte_order
        self._own = isinstance(target, (str, os.PathLike))
        if self._own:
            raw: IO[bytes] = open(target, "wb")  # type: ignore[arg-type]  # noqa: SIM115
        else:
            raw = target  # type: ignore[assignment]
        self._raw = raw
        self._f: IO[bytes] | gzip.GzipFile = (
            gzip.GzipFile(fileobj=raw, mode="wb") if compress else raw
        )
        self._ifaces: list[tuple[int, int, int]] = []  # (linktype, tsresol, tsoffset s)
        self.snaplen = snaplen
        self.packets = 0
        if format == "pcap":
            magic = 0xA1B23C4D if nanosecond else 0xA1B2C3D4
            self._pcap_frac = 1 if nanosecond else 1000
            self._f.write(pack(byte_order + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype))
            self._ifaces.append((linktype, 9 if nanosecond else 6, 0))
        else:
            self._section()
            self.add_interface(linktype, tsresol=tsresol, snaplen=snaplen)

    def _block(self, btype: int, body: bytes) -> None:
        pad = -len(body) & 3
        n = 12 + len(body) + pad
        o = self._o
        self._f.write(pack(o + "II", btype, n) + body + b"\0" * pad + pack(o + "I", n))

    def _section(self) -> None:
        self._block(0x0A0D0D0A, pack(self._o + "IHHq", 0x1A2B3C4D, 1, 0, -1))

    def new_section(self, byte_order: str | None = None) -> None:
        """Start a new pcapng section (interfaces must be declared again)."""
        if byte_order:
            self._o = byte_order
        self._ifaces = []
        self._section()

    def add_interface(self, linktype: int, *, tsresol: int = 6, snaplen: int = 0,
                      tsoffset: int = 0) -> int:
        """Declare a pcapng interface; returns its id. `tsoffset` is in seconds."""
        o = self._o
        opts = b""
        if tsresol != 6:
            opts += pack(o + "HHB3x", 9, 1, tsresol)
        if tsoffset:
            opts += pack(o + "HHq", 14, 8, tsoffset)
        if opts:
            opts += pack(o + "HH", 0, 0)
        self._block(1, pack(o + "HHI", linktype, 0, snaplen) + opts)
        self._ifaces.append((linktype, tsresol, tsoffset))
        return len(self._ifaces) - 1

    def write_block(self, btype: int, body: bytes) -> None:
        """Write any pcapng block (e.g. one a reader must skip)."""
        self._block(btype, body)

    def _units(self, time_ns: int, iface: int) -> int:
        _lt, r, offset = self._ifaces[iface]
        time_ns -= offset * 1_000_000_000
        if r & 0x80:
            return (time_ns << (r & 0x7F)) // 1_000_000_000
        p = r & 0x7F
        return time_ns // 10 ** (9 - p) if p <= 9 else time_ns * 10 ** (p - 9)

    def write(self, time_ns: int, frame: bytes, *, interface: int = 0, block: str = "epb",
              original_length: int | None = None) -> None:
        """Write one packet record. `block` (pcapng): "epb", "spb" or "pb" (obsolete)."""
        orig = len(frame) if original_length is None else original_length
        data = frame[: self.snaplen] if self.snaplen else frame
        o = self._o
        self.packets += 1
        if self.format == "pcap":
            sec, frac = divmod(time_ns, 1_000_000_000)
            self._f.write(pack(o + "IIII", sec, frac // self._pcap_frac, len(data), orig))
            self._f.write(data)
            return
        if block == "spb":
            self._block(3, pack(o + "I", orig) + data)
            return
        ts = self._units(time_ns, interface)
        hi, lo = ts >> 32, ts & 0xFFFFFFFF
        if block == "pb":
            self._block(2, pack(o + "HHIIII", interface, 0, hi, lo, len(data), orig) + data)
        else:
            self._block(6, pack(o + "IIIII", interface, hi, lo, len(data), orig) + data)

    def flush(self) -> None:
        """Push what was written to the file, so readers see it (compressed output only
        becomes readable at close)."""
        self._f.flush()
        if self._f is not self._raw:
            self._raw.flush()

    def close(self) -> None:
        if self._f is not self._raw:
            self._f.close()
        if self._own:
            self._raw.close()
        else:
            self._raw.flush()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


# -- building packets ------------------------------------------------------------------------

_SWAP = sys.byteorder == "little"


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of `data`."""
    if len(data) & 1:
        data += b"\0"
    s = sum(array("H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    if _SWAP:
        s = ((s & 0xFF) << 8) | (s >> 8)
    return ~s & 0xFFFF


def _addr(a: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(a)


def tcp_packet(src: str, sport: int, dst: str, dport: int, seq: int, ack: int, flags: int,
               payload: bytes = b"", *, window: int = 65535, ident: int = 0,
               ip_options: bytes = b"", ipv6_ext: bool = False) -> bytes:
    """An IPv4 or IPv6 packet (by the address family) carrying one TCP segment."""
    s, d = _addr(src), _addr(dst)
    tcp = pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4,
               flags, window, 0, 0)
    seg = tcp + payload
    if s.version == 4:
        pseudo = s.packed + d.packed + pack("!BBH", 0, 6, len(seg))
    else:
        pseudo = s.packed + d.packed + pack("!IxxxB", len(seg), 6)
    cs = checksum(pseudo + seg)
    seg = seg[:16] + pack("!H", cs) + seg[18:]
    if s.version == 4:
        opts = ip_options + b"\0" * (-len(ip_options) & 3)
        hl = 20 + len(opts)
        hdr = pack("!BBHHHBBH4s4s", 0x40 | (hl >> 2), 0, hl + len(seg), ident & 0xFFFF,
                   0x4000, 64, 6, 0, s.packed, d.packed) + opts
        hdr = hdr[:10] + pack("!H", checksum(hdr)) + hdr[12:]
        return hdr + seg
    nh = 6
    ext = b""
    if ipv6_ext:  # a hop-by-hop options header (8 bytes of padding options)
        ext = pack("!BB6s", 6, 0, b"\x01\x04\0\0\0\0")
        nh = 0
    return pack("!IHBB16s16s", 0x60000000, len(ext) + len(seg), nh, 64, s.packed,
                d.packed) + ext + seg


def fragment_ipv4(packet: bytes, size: int) -> list[bytes]:
    """Split an IPv4 packet into fragments carrying at most `size` bytes (rounded down to
    a multiple of 8) of its payload each."""
    hl = (packet[0] & 15) << 2
    hdr, body = bytearray(packet[:hl]), packet[hl:]
    size = max(8, size & ~7)
    out = []
    for off in range(0, len(body), size):
        chunk = body[off : off + size]
        more = off + size < len(body)
        h = bytearray(hdr)
        h[2:4] = pack("!H", hl + len(chunk))
        h[6:8] = pack("!H", (0x2000 if more else 0) | (off >> 3))
        h[10:12] = b"\0\0"
        h[10:12] = pack("!H", checksum(bytes(h)))
        out.append(bytes(h) + chunk)
    return out


_MAC_A = bytes.fromhex("020000000001")
_MAC_B = bytes.fromhex("020000000002")


def link_frame(linktype: int, ip: bytes, *, vlans: Sequence[int] = (), outgoing: bool = True,
               null_order: str = "<") -> bytes:
    """Wrap an IP packet in the link-layer header of `linktype`."""
    v6 = ip[0] >> 4 == 6
    et = 0x86DD if v6 else 0x0800
    if linktype == 1:
        tags = b""
        for i, vid in enumerate(vlans):
            tpid = 0x88A8 if i == 0 and len(vlans) > 1 else 0x8100
            tags += pack("!HH", tpid, vid & 0xFFF)
        return _MAC_B + _MAC_A + tags + pack("!H", et) + ip
    if linktype == 113:
        return pack("!HHH6sxxH", 4 if outgoing else 0, 1, 6, _MAC_A, et) + ip
    if linktype == 276:
        return pack("!HHIHBB6sxx", et, 0, 1, 1, 4 if outgoing else 0, 6, _MAC_A) + ip
    if linktype in (101, 12, 14, 228, 229):
        return ip
    if linktype == 0:
        return pack(null_order + "I", 24 if v6 else 2) + ip
    if linktype == 108:
        return pack("!I", 24 if v6 else 2) + ip
    raise ValueError(f"cannot write link type {linktype}")


# -- TCP conversations -----------------------------------------------------------------------


class TcpConversation:
    """A TCP connection written packet by packet into a `CaptureWriter`.

    `seq[C2S]` / `seq[S2C]` are the next sequence numbers of each direction. Time starts at
    `start_ns` and advances `step_ns` per packet unless a packet is given its own time.
    Call `handshake()` first for a complete connection; skip it for a capture that starts
    mid-stream. `packet()` writes any segment at all (overlaps, bad sequence numbers).
    """

    def __init__(self, writer: CaptureWriter, client: tuple[str, int] = ("10.0.0.1", 40000),
                 server: tuple[str, int] = ("10.0.0.2", 5672), *,
                 start_ns: int = 1_700_000_000_000_000_000, step_ns: int = 1000,
                 mss: int = 1460, isn: tuple[int, int] = (1000, 500000),
                 interface: int = 0, linktype: int | None = None,
                 vlans: Sequence[int] = (), ip_options: bytes = b"", ipv6_ext: bool = False,
                 fragment: int | None = None, null_order: str = "<") -> None:
        self.w = writer
        self.ends = (client, server)
        self.now = start_ns
        self.step = step_ns
        self.mss = mss
        self.seq = [isn[0] & 0xFFFFFFFF, isn[1] & 0xFFFFFFFF]
        self.interface = interface
        self.linktype = writer._ifaces[interface][0] if linktype is None else linktype
        self.vlans = vlans
        self.ip_options = ip_options
        self.ipv6_ext = ipv6_ext
        self.fragment = fragment
        self.null_order = null_order
        self._ident = 1

    def packet(self, direction: Direction, seq: int, payload: bytes = b"", flags: int = ACK,
               *, ack: int | None = None, time_ns: int | None = None) -> None:
        """Write one segment exactly as described (no state changes but time)."""
        (sip, sport), (dip, dport) = self.ends if direction == C2S else self.ends[::-1]
        if ack is None:
            ack = self.seq[1 - direction] if flags & ACK else 0
        ip = tcp_packet(sip, sport, dip, dport, seq, ack, flags, payload,
                        ident=self._ident, ip_options=self.ip_options, ipv6_ext=self.ipv6_ext)
        self._ident += 1
        if time_ns is None:
            time_ns = self.now
            self.now += self.step
        pieces = (fragment_ipv4(ip, self.fragment)
                  if self.fragment and ip[0] >> 4 == 4 and len(ip) > self.fragment + 20
                  else [ip])
        for p in pieces:
            self.w.write(time_ns, link_frame(self.linktype, p, vlans=self.vlans,
                                             outgoing=direction == C2S,
                                             null_order=self.null_order),
                         interface=self.interface)

    def handshake(self) -> None:
        self.packet(C2S, self.seq[C2S], flags=SYN, ack=0)
        self.seq[C2S] = (self.seq[C2S] + 1) & 0xFFFFFFFF
        self.packet(S2C, self.seq[S2C], flags=SYN | ACK)
        self.seq[S2C] = (self.seq[S2C] + 1) & 0xFFFFFFFF
        self.packet(C2S, self.seq[C2S])

    def segments(self, direction: Direction, data: bytes, mss: int | None = None
                 ) -> list[tuple[int, bytes]]:
        """Cut `data` into (seq, payload) segments and advance the sequence number; the
        caller writes them (in any order) with `packet`."""
        m = mss or self.mss
        out = []
        seq = self.seq[direction]
        for i in range(0, len(data), m):
            out.append((seq, data[i : i + m]))
            seq = (seq + len(data[i : i + m])) & 0xFFFFFFFF
        self.seq[direction] = seq
        return out

    def send(self, direction: Direction, data: bytes, *, mss: int | None = None,
             reorder: bool = False, duplicate: Collection[int] = (),
             drop: Collection[int] = (), overlap: int = 0, ack: bool = True,
             time_ns: int | None = None) -> None:
        """Send `data` in MSS-sized segments, then (with `ack`) a pure ACK back.

        `reorder` swaps each pair of adjacent segments; `duplicate` re-sends the segments
        with those indices right after them; `drop` leaves those segments out (the ACK
        still covers them: a capture loss); `overlap` makes each segment but the first also
        repeat the last `overlap` bytes of the one before it. `time_ns` sets the clock
        first (a recorder passes the time the bytes were seen)."""
        if time_ns is not None:
            self.now = max(self.now, time_ns)
        segs = self.segments(direction, data, mss)
        if overlap:
            prev = b""
            full = []
            for seq, p in segs:
                k = min(overlap, len(prev))
                full.append(((seq - k) & 0xFFFFFFFF, prev[len(prev) - k :] + p))
                prev = p
            segs = full
        order = list(range(len(segs)))
        if reorder:
            for i in range(0, len(order) - 1, 2):
                order[i], order[i + 1] = order[i + 1], order[i]
        for i in order:
            if i in drop:
                continue
            seq, p = segs[i]
            self.packet(direction, seq, p, ACK | PSH)
            if i in duplicate:
                self.packet(direction, seq, p, ACK | PSH)
        if ack:
            self.packet(Direction(1 - direction), self.seq[1 - direction])

    def close(self, first: Direction = C2S) -> None:
        """FIN from `first`, FIN from the other side, final ACK."""
        other = Direction(1 - first)
        self.packet(first, self.seq[first], flags=FIN | ACK)
        self.seq[first] = (self.seq[first] + 1) & 0xFFFFFFFF
        self.packet(other, self.seq[other], flags=FIN | ACK)
        self.seq[other] = (self.seq[other] + 1) & 0xFFFFFFFF
        self.packet(first, self.seq[first])

    def reset(self, direction: Direction = S2C) -> None:
        self.packet(direction, self.seq[direction], flags=RST | ACK)


__all__ = [
    "C2S",
    "S2C",
    "CaptureWriter",
    "TcpConversation",
    "checksum",
    "fragment_ipv4",
    "link_frame",
    "tcp_packet",
]
