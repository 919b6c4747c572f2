"""The qpid-python echo capture: every frame tshark decodes, we decode with the same
names and field values; the session's commands are numbered as the peers numbered them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from amqpcli.amqp010 import (
    Assembly,
    Command,
    ConnectionObserver,
    Frame,
    ProtocolHeader,
    StreamDecoder,
    StreamError,
    Struct,
    encode_assembly,
    encode_value,
)
from amqpcli.amqp010.codec import encode_fields
from amqpcli.amqp010.model import STRUCTS
from amqpcli.amqp010.session import SessionObserver
from tests.amqp010 import tshark_view
from tests.paths import CAPTURES_DIR, require

CAPTURE = CAPTURES_DIR / "amqp010-qpid-python-echo.pcapng"
PORT = 5682

# tshark field name -> our field name, for control/command arguments
ARGS = {
    "amqp.method.arguments.channel_max": "channel-max",
    "amqp.method.arguments.mechanism": "mechanism",
    "amqp.method.arguments.mechanisms": "mechanisms",
    "amqp.method.arguments.response": "response",
    "amqp.method.arguments.reply_code": "reply-code",
    "amqp.method.arguments.insist": "insist",
    "amqp.method.arguments.client_properties": "client-properties",
    "amqp.message.transfer.destination": "destination",
    "amqp.queue.declare.queue": "queue",  # tshark labels queue.query's argument so
    "amqp.session.attach.name": "name",
    "amqp.session.attach.force": "force",
    "amqp.session.command_point.command_id": "command-id",
    "amqp.session.command_point.command_offset": "command-offset",
    "amqp.session.completed.timely-reply": "timely-reply",
    "amqp.session.expected.commands": "commands",
    "amqp.execution.command_id": "command-id",
}
# tshark's size fields -> the field whose encoded size (after its own size prefix) they show
SIZES = {
    "amqp.method.connection_start.ok_client_properties.size": ("client-properties", "map"),
    # tshark names connection.start's array size after server-properties, absent here
    "amqp.method.connection_start.server_properties.size": ("mechanisms", "array"),
    "amqp.session.attach.name.size": ("name", "vbin16"),
    "amqp.struct.message_properties.application_headers.size": ("application-headers", "map"),
}
STRUCT_ALIASES = {"delivery-priority": "priority"}  # tshark uses the domain's name
IGNORED = {"amqp.format", "amqp.reserved", "amqp.method.arguments"}


@pytest.fixture(scope="module")
def view() -> dict[tuple[int, str], tshark_view.Direction]:
    return tshark_view.read(require(CAPTURE), PORT)


def _decode(d: tshark_view.Direction) -> tuple[list[Any], list[Frame]]:
    dec = StreamDecoder(keep_frames=True)
    items = dec.feed(bytes(d.data)) + dec.close()
    return items, dec.frames


def _fmt(value: Any) -> str:
    if isinstance(value, bytes):
        return ":".join(f"{b:02x}" for b in value)
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


def _packs(obj: Struct | Command | Any) -> list[str]:
    """Packing flags as tshark shows them (first octet high), nested structs after."""
    d = obj.definition
    raw = bytearray()
    encode_fields(raw, d.fields, d.pack, obj.fields)
    out = [f"0x{raw[0]:02x}{raw[1]:02x}"] if d.pack == 2 else []
    for v in obj.fields.values():
        if isinstance(v, Struct):
            out += _packs(v)
    return out


def _is_bit(owner: Any, fname: str) -> bool:
    return any(f.name == fname and f.type == "bit" for f in owner.definition.fields)


def _struct32s(asm: Assembly, frame: Frame) -> list[Struct]:
    if frame.type == 2:
        return list(asm.header)
    return [v for v in asm.method.fields.values() if isinstance(v, Struct)]


def _check_frame(frame: Frame, asm: Assembly, fields: list[tuple[str, str, str]]) -> int:
    """Compare one frame with tshark's fields; return how many values were compared."""
    m = asm.method
    structs = _struct32s(asm, frame)
    packs = _packs(m) if frame.type < 2 else [p for s in structs for p in _packs(s)]
    codes = [f"0x{s.definition.type_code:04x}" for s in structs]
    sizes = [str(len(encode_value("struct32", s)) - 4) for s in structs]
    current_map: list[tuple[str, Any]] = []
    compared = 0

    def eq(name: str, ours: Any, theirs: str) -> None:
        nonlocal compared
        assert _fmt(ours) == theirs, (name, frame.offset, m.qname)
        compared += 1

    for name, show, showname in fields:
        if name in IGNORED:
            continue
        if name == "amqp.frame-position":
            eq(name, frame.flags, show)
        elif name == "amqp.type":
            eq(name, frame.type, show)
        elif name == "amqp.length":
            eq(name, frame.size, show)
        elif name == "amqp.track-number":
            eq(name, frame.track, show)
        elif name == "amqp.channel":
            eq(name, frame.channel, show)
        elif name == "amqp.class":
            eq(name, m.definition.class_code, show)
        elif re.fullmatch(r"amqp\.[a-z]+\.method", name):
            eq(name, m.definition.code, show)
            eq(name, m.qname, re.search(r"Method: ([a-z.-]+) ", showname).group(1))
        elif name == "amqp.session.header":
            eq(name, f"0x01{int(m.sync):02x}", show)
        elif name == "amqp.session.header.sync":
            eq(name, m.sync, show)
        elif name == "amqp.struct.packing":
            eq(name, packs.pop(0), show)
        elif name == "amqp.struct32":
            eq(name, codes.pop(0), show)
        elif name == "amqp.struct32_size":
            eq(name, sizes.pop(0), show)
        elif name == "amqp.struct32.class":
            eq(name, structs[len(structs) - len(codes) - 1].definition.class_code, show)
        elif name == "amqp.struct32.struct":
            eq(name, structs[len(structs) - len(codes) - 1].definition.code, show)
        elif name in SIZES:
            fname, tname = SIZES[name]
            owner = next(o for o in [m, *structs] if fname in o.fields)
            eq(name, len(encode_value(tname, owner[fname])) - (2 if tname == "vbin16" else 4),
               show)
        elif name == "amqp.array.type":
            eq(name, m["mechanisms"].code, show)
        elif name == "amqp.array.element_count":
            eq(name, len(m["mechanisms"]), show)
        elif name == "amqp.array.string":
            eq(name, m["mechanisms"][0], show)
        elif name == "amqp.message-body":
            eq(name, len(asm.body or b""), str(frame.size - 12))
            eq(name, asm.body, _fmt(frame.payload))
        elif name == "amqp.field":  # one entry of the map opened just before
            key, typ, value = re.fullmatch(r"(.+?) \((.+?)\): (.*)", showname).groups()
            ours_key, ours = current_map.pop(0)
            eq(name, ours_key, key)
            if typ == "unimplemented type":  # tshark 4.0 skips int64 by its width
                eq(name, f"(value field length: {8 if ours.code >> 4 == 3 else '?'} bytes)",
                   value)
            else:
                eq(name, ours, value)
        elif name in ARGS:
            # the first of the method and its structs that has the field (tshark shows a
            # queue-query-result's queue under queue.declare's name)
            owner = next(o for o in [m, *structs] if ARGS[name] in
                         {f.name for f in o.definition.fields})
            value = owner.fields.get(ARGS[name])
            if isinstance(value, dict):
                current_map = list(value.items())
                n = re.search(r"\((\d+) entr", showname).group(1)
                eq(name, len(value), n)
            elif name == "amqp.method.arguments.mechanisms":
                eq(name, encode_value("array", value)[4:], show)
            elif name == "amqp.session.expected.commands":
                eq(name, "Commands " + str(list(value.ranges)), showname)
            elif _is_bit(owner, ARGS[name]):
                eq(name, bool(value), show)
            else:
                eq(name, value, show)
        elif re.fullmatch(r"amqp\.[a-z]+\.[a-z-]+\.[a-z-]+", name):
            cls, sname, fname = name.split(".")[1:]
            fname = STRUCT_ALIASES.get(fname, fname)
            assert f"{cls}.{sname}" in STRUCTS, name
            s = next(x for x in structs if x.qname == f"{cls}.{sname}")
            value = s.fields.get(fname)
            if isinstance(value, dict):
                current_map = list(value.items())
                eq(name, len(value), re.search(r"\((\d+) entr", showname).group(1))
            elif _is_bit(s, fname):
                eq(name, bool(value), show)
            else:
                eq(name, value, show)
        else:
            raise AssertionError(f"tshark field {name} ({showname}) not compared")
    assert not packs and not codes and not current_map, (m.qname, frame.type, packs, fields)
    return compared


