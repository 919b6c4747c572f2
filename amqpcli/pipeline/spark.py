"""The Spark executor: the same `FlowJob`s as the in-process one, spread over a cluster.

Stages (all Arrow-based, no row-at-a-time UDFs):

1. *read* — one task per capture file (`mapInArrow` over the file list): packets →
   TCP segments, each tagged with its canonical flow key, effective time, file and
   packet number (`inputs.file_segments`). Reading is cheap next to dissecting.
2. *shuffle* — `repartition(P, key)` then `sortWithinPartitions(key, effective time,
   file, packet)`: every flow key's segments meet in one task, in canonical order. Spark
   sorts with spills to disk, so no task holds more than a batch of segments.
3. *dissect* — `mapInArrow` streams each sorted partition through one `FlowJob` per key
   (a key's state is dropped when its last segment has passed) and emits rows of every
   table as one union of structs (`table`, and a struct column per table).
4. *write* — the union is kept on disk (`persist(DISK_ONLY)`), then each table is
   selected from it and written with Spark's own writer, partitioned by `date`.

So a capture with many connections spreads over P tasks; one TCP connection is
sequential by nature and stays in one task.

A set of frame-trace logs skips the shuffle: a log's connections are that log's, so each
log is one task (`mapInArrow` over the file list, as stage 1) that reads it whole through
a `LogJob` and emits the union rows (stage 3's), written as stage 4 writes them. What the
log reader warns of comes back as rows of its own (`_warning`) and is said on the
driver's stderr, in path order, as the in-process executor says it.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from amqpcli.errors import Exit, UserError
from amqpcli.pipeline.local import Progress, Result
from amqpcli.pipeline.output import local_path, to_arrow, write_empty, write_error
from amqpcli.pipeline.rows import FlowJob, Tables
from amqpcli.pipeline.schema import PARTITION, TABLES, spark_schema

SEGMENTS = pa.schema([
    ("key", pa.binary()), ("te", pa.int64()), ("ts", pa.int64()), ("file", pa.int32()),
    ("pkt", pa.int64()), ("src", pa.binary()), ("sport", pa.int32()), ("dst", pa.binary()),
    ("dport", pa.int32()), ("seq", pa.int64()), ("ack", pa.int64()), ("flags", pa.int32()),
    ("payload", pa.binary()), ("error", pa.string()),
])
# `file`: the capture index of an `_error` row, so both executors name damaged files in
# the same (path) order
UNION = pa.schema([("table", pa.string()), ("error", pa.string()), ("file", pa.int32())] + [
    (t, pa.struct(list(s))) for t, s in TABLES.items()])

SEGMENT_BATCH_BYTES = 8 << 20
SEGMENT_BATCH_ROWS = 16384

_LOG4J = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{HH:mm:ss}} %p %c{{1}}: %m%n
"""


# --- the session -------------------------------------------------------------------------


