"""`pcap-dump` of 0-10 assemblies whose frames interleave with other frames on the wire:
a record's `frame` is its last frame's number, the delivery's time its first frame's."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_decode_secrets import run


def _frames(data: bytes) -> list[bytes]:
    out = []
    while data:
        n = data[2] * 256 + data[3]
        out.append(data[:n])
        data = data[n:]
    return out


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