def test_every_frame_matches_tshark(view) -> None:
    directions = {k: v for k, v in view.items() if v.data}
    assert sorted(directions) == [(0, "client"), (0, "server")]
    total_frames = compared = 0
    for key, d in directions.items():
        items, frames = _decode(d)
        assert all(isinstance(x, (ProtocolHeader, Assembly)) for x in items), items[-1]
        assert isinstance(items[0], ProtocolHeader)
        assert d.frames[0][:5] == [
            ("amqp.init.protocol", "AMQP", "Protocol: AMQP"),
            ("amqp.init.id_major", "1", "Protocol ID Major: 1"),
            ("amqp.init.id_minor", "1", "Protocol ID Minor: 1"),
            ("amqp.init.version_major", "0", "Version Major: 0"),
            ("amqp.init.version_minor", "10", "Version Minor: 10")]
        tshark_frames = d.frames[1:]
        assert len(frames) == len(tshark_frames), key
        assemblies = [x for x in items if isinstance(x, Assembly)]
        for frame, fields in zip(frames, tshark_frames, strict=True):
            asm = next(a for a in assemblies if a.offset <= frame.offset < a.end_offset)
            compared += _check_frame(frame, asm, fields)
            total_frames += 1
        # every assembly re-encodes to the bytes on the wire
        for a in assemblies:
            assert encode_assembly(a.method, a.channel, a.header, a.body) == \
                bytes(d.data[a.offset:a.end_offset])
    assert total_frames == 43
    assert compared > 500, compared


