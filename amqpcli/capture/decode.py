"""Link layer → IP → TCP: one packet to one TCP segment, without copying its payload.

`PacketDecoder.decode(linktype, data)` returns a tuple in `Segment` order or None (not TCP, not
IP, or a fragment still waiting for the rest of its datagram); `decode_at(linktype, buf,
start, stop)` does the same for a frame inside a larger buffer, and `packets` counts them. Addresses are an `int` for
IPv4 and 16 `bytes` for IPv6 (cheap to hash; `format_ip` makes them readable). IPv4
fragments are reassembled (bounded: beyond `MAX_FRAGMENT_DATAGRAMS` incomplete datagrams
the oldest is dropped and counted in `stats`); IPv6 extension headers are skipped and its
fragments reassembled too.
"""

from __future__ import annotations

import ipaddress
from struct import Struct
from struct import error as struct_error
from typing import Any, NamedTuple

# TCP flags
FIN = 0x01
SYN = 0x02
RST = 0x04
PSH = 0x08
ACK = 0x10

LINKTYPE_NULL = 0
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW_12 = 12
LINKTYPE_RAW_14 = 14
LINKTYPE_RAW = 101
LINKTYPE_LOOP = 108
LINKTYPE_LINUX_SLL = 113
LINKTYPE_IPV4 = 228
LINKTYPE_IPV6 = 229
LINKTYPE_LINUX_SLL2 = 276

SUPPORTED_LINKTYPES = frozenset(
    {0, 1, 12, 14, 101, 108, 113, 228, 229, 276}
)

Address = int | bytes | str  # IPv4 as int, IPv6 as 16 bytes; str from tshark


SegmentTuple = tuple[Address, int, Address, int, int, int, int, "memoryview | bytes"]


class Segment(NamedTuple):
    src: Address
    sport: int
    dst: Address
    dport: int
    seq: int
    ack: int
    flags: int
    payload: memoryview | bytes


def format_ip(addr: Address) -> str:
    return str(ipaddress.ip_address(addr))


_ETH_TYPE = Struct("!H").unpack_from
_U32_LE = Struct("<I").unpack_from
_IP4 = Struct("!BxHHHxBxxII").unpack_from  # vihl, total length, id, frag, proto, src, dst
_IP6 = Struct("!HBx16s16s").unpack_from  # payload length, next header, src, dst
_TCP = Struct("!HHIIH").unpack_from  # sport, dport, seq, ack, data offset + flags

_IP4TCP = "BxHxxHxBxxIIHHIIH"  # vihl, total, frag, proto, src, dst | TCP as above
_IP6TCP = "BxxxHBx16s16sHHIIH"  # version, payload length, next header, src, dst | TCP


def _fast(link: str, ip: int, ethertypes: tuple[object, object]) -> tuple[object, ...]:
    """(IPv4 unpack, IP offset, IPv4 ethertype, IPv4 min length, IPv6 unpack, IPv6
    ethertype, IPv6 min length): link, IP and TCP headers in one unpack each."""
    return (Struct("!" + link + _IP4TCP).unpack_from, ip, ethertypes[0], ip + 40,
            Struct("!" + link + _IP6TCP).unpack_from, ethertypes[1], ip + 60)


_RAW_FAST = _fast("0s", 0, (b"", b""))  # no link header: the version nibble decides
# link type → its fast path
_FAST: dict[int, tuple[Any, ...]] = {
    1: _fast("12xH", 14, (0x0800, 0x86DD)),
    113: _fast("14xH", 16, (0x0800, 0x86DD)),
    276: _fast("H18x", 20, (0x0800, 0x86DD)),
    101: _RAW_FAST,
    12: _RAW_FAST,
    14: _RAW_FAST,
    228: _RAW_FAST,
    229: _RAW_FAST,
}

# BSD loopback address families for IPv6 (NetBSD/OpenBSD, FreeBSD, Darwin) and Linux
_AF_INET6 = frozenset({24, 28, 30, 10})
_IPV6_EXT = frozenset({0, 43, 60, 135, 139, 140, 253, 254})

