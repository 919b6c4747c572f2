"""Crafted AMQP 1.0 conversations, written as captures for the dissector to read."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from amqpcli.capture.tcp import C2S, S2C, Direction
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame, encode_protocol_header
from amqpcli.codec.message import Message
from amqpcli.codec.types import Symbol, UInt
from amqpcli.dissect import DeliveryRecord, Dissector, FrameRecord, Notice, ViolationRecord

SENDER, RECEIVER = False, True


@dataclass
class Script:
    """What each side says, in order: (direction, bytes, seconds since the start)."""

    steps: list[tuple[Direction, bytes, float]] = field(default_factory=list)
    t: float = 0.0

    def at(self, t: float) -> Script:
        self.t = t
        return self

    def raw(self, d: Direction, data: bytes) -> Script:
        self.steps.append((d, data, self.t))
        self.t += 0.001
        return self

    def c(self, perf: Any, ch: int = 0, payload: bytes = b"") -> Script:
        return self.raw(C2S, encode_frame(perf, ch, payload))

    def s(self, perf: Any, ch: int = 0, payload: bytes = b"") -> Script:
        return self.raw(S2C, encode_frame(perf, ch, payload))

    def sasl_plain(self, user: bytes = b"guest", password: bytes = b"secret") -> Script:
        self.raw(C2S, encode_protocol_header("sasl"))
        self.raw(S2C, encode_protocol_header("sasl"))
        self.raw(S2C, encode_frame(c.SaslMechanisms(
            sasl_server_mechanisms=[Symbol("PLAIN"), Symbol("ANONYMOUS")]), type=1))
        self.raw(C2S, encode_frame(c.SaslInit(mechanism=Symbol("PLAIN"),
                                              initial_response=b"\0" + user + b"\0" + password),
                                   type=1))
        self.raw(S2C, encode_frame(c.SaslOutcome(code=0), type=1))
        return self

    def open(self, *, idle_ms: int | None = None, max_frame: int = 65536,
             window: int = 1000, client: str = "client-1") -> Script:
        """Headers, opens (the client's container-id `client`, the server's broker-1)
        and a session."""
        self.raw(C2S, encode_protocol_header("amqp"))
        self.raw(S2C, encode_protocol_header("amqp"))
        self.c(c.Open(container_id=client, hostname="broker", max_frame_size=max_frame))
        self.s(c.Open(container_id="broker-1", max_frame_size=max_frame,
                      idle_time_out=idle_ms))
        self.c(c.Begin(next_outgoing_id=0, incoming_window=1000, outgoing_window=1000))
        self.s(c.Begin(remote_channel=0, next_outgoing_id=0, incoming_window=window,
                       outgoing_window=1000))
        return self

    def sender_link(self, name: str = "sender", address: str = "q1", handle: int = 0,
                    *, credit: int = 100, snd_mode: int = 2, rcv_mode: int = 0) -> Script:
        """The client attaches a sending link to `address`; the server grants credit."""
        self.c(c.Attach(name=name, handle=handle, role=SENDER, snd_settle_mode=snd_mode,
                        rcv_settle_mode=rcv_mode, source=c.Source(address="client"),
                        target=c.Target(address=address), initial_delivery_count=0))
        self.s(c.Attach(name=name, handle=handle, role=RECEIVER, snd_settle_mode=snd_mode,
                        rcv_settle_mode=rcv_mode, source=c.Source(address="client"),
                        target=c.Target(address=address)))
        self.s(c.Flow(next_incoming_id=0, incoming_window=1000, next_outgoing_id=0,
                      outgoing_window=1000, handle=handle, delivery_count=0,
                      link_credit=credit))
        return self

    def refused_link(self, name: str, address: str, *, sender: bool = True, handle: int = 0,
                     condition: str = "amqp:not-found", source: str | None = None) -> Script:
        """The client attaches a link to (`sender`) or from `address`; the server answers
        with a null terminus and detaches it with `condition`; the client detaches too.
        `source`: a sending link's own source address, in both attaches."""
        src = c.Source(address=source) if source is not None else None
        if sender:
            self.c(c.Attach(name=name, handle=handle, role=SENDER, source=src,
                            target=c.Target(address=address), initial_delivery_count=0))
            self.s(c.Attach(name=name, handle=handle, role=RECEIVER, source=src, target=None))
        else:
            self.c(c.Attach(name=name, handle=handle, role=RECEIVER,
                            source=c.Source(address=address), target=None))
            self.s(c.Attach(name=name, handle=handle, role=SENDER, source=None, target=None,
                            initial_delivery_count=0))
        self.s(c.Detach(handle=handle, closed=True, error=c.Error(condition=condition)))
        return self.c(c.Detach(handle=handle, closed=True))

    def transfer(self, did: int, body: str = "hello", *, handle: int = 0,
                 settled: bool | None = None, tag: bytes | None = None) -> Script:
        msg = Message(body=body).encode()
        return self.c(c.Transfer(handle=handle, delivery_id=did,
                                 delivery_tag=tag if tag is not None else b"t%d" % did,
                                 message_format=0, settled=settled), payload=msg)

    def dispose(self, first: int, state: Any, last: int | None = None,
                settled: bool = True, side: Direction = S2C) -> Script:
        d = c.Disposition(role=RECEIVER if side == S2C else SENDER, first=first, last=last,
                          settled=settled, state=state)
        return self.raw(side, encode_frame(d))

    def close(self) -> Script:
        self.c(c.Close())
        self.s(c.Close())
        return self


