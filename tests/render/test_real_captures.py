"""Frames that real peers wrote (python-qpid-proton ↔ RabbitMQ, AMQP 0-10 from qpid-python):
read without errors, rendered, the password hidden, and JSON back to the same bytes."""

from __future__ import annotations

import json

from amqpcli.capture import read_capture
from amqpcli.capture.tcp import Data
from amqpcli.codec.frames import Frame, FrameError, FrameReader, ProtocolHeader
from amqpcli.render.frameline import item_line
from amqpcli.render.items import item_bytes_from_json, item_to_json, item_tree, transfer_message
from amqpcli.render.text import plain_lines
from tests.paths import CAPTURES_DIR, require


def streams(name: str) -> dict[tuple[int, str], bytes]:
    out: dict[tuple[int, str], bytearray] = {}
    for ev in read_capture([require(CAPTURES_DIR / name)]):
        if isinstance(ev, Data):
            out.setdefault((ev.flow.index, str(ev.direction)), bytearray()).extend(ev.data)
    return {k: bytes(v) for k, v in out.items()}


def test_rabbitmq_session_reads_renders_redacts_and_round_trips() -> None:
    all_streams = streams("rabbitmq-sasl-plain-send-recv.pcapng")
    assert len(all_streams) >= 2
    names: list[str] = []
    for data in all_streams.values():
        r = FrameReader()
        items = r.feed(data) + r.close()
        assert not [i for i in items if isinstance(i, FrameError)]
        rebuilt = b""
        for it in items:
            text = item_line(it) + "\n".join(plain_lines(item_tree(it)))
            obj = json.loads(json.dumps(item_to_json(it, show_secrets=True)))
            rebuilt += item_bytes_from_json(obj)
            hidden = json.dumps(item_to_json(it))
            if isinstance(it, Frame):
                names.append(it.name)
                if it.name == "sasl-init":
                    assert "guest\\x00***" in text and "guest\\x00guest" not in text
                    assert item_to_json(it)["redacted"] is True and "AGd1ZXN0AGd1ZXN0" not in hidden
                if it.name == "transfer" and not it.body.more:  # type: ignore[union-attr]
                    assert transfer_message(it) is not None
        assert rebuilt == data
    # What the capture holds (the client closes the connection without detach/end).
    for expected in (
        "sasl-mechanisms",
        "sasl-init",
        "sasl-outcome",
        "open",
        "begin",
        "attach",
        "flow",
        "transfer",
        "disposition",
        "close",
    ):
        assert expected in names
    assert names.count("transfer") == 40


def test_amqp010_header_recognised_and_rest_left_alone() -> None:
    for data in streams("amqp010-qpid-python-echo.pcapng").values():
        r = FrameReader()
        items = r.feed(data)
        assert isinstance(items[0], ProtocolHeader) and items[0].kind == "amqp0-10"
        assert items[0].name == "AMQP 0-10"
        assert len(items) == 1 and r.opaque == "amqp0-10" and r.opaque_bytes == len(data) - 8
