"""Generate large, realistic AMQP 1.0 captures (pcapng, optionally gzip, several files).

    python bench/gen_capture.py OUT [--connections 20] [--links 4] [--messages 500]
        [--body 200] [--large 0.05] [--max-frame 16384] [--mss 1460] [--files 1]
        [--gzip] [--retransmit 0.01] [--reorder 0.01] [--noise 0] [--seed 1]
        [--start 1700000000] [--client-port 40000] [--open N] [--one-link-at-a-time]

Each connection does what a real client/broker pair does: SASL (PLAIN or ANONYMOUS),
open, begin, attaches (client senders and client receivers, some pre-settled), credit by
flow, transfers (a share of them `--large`, 4-40x the body size, split into several
frames), dispositions (accepted, rejected, released, modified; ranges where outcomes
repeat), detach, end, close, and the TCP handshake and FINs around it. Connections run
interleaved in time: all at once, or `--open N` at a time (each next one opens as one
closes: many short connections, as a busy broker sees them). `--one-link-at-a-time`
attaches each link of a connection once the one before it detached (a client that
opens a link per request). With `--files N` the packet stream is cut into N consecutive files,
like a ring-buffer capture, so connections straddle files. `--noise N` mixes in N
connections of other traffic (HTTP), which readers must recognise and skip. `OUT` is a file name; several
files are named OUT-00001.pcapng, OUT-00002.pcapng, ... Prints the files written and the
totals (packets, frames, messages, bytes).
"""

from __future__ import annotations

import argparse
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from amqpcli.capture.tcp import C2S, S2C, Direction
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec.composites import (
    Accepted,
    ApplicationProperties,
    Attach,
    Begin,
    Close,
    Data,
    Detach,
    Disposition,
    End,
    Error,
    Flow,
    Header,
    Modified,
    Open,
    Properties,
    Rejected,
    Released,
    SaslInit,
    SaslMechanisms,
    SaslOutcome,
    Source,
    Target,
    Transfer,
)
from amqpcli.codec.encode import encode
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.codec.types import Symbol, Timestamp, UByte, UInt, UShort

SENDER, RECEIVER = False, True  # the AMQP role values
OUTCOMES = ("accepted", "rejected", "released", "modified")


@dataclass
class Totals:
    packets: int = 0
    frames: int = 0
    messages: int = 0
    outcomes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))


def message_payload(rng: random.Random, i: int, size: int) -> bytes:
    return (
        encode(Header(durable=rng.random() < 0.5))
        + encode(Properties(message_id=f"msg-{i}", to="orders",
                            creation_time=Timestamp(1_700_000_000_000 + i)))
        + encode(ApplicationProperties({"seq": i, "region": rng.choice(["eu", "us"])}))
        + encode(Data(rng.randbytes(size)))
    )


def state_for(outcome: str) -> object:
    if outcome == "accepted":
        return Accepted()
    if outcome == "rejected":
        return Rejected(error=Error(condition=Symbol("amqp:precondition-failed"),
                                    description="bad order"))
    if outcome == "released":
        return Released()
    return Modified(delivery_failed=True)


def connection_script(rng: random.Random, n: int, args: argparse.Namespace,
                      totals: Totals) -> Iterator[tuple[Direction, bytes]]:
    """The byte conversation of one connection, as (direction, bytes) steps."""
    f = encode_frame
    yield C2S, encode_protocol_header("sasl")
    yield S2C, encode_protocol_header("sasl") + f(
        SaslMechanisms(sasl_server_mechanisms=[Symbol("PLAIN"), Symbol("ANONYMOUS")]), type=1)
    if rng.random() < 0.5:
        init = SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\0guest\0guest")
    else:
        init = SaslInit(mechanism=Symbol("ANONYMOUS"))
    yield C2S, f(init, type=1)
    yield S2C, f(SaslOutcome(code=UByte(0)), type=1)
    totals.frames += 3
    mf = UInt(args.max_frame)
    yield C2S, encode_protocol_header() + f(Open(container_id=f"client-{n}", hostname="broker",
                                                max_frame_size=mf, channel_max=UShort(16)))
    yield S2C, encode_protocol_header() + f(Open(container_id="broker", max_frame_size=mf,
                                                channel_max=UShort(16)))
    yield C2S, f(Begin(next_outgoing_id=UInt(0), incoming_window=UInt(0x7FFFFFFF),
                       outgoing_window=UInt(0x7FFFFFFF)), channel=0)
    yield S2C, f(Begin(remote_channel=UShort(0), next_outgoing_id=UInt(0),
                       incoming_window=UInt(0x7FFFFFFF), outgoing_window=UInt(0x7FFFFFFF)))
    totals.frames += 4
    delivery_id = {C2S: 0, S2C: 0}  # per sending side of the session
    if args.one_link_at_a_time:
        for h in range(args.links):  # each on handle 0, attached once the last detached
            yield from link_script(rng, n, h, args, totals, delivery_id)
    else:
        yield from link_script(rng, n, None, args, totals, delivery_id)
    yield C2S, f(End())
    yield S2C, f(End())
    yield C2S, f(Close())
    yield S2C, f(Close())
    totals.frames += 4


