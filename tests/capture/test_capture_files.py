"""File formats, link types, IP variants, compression, merging and damaged input."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from capture_helpers import AMQP_HDR, collect, frames

from amqpcli.capture import C2S, S2C, CaptureError, read_capture, read_packets
from amqpcli.capture.decode import ACK, PSH, PacketDecoder
from amqpcli.capture.writer import CaptureWriter, TcpConversation, link_frame, tcp_packet
from amqpcli.errors import Exit, UserError

C_DATA = AMQP_HDR + frames(30, 90, tag=3)
S_DATA = AMQP_HDR + frames(20, 150, tag=9)
T0 = 1_700_000_000_123_456_789


def conversation(w: CaptureWriter, **kw: object) -> TcpConversation:
    c = TcpConversation(w, mss=200, **kw)  # type: ignore[arg-type]
    c.handshake()
    c.send(C2S, C_DATA, reorder=True)
    c.send(S2C, S_DATA, duplicate={1})
    c.close()
    return c


def check_streams(path: Path, **kw: object) -> None:
    r = collect(path, **kw)
    assert len(r.flows) == 1
    assert r.stream(0, C2S) == C_DATA
    assert r.stream(0, S2C) == S_DATA
    assert not r.gaps


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("ns", [True, False])
def test_pcap_byte_orders_and_resolutions(tmp_path: Path, order: str, ns: bool) -> None:
    p = tmp_path / "a.pcap"
    with CaptureWriter(p, format="pcap", byte_order=order, nanosecond=ns) as w:
        conversation(w, start_ns=T0)
    head = p.read_bytes()[:4]
    assert head == (b"\xa1\xb2\x3c\x4d" if ns else b"\xa1\xb2\xc3\xd4")[:: 1 if order == ">" else -1]
    check_streams(p)
    times = [t for t, _lt, _d in read_packets(p)]
    assert times[0] == (T0 if ns else T0 // 1000 * 1000)
    assert times[1] - times[0] == 1000


@pytest.mark.parametrize("linktype", [1, 113, 276, 101, 12, 14, 0, 108])
def test_link_types(tmp_path: Path, linktype: int) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p, linktype=linktype) as w:
        conversation(w)
    check_streams(p)


@pytest.mark.parametrize("order", ["<", ">"])
def test_null_link_in_either_byte_order_and_ipv6(tmp_path: Path, order: str) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p, linktype=0) as w:
        conversation(w, null_order=order, client=("fd00::1", 40000), server=("fd00::2", 5672))
    check_streams(p)


def test_ipv6_with_extension_header(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        conversation(w, client=("2001:db8::1", 40000), server=("2001:db8::2", 5672),
                     ipv6_ext=True)
    check_streams(p)
    r = collect(p)
    assert r.flows[0].client_ip == "2001:db8::1"
    assert r.flows[0].describe() == "[2001:db8::1]:40000 -> [2001:db8::2]:5672"


@pytest.mark.parametrize("vlans", [[10], [100, 200]])
def test_vlan_tags(tmp_path: Path, vlans: list[int]) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        conversation(w, vlans=vlans)
    check_streams(p)


def test_ipv4_options_and_fragments(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        conversation(w, ip_options=b"\x01\x01\x01\x00", fragment=64)
    dec = PacketDecoder()
    check_streams(p, decoder=dec)
    assert dec.stats["reassembled"] > 10 and dec.stats["fragments_dropped"] == 0


def test_ethernet_padding_is_not_payload(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        c = TcpConversation(w)
        c.handshake()
        ip = tcp_packet("10.0.0.1", 40000, "10.0.0.2", 5672, c.seq[C2S], c.seq[S2C],
                        ACK | PSH, AMQP_HDR)
        w.write(T0, link_frame(1, ip) + b"\0" * 6)  # padded to the Ethernet minimum
    r = collect(p)
    assert r.stream(0, C2S) == AMQP_HDR


def test_pcapng_two_interfaces_resolutions_and_block_kinds(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p, linktype=1, tsresol=6) as w:
        sll = w.add_interface(113, tsresol=9)
        pow2 = w.add_interface(276, tsresol=0x80 | 20)
        w.write_block(0x0BAD, b"unknown block to skip")
        w.write_block(5, bytes(20))  # interface statistics
        a = TcpConversation(w, start_ns=T0, step_ns=2000)
        b = TcpConversation(w, client=("10.0.0.5", 41000), interface=sll,
                            start_ns=T0 + 1000, step_ns=2000)
        c = TcpConversation(w, client=("10.0.0.6", 42000), interface=pow2,
                            start_ns=T0 + 500, step_ns=2000)
        for conv in (a, b, c):
            conv.handshake()
        for conv in (a, b, c):
            conv.send(C2S, C_DATA)
            conv.send(S2C, S_DATA)
    r = collect(p)
    assert sorted(f.client_port for f in r.flows) == [40000, 41000, 42000]
    for f in r.flows:
        assert r.stream(f.index, C2S) == C_DATA
        assert r.stream(f.index, S2C) == S_DATA
    pk = list(read_packets(p))
    lts = {lt for _t, lt, _d in pk}
    assert lts == {1, 113, 276}
    first = {lt: t for t, lt, _d in reversed(pk)}
    assert first[1] == T0 // 1000 * 1000  # µs interface
    assert first[113] == T0 + 1000  # ns interface
    units = ((T0 + 500) << 20) // 10**9  # 2**-20 s units
    assert first[276] == units * 10**9 >> 20


def test_pcapng_big_endian_sections_spb_and_obsolete_blocks(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p, byte_order=">") as w:
        c = TcpConversation(w, start_ns=T0)
        c.handshake()
        c.send(C2S, C_DATA[:100])
        w.new_section("<")
        w.add_interface(1, tsresol=9, snaplen=0)
        ip = tcp_packet("10.0.0.1", 40000, "10.0.0.2", 5672, c.seq[C2S], c.seq[S2C],
                        ACK | PSH, C_DATA[100:200])
        w.write(0, link_frame(1, ip), block="spb")  # no timestamp: takes the previous one
        c.seq[C2S] += 100
        ip = tcp_packet("10.0.0.1", 40000, "10.0.0.2", 5672, c.seq[C2S], c.seq[S2C],
                        ACK | PSH, C_DATA[200:300])
        w.write(T0 + 10**6, link_frame(1, ip), block="pb")
    r = collect(p)
    assert r.stream(0, C2S) == C_DATA[:300]
    times = [t for t, _lt, _d in read_packets(p)]
    assert times[-2] == times[-3] and times[-1] == T0 + 10**6


def test_gzip(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng.gz"
    with CaptureWriter(p, compress=True) as w:
        conversation(w)
    assert p.read_bytes()[:2] == b"\x1f\x8b"
    check_streams(p)
    q = tmp_path / "b.pcap"
    q.write_bytes(gzip.compress((tmp_path / "a.pcapng.gz").read_bytes()))  # gzip twice: no
    with pytest.raises(CaptureError, match="not a capture file"):
        list(read_packets(q))


def test_stream_input(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with CaptureWriter(buf) as w:
        conversation(w)
    buf.seek(0)
    check_streams(buf)  # type: ignore[arg-type]


def test_multi_file_merge_by_time(tmp_path: Path) -> None:
    # one conversation whose packets are split over two files, alternately
    whole = tmp_path / "whole.pcapng"
    with CaptureWriter(whole) as w:
        conversation(w, start_ns=T0)
    pk = list(read_packets(whole))
    a, b = tmp_path / "a.pcap", tmp_path / "b.pcapng"
    with CaptureWriter(a, format="pcap") as wa, CaptureWriter(b) as wb:
        for i, (t, _lt, d) in enumerate(pk):
            (wa if i % 3 == 0 else wb).write(t, bytes(d))
    check_streams(whole)
    r = collect([b, a])
    assert r.stream(0, C2S) == C_DATA and r.stream(0, S2C) == S_DATA and not r.gaps
    # read one at a time, each file alone has holes
    assert collect(b).gaps


def test_not_a_capture_file(tmp_path: Path) -> None:
    p = tmp_path / "x.txt"
    p.write_text("hello, this is text\n")
    with pytest.raises(UserError) as ei:
        list(read_capture(p))
    assert ei.value.code == Exit.DECODE
    assert "not a capture file" in str(ei.value) and "offset 0" in str(ei.value)
    e = tmp_path / "empty"
    e.write_bytes(b"")
    with pytest.raises(CaptureError, match="too short"):
        list(read_capture(e))


def test_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot open"):
        list(read_capture(tmp_path / "nope.pcap"))


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_truncated_file_gives_partial_results_then_error(tmp_path: Path, fmt: str) -> None:
    p = tmp_path / "a.cap"
    with CaptureWriter(p, format=fmt) as w:
        conversation(w)
    data = p.read_bytes()
    cut = len(data) * 2 // 3
    p.write_bytes(data[:cut])
    events = []
    with pytest.raises(CaptureError) as ei:
        for ev in read_capture(p):
            events.append(ev)  # noqa: PERF402 (keeps what came before the error)
    assert "truncated" in str(ei.value)
    assert 0 < ei.value.offset < cut
    assert any(type(e).__name__ == "Data" for e in events)
    # the open flow was closed at the end before the error surfaced
    assert {getattr(e, "how", None) for e in events} >= {"end"}


def test_corrupt_pcapng_block_length(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        conversation(w)
    data = bytearray(p.read_bytes())
    pk = list(read_packets(p))
    # find the 5th packet block and break its trailing length
    offsets = []
    pos = 0
    while pos < len(data):
        n = int.from_bytes(data[pos + 4 : pos + 8], "little")
        offsets.append(pos)
        pos += n
    bad = offsets[6]
    data[bad + 4 : bad + 8] = (1 << 30).to_bytes(4, "little")
    p.write_bytes(bytes(data))
    got = []
    with pytest.raises(CaptureError) as ei:
        for x in read_packets(p):
            got.append(x)  # noqa: PERF402
    assert ei.value.offset == bad and "corrupt" in ei.value.problem
    assert len(got) == 4 and len(pk) > 10


@pytest.mark.parametrize("high_word", [0xFFFF_FFFF, 0x0400_0000])
def test_pcapng_time_out_of_range_is_a_damaged_block(tmp_path: Path, high_word: int) -> None:
    # A damaged timestamp (in microseconds) beyond the year 9999: an error at that block,
    # with what came before, rather than a time nothing can show.
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p, linktype=1, tsresol=6) as w:
        conversation(w)
    data = bytearray(p.read_bytes())
    offsets = []
    pos = 0
    while pos < len(data):
        offsets.append(pos)
        pos += int.from_bytes(data[pos + 4 : pos + 8], "little")
    bad = offsets[6]
    assert int.from_bytes(data[bad : bad + 4], "little") == 6  # an enhanced packet block
    data[bad + 12 : bad + 16] = high_word.to_bytes(4, "little")
    p.write_bytes(bytes(data))
    for read in (lambda: list(read_packets(p)), lambda: list(read_capture(p))):
        with pytest.raises(CaptureError) as ei:
            read()
        assert ei.value.offset == bad and "time out of range" in ei.value.problem


def test_corrupt_pcap_record(tmp_path: Path) -> None:
    p = tmp_path / "a.pcap"
    with CaptureWriter(p, format="pcap") as w:
        conversation(w)
    data = bytearray(p.read_bytes())
    first_len = int.from_bytes(data[24 + 8 : 24 + 12], "little")
    second = 24 + 16 + first_len
    data[second + 8 : second + 12] = (1 << 31).to_bytes(4, "little")
    p.write_bytes(bytes(data))
    with pytest.raises(CaptureError, match="corrupt pcap record") as ei:
        list(read_packets(p))
    assert ei.value.offset == second


def test_truncated_gzip(tmp_path: Path) -> None:
    p = tmp_path / "a.pcapng.gz"
    with CaptureWriter(p, compress=True) as w:
        conversation(w)
    p.write_bytes(p.read_bytes()[:-40])
    with pytest.raises(CaptureError, match="gzip"):
        list(read_capture(p))


def test_truncated_gzip_keeps_what_was_decompressed(tmp_path: Path) -> None:
    # A gzip capture cut short (the capture was stopped while writing, a partial
    # download): every packet that could be decompressed comes first, then the error at
    # the offset in the uncompressed stream where the good bytes end. Blocks of 4 KiB, so
    # the cut falls in a later block than the first.
    whole = tmp_path / "a.pcapng"
    with CaptureWriter(whole) as w:
        for i in range(40):
            conversation(w, client=("10.0.0.1", 40000 + i))
    packets = list(read_packets(whole))
    raw = whole.read_bytes()
    cut = tmp_path / "cut.pcapng.gz"
    packed = gzip.compress(raw, mtime=0)
    cut.write_bytes(packed[: len(packed) * 7 // 10])
    got = []
    with pytest.raises(CaptureError, match="gzip file is cut short") as ei:
        for pk in read_packets(cut, block_size=4096):
            got.append(pk)  # noqa: PERF402
    assert len(got) > len(packets) // 2
    assert [(t, lt, bytes(d)) for t, lt, d in got] == [
        (t, lt, bytes(d)) for t, lt, d in packets[: len(got)]]
    assert 4096 < ei.value.offset < len(raw)
    # the same from a stream (a pipe) in the default large blocks
    streamed = []
    with open(cut, "rb") as f, pytest.raises(CaptureError, match="gzip"):
        for pk in read_packets(f):
            streamed.append(pk)  # noqa: PERF402
    assert len(streamed) == len(got)


def test_one_damaged_file_among_several(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.pcapng", tmp_path / "bad.pcapng"
    with CaptureWriter(good) as w:
        conversation(w)
    bad.write_bytes(b"garbage!" * 10)
    r_events = []
    with pytest.raises(CaptureError, match="bad.pcapng"):
        for ev in read_capture([bad, good]):
            r_events.append(ev)  # noqa: PERF402
    got = b"".join(bytes(e.data) for e in r_events
                   if type(e).__name__ == "Data" and e.direction == C2S)
    assert got == C_DATA


def test_ipv6_fragments_are_reassembled() -> None:
    import struct

    payload = AMQP_HDR + frames(10, 100)
    ip6 = tcp_packet("fd00::1", 40000, "fd00::2", 5672, 1, 2, ACK | PSH, payload)
    body = ip6[40:]  # the TCP segment
    dec = PacketDecoder()
    pieces = [body[i : i + 256] for i in range(0, len(body), 256)]
    got = []
    for k, piece in enumerate(reversed(pieces)):  # out of order, too
        i = len(pieces) - 1 - k
        more = i < len(pieces) - 1
        frag = struct.pack("!BBHI", 6, 0, (i * 256) | int(more), 0xABCD)
        hdr = bytearray(ip6[:40])
        hdr[4:6] = struct.pack("!H", 8 + len(piece))
        hdr[6] = 44
        got.append(dec.decode(101, memoryview(bytes(hdr) + frag + piece)))
    assert got[:-1] == [None] * (len(pieces) - 1)
    seg = got[-1]
    assert seg is not None and bytes(seg[7]) == payload and seg[1] == 40000
    assert dec.stats["reassembled"] == 1


def test_recording_with_given_times_and_flush(tmp_path: Path) -> None:
    p = tmp_path / "rec.pcapng"
    w = CaptureWriter(p)
    c = TcpConversation(w, start_ns=T0)
    c.handshake()
    c.send(C2S, AMQP_HDR, time_ns=T0 + 5 * 10**9, ack=False)
    w.flush()
    # readable while the writer is still open
    assert [bytes(d.data) for d in collect(p).data] == [AMQP_HDR]
    c.send(S2C, AMQP_HDR, time_ns=T0 + 6 * 10**9)
    w.close()
    r = collect(p)
    assert [d.time_ns for d in r.data] == [T0 + 5 * 10**9, T0 + 6 * 10**9]


@pytest.mark.parametrize("linktype", [1, 113, 276, 101, 229])
def test_ipv6_link_types(tmp_path: Path, linktype: int) -> None:
    p = tmp_path / "a.pcapng"
    with CaptureWriter(p, linktype=linktype) as w:
        conversation(w, client=("fd00::1", 40000), server=("fd00::2", 5672))
    check_streams(p)
    f = collect(p).flows[0]
    assert (f.client_ip, f.server_ip) == ("fd00::1", "fd00::2")


def test_fast_and_general_decoding_agree() -> None:
    """The one-unpack path and the header-by-header path give the same segment."""
    for src, dst in (("10.0.0.1", "10.0.0.2"), ("fd00::1", "fd00::2")):
        ip = tcp_packet(src, 40000, dst, 5672, 7, 9, ACK | PSH, b"payload!")
        for lt in (1, 113, 276, 101):
            frame = memoryview(link_frame(lt, ip) + b"\0" * 4)  # trailing padding too
            dec = PacketDecoder()
            fast = dec.decode(lt, frame)
            slow = dec._decode(lt, frame)
            assert fast is not None and slow is not None
            assert fast[:7] == slow[:7] and bytes(fast[7]) == bytes(slow[7]) == b"payload!"


def test_ring_buffer_files_are_read_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                  ) -> None:
    import amqpcli.capture.reader as reader_mod

    whole = tmp_path / "whole.pcapng"
    with CaptureWriter(whole) as w:
        for i in range(3):
            c = TcpConversation(w, client=("10.0.0.1", 40000 + i), mss=100,
                                start_ns=T0 + i * 50_000, step_ns=1000)
            c.handshake()
            c.send(C2S, C_DATA)
            c.send(S2C, S_DATA)
            c.close()
    pk = list(read_packets(whole))
    pk.sort(key=lambda x: x[0])
    files = []
    for k in range(0, len(pk), 20):  # consecutive slices, like a ring buffer
        f = tmp_path / f"ring-{k:05d}.pcapng"
        with CaptureWriter(f) as w:
            for t, _lt, d in pk[k : k + 20]:
                w.write(t, bytes(d))
        files.append(f)
    empty = tmp_path / "empty.pcapng"
    CaptureWriter(empty).close()
    files.insert(3, empty)
    assert len(files) > 10
    real = reader_mod.read_packets
    open_now = [0]
    most = [0]

    def counting(source: object, **kw: object):  # type: ignore[no-untyped-def]
        open_now[0] += 1
        most[0] = max(most[0], open_now[0])
        try:
            yield from real(source, **kw)  # type: ignore[arg-type]
        finally:
            open_now[0] -= 1

    monkeypatch.setattr(reader_mod, "read_packets", counting)
    r = collect(list(reversed(files)))  # the order given does not matter
    assert most[0] <= 2
    for i in range(3):
        assert r.stream(i, C2S) == C_DATA and r.stream(i, S2C) == S_DATA
    assert not r.gaps
    times = [e.time_ns for e in r.data]
    assert times == sorted(times)


def test_pcapng_interface_time_offset(tmp_path: Path) -> None:
    import struct

    p = tmp_path / "a.pcapng"
    with CaptureWriter(p) as w:
        w.new_section()
        w.add_interface(1, tsresol=9, tsoffset=1_000_000_000)
        c = TcpConversation(w, start_ns=T0)
        c.handshake()
    times = [t for t, _lt, _d in read_packets(p)]
    assert times[0] == T0
    raw = p.read_bytes()
    epb = raw.index(struct.pack("<I", 6))
    hi, lo = struct.unpack_from("<II", raw, epb + 12)
    assert (hi << 32) | lo == T0 - 10**18  # stored relative to the offset


def test_read_errors_are_capture_errors(tmp_path: Path) -> None:
    class Failing(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            raise OSError(5, "Input/output error")

    with pytest.raises(CaptureError, match="cannot read: Input/output error"):
        list(read_capture(Failing()))  # type: ignore[arg-type]
    with pytest.raises(UserError, match="cannot open"):
        list(read_capture(tmp_path))  # a directory


def test_modified_pcap_with_longer_record_headers(tmp_path: Path) -> None:
    import struct

    ip = tcp_packet("10.0.0.1", 40000, "10.0.0.2", 5672, 1, 1, ACK | PSH, AMQP_HDR)
    frame = link_frame(1, ip)
    p = tmp_path / "k.pcap"
    p.write_bytes(struct.pack("<IHHiIII", 0xA1B2CD34, 2, 4, 0, 0, 65535, 1)
                  + struct.pack("<IIIIIHBx", 1_700_000_000, 250, len(frame), len(frame),
                                2, 0x0800, 0) + frame)
    (pkt,) = list(read_packets(p))
    assert pkt[0] == 1_700_000_000_000_250_000 and bytes(pkt[2]) == frame
