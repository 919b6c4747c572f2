"""One schema for both executors, and every column documented."""

from __future__ import annotations

import re

import pyarrow as pa
from pyspark.sql import types as st

from amqpcli.pipeline.schema import KEYS, PARTITION, TABLES, spark_schema
from tests.paths import REPO_ROOT

_SPARK = {"string": st.StringType(), "int32": st.IntegerType(), "int64": st.LongType(),
          "double": st.DoubleType(), "bool": st.BooleanType(), "binary": st.BinaryType(),
          "timestamp": st.TimestampType()}


def _doc_tables() -> dict[str, dict[str, str]]:
    text = (REPO_ROOT / "docs" / "tables.md").read_text()
    out: dict[str, dict[str, str]] = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"## (\w+)$", line)
        if m:
            current = m.group(1)
            continue
        m = re.match(r"\| `(\w+)` \| ([^|]+) \|", line)
        if m and current in TABLES:
            out.setdefault(current, {})[m.group(1)] = m.group(2).strip()
    return out


def _doc_type(t: pa.DataType) -> str:
    if pa.types.is_list(t):
        return f"list<{_doc_type(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ", ".join(f"{f.name}: {_doc_type(f.type)}" for f in t) + ">"
    return {"string": "string", "int32": "int32", "int64": "int64", "double": "double",
            "bool": "bool", "binary": "binary"}.get(str(t), "timestamp")


def test_every_column_is_documented_with_its_type() -> None:
    docs = _doc_tables()
    assert set(docs) == set(TABLES)
    for table, schema in TABLES.items():
        cols = {f.name: _doc_type(f.type) for f in schema if f.name != PARTITION}
        assert docs[table] == cols, table


def test_spark_schema_follows_the_arrow_schema() -> None:
    for schema in TABLES.values():
        s = spark_schema(schema)
        assert [f.name for f in s.fields] == schema.names
        for f, a in zip(s.fields, schema, strict=True):
            if isinstance(f.dataType, (st.ArrayType, st.StructType)):
                continue
            assert f.dataType == _SPARK[_doc_type(a.type)], f.name
    links = spark_schema(TABLES["links"])
    stalls = next(f for f in links.fields if f.name == "stalls").dataType
    assert stalls == st.ArrayType(st.StructType([
        st.StructField("start", st.TimestampType()), st.StructField("seconds", st.DoubleType())]))


def test_keys_are_columns() -> None:
    for table, keys in KEYS.items():
        assert set(keys) <= set(TABLES[table].names)