def write(path: Path, script: Script, *, mss: int = 1460, handshake: bool = True,
          coalesce: bool = False, reorder: bool = False, duplicate: Collection[int] = (),
          drop: Collection[tuple[int, int]] = (), skip_first: int = 0,
          fin: bool = True, rst: Direction | None = None, port: int = 5672,
          rtt: float = 0.0) -> Path:
    """Write `script` as a capture. `coalesce` joins each run of steps from one side into
    one send (many frames in a segment); `drop` holds (step index, segment index) pairs
    left out of the capture; `skip_first` leaves out the first steps entirely (a capture
    that starts mid-connection, without a handshake); `rst`: that side resets the
    connection at the end, instead of the FINs (`fin`); `rtt`: seconds from the SYN to the
    client's ACK of the SYN-ACK (the script's steps should come after it)."""
    start = 1_700_000_000_000_000_000
    with CaptureWriter(path) as w:
        conv = TcpConversation(w, server=("10.0.0.2", port), start_ns=start, mss=mss)
        if handshake and not skip_first:
            step = conv.step
            conv.step = round(rtt * 1e9 / 2) or step  # (SYN, SYN-ACK, ACK a step apart)
            conv.handshake()
            conv.step = step
        steps = script.steps
        sends: list[tuple[Direction, bytes, float, list[int]]] = []
        for i, (d, data, t) in enumerate(steps):
            if coalesce and sends and sends[-1][0] == d:
                pd, pdata, pt, idx = sends[-1]
                sends[-1] = (pd, pdata + data, pt, [*idx, i])
            else:
                sends.append((d, data, t, [i]))
        for d, data, t, idx in sends:
            if idx[0] < skip_first:
                # advance the sequence numbers as if it had been sent
                conv.segments(d, data)
                continue
            drops = {seg for (step, seg) in drop if step in idx}
            conv.send(d, data, reorder=reorder, duplicate=duplicate, drop=drops,
                      time_ns=start + int(t * 1e9))
        if rst is not None:
            conv.reset(rst)
        elif fin:
            conv.close()
    return path


def write_connections(path: Path, scripts: list[Script]) -> str:
    """A capture of one connection per script, a second apart."""
    start = 1_700_000_000_000_000_000
    with CaptureWriter(path) as w:
        for i, s in enumerate(scripts):
            t0 = start + i * 1_000_000_000
            conv = TcpConversation(w, client=("10.0.0.1", 40000 + i),
                                   server=("10.0.0.2", 5672), start_ns=t0)
            conv.handshake()
            for d, data, t in s.steps:
                conv.send(d, data, time_ns=t0 + int(t * 1e9))
            conv.close()
    return str(path)


