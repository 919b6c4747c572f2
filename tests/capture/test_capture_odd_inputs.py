"""Odd capture inputs said in one clear line: a link type that is not read, gzip data
gzipped again or damaged (where, in the compressed file), other compressions."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any

import pytest
from capture_helpers import AMQP_HDR, frames

from amqpcli.capture import C2S, S2C, CaptureError, read_capture, read_packets
from amqpcli.capture.writer import CaptureWriter, TcpConversation, link_frame, tcp_packet
from amqpcli.errors import Exit


def _conversation(w: CaptureWriter, n: int = 1) -> None:
    for i in range(n):
        c = TcpConversation(w, client=("10.0.0.1", 40000 + i), mss=200)
        c.handshake()
        c.send(C2S, AMQP_HDR + frames(10, 90, tag=3))
        c.send(S2C, AMQP_HDR + frames(10, 150, tag=9))
        c.close()


def _capture(path: Path, n: int = 1, **kw: Any) -> Path:
    with CaptureWriter(path, **kw) as w:
        _conversation(w, n)
    return path


# --- link types --------------------------------------------------------------------


def _ip() -> bytes:
    return tcp_packet("10.0.0.1", 40000, "10.0.0.2", 5672, 1, 1, 0x18, AMQP_HDR)


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_a_link_type_not_read_is_named_with_its_number(tmp_path: Path, fmt: str) -> None:
    # (it said "no AMQP traffic ... (65 packets, no TCP flows)")
    p = tmp_path / f"x.{fmt}"
    with CaptureWriter(p, format=fmt, linktype=9999) as w:
        for i in range(3):
            w.write(1_700_000_000_000_000_000 + i, link_frame(1, _ip()))
    with pytest.raises(CaptureError) as ei:
        list(read_capture(p))
    text = str(ei.value)
    assert "link type 9999 is not supported" in text and "\n" not in text
    assert ei.value.code == Exit.DECODE


def test_an_interface_of_another_link_type_beside_a_readable_one_is_no_error(
        tmp_path: Path) -> None:
    p = tmp_path / "two.pcapng"
    with CaptureWriter(p) as w:  # interface 0: Ethernet
        w.add_interface(9999)
        w.write(1_700_000_000_000_000_000, b"\x00" * 40, interface=1)
        w.write(1_700_000_000_000_000_001, link_frame(1, _ip()))
    assert len(list(read_packets(p))) == 2


# --- gzip ----------------------------------------------------------------------------


def test_gzip_twice_says_so(tmp_path: Path) -> None:
    inner = _capture(tmp_path / "a.pcapng.gz", compress=True)
    twice = tmp_path / "b.pcapng.gz"
    twice.write_bytes(gzip.compress(inner.read_bytes()))
    with pytest.raises(CaptureError) as ei:
        list(read_packets(twice))
    assert "gzip data inside gzip data" in str(ei.value)
    assert "byte offset" not in str(ei.value)  # (an offset 0 said nothing)


@pytest.mark.parametrize("magic, name", [(b"\x28\xb5\x2f\xfd", "zstd"),
                                         (b"\xfd7zXZ\x00", "xz"), (b"BZh91AY", "bzip2")])
def test_other_compressions_are_named(tmp_path: Path, magic: bytes, name: str) -> None:
    p = tmp_path / "c.pcapng"
    p.write_bytes(magic + b"\x00" * 64)
    with pytest.raises(CaptureError, match=f"{name}-compressed"):
        list(read_packets(p))


def _detected_at(data: bytes) -> int:
    """The offset of the byte at which zlib, fed one byte at a time, finds the damage."""
    d = zlib.decompressobj(31)
    for i in range(len(data)):
        try:
            d.decompress(data[i : i + 1])
        except zlib.error:
            return i
    raise AssertionError("no damage found")


def test_corrupt_gzip_says_where_in_the_compressed_file(tmp_path: Path) -> None:
    # One bad byte in the deflate data: it was "(at byte offset 0)", an offset in the
    # decompressed data where nothing had been read yet. Now it is the offset in the
    # file of the byte where zlib finds the damage (the bad byte, or a later one when
    # the bytes it garbles still decode for a while), and the packets before come first.
    raw = _capture(tmp_path / "a.pcapng", n=30).read_bytes()
    packed = bytearray(gzip.compress(raw, compresslevel=6, mtime=0))
    whole = list(read_packets(tmp_path / "a.pcapng"))
    bad = len(packed) // 2
    packed[bad] ^= 0xFF
    p = tmp_path / "corrupt.pcapng.gz"
    p.write_bytes(bytes(packed))
    got = []
    with pytest.raises(CaptureError) as ei:
        for pk in read_packets(p, block_size=4096):
            got.append((pk[0], bytes(pk[2])))
    text = str(ei.value)
    assert "gzip data is corrupt: " in text and "\n" not in text
    assert f"(found at byte offset {_detected_at(bytes(packed))} of the compressed file)" in text
    assert len(got) > 10 and got[:10] == [(t, bytes(d)) for t, _lt, d in whole[:10]]


def test_gzip_cut_short_says_so_and_where(tmp_path: Path) -> None:
    raw = _capture(tmp_path / "a.pcapng", n=10).read_bytes()
    packed = gzip.compress(raw, mtime=0)
    p = tmp_path / "cut.pcapng.gz"
    p.write_bytes(packed[:11])  # inside the gzip header
    with pytest.raises(CaptureError, match=r"gzip file is cut short: .*\(after 11 bytes\)"):
        list(read_packets(p))


def test_gzip_of_several_members_and_zero_padding(tmp_path: Path) -> None:
    raw = _capture(tmp_path / "a.pcapng", n=5).read_bytes()
    half = len(raw) // 2
    p = tmp_path / "m.pcapng.gz"
    p.write_bytes(gzip.compress(raw[:half]) + gzip.compress(raw[half:]) + b"\0" * 100)
    assert [bytes(d) for _t, _l, d in read_packets(p, block_size=1000)] == [
        bytes(d) for _t, _l, d in read_packets(tmp_path / "a.pcapng")]
    q = tmp_path / "junk.pcapng.gz"
    q.write_bytes(gzip.compress(raw) + b"junk")
    with pytest.raises(CaptureError, match="not gzip data follow the gzip data"):
        list(read_packets(q))


def test_an_error_in_gzip_input_gives_its_offset_in_the_decompressed_data(
        tmp_path: Path) -> None:
    raw = _capture(tmp_path / "a.pcapng", n=3).read_bytes()
    p = tmp_path / "t.pcapng.gz"
    p.write_bytes(gzip.compress(raw[:-10]))  # whole gzip, its capture cut short
    with pytest.raises(CaptureError, match="of the decompressed data"):
        list(read_packets(p))