def link_script(rng: random.Random, n: int, only: int | None, args: argparse.Namespace,
                totals: Totals, delivery_id: dict[Direction, int]
                ) -> Iterator[tuple[Direction, bytes]]:
    """Every link's attach, messages and detach (the links side by side), or, with
    `only`, that one link's alone on handle 0."""
    f = encode_frame
    links = []
    for k in range(args.links) if only is None else (only,):
        name = f"link-{n}-{k}"
        h = k if only is None else 0
        client_sends = k % 2 == 0
        presettled = rng.random() < 0.2
        role = SENDER if client_sends else RECEIVER
        attach = Attach(name=name, handle=UInt(h), role=role,
                        snd_settle_mode=UByte(1 if presettled else 0),
                        source=Source(address="orders"), target=Target(address="orders"),
                        initial_delivery_count=UInt(0) if client_sends else None)
        yield C2S, f(attach)
        reply = Attach(name=name, handle=UInt(h), role=not role,
                       snd_settle_mode=UByte(1 if presettled else 0),
                       source=Source(address="orders"), target=Target(address="orders"),
                       initial_delivery_count=None if client_sends else UInt(0))
        yield S2C, f(reply)
        # the receiving side grants credit
        credit = Flow(next_incoming_id=UInt(0), incoming_window=UInt(0x7FFFFFFF),
                      next_outgoing_id=UInt(0), outgoing_window=UInt(0x7FFFFFFF),
                      handle=UInt(h), delivery_count=UInt(0),
                      link_credit=UInt(args.messages))
        yield (S2C if client_sends else C2S), f(credit)
        totals.frames += 3
        links.append((h, client_sends, presettled))
    chunk = args.max_frame - 64
    payloads = [message_payload(rng, i, args.body) for i in range(16)]
    big = [message_payload(rng, i, args.body * rng.randint(4, 40)) for i in range(4)]
    for m in range(args.messages):
        for h, client_sends, presettled in links:
            side = C2S if client_sends else S2C
            did = delivery_id[side]
            delivery_id[side] += 1
            payload = rng.choice(big) if rng.random() < args.large else payloads[m % 16]
            out = bytearray()
            pieces = [payload[i : i + chunk] for i in range(0, len(payload), chunk)]
            for k, piece in enumerate(pieces):
                more = k < len(pieces) - 1
                if k == 0:
                    t = Transfer(handle=UInt(h), delivery_id=UInt(did),
                                 delivery_tag=did.to_bytes(4, "big"), message_format=UInt(0),
                                 settled=presettled, more=more)
                else:
                    t = Transfer(handle=UInt(h), more=more)
                out += f(t, payload=piece)
                totals.frames += 1
            totals.messages += 1
            yield side, bytes(out)
            if not presettled:
                outcome = rng.choices(OUTCOMES, weights=(85, 5, 5, 5))[0]
                totals.outcomes[outcome] += 1
                yield (S2C if side == C2S else C2S), f(Disposition(
                    role=RECEIVER, first=UInt(did), settled=True, state=state_for(outcome)))
                totals.frames += 1
    for h, _c, _p in links:
        yield C2S, f(Detach(handle=UInt(h), closed=True))
        yield S2C, f(Detach(handle=UInt(h), closed=True))
        totals.frames += 2


