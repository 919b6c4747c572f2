"""The tables' one schema: column names and Arrow types, and the same as Spark types.

Both executors build rows against `TABLES` (pyarrow schemas); the Spark executor derives
its `StructType`s from them with `spark_schema`, so the two cannot drift apart.
`docs/tables.md` describes every column; `tests/pipeline/test_schema.py` holds the two
together. Types are the ones Spark and Parquet share: int32/int64, double, bool, string,
binary, timestamp (microseconds, UTC), lists and lists of structs.

Every table carries `date` (the UTC day its connection began, `YYYY-MM-DD`); the writers
partition each table by it (`TABLE/date=2026-11-22/part-….parquet`). A connection whose
times are unknown (a proton frame-trace log's) has a null `date`: its rows go to
`date=__HIVE_DEFAULT_PARTITION__`, which pyarrow and Spark read back as null.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

TS = pa.timestamp("us", tz="UTC")
STR = pa.string()
I32 = pa.int32()
I64 = pa.int64()
F64 = pa.float64()
BOOL = pa.bool_()
BIN = pa.binary()
STALL = pa.struct([("start", TS), ("seconds", F64)])
COUNT = pa.struct([("outcome", STR), ("count", I64)])
NOTICES = pa.struct([("kind", STR), ("count", I64)])
# a coordinator link's requests by what they came to (declared, committed, rolled-back,
# failed, request): no messages, so not among its `outcomes`
TRANSACTIONS = pa.struct([("kind", STR), ("count", I64)])

PARTITION = "date"

_CONNECTIONS = [
    ("connection_id", STR), ("capture", STR), ("line", I64), ("protocol", STR),
    ("client", STR), ("server", STR), ("first_time", TS), ("last_time", TS),
    ("midstream", BOOL), ("sessions", I32), ("links", I32),
    ("frames_client", I64), ("frames_server", I64), ("bytes_client", I64),
    ("bytes_server", I64), ("deliveries", I64), ("violations", I64),
    ("frame_errors", I64), ("gaps", I64), ("gap_bytes", I64), ("resyncs", I64),
    ("skipped_bytes", I64), ("closed_client", STR), ("closed_server", STR),
    ("sasl_mechanism", STR), ("sasl_outcome", I32),
    ("container_client", STR), ("container_server", STR), ("hostname", STR),
    ("max_frame_client", I64), ("max_frame_server", I64),
    ("idle_timeout_client", I64), ("idle_timeout_server", I64),
    ("close_error", STR), ("notes", pa.list_(STR)), ("notices", pa.list_(NOTICES)),
]

_SESSIONS = [
    ("connection_id", STR), ("session_id", STR), ("session_no", I32),
    ("channel_client", I32), ("channel_server", I32),
    ("begin_time", TS), ("end_time", TS), ("end_error", STR),
    ("incoming_window_client", I64), ("incoming_window_server", I64),
    ("outgoing_window_client", I64), ("outgoing_window_server", I64),
    ("handle_max_client", I64), ("handle_max_server", I64),
    ("transfers_client", I64), ("transfers_server", I64), ("links", I32),
]

_LINKS = [
    ("connection_id", STR), ("link_id", STR), ("session_no", I32), ("name", STR),
    ("sender", STR), ("initiator", STR), ("address", STR), ("source_address", STR),
    ("target_address", STR), ("handle_client", I64), ("handle_server", I64),
    ("snd_settle_mode", I32), ("rcv_settle_mode", I32), ("coordinator", BOOL),
    ("refused", BOOL), ("attach_time", TS), ("detach_time", TS), ("detach_error", STR),
    ("deliveries", I64), ("settled", I64), ("bytes", I64), ("outcomes", pa.list_(COUNT)),
    ("transactions", pa.list_(TRANSACTIONS)),
    ("latency_count", I64), ("latency_p50", F64), ("latency_p90", F64), ("latency_p99", F64),
    ("latency_max", F64), ("flows", I64), ("drains", I64), ("echoes", I64),
    ("max_credit", I64), ("stalls", pa.list_(STALL)), ("stall_threshold", F64),
    ("notes", pa.list_(STR)),
]

_FRAMES = [
    ("connection_id", STR), ("frame_no", I64), ("protocol", STR), ("side", STR),
    ("time", TS), ("capture", STR), ("packet", I64), ("kind", STR), ("frames", I32),
    ("performative", STR), ("channel", I32), ("handle", I64), ("delivery_id", I64), ("size", I64),
    ("payload_size", I64), ("settled", BOOL), ("more", BOOL), ("state", STR),
]

_DELIVERIES = [
    ("connection_id", STR), ("link_id", STR), ("protocol", STR), ("link", STR),
    ("address", STR), ("sender", STR), ("delivery_id", I64), ("tag", BIN),
    ("message_id", STR), ("size", I64), ("frames", I32), ("first_time", TS),
    ("last_time", TS), ("outcome", STR), ("outcome_detail", STR), ("settled_by", STR),
    ("settled_time", TS), ("latency", F64), ("presettled", BOOL), ("second_mode", BOOL),
    ("redelivery_count", I64), ("resumed", BOOL), ("aborted", BOOL), ("at_end", BOOL),
    ("incomplete", BOOL), ("txn_id", BIN), ("coordinator", STR),
]

_VIOLATIONS = [
    ("connection_id", STR), ("protocol", STR), ("time", TS), ("kind", STR), ("side", STR),
    ("link", STR), ("frame_no", I64), ("capture", STR), ("packet", I64), ("detail", STR),
]


def _schema(cols: list[tuple[str, pa.DataType]]) -> pa.Schema:
    return pa.schema([pa.field(n, t) for n, t in cols] + [pa.field(PARTITION, STR)])


TABLES: dict[str, pa.Schema] = {
    "connections": _schema(_CONNECTIONS),
    "sessions": _schema(_SESSIONS),
    "links": _schema(_LINKS),
    "frames": _schema(_FRAMES),
    "deliveries": _schema(_DELIVERIES),
    "violations": _schema(_VIOLATIONS),
}

# Columns that identify a row: sort by them to compare two outputs row by row.
KEYS: dict[str, tuple[str, ...]] = {
    "connections": ("connection_id",),
    "sessions": ("session_id",),
    "links": ("link_id",),
    "frames": ("connection_id", "frame_no", "side", "time", "kind"),
    "deliveries": ("connection_id", "link_id", "first_time", "delivery_id", "tag"),
    "violations": ("connection_id", "time", "frame_no", "kind", "detail"),
}


def spark_type(t: pa.DataType) -> Any:
    """The Spark SQL type of one Arrow type of the schema."""
    from pyspark.sql import types as st

    if pa.types.is_string(t):
        return st.StringType()
    if pa.types.is_int32(t):
        return st.IntegerType()
    if pa.types.is_int64(t):
        return st.LongType()
    if pa.types.is_float64(t):
        return st.DoubleType()
    if pa.types.is_boolean(t):
        return st.BooleanType()
    if pa.types.is_binary(t):
        return st.BinaryType()
    if pa.types.is_timestamp(t):
        return st.TimestampType()
    if pa.types.is_list(t):
        return st.ArrayType(spark_type(t.value_type), True)
    if pa.types.is_struct(t):
        return st.StructType([st.StructField(f.name, spark_type(f.type), True) for f in t])
    raise TypeError(f"no Spark type for {t}")


def spark_schema(schema: pa.Schema) -> Any:
    """A `StructType` with the same columns, in the same order."""
    from pyspark.sql import types as st

    return st.StructType([st.StructField(f.name, spark_type(f.type), True) for f in schema])