def check_spark() -> None:
    """Java and PySpark must be there: one line saying which is missing (exit 2)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise UserError("--engine spark needs PySpark: pip install 'amqpcli[spark]' "
                        "(or pyspark)", Exit.USAGE) from None
    home = os.environ.get("JAVA_HOME")
    if home:
        # Spark's launcher runs $JAVA_HOME/bin/java whenever JAVA_HOME is set, whatever
        # PATH holds
        if not os.access(os.path.join(home, "bin", "java"), os.X_OK):
            raise UserError(f"--engine spark needs Java 17 or later: JAVA_HOME is {home}, "
                            "which has no bin/java (point it at a Java 17 or later, or unset "
                            "it)", Exit.USAGE)
    elif not shutil.which("java"):
        raise UserError("--engine spark needs Java 17 or later: install a JRE "
                        "(e.g. openjdk-17-jre-headless) or set JAVA_HOME", Exit.USAGE)


def private_dir() -> str:
    """`$TMPDIR/amqpcli-UID`, this user's own folder (mode 0700) for the JVM's log and its
    log4j settings. The JVM runs what a log4j file says (a file appender writes wherever
    it names), so a folder of that name that another user could have made or can write
    to is refused, never used."""
    path = os.path.join(tempfile.gettempdir(), f"amqpcli-{os.geteuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass  # checked as one just made
    except OSError as e:
        raise UserError(f"--engine spark: cannot make {path}: "
                        f"{(e.strerror or str(e)).lower()}", Exit.USAGE) from None
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        what = ("not a folder" if not stat.S_ISDIR(st.st_mode) else
                f"owned by uid {st.st_uid}" if st.st_uid != os.geteuid() else
                f"mode {stat.S_IMODE(st.st_mode):04o}, open to other users")
        raise UserError(f"--engine spark: {path} is not a private folder of this user "
                        f"({what}): remove it, or set TMPDIR to another folder", Exit.USAGE)
    return path


def _write_private(folder: str, name: str, text: str) -> str:
    """`text` as `folder/name`, written anew (never whatever was there) and replaced whole,
    so a run starting beside this one never reads half of it."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(folder, name))
    return os.path.join(folder, name)


def parse_conf(items: list[str]) -> dict[str, str]:
    conf = {}
    for item in items:
        k, sep, v = item.partition("=")
        if not sep or not k.strip():
            raise UserError(f"--conf {item}: expected key=value", Exit.USAGE)
        conf[k.strip()] = v.strip()
    return conf


def get_session(master: str = "local[*]", conf: dict[str, str] | None = None,
                debug: bool = False) -> Any:
    """A SparkSession with quiet logs, UTC times, Arrow batches of bounded size and
    microsecond Parquet timestamps; `conf` (from `--conf`) wins over these defaults."""
    check_spark()
    from pyspark.sql import SparkSession

    folder = private_dir()
    level = "warn" if debug else "error"
    jvm_log = os.path.join(folder, "spark.log")
    try:
        log4j = _write_private(folder, f"log4j2-{level}.properties", _LOG4J.format(level=level))
        # (O_NOFOLLOW: a link in its place is an error, not a file written elsewhere)
        log_fd = None if debug else os.open(
            jvm_log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError as e:
        raise UserError(f"--engine spark: cannot write {folder}: "
                        f"{(e.strerror or str(e)).lower()}", Exit.USAGE) from None
    settings = {
        "spark.driver.memory": "2g",
        # The driver's JVM only: local executors run inside it, and a cluster's executors
        # are on other machines, where this path means nothing (or someone else's file).
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j}",
        "spark.ui.showConsoleProgress": "false",
        "spark.ui.enabled": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.execution.arrow.maxRecordsPerBatch": "2000",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
        "spark.sql.adaptive.enabled": "true",
        "spark.python.worker.reuse": "true",
    }
    if master.startswith("local"):
        # Local workers must run this interpreter (the one with amqpcli and pyarrow), not
        # whatever `python3` comes first on PATH; on a cluster PYSPARK_PYTHON says where
        # Python is.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    settings.update(conf or {})
    b = SparkSession.builder.master(master).appName("amqp pcap-dump")
    for k, v in settings.items():
        b = b.config(k, v)
    # The JVM (and the Python workers it starts) inherit stderr: unless --debug, give
    # them a log file, so no launcher banner or Java stack trace reaches the terminal.
    saved = None
    if log_fd is not None:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(log_fd, 2)
        os.close(log_fd)
    try:
        spark = b.getOrCreate()
    except Exception as e:
        if debug:
            raise
        raise UserError(f"Spark did not start: {start_error(e, jvm_log)} (see {jvm_log})",
                        Exit.USAGE) from None
    finally:
        if saved is not None:
            os.dup2(saved, 2)
            os.close(saved)
    spark.sparkContext.setLogLevel("WARN" if debug else "ERROR")
    return spark