def test_messages_headers_and_bodies(view) -> None:
    items, _ = _decode(view[(0, "client")])
    transfers = [a for a in items if isinstance(a, Assembly)
                 and a.method.qname == "message.transfer"]
    assert [(a.method["destination"], a.body) for a in transfers] == [
        ("echo", b"hello 0-10 #0"), ("echo", b"hello 0-10 #1"), ("echo", b"hello 0-10 #2"),
        ("lab-queue", b"to a queue")]
    first = transfers[0]
    assert first.method.sync is True
    dp = first.struct("message.delivery-properties")
    mp = first.struct("message.message-properties")
    assert dp is not None and mp is not None
    assert dp.fields == {"priority": 4, "routing-key": "echo"}
    assert mp.fields == {"content-type": "text/plain", "application-headers": {"seq": 0}}
    assert mp["application-headers"]["seq"].code == 0x31  # int64


def _observe(view) -> SessionObserver:
    """Chunks of both directions in capture-time order through one ConnectionObserver."""
    conn = ConnectionObserver()
    chunks = []
    for (_stream, side), d in view.items():
        start = 0
        for t, end in d.chunks:
            chunks.append((t, side, bytes(d.data[start:end])))
            start = end
    for t, side, data in sorted(chunks, key=lambda c: c[0]):
        for o in conn.feed(side, data, t):
            assert not isinstance(o.item, StreamError)
    assert conn.close(chunks[-1][0]) == [] and conn.errors == {}
    return conn.model


def test_commands_are_numbered_as_the_peers_numbered_them(view) -> None:
    obs = _observe(view)
    lab = next(s for s in obs.sessions if s.label == "lab-session")
    client = [(i, r.qname) for i, r in lab.commands["client"].items()]
    server = [(i, r.qname) for i, r in lab.commands["server"].items()]
    assert client == [(0, "message.transfer"), (1, "message.transfer"),
                      (2, "message.transfer"), (3, "message.transfer"), (4, "queue.query")]
    assert server == [(0, "message.transfer"), (1, "message.transfer"),
                      (2, "message.transfer"), (3, "execution.result")]
    # the server's execution.result names command 4, the client's queue.query
    query = lab.commands["client"][4]
    assert query.result is not None and query.result.qname == "queue.queue-query-result"
    assert query.result.fields == {"queue": "lab-queue"}
    # the server's session.completed [0, n] complete the client's commands 0..4
    assert all(r.completed_at is not None for r in lab.commands["client"].values())
    assert all(r.completed_at is None for r in lab.commands["server"].values())
    assert not obs.violations
    idle = next(s for s in obs.sessions if s.label == "lab-idle")
    assert idle.detached_at is not None and idle.detach_code == 0


def test_messages_get_timelines(view) -> None:
    obs = _observe(view)
    rows = [(m.sender, m.command_id, m.destination, m.body, m.state,
             [e.event for e in m.timeline]) for m in obs.messages]
    assert rows == [
        ("client", 0, "echo", b"hello 0-10 #0", "completed", ["transfer", "completed"]),
        ("server", 0, "echo", b"hello 0-10 #0", "unsettled", ["transfer"]),
        ("client", 1, "echo", b"hello 0-10 #1", "completed", ["transfer", "completed"]),
        ("server", 1, "echo", b"hello 0-10 #1", "unsettled", ["transfer"]),
        ("client", 2, "echo", b"hello 0-10 #2", "completed", ["transfer", "completed"]),
        ("server", 2, "echo", b"hello 0-10 #2", "unsettled", ["transfer"]),
        ("client", 3, "lab-queue", b"to a queue", "completed", ["transfer", "completed"]),
    ]
    m = obs.messages[0]
    assert m.delivery_properties is not None and m.delivery_properties["routing-key"] == "echo"
    assert m.timeline[1].side == "server" and m.timeline[1].time > m.timeline[0].time


def test_the_project_capture_reader_gives_the_same_streams_and_model(view) -> None:
    """The same capture through amqpcli.capture (the path pcap-dump takes): the same bytes
    per direction as tshark's, and the same session model."""
    from amqpcli.capture import C2S, Data, read_capture

    conn = ConnectionObserver()
    streams = {"client": bytearray(), "server": bytearray()}
    for ev in read_capture(require(CAPTURE), ports=(PORT,)):
        if isinstance(ev, Data) and ev.flow.index == 0:
            side = "client" if ev.direction == C2S else "server"
            streams[side] += ev.data
            for o in conn.feed(side, bytes(ev.data), ev.time_ns / 1e9):
                assert not isinstance(o.item, StreamError)
    assert streams["client"] == view[(0, "client")].data
    assert streams["server"] == view[(0, "server")].data
    ours, theirs = conn.model, _observe(view)
    assert [(m.sender, m.command_id, m.state, m.body) for m in ours.messages] == \
        [(m.sender, m.command_id, m.state, m.body) for m in theirs.messages]
    assert [{k: list(v) for k, v in s.commands.items()} for s in ours.sessions] == \
        [{k: list(v) for k, v in s.commands.items()} for s in theirs.sessions]
    assert ours.violations == []