@dataclass
class Result:
    frames: list[FrameRecord]
    deliveries: list[DeliveryRecord]
    violations: list[ViolationRecord]
    notices: list[Notice]
    dissector: Dissector

    def names(self) -> list[str]:
        from amqpcli.dissect.filters import performative_name

        return [performative_name(f.item) for f in self.frames]


def keep_everything(monkeypatch: Any) -> None:
    """Every Dissector made from now on keeps what a closed connection was
    (`closed="keep"`), whatever its caller asks: the output to compare with."""
    init = Dissector.__init__

    def keeping(self: Any, **kw: Any) -> None:
        init(self, **{**kw, "closed": "keep"})

    monkeypatch.setattr(Dissector, "__init__", keeping)


def printed_as_if_kept(monkeypatch: Any, *args: str) -> tuple[int, str, str]:
    """`amqp ARGS` in this process, which must print exactly what it prints when every
    closed connection is kept whole (`keep_everything`): (exit code, stdout, stderr)."""
    from tests.net.clirun import amqp_in_process

    got = amqp_in_process(*args)
    keep_everything(monkeypatch)
    assert got == amqp_in_process(*args)
    return got


def dissect(path: Path, **kw: Any) -> Result:
    dis = Dissector(**kw)
    recs = list(dis.read(str(path)))
    return Result([r for r in recs if isinstance(r, FrameRecord)],
                  [r for r in recs if isinstance(r, DeliveryRecord)],
                  [r for r in recs if isinstance(r, ViolationRecord)],
                  [r for r in recs if isinstance(r, Notice)], dis)


def basic(n: int = 4, *, sasl: bool = True) -> Script:
    """SASL, open, a sending link, `n` transfers accepted one by one, close."""
    s = Script()
    if sasl:
        s.sasl_plain()
    s.open().sender_link()
    for i in range(n):
        s.transfer(i, f"message {i}")
        s.dispose(i, c.Accepted())
    return s.close()


def second_mode_capture(path: Path) -> Path:
    """One delivery in receiver-settle-mode second, sent at 1.0 s: the receiver answers
    accepted unsettled (1.010), the sender settles (1.020), the receiver settles (1.050)."""
    s = Script().open().sender_link(rcv_mode=1)
    s.at(1.0).transfer(0)
    s.at(1.010).dispose(0, c.Accepted(), settled=False)
    s.at(1.020).dispose(0, c.Accepted(), side=C2S)
    s.at(1.050).dispose(0, c.Accepted())
    return write(path, s.at(2.0).close())


def presettled_capture(path: Path) -> Path:
    """Two pre-settled deliveries: "one" in one frame at 1.0 s, then one in three frames
    (1.100, 1.110, 1.120 s), the first saying settled; nothing else settles them."""
    body = Message(body="x" * 30).encode()
    s = Script().open().sender_link()
    s.at(1.0).transfer(0, "one", settled=True)
    s.at(1.100).c(c.Transfer(handle=0, delivery_id=1, delivery_tag=b"t1", message_format=0,
                             settled=True, more=True), payload=body[:10])
    s.at(1.110).c(c.Transfer(handle=0, more=True), payload=body[10:20])
    s.at(1.120).c(c.Transfer(handle=0), payload=body[20:])
    return write(path, s.at(2.0).close())


def gap_capture(path: Path) -> Path:
    """Ten transfers in one send of 100-byte segments with the 12th segment lost, then
    their ten dispositions and the close: a TCP gap inside the transfers, the frames after
    it found again, dispositions naming deliveries the gap took."""
    s = Script().open().sender_link()
    for i in range(10):
        s.transfer(i, "m" * 400)
    for i in range(10):
        s.dispose(i, c.Accepted())
    s.close()
    first_transfer = [i for i, step in enumerate(s.steps) if step[0] == C2S][4]
    return write(path, s, coalesce=True, mss=100, drop=[(first_transfer, 12)])


__all__ = ["RECEIVER", "SENDER", "Result", "Script", "UInt", "basic", "dissect", "gap_capture",
           "write"]