@contextlib.contextmanager
def cancel_on_interrupt(spark: Any) -> Iterator[None]:
    """Ctrl-C (SIGINT) while Spark works: its jobs are cancelled and the command ends with
    `KeyboardInterrupt` once the driver's call comes back. PySpark's own handler cancels
    them from inside the call it interrupts, a second call on the same py4j connection,
    and py4j logs the failure with tracebacks; here the cancel goes through a thread of
    its own (its own connection) and the interrupted call returns normally. A second
    Ctrl-C leaves at once, quietly too."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed = threading.Event()

    def cancel() -> None:
        with contextlib.suppress(Exception):  # the session may be going away
            spark.sparkContext.cancelAllJobs()

    def on_interrupt(signum: int, frame: Any) -> None:
        if pressed.is_set():
            logging.disable(logging.CRITICAL)  # py4j logs the call this cuts short
            raise KeyboardInterrupt
        pressed.set()
        threading.Thread(target=cancel, name="cancel-spark-jobs", daemon=True).start()

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield
    except Exception:
        if pressed.is_set():  # the job's failure is the cancel asked for
            raise KeyboardInterrupt from None
        raise
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed.is_set():
        raise KeyboardInterrupt


# A disk that is full, as the system words it (Java's IOException says strerror's text)
_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
# frames of the writers of the tables (Hadoop's file systems, Parquet's writer); Spark's
# own scratch files (shuffle, spills, persisted blocks) are written by org.apache.spark
_TABLE_WRITERS = ("org.apache.hadoop.", "org.apache.parquet.")


def java_chain(e: BaseException, limit: int = 16) -> list[Any]:
    """The Java exception behind a Py4J error and its causes, outermost first (empty for
    any other error)."""
    chain: list[Any] = []
    je = getattr(e, "java_exception", None)
    with contextlib.suppress(Exception):  # the JVM may be going away: what was read will do
        while je is not None and len(chain) < limit:
            chain.append(je)
            je = je.getCause()
    return chain


def _frames(je: Any, limit: int = 40) -> list[str]:
    """`je`'s stack frames (`org.apache.hadoop.fs.…write(…)`) and those quoted in its
    message (a task's failure reaches the driver as text: `…: java.io.IOException: No
    space left on device\n\tat …`)."""
    import re

    frames = re.findall(r"^\s*at (\S+)", str(je.getMessage() or ""), re.MULTILINE)
    with contextlib.suppress(Exception):
        frames += [str(f.toString()) for f in list(je.getStackTrace())[:limit]]
    return frames


def disk_full_error(e: BaseException, out: str, local_dir: str | None = None
                    ) -> UserError | None:
    """The one line for a Spark job that failed on a full disk (exit 2), found in the
    Java exception chain: `cannot write tables to OUT: no space left on device` as the
    local engine says when the disk of the tables is full, or a line naming
    `spark.local.dir` when Spark's own scratch files filled theirs. None for any other
    failure."""
    try:
        for je in java_chain(e):
            message = str(je.getMessage() or "")
            code = next((c for c in _DISK_FULL if os.strerror(c) in message), None)
            if code is None:
                continue
            if any(f.startswith(_TABLE_WRITERS) for f in _frames(je)):
                return write_error(out, OSError(code, os.strerror(code)))
            where = (f"spark.local.dir {local_dir}" if local_dir
                     else "spark.local.dir, /tmp unless set")
            return UserError(f"the Spark job failed: {os.strerror(code).lower()} for Spark's "
                             f"scratch files ({where}; --conf spark.local.dir=FOLDER puts "
                             "them on another disk)", Exit.USAGE)
    except Exception:  # noqa: BLE001 - the JVM may be going away: the plain line then
        return None
    return None


# What the call that failed says when the cause is elsewhere: a context stopped by a
# failure the JVM logged (a standalone master that never answered)
_NOT_THE_CAUSE = ("Cannot call methods on a stopped SparkContext",)


def start_error(e: BaseException, log: str | None = None) -> str:
    """Why Spark did not start, in one line: the message of the Java exception behind the
    Py4J error (`Could not parse Master URL: 'local[x]'`), else what the JVM's log
    (its stderr, `log`) says last: an ERROR line (`Application has been killed. Reason:
    All masters are unresponsive! Giving up.`) or an exception that ended its main
    thread (`Master must either be yarn or start with spark, k8s, or local`: the JVM
    exited before PySpark could talk to it)."""
    said = ""
    with contextlib.suppress(Exception):  # the JVM may be gone
        for je in java_chain(e):
            said = next((ln.strip() for ln in str(je.getMessage() or "").splitlines()
                         if ln.strip()), "")
            if said:
                break
    if said and not said.startswith(_NOT_THE_CAUSE):
        return said[:300]
    logged = _logged_cause(log) if log else None
    return (logged or said or _one_line(e))[:300]


def _logged_cause(log: str) -> str | None:
    """The last cause of failure in the JVM's log (its last 64 KiB), or None."""
    import re

    try:
        with open(log, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - (64 << 10)))
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    exception = re.compile(r"^(?:Exception in thread \S+ )?[\w.$]+(?:Exception|Error): (.+)$")
    cause = None
    for i, line in enumerate(lines):
        m = re.match(r"^\S+ ERROR [\w.$]+: (.+)$", line)
        if m:
            cause = m.group(1).strip()
            # "Error initializing SparkContext.": the exception is on the next line
            nxt = exception.match(lines[i + 1]) if i + 1 < len(lines) else None
            if nxt:
                cause = nxt.group(1).strip()
        elif line.startswith("Exception in thread ") and (m := exception.match(line)):
            cause = m.group(1).strip()
    return cause


def _one_line(e: BaseException) -> str:
    """The line of a Spark error worth reading: the innermost `SomeError: message` of a
    Python worker's traceback, else the first line."""
    import re

    text = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    errs = [line for line in text
            if re.match(r"^[\w.]+(Error|Exception|Exit)(\[\w.]+\])?: ", line)]
    return (errs[-1] if errs else text[0] if text else type(e).__name__)[:300]


# --- listing inputs ----------------------------------------------------------------------


def _has_scheme(p: str) -> bool:
    head, sep, _ = p.partition(":/")
    return bool(sep) and len(head) > 1 and head.replace("+", "").replace(".", "").isalnum()


def list_captures(spark: Any, captures: list[str]) -> list[str]:
    """Local captures as the in-process executor lists them; URIs (hdfs://, s3a://, …)
    through Hadoop's file system, globs and folders included."""
    from amqpcli.pipeline.inputs import expand, is_capture_name

    local = [c for c in captures if not _has_scheme(c) or c.startswith("file:")]
    remote = [c for c in captures if c not in local]
    out = expand([c.removeprefix("file:") for c in local]) if local else []
    if remote:
        jvm = spark.sparkContext._jvm
        hconf = spark.sparkContext._jsc.hadoopConfiguration()
        for c in remote:
            path = jvm.org.apache.hadoop.fs.Path(c)
            fs = path.getFileSystem(hconf)
            stats = fs.globStatus(path) or []
            if not stats:
                raise UserError(f"{c}: no such file", Exit.USAGE)
            for st in stats:
                if st.isDirectory():
                    it = fs.listFiles(st.getPath(), True)
                    while it.hasNext():
                        p = str(it.next().getPath().toString())
                        if is_capture_name(p):
                            out.append(p)
                else:
                    out.append(str(st.getPath().toString()))
    return sorted(set(out))


def _open(path: str) -> Any:
    if _has_scheme(path) and not path.startswith("file:"):
        from pyarrow import fs

        filesystem, inner = fs.FileSystem.from_uri(path)
        return filesystem.open_input_stream(inner)
    return open(path.removeprefix("file:"), "rb")


# --- the stages ------------------------------------------------------------------------


def _addr(a: Any) -> bytes:
    if isinstance(a, int):
        return a.to_bytes(4, "big")
    if isinstance(a, str):
        return a.encode()
    return bytes(a)


def _unaddr(b: bytes) -> Any:
    return int.from_bytes(b, "big") if len(b) == 4 else b


def read_files(paths: list[str]) -> Any:
    """The read stage's function: file indexes in, segment batches out."""
    from amqpcli.capture import CaptureError, flow_key
    from amqpcli.capture.files import open_error
    from amqpcli.pipeline.inputs import file_segments

    names = [f.name for f in SEGMENTS]

    def fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for fi in batch.column(0).to_pylist():
                cols: dict[str, list[Any]] = {n: [] for n in names}
                size = 0
                errors: list[str] = []
                try:
                    f = _open(paths[fi])
                except OSError as e:
                    # (the files named were checked up front: this one was found in a
                    # folder, and is a damaged file of the set as the local run has it)
                    errors.append(str(open_error(paths[fi], e, found=True)))
                    f = None
                damage: list[CaptureError] = []
                with f if f is not None else contextlib.nullcontext():
                    for te, ts, pkt, seg in file_segments(f, damage) if f is not None else ():
                        k = flow_key(seg[0], seg[1], seg[2], seg[3])
                        payload = bytes(seg[7])
                        row = (_addr(k[0]) + k[1].to_bytes(2, "big") + _addr(k[2])
                               + k[3].to_bytes(2, "big"), te, ts, fi, pkt, _addr(seg[0]),
                               seg[1], _addr(seg[2]), seg[3], seg[4], seg[5], seg[6], payload,
                               None)
                        for n, v in zip(names, row, strict=True):
                            cols[n].append(v)
                        size += len(payload) + 64
                        if size >= SEGMENT_BATCH_BYTES or len(cols["ts"]) >= SEGMENT_BATCH_ROWS:
                            yield pa.RecordBatch.from_pydict(cols, schema=SEGMENTS)
                            cols = {n: [] for n in names}
                            size = 0
                errors.extend(str(e) for e in damage)
                if errors:
                    for n in names:
                        cols[n].append(None)
                    cols["error"][-1] = errors[0]
                    cols["file"][-1] = fi
                if cols["error"]:
                    yield pa.RecordBatch.from_pydict(cols, schema=SEGMENTS)

    return fn


def dissect_logs(paths: list[str], ports: tuple[int, ...], stall: float) -> Any:
    """The function of the one stage of a set of logs: file indexes in, union rows out
    (each file whole through a `LogJob`; its warnings as one `_warning` row)."""
    from amqpcli.pipeline.rows import LogJob

    def emit(tables: Tables) -> Iterator[pa.RecordBatch]:
        for table, rows in tables.take().items():
            if rows:
                yield _union_batch(table, rows)

    def fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for fi in batch.column(0).to_pylist():
                tables = Tables()
                warnings: list[str] = []
                job = LogJob(tables, paths[fi], ports=ports, stall=stall,
                             warn=warnings.append, source=paths[fi].removeprefix("file:"))
                for _ in job.steps():
                    yield from emit(tables)
                if warnings:
                    yield pa.RecordBatch.from_arrays(
                        [pa.array(["_warning"]), pa.array(["\n".join(warnings)]),
                         pa.array([fi], pa.int32())]
                        + [pa.nulls(1, UNION.field(t).type) for t in TABLES], schema=UNION)

    return fn


def _union_batch(table: str, rows: list[dict[str, Any]]) -> pa.RecordBatch:
    n = len(rows)
    t = to_arrow(table, rows).combine_chunks()
    arrays: list[pa.Array] = [pa.array([table] * n, pa.string()), pa.nulls(n, pa.string()),
                              pa.nulls(n, pa.int32())]
    for name in TABLES:
        typ = UNION.field(name).type
        if name == table:
            arrays.append(pa.StructArray.from_arrays(
                [c.chunk(0) if c.num_chunks else pa.array([], c.type) for c in t.columns],
                fields=list(typ)))
        else:
            arrays.append(pa.nulls(n, typ))
    return pa.RecordBatch.from_arrays(arrays, schema=UNION)


def dissect_flows(paths: list[str], ports: tuple[int, ...], stall: float) -> Any:
    """The dissect stage's function: sorted segments in, union rows out."""

    def emit(tables: Tables) -> Iterator[pa.RecordBatch]:
        for table, rows in tables.take().items():
            if rows:
                yield _union_batch(table, rows)

    def fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        tables = Tables()
        job: FlowJob | None = None
        current: bytes | None = None
        for batch in batches:
            d = batch.to_pydict()
            for i, key in enumerate(d["key"]):
                if key is None:
                    err = d["error"][i]
                    if err:
                        yield pa.RecordBatch.from_arrays(
                            [pa.array(["_error"]), pa.array([err]),
                             pa.array([d["file"][i]], pa.int32())]
                            + [pa.nulls(1, UNION.field(t).type) for t in TABLES], schema=UNION)
                    continue
                if key != current:
                    if job is not None:
                        job.finish()
                    job = FlowJob(tables, paths, ports=ports, stall=stall)
                    current = key
                assert job is not None
                seg = (_unaddr(d["src"][i]), d["sport"][i], _unaddr(d["dst"][i]),
                       d["dport"][i], d["seq"][i], d["ack"][i], d["flags"][i], d["payload"][i])
                job.feed(d["ts"][i], seg, d["file"][i], d["pkt"][i])
            if tables.count >= 20000:
                yield from emit(tables)
        if job is not None:
            job.finish()
        yield from emit(tables)

    return fn


class _Watch(threading.Thread):
    """Stage progress from Spark's status tracker, on the progress line."""

    def __init__(self, spark: Any, progress: Progress) -> None:
        super().__init__(daemon=True)
        self.tracker = spark.sparkContext.statusTracker()
        self.progress = progress
        self.what = "starting"
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.5):
            parts = []
            for sid in self.tracker.getActiveStageIds():
                info = self.tracker.getStageInfo(sid)
                if info is not None:
                    parts.append(f"stage {sid}: {info.numCompletedTasks}/{info.numTasks} tasks"
                                 + (f", {info.numActiveTasks} running"
                                    if info.numActiveTasks else ""))
            self.progress.show(f"spark, {self.what}: " + ("; ".join(parts) or "waiting"))


def run_spark(spark: Any, paths: list[str], out: str, fmt: str = "parquet", *,
              ports: tuple[int, ...] = (), stall: float = 1.0, partitions: int | None = None,
              progress: Progress | None = None, debug: bool = False) -> Result:
    """Write the tables of `paths` (captures, or frame-trace logs) under `out` with Spark."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    logs = _are_logs(paths)
    t0 = time.monotonic()
    sc = spark.sparkContext
    watch = None
    if progress is not None and progress.enabled:
        watch = _Watch(spark, progress)
        watch.start()
    try:
        files = spark.range(len(paths), numPartitions=max(1, len(paths)))
        if logs:  # (one task per log: no shuffle)
            flows = files.mapInArrow(dissect_logs(paths, ports, stall), spark_schema(UNION))
        else:
            if partitions is None:
                conf = spark.conf.get("spark.sql.shuffle.partitions", None)
                partitions = int(conf) if conf and sc.getConf().contains(
                    "spark.sql.shuffle.partitions") else _partitions(spark, paths)
            segs = files.mapInArrow(read_files(paths), spark_schema(SEGMENTS))
            flows = (segs.repartition(partitions, "key")
                     .sortWithinPartitions("key", "te", "file", "pkt")
                     .mapInArrow(dissect_flows(paths, ports, stall), spark_schema(UNION)))
        flows = flows.persist(StorageLevel.DISK_ONLY)
        rows: dict[str, int] = {}
        try:
            for table in TABLES:
                if watch is not None:
                    watch.what = f"writing {table}"
                df = flows.where(F.col("table") == table).select(f"{table}.*")
                w = df.write.partitionBy(PARTITION).mode("errorifexists")
                dest = out.rstrip("/") + "/" + table
                if fmt == "parquet":
                    w.option("compression", "snappy").parquet(dest)
                else:
                    w.option("timestampFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX").json(dest)
            counts = flows.groupBy("table").count().collect()
            rows = {r["table"]: r["count"] for r in counts if r["table"] in TABLES}
            # in the order of the files (as the in-process executor lists them)
            errors = [r["error"] for r in flows.where(F.col("table") == "_error")
                      .select("file", "error").orderBy("file").collect()]
            warnings = [r["error"] for r in flows.where(F.col("table") == "_warning")
                        .select("file", "error").orderBy("file").collect()]
            # what did not decode, from the connection rows (`Result.undecoded`)
            c = F.col("connections")
            undecoded = flows.where(F.col("table") == "connections").select(
                F.sum(c["frame_errors"]).alias("frame_errors"),
                F.sum(F.when(~F.coalesce(c["midstream"], F.lit(False))
                             & (F.coalesce(c["gaps"], F.lit(0)) == 0),
                             c["skipped_bytes"])).alias("skipped_bytes")).collect()[0]
        finally:
            flows.unpersist()
    except UserError:
        raise
    except Exception as e:
        if debug:
            raise
        full = disk_full_error(e, out, _conf(sc, "spark.local.dir"))
        if full is not None:
            raise full from None
        raise UserError(f"the Spark job failed: {_one_line(e)} (rerun with --debug)",
                        Exit.FAILURE) from None
    finally:
        if watch is not None:
            watch.stop.set()
            watch.join()
        if progress is not None:
            progress.close()
    for text in warnings:  # (a log's, as the in-process executor says them)
        for line in text.splitlines():
            print(f"amqp: warning: {line}", file=sys.stderr, flush=True)
    if not out.startswith(("hdfs:", "s3", "gs:", "abfs")):
        local = local_path(out)
        try:
            os.makedirs(local, exist_ok=True)
            for table in TABLES:  # as the local executor leaves them (Spark writes no file)
                if not rows.get(table):
                    os.makedirs(os.path.join(local, table), exist_ok=True)
                    write_empty(Path(local), table, fmt)
            open(os.path.join(local, "_SUCCESS"), "w").close()
        except OSError as e:
            raise write_error(out, e) from None
    return Result(rows=rows, errors=errors, seconds=time.monotonic() - t0,
                  frame_errors=undecoded["frame_errors"] or 0,
                  skipped_bytes=undecoded["skipped_bytes"] or 0)


def _are_logs(paths: list[str]) -> bool:
    """Whether `paths` are frame-trace logs (`inputs.are_logs`, of the local ones). Logs
    are read from local files: a URI beside logs is a usage error."""
    from amqpcli.pipeline.inputs import are_logs

    local = [p.removeprefix("file:") for p in paths
             if not _has_scheme(p) or p.startswith("file:")]
    if not are_logs(local):
        return False
    remote = next((p for p in paths if _has_scheme(p) and not p.startswith("file:")), None)
    if remote is not None:
        raise UserError(f"{remote}: frame-trace logs are read from local files, not from "
                        "URIs", Exit.USAGE)
    return True


def _conf(sc: Any, key: str) -> str | None:
    """A setting of the running context, None when not set (or not to be had)."""
    try:
        value = sc.getConf().get(key)
    except Exception:  # noqa: BLE001 - the JVM may be going away
        return None
    return str(value) if value else None


def _partitions(spark: Any, paths: list[str]) -> int:
    """Enough dissect tasks to keep every core busy and each near 64 MB of capture."""
    total = 0
    for p in paths:
        try:
            total += os.path.getsize(p.removeprefix("file:"))
        except OSError:
            total += 64 << 20
    par = spark.sparkContext.defaultParallelism
    return max(2 * par, min(4096, total // (64 << 20) + 1))
