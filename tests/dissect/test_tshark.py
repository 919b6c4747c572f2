"""Every AMQP 1.0 frame tshark sees, the dissector sees, in the same packet, with the same
performative, channel and key fields.

tshark puts all frames completed by one packet on that packet (`-T fields`, one value
per frame for each field the frame has); so does the dissector (`FrameRecord.packet`).
The comparison is per packet and per field: the values, in frame order.
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.dissect import Dissector, FrameRecord
from tests.dissect.helpers import C2S, basic, write
from tests.paths import CAPTURES_DIR, REPO_ROOT, require

A = "amqp.performative.arguments."
# tshark field → how to read the same from one of our frames (None: the frame has none)
FIELDS: dict[str, object] = {
    "amqp.performative": lambda f: f.body.CODE if f.type == 0 and f.body is not None else None,
    "amqp.sasl.method": lambda f: f.body.CODE if f.type == 1 else None,
    "amqp.channel": lambda f: f.channel,
    A + "handle": lambda f: _get(f, "handle"),
    A + "deliveryId": lambda f: _get(f, "delivery_id"),
    A + "deliveryTag": lambda f: _get(f, "delivery_tag"),
    A + "settled": lambda f: _get(f, "settled"),
    A + "more": lambda f: _get(f, "more"),
    A + "role": lambda f: _get(f, "role"),
    A + "first": lambda f: _get(f, "first"),
    A + "last": lambda f: _get(f, "last"),
    A + "linkCredit": lambda f: _get(f, "link_credit"),
    A + "deliveryCount": lambda f: _get(f, "delivery_count"),
    A + "name": lambda f: _get(f, "name"),
    A + "containerId": lambda f: _get(f, "container_id"),
    A + "remoteChannel": lambda f: _get(f, "remote_channel"),
    "amqp.sasl.mechanism": lambda f: _get(f, "mechanism"),
}


def _get(frame, attr: str) -> object:
    return getattr(frame.body, attr, None) if frame.body is not None else None


def _text(v: object) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    return str(int(v)) if isinstance(v, int) else str(v)


def tshark_view(path: Path) -> dict[int, dict[str, list[str]]]:
    # out-of-order segments are reassembled only when asked (they are by us, always)
    cmd = ["tshark", "-r", str(path), "-o", "tcp.reassemble_out_of_order:TRUE", "-Y", "amqp",
           "-T", "fields", "-E", "separator=\t",
           "-E", "occurrence=a", "-E", "aggregator=\x1f", "-e", "frame.number"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=300).stdout
    view: dict[int, dict[str, list[str]]] = {}
    for line in out.splitlines():
        cols = line.split("\t")
        view[int(cols[0])] = {
            name: [v for v in col.split("\x1f") if v != ""] for name, col in zip(FIELDS, cols[1:],
                                                                                  strict=True)}
    return view


def our_view(path: Path) -> dict[int, dict[str, list[str]]]:
    per: dict[int, dict[str, list[str]]] = defaultdict(lambda: {n: [] for n in FIELDS})
    for rec in Dissector(engine=False).read(str(path)):
        if not isinstance(rec, FrameRecord) or rec.item.__class__.__name__ != "Frame":
            continue
        for name, get in FIELDS.items():
            v = get(rec.item)  # type: ignore[operator]
            if v is not None:
                per[rec.packet][name].append(_text(v))
    return dict(per)


def _compare(path: Path, min_frames: int) -> None:
    theirs = tshark_view(path)
    ours = our_view(path)
    # packets where tshark saw AMQP but only protocol headers have no frames of ours
    theirs = {k: v for k, v in theirs.items() if any(v.values())}
    assert sorted(ours) == sorted(theirs)
    for pkt in theirs:
        assert ours[pkt] == theirs[pkt], f"packet {pkt}"
    assert sum(len(v["amqp.channel"]) for v in ours.values()) >= min_frames


def test_rabbitmq_capture_matches_tshark() -> None:
    _compare(require(CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"), 69)


def test_crafted_capture_matches_tshark(tmp_path: Path) -> None:
    s = basic(5)
    s.transfer(5, "multi " * 300).dispose(5, c.Released())
    s.s(c.Flow(next_incoming_id=6, incoming_window=10, next_outgoing_id=0,
               outgoing_window=10, handle=0, delivery_count=6, link_credit=0, drain=True))
    s.raw(C2S, b"\x00\x00\x00\x08\x02\x00\x00\x00")  # a heartbeat
    path = write(tmp_path / "crafted.pcapng", s, mss=200, reorder=True, duplicate=(1,))
    _compare(path, 20)


@pytest.mark.parametrize("extra", [[], ["--retransmit", "0.05", "--reorder", "0.05"]])
def test_generated_capture_matches_tshark(tmp_path: Path, extra: list[str]) -> None:
    out = tmp_path / "gen"
    subprocess.run([sys.executable, str(REPO_ROOT / "bench" / "gen_capture.py"), str(out),
                    "--connections", "2", "--links", "2", "--messages", "40", "--large", "0.2",
                    "--max-frame", "1024", *extra],
                   check=True, capture_output=True, timeout=300)
    _compare(out.with_suffix(".pcapng"), 300)
