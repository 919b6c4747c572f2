"""What a failed Spark run says: the cause found in the Java exception chain behind a Py4J
error, in one line. The chains are stand-ins for Py4J's `JavaObject`s, shaped as the real
ones were (class, message, causes, the first frames of their stack traces), recorded from
runs on a full tmpfs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from py4j.protocol import Py4JJavaError

from amqpcli.errors import Exit, UserError
from amqpcli.pipeline.spark import disk_full_error, java_chain
from tests.paths import CAPTURES_DIR


class _Frame:
    def __init__(self, text: str) -> None:
        self.text = text

    def toString(self) -> str:
        return self.text


class _Class:
    def __init__(self, name: str) -> None:
        self.name = name

    def getName(self) -> str:
        return self.name


class JavaThrowable:
    """A stand-in for the `JavaObject` of a `java.lang.Throwable`."""

    _target_id = "o1"  # what Py4JJavaError reads from it

    def __init__(self, cls: str, message: str | None, frames: list[str],
                 cause: JavaThrowable | None = None) -> None:
        self.cls = cls
        self.message = message
        self.frames = frames
        self.cause = cause

    def getClass(self) -> _Class:
        return _Class(self.cls)

    def getMessage(self) -> str | None:
        return self.message

    def getCause(self) -> JavaThrowable | None:
        return self.cause

    def getStackTrace(self) -> list[_Frame]:
        return [_Frame(f) for f in self.frames]


def chain(*links: tuple[str, str | None, list[str]]) -> JavaThrowable:
    """The outermost exception of `links` (outermost first), each caused by the next."""
    cause = None
    for cls, message, frames in reversed(links):
        cause = JavaThrowable(cls, message, frames, cause)
    assert cause is not None
    return cause


def py4j_error(call: str, java: JavaThrowable) -> Py4JJavaError:
    return Py4JJavaError(f"An error occurred while calling {call}", java)


# `amqp pcap-dump CAPTURES --out DIR --engine spark --master local[2]`, DIR on a 64 KiB
# tmpfs: Spark 4's writer of the connections table ran out of room.
TABLES_DISK_FULL = chain(
    ("org.apache.spark.SparkException",
     ("[TASK_WRITE_FAILED] Task failed while writing rows to file:/tmp/full/t/connections. "
      "SQLSTATE: 58030"),
     [("org.apache.spark.sql.errors.QueryExecutionErrors$.taskFailedWhileWritingRowsError("
       "QueryExecutionErrors.scala:823)"),
      ("org.apache.spark.sql.execution.datasources.FileFormatDataWriter.enrichWriteError("
       "FileFormatDataWriter.scala:92)"),
      ("org.apache.spark.sql.execution.datasources.FileFormatDataWriter.writeWithMetrics("
       "FileFormatDataWriter.scala:103)")]),
    ("org.apache.hadoop.fs.FSError", "java.io.IOException: No space left on device",
     [("org.apache.hadoop.fs.RawLocalFileSystem$LocalFSFileOutputStream.write("
       "RawLocalFileSystem.java:549)"),
      "java.base/java.io.BufferedOutputStream.flushBuffer(BufferedOutputStream.java:81)",
      "java.base/java.io.BufferedOutputStream.write(BufferedOutputStream.java:127)",
      "org.apache.hadoop.fs.FSDataOutputStream$PositionCache.write(FSDataOutputStream.java:62)"]),
    ("java.io.IOException", "No space left on device",
     ["java.base/java.io.FileOutputStream.writeBytes(Native Method)",
      "java.base/java.io.FileOutputStream.write(FileOutputStream.java:349)",
      ("org.apache.hadoop.fs.RawLocalFileSystem$LocalFSFileOutputStream.write("
       "RawLocalFileSystem.java:545)")]))

# The same run with the tables on a roomy disk and `--conf spark.local.dir=` a 256 KiB
# tmpfs: a shuffle write failed in a task, its failure quoted in the driver's exception.
SCRATCH_DISK_FULL = chain(
    ("org.apache.spark.SparkException",
     ("Job aborted due to stage failure: Task 1 in stage 0.0 failed 1 times, most recent "
      "failure: Lost task 1.0 in stage 0.0 (TID 1) (192.0.2.2 executor driver): "
      "java.io.IOException: No space left on device\n"
      "\tat java.base/java.io.FileOutputStream.writeBytes(Native Method)\n"
      "\tat java.base/java.io.FileOutputStream.write(FileOutputStream.java:349)\n"
      "\tat org.apache.spark.storage.TimeTrackingOutputStream.write("
      "TimeTrackingOutputStream.java:59)\n"
      "\tat org.apache.spark.io.MutableCheckedOutputStream.write("
      "MutableCheckedOutputStream.scala:43)\n"),
     ["org.apache.spark.scheduler.DAGScheduler.$anonfun$abortStage$3(DAGScheduler.scala:4568)",
      "scala.Option.getOrElse(Option.scala:201)",
      "org.apache.spark.scheduler.DAGScheduler.abortStage(DAGScheduler.scala:4560)"]),
    ("java.io.IOException", "No space left on device",
     ["java.base/java.io.FileOutputStream.writeBytes(Native Method)",
      "java.base/java.io.FileOutputStream.write(FileOutputStream.java:349)",
      ("org.apache.spark.storage.TimeTrackingOutputStream.write("
       "TimeTrackingOutputStream.java:59)")]))


def test_the_java_chain_is_read_outermost_first() -> None:
    e = py4j_error("o126.parquet", TABLES_DISK_FULL)
    assert [j.getClass().getName() for j in java_chain(e)] == [
        "org.apache.spark.SparkException", "org.apache.hadoop.fs.FSError",
        "java.io.IOException"]
    assert java_chain(ValueError("not from Java")) == []


def test_a_full_disk_under_the_tables_says_what_the_local_engine_says() -> None:
    # it said "the Spark job failed: An error occurred while calling o126.parquet.", exit 1
    said = disk_full_error(py4j_error("o126.parquet", TABLES_DISK_FULL), "/tmp/full/t")
    assert said is not None and said.code == Exit.USAGE
    assert str(said) == "cannot write tables to /tmp/full/t: no space left on device"


def test_a_full_disk_under_sparks_scratch_files_names_spark_local_dir() -> None:
    e = py4j_error("o128.parquet", SCRATCH_DISK_FULL)
    said = disk_full_error(e, "/data/t", "/tmp/m2scratch")
    assert said is not None and said.code == Exit.USAGE
    assert str(said) == (
        "the Spark job failed: no space left on device for Spark's scratch files "
        "(spark.local.dir /tmp/m2scratch; --conf spark.local.dir=FOLDER puts them on "
        "another disk)")
    assert "/tmp unless set" in str(disk_full_error(e, "/data/t"))


def test_other_failures_are_not_called_a_full_disk() -> None:
    other = chain(("org.apache.spark.SparkException", ("Job aborted due to stage failure: "
                   "Task 0 in stage 1.0 failed: org.apache.spark.api.python.PythonException"),
                   ["org.apache.spark.scheduler.DAGScheduler.abortStage(DAGScheduler.scala:1)"]))
    assert disk_full_error(py4j_error("o9.parquet", other), "/t") is None
    assert disk_full_error(RuntimeError("No space left on device"), "/t") is None


@pytest.mark.spark
def test_a_spark_run_on_a_full_disk_is_one_line_exit_2(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through `write_tables`: the writer's call fails as it did on the full tmpfs."""
    from pyspark.sql.readwriter import DataFrameWriter

    from amqpcli.pipeline.run import write_tables

    def full(self: Any, path: str, *args: Any, **kw: Any) -> None:
        raise py4j_error("o126.parquet", TABLES_DISK_FULL)

    monkeypatch.setattr(DataFrameWriter, "parquet", full)
    out = tmp_path / "t"
    with pytest.raises(UserError) as e:
        write_tables([str(CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng")], str(out),
                     engine="spark", spark=spark)
    assert e.value.code == Exit.USAGE
    assert str(e.value) == f"cannot write tables to {out}: no space left on device"
    assert not (out / "_SUCCESS").exists()


# --- Spark did not start -----------------------------------------------------------------

# `--master 'local[x]'`: JavaSparkContext's constructor failed; PySpark's error said only
# "An error occurred while calling None.org.apache.spark.api.java.JavaSparkContext."
BAD_LOCAL_URL = chain(
    ("org.apache.spark.SparkException", "Could not parse Master URL: 'local[x]'",
     [("org.apache.spark.SparkContext$.org$apache$spark$SparkContext$$createTaskScheduler("
       "SparkContext.scala:3391)"),
      "org.apache.spark.SparkContext.<init>(SparkContext.scala:603)",
      "org.apache.spark.api.java.JavaSparkContext.<init>(JavaSparkContext.scala:59)"]))

# `--master spark://127.0.0.1:7999` (nothing listening): after a minute the context was
# stopped, and the session's constructor failed on it; the cause is in the JVM's log.
STOPPED_CONTEXT = chain(
    ("java.lang.IllegalStateException",
     ("Cannot call methods on a stopped SparkContext.\nThis stopped SparkContext was "
      "created at:\n\norg.apache.spark.api.java.JavaSparkContext.<init>("
      "JavaSparkContext.scala:59)\n"),
     ["org.apache.spark.SparkContext.assertNotStopped(SparkContext.scala:128)",
      "org.apache.spark.sql.classic.SparkSession.<init>(SparkSession.scala:125)"]))
UNREACHABLE_LOG = """\
WARNING: Using incubator modules: jdk.incubator.vector
Setting default log level to "WARN".
To adjust logging level use sc.setLogLevel(newLevel). For SparkR, use setLogLevel(newLevel).
01:36:53 ERROR StandaloneSchedulerBackend: Application has been killed. Reason: All \
masters are unresponsive! Giving up.
"""
BAD_LOCAL_URL_LOG = """\
WARNING: Using incubator modules: jdk.incubator.vector
01:37:41 ERROR SparkContext: Error initializing SparkContext.
org.apache.spark.SparkException: Could not parse Master URL: 'local[x]'
\tat org.apache.spark.SparkContext$.org$apache$spark$SparkContext$$createTaskScheduler(\
SparkContext.scala:3391)
\tat org.apache.spark.SparkContext.<init>(SparkContext.scala:603)
"""


def test_a_bad_master_url_is_said_from_the_java_exception() -> None:
    from amqpcli.pipeline.spark import start_error

    e = py4j_error("None.org.apache.spark.api.java.JavaSparkContext", BAD_LOCAL_URL)
    assert start_error(e) == "Could not parse Master URL: 'local[x]'"


def test_an_unreachable_master_is_said_from_the_log(tmp_path: Path) -> None:
    from amqpcli.pipeline.spark import start_error

    log = tmp_path / "spark.log"
    log.write_text(UNREACHABLE_LOG)
    e = py4j_error("None.org.apache.spark.sql.classic.SparkSession", STOPPED_CONTEXT)
    assert start_error(e, str(log)) == (
        "Application has been killed. Reason: All masters are unresponsive! Giving up.")
    # no log to read: the exception's own words, rather than nothing
    assert start_error(e, str(tmp_path / "none")).startswith(
        "Cannot call methods on a stopped SparkContext")
    log.write_text(BAD_LOCAL_URL_LOG)  # the exception after "Error initializing"
    assert start_error(RuntimeError("x"), str(log)) == "Could not parse Master URL: 'local[x]'"


@pytest.mark.spark
@pytest.mark.parametrize(("master", "cause"), [
    ("local[x]", "Could not parse Master URL: 'local[x]'"),
    # spark-submit refuses it: the JVM exits before PySpark can talk to it
    ("bogus://x", "Master must either be yarn or start with spark, k8s, or local"),
])
def test_spark_that_does_not_start_says_why_in_one_line(
        tmp_path: Path, master: str, cause: str) -> None:
    import os
    import subprocess
    import sys

    env = dict(os.environ, TMPDIR=str(tmp_path))  # its own spark.log
    p = subprocess.run(
        [sys.executable, "-m", "amqpcli", "pcap-dump",
         str(CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"), "--out",
         str(tmp_path / "t"), "--engine", "spark", "--master", master],
        check=False, env=env, capture_output=True, text=True, timeout=300)
    log = tmp_path / f"amqpcli-{os.geteuid()}" / "spark.log"
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        f"amqp: error: Spark did not start: {cause} (see {log})"]
