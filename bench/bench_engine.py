"""Engine benchmark: the client endpoint's cost per message, in memory (no network).

A client `Endpoint` and a peer `Endpoint` are wired together in this process. Only the
calls into the client endpoint are measured (CPU and wall time), so the figures are the
engine's own cost on the client's side of `amqp send` / `amqp recv`:

* send: the peer grants credit in batches (like RabbitMQ's 1000), the client `send()`s
  that many messages; the peer accepts them with one disposition per batch (unsettled)
  or not at all (settled); the client reads those dispositions.
* recv: the peer sends batches of messages; the client reads them, and (unsettled)
  accepts each batch with `dispose()` (contiguous ids: one frame), then grants credit
  again.

    python bench/bench_engine.py                  # 100,000 x 100 B, every case
    python bench/bench_engine.py --count 20000 --cases send-unsettled
    python bench/bench_engine.py --profile send-unsettled   # cProfile of the client calls
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amqpcli.codec import composites as c
from amqpcli.engine import Endpoint, MessageReceived

BATCH = 1000
CASES = ("send-unsettled", "send-settled", "recv-unsettled", "recv-settled")


class _Meter:
    """Accumulates the CPU and wall time spent inside measured calls."""

    def __init__(self, profile: cProfile.Profile | None = None) -> None:
        self.cpu = 0.0
        self.wall = 0.0
        self.profile = profile

    def __call__(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        c0 = time.process_time()
        w0 = time.perf_counter()
        if self.profile is not None:
            self.profile.enable()
        try:
            return fn(*args, **kw)
        finally:
            if self.profile is not None:
                self.profile.disable()
            self.wall += time.perf_counter() - w0
            self.cpu += time.process_time() - c0


def _pair() -> tuple[Endpoint, Endpoint, Any]:
    client = Endpoint("client", sides=("client", "server"), lean_events=True)  # as amqpcli.net
    peer = Endpoint("peer", sides=("client", "server"))
    client.open()
    _pump(client, peer)
    s = client.begin()
    _pump(client, peer)
    return client, peer, s


def _pump(client: Endpoint, peer: Endpoint, t: float = 0.0) -> list[Any]:
    """Move bytes both ways until quiet (unmeasured); returns the peer's events."""
    out: list[Any] = []
    while True:
        a = client.data_to_send()
        b = peer.data_to_send()
        if not a and not b:
            return out
        if a:
            out += peer.receive_data(a, t)
        if b:
            client.receive_data(b, t)


def _peer_link(peer: Endpoint, link: Any) -> Any:
    s = peer.connection.channels["client"][link.session.channel["client"]]
    return s.handles["client"][link.handle["client"]]


def _payload(size: int) -> bytes:
    from amqpcli.net.outgoing import MessageTemplate

    return MessageTemplate().encode(1, b"x" * size).payload


def _send_batch(send: Callable[..., Any], link: Any, payload: bytes, settled: bool,
                k: int) -> None:
    for _ in range(k):
        send(link, payload, settled=settled)


def bench_send(n: int, size: int, settled: bool, meter: _Meter) -> None:
    client, peer, s = _pair()
    link = client.attach_sender(s, "out", c.Source(address="src"), c.Target(address="q"),
                                snd_settle_mode=1 if settled else 0)
    _pump(client, peer)
    plink = _peer_link(peer, link)
    payload = _payload(size)
    send = client.send
    sent = 0
    t = 0.0
    while sent < n:
        k = min(BATCH, n - sent)
        peer.flow(plink, k)
        t += 0.001
        meter(client.receive_data, peer.data_to_send(), t)
        meter(_send_batch, send, link, payload, settled, k)
        sent += k
        data = meter(client.data_to_send)
        evs = peer.receive_data(data, t)
        if not settled:
            ds = [e.delivery for e in evs if isinstance(e, MessageReceived)]
            assert len(ds) == k, (len(ds), k)
            peer.accept(ds)
            meter(client.receive_data, peer.data_to_send(), t)
        meter(client.take_events)
    assert link.settled_count == n, (link.settled_count, n)


def bench_recv(n: int, size: int, settled: bool, meter: _Meter) -> None:
    client, peer, s = _pair()
    link = client.attach_receiver(s, "in", c.Source(address="q"), c.Target(address="dst"),
                                  snd_settle_mode=1 if settled else None)
    _pump(client, peer)
    plink = _peer_link(peer, link)
    payload = _payload(size)
    got = 0
    t = 0.0
    while got < n:
        k = min(BATCH, n - got)
        meter(client.flow, link, k)
        peer.receive_data(meter(client.data_to_send), t)
        for _ in range(k):
            peer.send(plink, payload, settled=settled)
        t += 0.001
        evs = meter(client.receive_data, peer.data_to_send(), t)
        ds = [e.delivery for e in evs if isinstance(e, MessageReceived)]
        assert len(ds) == k, (len(ds), k)
        got += k
        if not settled:
            meter(client.accept, ds)
            peer.receive_data(meter(client.data_to_send), t)
        meter(client.take_events)
    assert link.deliveries == n, (link.deliveries, n)


def run(case: str, n: int, size: int, profile: cProfile.Profile | None = None) -> _Meter:
    meter = _Meter(profile)
    direction, mode = case.split("-")
    fn = bench_send if direction == "send" else bench_recv
    fn(n, size, mode == "settled", meter)
    return meter


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs per case")
    ap.add_argument("--profile", metavar="CASE", help="cProfile one case instead")
    args = ap.parse_args()
    if args.profile:
        prof = cProfile.Profile(time.process_time)
        run(args.profile, args.count, args.size, prof)
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
        return
    print(f"{'case':16} {'count':>7} {'msg/s':>9} {'CPU µs/msg':>10} {'CPU s/100k':>10}")
    for case in args.cases.split(","):
        best: _Meter | None = None
        for _ in range(args.repeat):
            m = run(case, args.count, args.size)
            if best is None or m.cpu < best.cpu:
                best = m
        assert best is not None
        rate = args.count / best.wall if best.wall else 0.0
        per = best.cpu / args.count
        print(f"{case:16} {args.count:7d} {rate:9.0f} {per * 1e6:10.2f} "
              f"{per * 100_000:10.3f}")


if __name__ == "__main__":
    main()
