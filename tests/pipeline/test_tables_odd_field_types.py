"""Fields a peer sent in a type the spec does not give them (a handle as a string, a ulong
beyond int64, a header's delivery-count as a string): the views show them as they came,
and the tables hold null there, rather than the run ending in an internal error with no
tables."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.encode import encode
from amqpcli.codec.message import Message
from amqpcli.codec.types import AmqpList, Described, UInt, ULong
from amqpcli.pipeline.output import read_table
from amqpcli.pipeline.spark import _union_batch
from tests.dissect.helpers import Script, write
from tests.pipeline.helpers import run_cli

C2S_FLOW, S2C_DISPOSITION = 0x13, 0x15


def _frame(performative: int, fields: list[object], channel: int = 0) -> bytes:
    body = encode(Described(ULong(performative), AmqpList(fields)))
    return struct.pack(">IBBH", 8 + len(body), 2, 0, channel) + body


def _odd_capture(path: Path) -> Path:
    from amqpcli.capture.tcp import C2S, S2C

    s = Script().sasl_plain().open().sender_link()
    header = encode(Described(ULong(0x70), AmqpList([True, None, None, None, "abc"])))
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0),
        payload=header + Message(body="hi").encode())
    s.dispose(0, c.Accepted())
    # a flow whose handle is a string, a disposition whose first is one, a begin whose
    # windows and handle-max are ulongs beyond int64
    s.raw(C2S, _frame(C2S_FLOW, [UInt(0), UInt(1000), UInt(0), UInt(1000), "abc", UInt(0),
                                 UInt(5)]))
    s.raw(S2C, _frame(S2C_DISPOSITION, [True, "x", None, True]))
    s.c(c.Begin(next_outgoing_id=0, incoming_window=ULong(2**63 + 5), outgoing_window=1000,
                handle_max=ULong(2**64 - 1)), ch=3)
    s.close()
    return write(path, s)


@pytest.mark.parametrize("fmt", ["parquet", "ndjson"])
def test_fields_of_another_type_are_null_in_the_tables(tmp_path: Path, fmt: str) -> None:
    cap = _odd_capture(tmp_path / "odd.pcapng")
    code, frames, _ = run_cli("pcap-dump", str(cap), "--frames-only")
    assert code == 0 and 'handle="abc"' in frames and 'first="x"' in frames
    out = tmp_path / "out"
    code, _, err = run_cli("pcap-dump", str(cap), "--out", str(out), "--format", fmt)
    assert code == 0, err
    rows = read_table(str(out), "frames").to_pylist()
    assert len(rows) == len(frames.splitlines())
    flow = next(r for r in rows if r["performative"] == "flow" and r["handle"] is None)
    assert flow["kind"] == "amqp"
    disposition = [r for r in rows if r["performative"] == "disposition"]
    assert [r["delivery_id"] for r in disposition] == [0, None]
    assert [r["channel"] for r in rows if r["performative"] == "begin"] == [0, 0, 3]
    (delivery,) = read_table(str(out), "deliveries").to_pylist()
    assert delivery["outcome"] == "accepted" and delivery["redelivery_count"] is None


def test_the_spark_stage_makes_the_same_rows_of_them() -> None:
    # (the dissect stage's rows go through the same conversion as the local writer's)
    batch = _union_batch("frames", [
        {"connection_id": "a", "frame_no": 1, "handle": "abc", "delivery_id": 2**64 - 1,
         "settled": "yes", "performative": "flow"}])
    (row,) = batch.column(batch.schema.get_field_index("frames")).to_pylist()
    assert row["handle"] is None and row["delivery_id"] is None and row["settled"] is None
    assert row["performative"] == "flow" and row["frame_no"] == 1