def noise_script(rng: random.Random, args: argparse.Namespace
                 ) -> Iterator[tuple[Direction, bytes]]:
    """Traffic that is not AMQP: HTTP requests and responses, as long as an AMQP
    connection's."""
    for i in range(args.messages * args.links // 4 + 1):
        yield C2S, f"GET /items/{i} HTTP/1.1\r\nHost: shop\r\n\r\n".encode()
        body = rng.randbytes(args.body * rng.randint(1, 8))
        yield S2C, (f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                    + body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the capture to write (OUT-00001.pcapng, ... "
                    "with --files N; .gz added with --gzip)")
    ap.add_argument("--connections", type=int, default=20, help="AMQP connections")
    ap.add_argument("--links", type=int, default=4, help="links per connection")
    ap.add_argument("--messages", type=int, default=500, help="messages per link")
    ap.add_argument("--body", type=int, default=200, help="bytes of a usual message body")
    ap.add_argument("--large", type=float, default=0.05, help="share of large messages "
                    "(4-40x --body, split into several frames)")
    ap.add_argument("--max-frame", type=int, default=16384, help="max-frame-size both "
                    "sides open with")
    ap.add_argument("--mss", type=int, default=1460, help="TCP payload bytes per segment")
    ap.add_argument("--files", type=int, default=1, help="cut the packets into N "
                    "consecutive files, as a ring buffer does")
    ap.add_argument("--gzip", action="store_true", help="write gzip-compressed files")
    ap.add_argument("--retransmit", type=float, default=0.0,
                    help="probability that a send repeats one of its segments")
    ap.add_argument("--reorder", type=float, default=0.0,
                    help="probability that a send's segments arrive pairwise swapped")
    ap.add_argument("--noise", type=int, default=0,
                    help="connections of other traffic (HTTP on port 8080) mixed in")
    ap.add_argument("--seed", type=int, default=1, help="what the connections do "
                    "(the same seed gives the same capture)")
    ap.add_argument("--start", type=float, default=1_700_000_000.0,
                    help="time of the first packet, in seconds since the epoch "
                    "(default 2023-11-14 22:13:20 UTC)")
    ap.add_argument("--client-port", type=int, default=40000,
                    help="the first connection's client port, one more per connection: "
                    "captures meant to be read together need their own ports (or "
                    "--start times), else their connections are taken as one")
    ap.add_argument("--one-link-at-a-time", action="store_true", help="attach each link "
                    "once the one before detached (a client that opens a link per "
                    "request), not all side by side")
    ap.add_argument("--open", type=int, default=0, help="connections open at a time (the "
                    "next opens as one closes); default: all at once")
    args = ap.parse_args()
    if args.open < 0:
        ap.error("--open: a number of connections, 1 or more (0: all at once)")
    rng = random.Random(args.seed)
    totals = Totals()

    # first pass: every connection's steps, so the packets can be cut into files evenly
    scripts = [connection_script(random.Random(args.seed * 1000 + n), n, args, totals)
               for n in range(args.connections)]
    scripts += [noise_script(random.Random(args.seed * 7777 + n), args)
                for n in range(args.noise)]
    suffix = ".pcapng.gz" if args.gzip else ".pcapng"
    stem = str(args.out).removesuffix(".gz").removesuffix(".pcapng")
    names = ([Path(stem + suffix)] if args.files == 1 else
             [Path(f"{stem}-{i + 1:05d}{suffix}") for i in range(args.files)])
    for p in names:
        p.parent.mkdir(parents=True, exist_ok=True)
    # packets per file are only known afterwards: estimate from a dry count
    est = estimate_packets(args)
    per_file = max(1, est // args.files + 1)
    writer_idx = 0
    writer = CaptureWriter(names[0], compress=args.gzip)
    convs = [TcpConversation(writer, client=client_end(n, args.client_port),
                             server=("10.0.0.1", 5672 if n < args.connections else 8080),
                             mss=args.mss, start_ns=round(args.start * 1e9) + n * 100_000,
                             step_ns=20_000, isn=(rng.getrandbits(32), rng.getrandbits(32)))
             for n in range(len(scripts))]
    at_once = args.open if args.open > 0 else len(scripts)
    waiting = list(range(len(scripts)))[::-1]  # the next to open is last
    live: list[int] = []
    clock = 0  # the latest time of any connection opened so far
    written = 0
    while live or waiting:
        while waiting and len(live) < at_once:
            n = waiting.pop()
            c = convs[n]
            if args.open > 0:  # it opens now, not at its own start
                c.now = max(c.now, clock)
            c.handshake()
            clock = max(clock, c.now)
            live.append(n)
        moving = [convs[n] for n in live]  # (those that close in this round too)
        for n in list(live):
            c = convs[n]
            step = next(scripts[n], None)
            if step is None:
                c.close()
                live.remove(n)
                continue
            direction, data = step
            kw: dict[str, object] = {}
            nseg = -(-len(data) // args.mss)
            if nseg > 1 and rng.random() < args.reorder:
                kw["reorder"] = True
            if rng.random() < args.retransmit:
                kw["duplicate"] = {rng.randrange(nseg)}
            c.send(direction, data, ack=rng.random() < 0.5, **kw)  # type: ignore[arg-type]
        # keep the connections' clocks together so they interleave
        clock = max([clock] + [c.now for c in moving])
        for n in live:
            convs[n].now = clock
        if writer.packets >= per_file and writer_idx + 1 < len(names):
            written += writer.packets
            writer.close()
            writer_idx += 1
            writer = CaptureWriter(names[writer_idx], compress=args.gzip)
            for c in convs:
                c.w = writer
    written += writer.packets
    writer.close()
    totals.packets = written
    size = sum(os.path.getsize(p) for p in names[: writer_idx + 1])
    for p in names[: writer_idx + 1]:
        print(p)
    print(f"{written} packets, {totals.frames} frames, {totals.messages} messages "
          f"({', '.join(f'{k} {v}' for k, v in totals.outcomes.items())}), "
          f"{size / 1e6:.1f} MB in {writer_idx + 1} file(s)")


def client_end(n: int, first_port: int) -> tuple[str, int]:
    """Connection `n`'s client address and port: one address per connection (10.1.0.1,
    10.1.0.2, ...), ports counting up from `first_port` and wrapping to 1024 past 65535,
    for captures of any number of connections."""
    ip = f"10.{1 + n // 62500}.{(n // 250) % 250}.{n % 250 + 1}"
    port = first_port + n
    return ip, port if port < 65536 else 1024 + (port - 65536) % 64512


def estimate_packets(args: argparse.Namespace) -> int:
    """A rough count of packets, to cut files of similar size."""
    per_msg = 1 + (args.body + 200) // args.mss + 1.5  # transfer segments, disposition, acks
    return int(args.connections * (args.links * args.messages * per_msg + 40))


if __name__ == "__main__":
    main()
