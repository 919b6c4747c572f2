"""Frame reader throughput: a stream of transfer frames, performative decoded, payload kept.

    python bench/bench_frames.py [--frames 100000] [--chunk 65536] [--repeat 5] [--generic]

Builds a stream like a busy receiver sees (unsettled transfers of small messages with a
header, properties, application properties and a 100-byte data body), feeds it to one
`FrameReader` in fixed-size chunks and reports the best of the repeats in frames/s, by the
process's CPU time (one core; what other processes on the machine do matters less) and by
wall time. `--generic` turns the reader's transfer fast path off, to measure the codec's
generic decoder on the same stream.
"""

from __future__ import annotations

import argparse
import time

from amqpcli.codec import frames
from amqpcli.codec.composites import (
    ApplicationProperties,
    Data,
    Header,
    Properties,
    Transfer,
)
from amqpcli.codec.encode import encode
from amqpcli.codec.frames import FrameReader, encode_frame
from amqpcli.codec.types import Timestamp, UInt


def make_stream(count: int) -> bytes:
    out = bytearray()
    for i in range(count):
        payload = (
            encode(Header(durable=True))
            + encode(
                Properties(
                    message_id=f"id-{i}",
                    to="queue/orders",
                    creation_time=Timestamp(1_700_000_000_000 + i),
                )
            )
            + encode(ApplicationProperties({"seq": i, "region": "eu-west"}))
            + encode(Data(bytes(100)))
        )
        perf = Transfer(
            handle=UInt(0),
            delivery_id=UInt(i),
            delivery_tag=i.to_bytes(8, "big"),
            message_format=UInt(0),
            settled=False,
        )
        out += encode_frame(perf, channel=1, payload=payload)
    return bytes(out)


def run(stream: bytes, chunk: int) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, items read)."""
    reader = FrameReader(max_frame_size=1 << 20)
    feed = reader.feed
    n = 0
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(0, len(stream), chunk):
        n += len(feed(stream[i : i + chunk]))
    n += len(reader.close())
    return time.process_time() - cpu, time.perf_counter() - wall, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=100_000)
    ap.add_argument("--chunk", type=int, default=65536)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--generic", action="store_true", help="without the transfer fast path")
    args = ap.parse_args()
    if args.generic:
        frames._decode_transfer_fast = lambda *body: None
    stream = make_stream(args.frames)
    best_cpu = best_wall = float("inf")
    for _ in range(args.repeat):
        cpu, wall, n = run(stream, args.chunk)
        assert n == args.frames, f"read {n} items, expected {args.frames}"
        best_cpu, best_wall = min(best_cpu, cpu), min(best_wall, wall)
    path = "generic decoder" if args.generic else "transfer fast path"
    print(
        f"{args.frames} transfer frames ({path}), {len(stream) / 1e6:.1f} MB in "
        f"{args.chunk}-byte chunks: {args.frames / best_cpu:,.0f} frames/s by CPU time "
        f"({best_cpu:.3f} s, {len(stream) / best_cpu / 1e6:.0f} MB/s); "
        f"{args.frames / best_wall:,.0f} frames/s by wall time"
    )


if __name__ == "__main__":
    main()
