"""What `amqp pcap-dump --out DIR` and `amqp pcap-dump --summary DIR` do, for the CLI.

    write_tables(["caps/"], "out", engine="spark", master="local[*]", conf=["k=v"])
    summary_of("out", engine="local")      # -> dissect.stats.Summary
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

from amqpcli.capture.files import and_more_damaged
from amqpcli.errors import Exit, UserError
from amqpcli.pipeline.local import Progress, Result, run_local, run_logs
from amqpcli.pipeline.output import FORMATS, LocalWriter, check_out, local_path
from amqpcli.pipeline.schema import TABLES

ENGINES = ("local", "spark")
DEFAULT_STALL = 1.0  # seconds: pcap-dump's --stall when not given


def _check(engine: str, fmt: str) -> None:
    if engine not in ENGINES:
        raise UserError(f"--engine {engine}: choose local or spark", Exit.USAGE)
    if fmt not in FORMATS:
        raise UserError(f"--format {fmt}: choose parquet or ndjson", Exit.USAGE)


def write_tables(captures: list[str], out: str, *, fmt: str = "parquet", engine: str = "local",
                 master: str = "local[*]", conf: list[str] | None = None,
                 ports: tuple[int, ...] = (), stall: float = 1.0, debug: bool = False,
                 progress: bool | None = None, spark: Any = None) -> Result:
    """Dissect a capture set, or a set of frame-trace logs, into tables under `out`.
    Damaged files are read as far as they go; the result lists their errors."""
    _check(engine, fmt)
    if not captures:
        raise UserError("give capture files, folders or globs to read", Exit.USAGE)
    prog = Progress(progress)
    if engine == "local":
        from amqpcli.pipeline.inputs import are_logs, expand

        out = _local_folder(out)
        paths = expand(captures)
        run = run_logs if are_logs(paths) else run_local
        check_out(out)
        writer = LocalWriter(out, fmt)
        try:
            res = run(paths, writer.write, ports=ports, stall=stall, progress=prog)
        except BaseException:
            with contextlib.suppress(UserError):  # the first error is the one to report
                writer.close(complete=False)
            raise
        writer.close()
        res.rows = dict(writer.rows)
        return res
    from amqpcli.pipeline.spark import (
        cancel_on_interrupt,
        get_session,
        list_captures,
        parse_conf,
        run_spark,
    )

    settings = parse_conf(conf or [])
    if "://" not in out:
        check_out(local_path(out))
    prog.show("starting Spark", force=True)
    if spark is None:
        spark = get_session(master, settings, debug)
    with cancel_on_interrupt(spark):
        return run_spark(spark, list_captures(spark, captures), out, fmt, ports=ports,
                         stall=stall, progress=prog, debug=debug)


def _local_folder(out: str, option: str = "--out") -> str:
    """The folder the in-process engine writes (or, `option` --summary, reads): a path,
    or a `file:` URI's. Another URI (`hdfs://…`, `s3a://…`) is Spark's: taken as a path,
    it would make a folder of that name here and fail part way, or not be found."""
    if out.startswith("file:"):
        return local_path(out)
    head, sep, _ = out.partition(":/")
    if sep and len(head) > 1 and head.replace("+", "").replace(".", "").isalnum():
        raise UserError(f"{option} {out}: a URI, which --engine spark reads and writes; "
                        "the in-process engine takes a local folder", Exit.USAGE)
    return out


def summary_of(out: str, *, engine: str = "local", master: str = "local[*]",
               conf: list[str] | None = None, debug: bool = False, spark: Any = None,
               stall: float | None = None) -> Any:
    """The summary of an output folder, as `pcap-dump --summary` shows it for captures;
    with `stall`, only the credit stalls of at least that many seconds."""
    from amqpcli.pipeline.summary import build

    return build(facts_of(out, engine=engine, master=master, conf=conf, debug=debug,
                          spark=spark), stall)


def facts_of(out: str, *, engine: str = "local", master: str = "local[*]",
             conf: list[str] | None = None, debug: bool = False, spark: Any = None) -> Any:
    """What the summary of an output folder is made of (`summary.Facts`)."""
    from amqpcli.pipeline.summary import facts_local

    _check(engine, "parquet")
    if engine == "local":
        return facts_local(_local_folder(out, "--summary"))
    from amqpcli.pipeline.output import check_tables
    from amqpcli.pipeline.spark import cancel_on_interrupt, get_session, parse_conf
    from amqpcli.pipeline.summary import facts_spark

    check_tables(out)  # (Spark's error for a missing folder is a page of Java)
    if spark is None:
        spark = get_session(master, parse_conf(conf or []), debug)
    try:
        with cancel_on_interrupt(spark):
            return facts_spark(spark, out)
    except UserError:
        raise
    except Exception as e:
        if debug:
            raise
        from amqpcli.pipeline.output import check_parts
        from amqpcli.pipeline.spark import _one_line

        if "://" not in out:
            check_parts(local_path(out))  # a damaged part: named, as pyarrow's
        raise UserError(f"reading {out} with Spark failed: {_one_line(e)}",
                        Exit.FAILURE) from None


def stall_to_show(written: float | None, asked: float, given: bool) -> float:
    """The credit-stall threshold a summary of tables can say: the one the tables were
    written with, or a longer one asked for (their stalls of at least that long). A
    shorter one would need stalls the tables do not hold."""
    if written is None:
        return asked
    if not given:
        return written
    if asked < written:
        raise UserError(f"--stall {asked:g}: these tables hold the credit stalls of {written:g} s "
                        f"or more (they were written with --stall {written:g}); give --stall "
                        f"{written:g} or more, or write them again with --stall {asked:g}",
                        Exit.USAGE)
    return asked


def report(res: Result, out: str) -> None:
    """One line on stderr: what was written."""
    # In the tables' own order, whichever engine counted them (Spark's come unordered).
    rows = ", ".join(f"{res.rows[t]} {t}" for t in TABLES if res.rows.get(t))
    print(f"wrote {out}: {rows or 'no rows'} ({res.seconds:.1f} s)", file=sys.stderr)


def _uri(p: Any) -> str:
    """A path as typed: `Path` folds `s3a://b/k` to `s3a:/b/k`; give URIs their `//` back
    (`hdfs:/p` and `file:/p` are valid as they are)."""
    s = str(p)
    head, sep, rest = s.partition(":/")
    if sep and len(head) > 1 and head.isalnum() and not rest.startswith("/") and head not in (
            "hdfs", "file", "viewfs"):
        return f"{head}://{rest}"
    return s


def wants_tables(files: list[Any] | None, out: Any, summary: bool) -> bool:
    """`--out`, or `--summary` on output folders: the tables path of `pcap-dump`."""
    from amqpcli.pipeline.output import is_table_dir

    if out is not None:
        return True
    if not (summary and files):
        return False
    # (a URI is no capture file: an output folder, Spark's to read, or a file: one)
    tables = [f for f in files if is_table_dir(str(f)) or "://" in _uri(f)
              or str(f).startswith(("file:", "hdfs:", "viewfs:"))]
    if tables and len(tables) < len(files):
        raise UserError(f"{tables[0]}: an output folder of --out, which --summary reads alone "
                        "(one at a time, not with captures)", Exit.USAGE)
    return bool(tables)


def cli(files: list[Any], out: Any, *, fmt: str, engine: str, master: str, conf: list[str],
        summary: bool, json_out: bool, ports: tuple[int, ...], stall: float,
        debug: bool) -> None:
    """`pcap-dump CAPTURES --out DIR` and `pcap-dump --summary DIR…`."""
    from amqpcli.render.summary import summary_json, summary_lines

    if out is None:
        from amqpcli.pipeline.summary import build

        if len(files) != 1:
            raise UserError("--summary reads one output folder at a time", Exit.USAGE)
        folder = _uri(files[0])
        facts = facts_of(folder, engine=engine, master=master, conf=conf, debug=debug)
        from amqpcli.pipeline.output import UNFINISHED, finished

        if not finished(folder):
            print(f"amqp: warning: {folder}: {UNFINISHED}: its tables may be partial",
                  file=sys.stderr, flush=True)
        # (pcap-dump passes its default when --stall is not given)
        stall = stall_to_show(facts.stall_threshold, stall, stall != DEFAULT_STALL)
        s = build(facts, stall)
        if json_out:
            import json

            from amqpcli.render.jsonvalues import safe_json_text

            print(safe_json_text(json.dumps(summary_json(s), ensure_ascii=False,
                                            separators=(",", ":"))))
        else:
            print("\n".join(summary_lines(s, stall_threshold=stall)))
        return
    dest = _uri(out)
    res = write_tables([_uri(f) for f in files], dest, fmt=fmt, engine=engine, master=master,
                       conf=conf, ports=ports, stall=stall, debug=debug)
    report(res, dest)
    if summary:
        cli([dest], None, fmt=fmt, engine="local" if "://" not in dest else engine,
            master=master, conf=conf, summary=True, json_out=json_out, ports=ports,
            stall=stall, debug=debug)
    if res.errors:
        # (in path order, named as the views name them)
        raise UserError(f"{and_more_damaged(res.errors[0], len(res.errors) - 1)}; "
                        "what could be read was written", Exit.DECODE)
    if not res.rows.get("connections"):
        # as for a capture shown, not written: a set without AMQP is worth exit 8
        raise UserError(f"no AMQP traffic in {len(files)} capture source(s) given; "
                        f"{dest} holds empty tables", Exit.DECODE)
    if res.frame_errors or res.skipped_bytes:
        # and AMQP bytes that did not decode, as pcap-dump says them: exit 8
        bits = []
        if res.frame_errors:
            n = res.frame_errors
            bits.append(f"{n} frame{'s' if n > 1 else ''} could not be decoded (kind "
                        "'error' in the frames table)")
        if res.skipped_bytes:
            bits.append(f"{res.skipped_bytes} bytes were skipped (skipped_bytes in the "
                        "connections table)")
        raise UserError("; ".join(bits) + f"; the rest was written to {dest}", Exit.DECODE)
