"""Shared helpers for the capture tests: write a crafted capture, read it back."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from amqpcli.capture import Closed, Data, Flow, Gap, Opened, read_capture

AMQP_HDR = b"AMQP\x00\x01\x00\x00"
SASL_HDR = b"AMQP\x03\x01\x00\x00"


def frames(n: int, size: int = 40, tag: int = 0) -> bytes:
    """`n` fake AMQP 1.0 frames of `size` bytes each (a header and a counting body), so a
    mistake in reassembly shows up as a wrong byte somewhere."""
    out = bytearray()
    for i in range(n):
        body = bytes((tag + i + j) & 0xFF for j in range(size - 8))
        out += size.to_bytes(4, "big") + b"\x02\x00\x00\x00" + body
    return bytes(out)


@dataclass
class Result:
    opened: list[Opened] = field(default_factory=list)
    data: list[Data] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    closed: list[Closed] = field(default_factory=list)
    order: list[Any] = field(default_factory=list)

    @property
    def flows(self) -> list[Flow]:
        return [o.flow for o in self.opened]

    def stream(self, flow_index: int, direction: int) -> bytes:
        out = bytearray()
        for d in self.data:
            if d.flow.index == flow_index and d.direction == direction:
                assert d.offset == len(out) + sum(
                    g.size for g in self.gaps
                    if g.flow.index == flow_index and g.direction == direction
                    and g.offset < d.offset
                ), "data offsets must follow each other (gaps included)"
                out += d.data
        return bytes(out)


def collect(paths: str | os.PathLike[str] | list[Any], **kw: Any) -> Result:
    r = Result()
    for ev in read_capture(paths, **kw):
        r.order.append(ev)
        if isinstance(ev, Opened):
            r.opened.append(ev)
        elif isinstance(ev, Data):
            r.data.append(ev._replace(data=bytes(ev.data)))
        elif isinstance(ev, Gap):
            r.gaps.append(ev)
        elif isinstance(ev, Closed):
            r.closed.append(ev)
    return r