MAX_FRAGMENT_DATAGRAMS = 1024  # incomplete datagrams kept at once


class PacketDecoder:
    """Decodes link/IP/TCP headers; holds the (bounded) IP fragment table."""

    __slots__ = ("_frags", "packets", "stats")

    def __init__(self) -> None:
        self.packets = 0  # frames given to decode / decode_at
        # (version, src, dst, id[, proto]) → [{offset: bytes}, total length or -1]
        self._frags: dict[tuple[object, ...], list[object]] = {}
        self.stats = {"non_ip": 0, "non_tcp": 0, "fragments": 0, "reassembled": 0,
                      "fragments_dropped": 0, "malformed": 0, "unknown_linktype": 0}

    def decode(self, linktype: int, data: memoryview | bytes) -> SegmentTuple | None:
        """The TCP segment in one link-layer frame, as a plain tuple in `Segment` order
        (`Segment._make(t)` names its fields), or None."""
        return self.decode_at(linktype, data, 0, len(data))

    def decode_at(self, linktype: int, buf: memoryview | bytes, start: int,
                  stop: int) -> SegmentTuple | None:
        """`decode(linktype, buf[start:stop])` without slicing the frame out first (the
        usual frame's payload is then a slice of `buf`, bytes when `buf` is)."""
        self.packets += 1
        # Fast path: the usual frame (no VLAN tag; IPv4 without options, not a fragment,
        # or IPv6 without extension headers) takes one unpack for all three headers.
        fast = _FAST.get(linktype)
        if fast is not None and stop - start >= fast[3]:
            et, vihl, total, frag, proto, src, dst, sport, dport, seq, ack, offflags = \
                fast[0](buf, start)
            if vihl == 0x45 and proto == 6 and not frag & 0x3FFF and et == fast[2]:
                ip = start + fast[1]
                end = ip + total
                if end > stop or total < 40:
                    end = stop
                return (src, sport, dst, dport, seq, ack, offflags & 0x1FF,
                        buf[ip + 20 + ((offflags >> 12) << 2) : end])
            if vihl >> 4 == 6 and et == fast[5] and stop - start >= fast[6]:
                _et, _v, plen, nh, src6, dst6, sport, dport, seq, ack, offflags = \
                    fast[4](buf, start)
                if nh == 6:
                    ip = start + fast[1]
                    end = ip + 40 + plen
                    if end > stop or not plen:
                        end = stop
                    return (src6, sport, dst6, dport, seq, ack, offflags & 0x1FF,
                            buf[ip + 40 + ((offflags >> 12) << 2) : end])
        data = buf if start == 0 and stop == len(buf) else memoryview(buf)[start:stop]
        try:
            return self._decode(linktype, data)  # type: ignore[arg-type]
        except (struct_error, IndexError):  # a header cut short by the snap length
            self.stats["malformed"] += 1
            return None

    def _decode(self, linktype: int, data: memoryview) -> SegmentTuple | None:
        # link layer → offset of the IP header and an ethertype (0 = look at the version)
        if linktype == 1:
            off = 14
            et = _ETH_TYPE(data, 12)[0]
            while et == 0x8100 or et == 0x88A8 or et == 0x9100:  # 802.1Q / QinQ tags
                et = _ETH_TYPE(data, off + 2)[0]
                off += 4
        elif linktype == 113:
            et = _ETH_TYPE(data, 14)[0]
            off = 16
            while et == 0x8100 or et == 0x88A8:
                et = _ETH_TYPE(data, off + 2)[0]
                off += 4
        elif linktype == 276:
            et = _ETH_TYPE(data, 0)[0]
            off = 20
        elif linktype == 101 or linktype == 12 or linktype == 14 or linktype == 228 \
                or linktype == 229:
            off = 0
            et = 0
        elif linktype == 0 or linktype == 108:
            af = _U32_LE(data, 0)[0]
            if linktype == 108 or af > 0xFFFF:  # loop is big-endian; null is host order
                af = int.from_bytes(data[0:4], "big")
            off = 4
            et = 0x0800 if af == 2 else 0x86DD if af in _AF_INET6 else 0
            if not et:
                self.stats["non_ip"] += 1
                return None
        else:
            self.stats["unknown_linktype"] += 1
            return None
        if et == 0:
            v = data[off] >> 4
            et = 0x0800 if v == 4 else 0x86DD if v == 6 else 1
        if et == 0x0800:
            vihl, total, ident, frag, proto, src, dst = _IP4(data, off)
            if vihl >> 4 != 4:
                self.stats["malformed"] += 1
                return None
            hl = (vihl & 15) << 2
            end = off + total
            if end > len(data) or total < hl:
                # truncated capture (snaplen) or a TSO packet with total length 0
                end = len(data)
            if frag & 0x3FFF:  # more-fragments flag or a non-zero offset
                return self._fragment((4, src, dst, ident, proto), (frag & 0x1FFF) << 3,
                                      bool(frag & 0x2000), data[off + hl : end], src, dst, proto)
            if proto != 6:
                self.stats["non_tcp"] += 1
                return None
            return self._tcp(data, off + hl, end, src, dst)
        if et == 0x86DD:
            plen, nh, src6, dst6 = _IP6(data, off + 4)
            p = off + 40
            end = p + plen if plen else len(data)
            end = min(end, len(data))
            while nh != 6:
                if nh in _IPV6_EXT:
                    nh, hlen = data[p], (data[p + 1] + 1) << 3
                    p += hlen
                elif nh == 51:  # authentication header: length in 4-octet units
                    nh, hlen = data[p], (data[p + 1] + 2) << 2
                    p += hlen
                elif nh == 44:  # fragment header
                    fo = int.from_bytes(data[p + 2 : p + 4], "big")
                    ident = int.from_bytes(data[p + 4 : p + 8], "big")
                    return self._fragment((6, src6, dst6, ident), fo & 0xFFF8, bool(fo & 1),
                                          data[p + 8 : end], src6, dst6, data[p])
                else:
                    self.stats["non_tcp"] += 1
                    return None
            return self._tcp(data, p, end, src6, dst6)
        self.stats["non_ip"] += 1
        return None

    @staticmethod
    def _tcp(data: memoryview, p: int, end: int, src: Address, dst: Address) -> SegmentTuple:
        sport, dport, seq, ack, offflags = _TCP(data, p)
        return (src, sport, dst, dport, seq, ack, offflags & 0x1FF,
                data[p + ((offflags >> 12) << 2) : end])

    def _fragment(self, key: tuple[object, ...], offset: int, more: bool, chunk: memoryview,
                  src: Address, dst: Address, proto: int) -> SegmentTuple | None:
        self.stats["fragments"] += 1
        entry = self._frags.get(key)
        if entry is None:
            if len(self._frags) >= MAX_FRAGMENT_DATAGRAMS:
                del self._frags[next(iter(self._frags))]  # oldest first
                self.stats["fragments_dropped"] += 1
            entry = self._frags[key] = [{}, -1]
        parts: dict[int, bytes] = entry[0]  # type: ignore[assignment]
        parts[offset] = bytes(chunk)
        if not more:
            entry[1] = offset + len(chunk)
        total: int = entry[1]  # type: ignore[assignment]
        if total < 0:
            return None
        have = 0
        out = bytearray(total)
        for o in sorted(parts):
            if o > have:
                return None  # a hole remains
            piece = parts[o]
            out[o : o + len(piece)] = piece
            have = max(have, o + len(piece))
        if have < total:
            return None
        del self._frags[key]
        self.stats["reassembled"] += 1
        del out[total:]
        if proto != 6:
            self.stats["non_tcp"] += 1
            return None
        return self._tcp(memoryview(bytes(out)), 0, total, src, dst)
