"""`pcap-dump` of 0-10 assemblies whose frames interleave with other frames on the wire:
a record's `frame` is its last frame's number, the delivery's time its first frame's."""

from __future__ import annotations

import json
from pathlib import Path

from tests.amqp010.samples import frames_of as _frames
from tests.cli.test_decode_secrets import run


def _interleaved(path: Path) -> Path:
    """A client transfer in three frames (packets at 3 s, 5 s) with a server heartbeat
    (4 s) between its first frame and its other two; one timestamp per second from 0 s."""
    from amqpcli.amqp010 import PROTOCOL_HEADER, Command, Control, encode_assembly
    from tests.amqp010.pcap_write import write

    transfer = _frames(encode_assembly(Command.make("message.transfer", destination="d"), 1,
                                       (), b"x" * 40, max_frame_size=32))
    assert len(transfer) == 3
    ping = encode_assembly(Control.make("connection.heartbeat"), 0)
    write(path, [("client", PROTOCOL_HEADER), ("server", PROTOCOL_HEADER),
                 ("client", transfer[0]), ("server", ping), ("client", b"".join(transfer[1:]))])
    return path


def _jsonl(*args: str) -> list[dict]:
    code, out, err = run("pcap-dump", *args, "--json")
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_an_assembly_is_numbered_by_its_last_frame_on_the_wire(tmp_path: Path) -> None:
    # the heartbeat was frame 1 and the transfer 4: numbers given as assemblies completed
    cap = str(_interleaved(tmp_path / "interleaved.pcap"))
    records = _jsonl(cap)
    frames = {r["method"]: r["frame"] for r in records if r.get("item") == "assembly"}
    assert frames == {"connection.heartbeat": 2, "message.transfer": 4}
    violations = [r for r in records if r["record"] == "violation"]
    assert violations and {v["frame"] for v in violations} == {4}
    _, text, _ = run("pcap-dump", cap)
    assert all("(frame 4, packet 8)" in x for x in text.splitlines() if "violation" in x)


def _settled(path: Path) -> Path:
    """Session "s" on channel 1; a client transfer in three frames, its first frame in the
    packet at 8 s and the other two at 10 s (a server heartbeat at 9 s), completed by the
    server at 11 s; then one with accept-mode none in three frames, at 12 s and 13 s."""
    from amqpcli.amqp010 import PROTOCOL_HEADER, Command, Control, SequenceSet, encode_assembly
    from tests.amqp010.pcap_write import write

    def ctl(qname: str, **f: object) -> bytes:
        return encode_assembly(Control.make(qname, **f), 1)

    def transfer(**f: object) -> list[bytes]:
        return _frames(encode_assembly(Command.make("message.transfer", destination="d", **f),
                                       1, (), b"x" * 40, max_frame_size=32))

    first, second = transfer(), transfer(accept_mode=1)
    ping = encode_assembly(Control.make("connection.heartbeat"), 0)
    write(path, [("client", PROTOCOL_HEADER), ("server", PROTOCOL_HEADER),  # 4 s, 5 s
                 ("client", ctl("session.attach", name=b"s")),
                 ("server", ctl("session.attached", name=b"s")),
                 ("client", ctl("session.command-point", command_id=0, command_offset=0)),
                 ("client", first[0]), ("server", ping), ("client", b"".join(first[1:])),
                 ("server", ctl("session.completed", commands=SequenceSet(((0, 0),)))),
                 ("client", second[0]), ("client", b"".join(second[1:]))])
    return path


def test_a_multi_frame_delivery_starts_at_its_first_frame(tmp_path: Path) -> None:
    # first-time and latency started at the last frame (10 s, latency 1 s), as the
    # transfer completed; a 1.0 delivery's start at its first transfer frame
    cap = str(_settled(tmp_path / "settled.pcap"))
    second, first = _jsonl(cap, "-d")  # each as it reaches its end: accept-mode none first
    assert (first["delivery-id"], second["delivery-id"]) == (0, 1)
    assert first["first-time"] == "2023-11-14T22:13:28.000000Z"  # 1_700_000_008
    assert first["settled-time"] == "2023-11-14T22:13:31.000000Z"
    assert (first["outcome"], first["frames"], first["latency"]) == ("completed", 3, 3.0)
    assert first["timeline"][0]["kind"] == "transfer"
    assert first["timeline"][0]["time"] == first["first-time"]
    # accept-mode none: settled by its sending, at its first frame, so latency 0
    assert second["first-time"] == second["settled-time"] == "2023-11-14T22:13:32.000000Z"
    assert (second["outcome"], second["latency"]) == ("accepted", 0.0)
    _, text, _ = run("pcap-dump", cap, "-d")
    line = text.splitlines()[1]
    assert line.startswith("22:13:28.000000 c1 -> d ") and line.endswith("3.000 s [3 frames]")
    assert text.splitlines()[0].startswith("22:13:32.000000 c1 -> d ")
