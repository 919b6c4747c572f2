"""Writing tables (Parquet or NDJSON, partitioned by date) and reading them back.

Layout, the same for both executors: `OUT/TABLE/date=YYYY-MM-DD/part-….parquet` (rows
without a date, a connection of unknown times: `date=__HIVE_DEFAULT_PARTITION__`) (or
`.json`: one JSON object per line, nulls left out, binary as base64, times as ISO 8601
with microseconds and `Z`). Files whose names start with `_` or `.` are not data (Spark
leaves `_SUCCESS` and checksums beside its parts).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shlex
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from amqpcli.errors import Exit, UserError
from amqpcli.pipeline.schema import BIN, PARTITION, STR, TABLES, TS

FORMATS = ("parquet", "ndjson")
# the folder of rows whose partition value is null (a connection of unknown times), as
# Hive names it and Spark writes and reads it (pyarrow's hive partitioning reads it so)
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"
_EXT = {"parquet": ".parquet", "ndjson": ".json"}


def check_out(out: str) -> None:
    """The output folder must be new or empty: tables are never mixed with older runs.
    It is made here, before any capture is read, so a folder that cannot be written
    fails at once rather than after the whole set was dissected."""
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise UserError(f"{out}: exists and is not a folder (choose a new --out)", Exit.USAGE)
    if p.exists() and any(p.iterdir()):
        if is_table_dir(out):
            # tables are never added to: a rerun after a failure (a full disk) or Ctrl-C
            # writes into a folder of its own, or into this one once it is deleted
            what = ("the tables of an earlier run" if finished(out) else
                    "the unfinished tables of a run that failed or was stopped (no _SUCCESS)")
            raise UserError(f"{out}: holds {what}: delete it (rm -r {shlex.quote(out)}) and "
                            "run again, or choose another --out", Exit.USAGE)
        raise UserError(f"{out}: exists and is not an empty folder (choose a new --out)",
                        Exit.USAGE)
    try:
        p.mkdir(parents=True, exist_ok=True)
        probe = p / ".amqp-write-check"
        probe.touch()
        probe.unlink()
    except OSError as e:
        raise write_error(out, e) from None


def write_error(out: str, e: OSError) -> UserError:
    # pyarrow's errors carry the errno under a text of their own ("Error writing bytes to
    # file. Detail: [errno 28] …"): the system's words for it read as every other error
    reason = os.strerror(e.errno) if e.errno else e.strerror or str(e)
    return UserError(f"cannot write tables to {out}: {reason.lower()}", Exit.USAGE)


_NOT_OF_TYPE = (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError)


def to_arrow(table: str, rows: list[dict[str, Any]]) -> pa.Table:
    """Rows as a table of the schema. A field a peer sent in a type its performative does
    not give it (a handle as a string, a ulong beyond int64), which the views show as it
    came, is null in its column: rather that than no tables at all."""
    schema = TABLES[table]
    try:
        return pa.Table.from_pylist(rows, schema=schema)
    except _NOT_OF_TYPE:
        pass
    columns: dict[str, pa.Array] = {}
    for f in schema:
        values = [r.get(f.name) for r in rows]
        try:
            columns[f.name] = pa.array(values, f.type)
        except _NOT_OF_TYPE:  # (only such a column is looked at value by value)
            columns[f.name] = pa.array([v if _fits(v, f.type) else None for v in values],
                                       f.type)
    return pa.Table.from_pydict(columns, schema=schema)


def _fits(value: Any, typ: pa.DataType) -> bool:
    try:
        pa.array([value], typ)
    except _NOT_OF_TYPE:
        return False
    return True


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


class _Part:
    """One part file being written. A part that failed at any step (a full disk: while
    its file was made and its Parquet header written, a write, its close) may lack its
    start or its end (a footer, the rest of a line), so it is removed rather than left
    looking like a part that cannot be read."""

    def __init__(self, path: Path, fmt: str, schema: pa.Schema) -> None:
        self.path = path
        self.failed = False
        self.file: Any
        try:
            if fmt == "parquet":
                # (makes the file, then writes the header: it can fail with the file made)
                self.file = pq.ParquetWriter(path, schema, compression="snappy")
            else:
                self.file = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        except BaseException:
            _remove(path)
            raise

    def write(self, t: pa.Table) -> None:
        try:
            if isinstance(self.file, pq.ParquetWriter):
                self.file.write_table(t)
            else:
                self.file.writelines(json_line(r) + "\n" for r in t.to_pylist())
        except BaseException:  # a full disk; Ctrl-C half way through the lines
            self.failed = True
            raise

    def close(self) -> OSError | None:
        """Close it (removed if it failed); the error that made it fail, if any."""
        error = None
        try:
            self.file.close()
        except OSError as e:
            self.failed = True
            error = e
            if isinstance(self.file, pq.ParquetWriter):
                # it would try again when collected, and print the error again
                self.file.is_open = False
                if self.file.file_handle is not None:
                    with contextlib.suppress(OSError):
                        self.file.file_handle.close()
        if self.failed:
            _remove(self.path)
        return error


class LocalWriter:
    """Appends row batches to `OUT/TABLE/date=D/part-00000.EXT`, one open file per table
    and day (a row group per batch)."""

    def __init__(self, out: str, fmt: str = "parquet") -> None:
        if fmt not in FORMATS:
            raise UserError(f"--format {fmt}: choose parquet or ndjson", Exit.USAGE)
        self.out = Path(out)
        self.fmt = fmt
        self._parts: dict[tuple[str, str | None], _Part] = {}
        self.rows: dict[str, int] = dict.fromkeys(TABLES, 0)

    def write(self, batch: dict[str, list[dict[str, Any]]]) -> None:
        try:
            self._write(batch)
        except OSError as e:  # a full disk, a folder taken away
            raise write_error(str(self.out), e) from None

    def _write(self, batch: dict[str, list[dict[str, Any]]]) -> None:
        for table, rows in batch.items():
            if not rows:
                continue
            self.rows[table] += len(rows)
            t = to_arrow(table, rows)
            dates = {r[PARTITION] for r in rows}
            for day in sorted(dates, key=lambda d: (d is None, d or "")):
                part = t if len(dates) == 1 else t.filter(
                    pc.is_null(t[PARTITION]) if day is None else pc.equal(t[PARTITION], day))
                self._append(table, day, part.drop_columns([PARTITION]))

    def _append(self, table: str, day: str | None, t: pa.Table) -> None:
        key = (table, day)
        part = self._parts.get(key)
        if part is None:
            folder = self.out / table / f"{PARTITION}={NULL_PARTITION if day is None else day}"
            folder.mkdir(parents=True, exist_ok=True)
            part = self._parts[key] = _Part(folder / f"part-00000{_EXT[self.fmt]}", self.fmt,
                                            t.schema)
        part.write(t)

    def close(self, complete: bool = True) -> None:
        """Close every file; `complete` (the whole set was read) also marks the folder
        finished with `_SUCCESS`, as Spark does. A run that failed or was interrupted
        leaves the parts it could finish (each readable) but no mark; a part it could not
        finish is removed."""
        parts, self._parts = list(self._parts.values()), {}
        errors = [e for e in (part.close() for part in parts) if e is not None]
        try:
            if errors:
                raise errors[0]
            if not complete:
                return
            self.out.mkdir(parents=True, exist_ok=True)
            for table in TABLES:  # an empty table is still a table
                (self.out / table).mkdir(exist_ok=True)
                if not self.rows[table]:
                    write_empty(self.out, table, self.fmt)
            (self.out / "_SUCCESS").touch()
        except OSError as e:
            raise write_error(str(self.out), e) from None


def write_empty(out: Path, table: str, fmt: str) -> None:
    """An empty table's one file: zero rows with the table's columns (parquet carries its
    schema, so a reader of the folder alone — pyarrow, DuckDB, Spark — still sees the
    columns; ndjson has none to carry, and the folder stays empty)."""
    if fmt != "parquet":
        return
    schema = pa.schema([f for f in TABLES[table] if f.name != PARTITION])
    path = out / table / "part-00000.parquet"
    try:
        pq.write_table(schema.empty_table(), path)
    except BaseException:  # a full disk: no part cut short left behind
        _remove(path)
        raise


def _json_value(v: Any) -> Any:
    if isinstance(v, datetime):
        return v.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(v, bytes):
        return base64.b64encode(v).decode("ascii")
    if isinstance(v, list):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {k: _json_value(x) for k, x in v.items() if x is not None}
    return v


def json_line(row: dict[str, Any]) -> str:
    return json.dumps(_json_value(row), ensure_ascii=False, separators=(",", ":"))


# --- reading back ---------------------------------------------------------------------


def detect_format(out: str, table: str) -> str:
    for root, _dirs, files in os.walk(Path(out) / table):
        for f in files:
            if f.endswith(".parquet"):
                return "parquet"
            if f.endswith(".json"):
                return "ndjson"
    return "parquet"


def local_path(out: str) -> str:
    """The local path of an output folder named as a path or as a `file:` URI
    (`file:/d`, `file:///d`, `file://localhost/d`: the form Spark takes too)."""
    if not out.startswith("file:"):
        return out
    rest = out.removeprefix("file:")
    if rest.startswith("//"):
        host, _, path = rest[2:].partition("/")
        if host not in ("", "localhost"):
            raise UserError(f"{out}: a file: URI of another host ({host}): give the folder",
                            Exit.USAGE)
        return "/" + path
    return rest


def finished(out: str) -> bool:
    """Whether the run that wrote `out` finished: it marked it with `_SUCCESS` (both
    executors do, last). A URI (`hdfs://…`) is not looked at: taken as finished."""
    if "://" in out:
        return True
    return (Path(local_path(out)) / "_SUCCESS").is_file()


UNFINISHED = "the run that wrote it did not finish (no _SUCCESS)"


def missing_table(out: str, table: str) -> UserError:
    why = "" if finished(out) else f": {UNFINISHED}"
    return UserError(f"{out}: no {table} table in it{why}", Exit.USAGE)


def check_tables(out: str) -> None:
    """Every table of a local output folder is there (else one line saying which is not,
    and that the run did not finish when it did not)."""
    if "://" in out:
        return
    for table in TABLES:
        if not (Path(local_path(out)) / table).is_dir():
            raise missing_table(out, table)


def is_table_dir(path: str) -> bool:
    p = Path(path)
    return p.is_dir() and any((p / t).is_dir() for t in ("connections", "deliveries", "frames"))


def read_table(out: str, table: str, columns: list[str] | None = None) -> pa.Table:
    """One table of an output folder (either executor, either format) with the schema's
    types, `date` included."""
    schema = TABLES[table]
    folder = Path(out) / table
    if not folder.is_dir():
        raise missing_table(out, table)
    part = ds.partitioning(pa.schema([(PARTITION, STR)]), flavor="hive")
    names = columns or schema.names
    if detect_format(out, table) == "ndjson":
        t = _read_ndjson(folder, schema)
    else:
        data_schema = pa.schema([f for f in schema if f.name != PARTITION])
        try:
            d = ds.dataset(folder, format="parquet", partitioning=part,
                           schema=pa.unify_schemas([data_schema, pa.schema([(PARTITION, STR)])]))
            t = d.to_table(columns=names)
        except (pa.ArrowException, OSError):
            check_parts(out, table)  # names the part that does not read
            raise
        return t.cast(pa.schema([schema.field(n) for n in names]))
    return t.select(names)


def damaged_part(part: Path, reason: str) -> UserError:
    return UserError(f"{part}: damaged table part ({reason}); the tables cannot be read whole",
                     Exit.DECODE)


def _data_files(folder: Path) -> list[Path]:
    """A table folder's data files: not `_SUCCESS`, checksums or Spark's `_temporary`."""
    return sorted(f for f in folder.rglob("*") if f.is_file() and not any(
        p.startswith(("_", ".")) for p in f.relative_to(folder).parts))


def check_parts(out: str, table: str | None = None) -> None:
    """Raise the error that names the first Parquet part of `out` (or of its `table`) that
    does not read: cut short, or no Parquet at all. Reads them whole: for a folder that
    failed to read, to say where."""
    for name in [table] if table else list(TABLES):
        folder = Path(out) / name
        if not folder.is_dir() or detect_format(out, name) != "parquet":
            continue
        for f in _data_files(folder):
            try:
                pq.ParquetFile(f).read()
            except (pa.ArrowException, OSError):
                raise damaged_part(f, "not a readable Parquet file") from None


def _read_ndjson(folder: Path, schema: pa.Schema) -> pa.Table:
    parts: list[pa.Table] = []
    for f in _data_files(folder):
        if f.suffix != ".json":
            continue
        day = next((p.split("=", 1)[1] for p in f.parts if p.startswith(f"{PARTITION}=")), None)
        if day == NULL_PARTITION:
            day = None
        rows: list[dict[str, Any]] = []
        with open(f, encoding="utf-8") as fh:
            try:
                for n, line in enumerate(fh, 1):
                    if line.strip():
                        r = json.loads(line)
                        r[PARTITION] = day
                        rows.append(_from_json(r, schema))
            except UnicodeDecodeError:
                raise damaged_part(f, "not UTF-8 text") from None
            except (ValueError, TypeError, AttributeError, OverflowError):
                raise damaged_part(f, f"line {n} is not a row of the table") from None
        try:  # (a part at a time: an error names its part)
            parts.append(pa.Table.from_pylist(rows, schema=schema))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
            raise damaged_part(f, f"a value is not of its column's type: {e}") from None
    return pa.concat_tables(parts) if parts else schema.empty_table()


def _from_json(r: dict[str, Any], schema: pa.Schema | pa.StructType) -> dict[str, Any]:
    out = {}
    for f in schema:
        v = r.get(f.name)
        if v is not None:
            v = _convert(v, f.type)
        out[f.name] = v
    return out


def _convert(v: Any, t: pa.DataType) -> Any:
    if t == TS:
        return datetime.fromisoformat(v)
    if t == BIN:
        return base64.b64decode(v)
    if pa.types.is_list(t):
        return [_convert(x, t.value_type) if x is not None else None for x in v]
    if pa.types.is_struct(t):
        return _from_json(v, t)
    if pa.types.is_floating(t):
        if type(v) not in (int, float):  # (true or "1.5": no row of the table)
            raise TypeError(f"{v!r} in a floating-point column")
        return float(v)
    if pa.types.is_integer(t) and type(v) is not int:  # (1.5 or true: no row of the table)
        raise TypeError(f"{v!r} in an integer column")
    return v
