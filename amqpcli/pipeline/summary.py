"""The summary of an output folder: the tables read back (pyarrow, or Spark), folded into
the same `dissect.stats.Summary` that `pcap-dump --summary` fills from captures, so one
renderer (`amqpcli.render.summary`) draws both.

Connections are labelled c1, c2, … in order of their first packet across the whole set,
as `pcap-dump` meets them in the canonical order: connections that begin at the same time
by capture file (in path order), then, in one file, by their first frame's packet; those
of frame-trace logs (their `line` is set) by log (in path order) and then line, as
`pcap-dump` numbers them reading the logs one after the other. A log's connection without
times (null `first_time`: a proton trace) has frames at unknown times (counted apart, as
the summary of the log counts them) and links whose latency is unknown.
Links are listed one by one (latency percentiles from their own deliveries), as the
summary of captures lists them: by connection (c2 before c10), then in order of attach; a
section of its own (`Summary.addresses`) adds one line per address that several links
share, with percentiles over all of that address's deliveries. Violations are listed in
the summary of captures' order (`dissect.stats.violation_order`: time, connection, frame,
…), the first 50 of them. Notices are counted from
the connections' `notices` (the damaged files of the set are not in the tables). `frames`
counts frames on the wire, as the summary of captures does: a 0-10 row of the frames
table is an assembly, and its `frames` says how many frames it took.
A transaction coordinator's declares and discharges are no messages: deliveries
marked `coordinator` are left out of the deliveries and outcomes, and counted as
transactions from the links' `transactions`, as the summary of captures counts them.

Credit stalls were found when the tables were written, with the `--stall` threshold of
that run (each link row holds it: `stall_threshold`). A summary can list fewer (`stall`,
the stalls of at least that long) but not more.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from amqpcli.dissect.records import FilePacket, ViolationRecord
from amqpcli.dissect.stats import MAX_LISTED_VIOLATIONS, LinkSummary, Summary, percentile


@dataclass
class Facts:
    """What the summary needs, as either backend computes it."""

    conns: list[tuple[str, Any, str]] = field(default_factory=list)  # id, first time, protocol
    # a log's connections: id -> (log, line it begins on)
    log_lines: dict[str, tuple[str, int]] = field(default_factory=dict)
    untimed_frames: int = 0  # frame rows without a time (a log's connections without)
    frames: int = 0
    first_time: Any = None
    last_time: Any = None
    by_performative: dict[str, int] = field(default_factory=dict)
    deliveries: int = 0  # messages: not a coordinator's requests
    by_outcome: dict[str, int] = field(default_factory=dict)
    # a coordinator's requests by what they came to: the links' `transactions` added up
    transactions: dict[str, int] = field(default_factory=dict)
    at_end: int = 0
    incomplete: int = 0
    links: list[dict[str, Any]] = field(default_factory=list)
    addresses: list[dict[str, Any]] = field(default_factory=list)
    by_violation: dict[str, int] = field(default_factory=dict)
    # rows of the violations to list: the first MAX_LISTED_VIOLATIONS by time, and all
    # those at the time of the last of them; each with `time_us` (its time in µs)
    violations: list[dict[str, Any]] = field(default_factory=list)
    notices: dict[str, int] = field(default_factory=dict)
    # the --stall the links' stalls were found with; None: no link says (no links, or
    # tables written before links held it)
    stall_threshold: float | None = None
    # the capture files the connections and violations come from: of several, a
    # violation's packet names its file, as when the captures are read
    captures: set[str] = field(default_factory=set)
    # what orders connections that begin at the same time, as the captures' order does:
    # id -> (capture of its first packet, packet of its first frame there)
    tie_order: dict[str, tuple[str, int]] = field(default_factory=dict)


# what the summary reads of a violation (and `time_us`, its time in microseconds, as the
# summaries order violations: `dissect.stats.violation_order`)
_VIOLATION_COLUMNS = ("connection_id", "protocol", "time", "kind", "side", "link", "frame_no",
                      "capture", "packet", "detail")


def _sec(t: Any) -> float | None:
    if t is None:
        return None
    if isinstance(t, datetime):
        return t.timestamp()
    return float(t)


class _Label:
    """Stands in for a `Conn` where a renderer needs only its label (and what every
    renderer asks of a connection: whether its times are known; the tables are written
    from captures, whose are)."""

    __slots__ = ("label", "timed")
    source = "capture"

    def __init__(self, label: str, timed: bool = True) -> None:
        self.label = label
        self.timed = timed


def _attach_order(link_id: str) -> int:
    """n of `connection_id/session_no/n`: the link's place in its connection."""
    n = link_id.rsplit("/", 1)[-1]
    return int(n) if n.isdigit() else 0


def build(f: Facts, stall: float | None = None) -> Summary:
    """The summary of `f`; with `stall`, only the credit stalls of at least that many
    seconds."""
    s = Summary()
    logs = f.log_lines
    s.from_log = bool(logs)
    if logs:  # (a set of logs: by log, then line)
        conns = sorted(f.conns, key=lambda c: (logs.get(c[0], ("", 0)), c[0]))
    else:
        ties = f.tie_order
        conns = sorted(f.conns, key=lambda c: (_sec(c[1]) or 0.0, ties.get(c[0], ("", 0)), c[0]))
    untimed = {cid for cid, t, _p in conns if t is None and logs}
    s.untimed_frames = f.untimed_frames if logs else 0
    numbers = {cid: i for i, (cid, _t, _p) in enumerate(conns, 1)}
    labels = {cid: f"c{i}" for cid, i in numbers.items()}
    s.connections = len(conns)
    for _cid, _t, proto in conns:
        s.protocols[proto] = s.protocols.get(proto, 0) + 1
    s.frames = f.frames
    s.first_time = _sec(f.first_time)
    s.last_time = _sec(f.last_time)
    s.by_performative = dict(f.by_performative)
    s.deliveries = f.deliveries
    s.by_outcome = dict(f.by_outcome)
    s.transactions = dict(f.transactions)
    s.unsettled_at_end = f.at_end
    s.incomplete = f.incomplete
    for ln in sorted(f.links, key=lambda r: (numbers.get(r["connection_id"], 0),
                                            _attach_order(r["link_id"]), r["link_id"])):
        lat = None
        if ln["latency_count"]:
            lat = {"p50": ln["latency_p50"], "p90": ln["latency_p90"],
                   "p99": ln["latency_p99"], "max": ln["latency_max"]}
        s.links.append(LinkSummary(
            labels.get(ln["connection_id"], "?"), ln["name"], ln["address"],
            ln["sender"], ln["deliveries"] or 0,
            {o["outcome"]: o["count"] for o in ln["outcomes"] or ()}, lat,
            [(_sec(x["start"]) or 0.0, x["seconds"]) for x in ln["stalls"] or ()
             if stall is None or x["seconds"] >= stall],
            ln["flows"] or 0, ln["drains"] or 0,
            {t["kind"]: t["count"] for t in ln.get("transactions") or ()},
            ln["connection_id"] not in untimed))
    for a in sorted(f.addresses, key=lambda r: str(r["address"])):
        lat = None
        if a["count"]:
            lat = {"p50": a["p50"], "p90": a["p90"], "p99": a["p99"], "max": a["max"]}
        # (its latency is unknown when every link of it is of a connection without times)
        timed = any(ln["connection_id"] not in untimed for ln in f.links
                    if ln["address"] == a["address"])
        s.addresses.append(LinkSummary("*", f"{a['links']} links", a["address"], "any",
                                       a["deliveries"], dict(a["outcomes"]), lat, [], 0, 0,
                                       {}, timed))
    s.by_violation = dict(f.by_violation)
    # (`f.violations` holds the first ones by time, and all those at the same time as the
    # last of them: the summary of captures' order picks among them)
    for v in f.violations:
        packet = v["packet"] or 0
        if len(f.captures) > 1 and packet and v["capture"] and not logs:
            packet = FilePacket(packet, v["capture"])
        cid = v["connection_id"]
        s.list_violation(ViolationRecord(
            _Label(labels.get(cid, "?"), cid not in untimed),  # type: ignore[arg-type]
            v["protocol"], v["kind"],
            v["side"], v["detail"], v["frame_no"] or 0, packet,
            _sec(v["time"]) or 0.0, v["link"]), numbers.get(cid, 0), v["time_us"])
    s.notices = dict(f.notices)
    return s


def _add_notices(f: Facts, per_connection: Any) -> None:
    for notices in per_connection:
        for n in notices or ():
            f.notices[n["kind"]] = f.notices.get(n["kind"], 0) + n["count"]


def _wire_frames(rows: int, frames: int | None, unknown: int) -> int:
    """The summary's `frames:`, frames on the wire (a 0-10 row, an assembly, says how many
    it took: `frames`); a row without `frames` (tables written before it) counts one."""
    return int(frames or 0) + unknown if rows else 0


def _transactions(links: list[dict[str, Any]]) -> dict[str, int]:
    """The coordinators' requests of every link, by what they came to (as the summary of
    captures counts its coordinator deliveries: `dissect.stats.transaction_kind`)."""
    out: dict[str, int] = {}
    for ln in links:
        for t in ln.get("transactions") or ():
            out[t["kind"]] = out.get(t["kind"], 0) + t["count"]
    return out


def _stall_threshold(links: list[dict[str, Any]]) -> float | None:
    known = [ln["stall_threshold"] for ln in links if ln.get("stall_threshold") is not None]
    return max(known) if known else None


def _tied(conns: list[tuple[str, Any, str | None]]) -> dict[str, str]:
    """The connections (id -> capture) that begin at the same time as another one: only
    their order needs more than the time."""
    by_time: dict[Any, list[tuple[str, str]]] = {}
    for cid, t, capture in conns:
        if t is not None:
            by_time.setdefault(t, []).append((cid, capture or ""))
    return {cid: capture for same in by_time.values() if len(same) > 1
            for cid, capture in same}


def _tie_order(tied: dict[str, str], first_packets: dict[str, int]) -> dict[str, tuple[str, int]]:
    # (a connection without a frame in its first capture: after those with one)
    return {cid: (capture, first_packets.get(cid, 1 << 62)) for cid, capture in tied.items()}


# --- pyarrow ---------------------------------------------------------------------------


def _counts(table: Any, column: str) -> dict[str, int]:
    vc = table.column(column).value_counts()
    return {str(x["values"]): int(x["counts"]) for x in vc.to_pylist() if x["values"] is not None}


def facts_local(out: str) -> Facts:
    import pyarrow as pa
    import pyarrow.compute as pc

    from amqpcli.pipeline.output import read_table

    f = Facts()
    c = read_table(out, "connections", ["connection_id", "first_time", "protocol", "notices",
                                        "capture", "line"])
    rows = c.to_pylist()
    f.conns = [(r["connection_id"], r["first_time"], r["protocol"]) for r in rows]
    tied = _tied([(r["connection_id"], r["first_time"], r["capture"]) for r in rows
                  if r["line"] is None])
    if tied:
        ft = read_table(out, "frames", ["connection_id", "capture", "packet"]).filter(
            pc.is_in(pc.field("connection_id"), pa.array(list(tied), pa.string())))
        first: dict[str, int] = {}
        for r in ft.to_pylist():
            cid, packet = r["connection_id"], r["packet"]
            if packet is not None and r["capture"] == tied[cid]:
                first[cid] = min(first.get(cid, packet), packet)
        f.tie_order = _tie_order(tied, first)
    f.log_lines = {r["connection_id"]: (r["capture"] or "", r["line"]) for r in rows
                   if r["line"] is not None}
    f.captures.update(x for x in c.column("capture").to_pylist() if x)
    _add_notices(f, c.column("notices").to_pylist())
    fr = read_table(out, "frames", ["performative", "time", "frames"])
    f.frames = _wire_frames(fr.num_rows, pc.sum(fr.column("frames")).as_py(),
                            fr.column("frames").null_count)
    f.untimed_frames = fr.column("time").null_count
    if fr.num_rows:
        mm = pc.min_max(fr.column("time")).as_py()
        f.first_time, f.last_time = mm["min"], mm["max"]
        f.by_performative = _counts(fr, "performative")
    d = read_table(out, "deliveries", ["outcome", "at_end", "incomplete", "address", "link_id",
                                       "latency", "presettled", "coordinator"])
    # a coordinator's declares and discharges are no messages (counted as transactions,
    # from the links)
    d = d.filter(pc.is_null(d.column("coordinator")))
    f.deliveries = d.num_rows
    if d.num_rows:
        f.by_outcome = _counts(d, "outcome")
        f.at_end = int(pc.sum(pc.cast(d.column("at_end"), "int64")).as_py() or 0)
        f.incomplete = int(pc.sum(pc.cast(d.column("incomplete"), "int64")).as_py() or 0)
    f.links = read_table(out, "links").to_pylist()
    f.transactions = _transactions(f.links)
    f.stall_threshold = _stall_threshold(f.links)
    f.addresses = _shared_addresses(f.links, d.to_pylist())
    v = read_table(out, "violations", list(_VIOLATION_COLUMNS))
    f.captures.update(x for x in v.column("capture").to_pylist() if x)
    if v.num_rows:
        f.by_violation = _counts(v, "kind")
        v = v.append_column("time_us", pc.cast(v.column("time"), "int64"))
        if v.num_rows > MAX_LISTED_VIOLATIONS:
            cut = v.column("time_us").sort()[MAX_LISTED_VIOLATIONS - 1]
            v = v.filter(pc.less_equal(v.column("time_us"), cut))
        f.violations = v.to_pylist()
    return f


def _shared_addresses(links: list[dict[str, Any]], deliveries: list[dict[str, Any]]
                      ) -> list[dict[str, Any]]:
    per: dict[str, set[str]] = {}
    for ln in links:
        if ln["address"] is not None:
            per.setdefault(ln["address"], set()).add(ln["link_id"])
    shared = {a for a, ids in per.items() if len(ids) > 1}
    acc: dict[str, dict[str, Any]] = {
        a: {"address": a, "links": len(per[a]), "deliveries": 0, "outcomes": {}, "lat": []}
        for a in shared}
    for d in deliveries:
        a = acc.get(d["address"]) if d["address"] is not None else None
        if a is None:
            continue
        a["deliveries"] += 1
        a["outcomes"][d["outcome"]] = a["outcomes"].get(d["outcome"], 0) + 1
        if d["latency"] is not None and not d["presettled"]:
            a["lat"].append(d["latency"])
    out = []
    for a in acc.values():
        lat = sorted(a.pop("lat"))
        a["count"] = len(lat)
        for k, q in (("p50", 50), ("p90", 90), ("p99", 99)):
            a[k] = percentile(lat, q) if lat else None
        a["max"] = lat[-1] if lat else None
        a["outcomes"] = sorted(a["outcomes"].items())
        out.append(a)
    return out


# --- Spark -----------------------------------------------------------------------------


_CORRUPT = "_amqpcli_not_a_row"  # the column Spark puts a line that is no row of the table in


def _ndjson_table(spark: Any, folder: str, schema: Any) -> Any:
    """An NDJSON table as Spark reads it, with the local reader's error for a part that
    has a line that is no row of the table (cut short, not JSON, a value of another
    type), which Spark itself would read as a row of nulls, or as fewer rows."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType, StructField, StructType

    from amqpcli.pipeline.output import damaged_part

    read = (spark.read.schema(StructType([*schema.fields, StructField(_CORRUPT, StringType())]))
            .option("timestampFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX")
            .option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", _CORRUPT)
            .json(folder))
    # (every column: Spark parses only those a query asks for, so a value of another
    # type in a column left out would not show; and it refuses a query of the corrupt
    # record's column alone)
    bad = read.where(F.col(_CORRUPT).isNotNull()).select(F.input_file_name(), "*").first()
    if bad is not None:
        raise damaged_part(Path(unquote(urlsplit(bad[0]).path)),
                           "a line is not a row of the table")
    return read.drop(_CORRUPT)


def facts_spark(spark: Any, out: str) -> Facts:
    from pyspark.sql import functions as F

    from amqpcli.pipeline.schema import TABLES, spark_schema

    base = out.rstrip("/")

    def table(name: str) -> Any:
        from amqpcli.pipeline.output import detect_format

        fmt = detect_format(base, name) if "://" not in base else "parquet"
        if fmt == "ndjson":
            return _ndjson_table(spark, f"{base}/{name}", spark_schema(TABLES[name]))
        return spark.read.schema(spark_schema(TABLES[name])).parquet(f"{base}/{name}")

    f = Facts()
    conns = table("connections").select("connection_id", "first_time", "protocol",
                                        "notices", "capture", "line").collect()
    f.conns = [(r[0], r[1], r[2]) for r in conns]
    tied = _tied([(r[0], r[1], r[4]) for r in conns if r[5] is None])
    if tied:
        ft = (table("frames").where(F.col("connection_id").isin(list(tied))
                                    & F.col("packet").isNotNull())
              .groupBy("connection_id", "capture").agg(F.min("packet")).collect())
        f.tie_order = _tie_order(tied, {r[0]: r[2] for r in ft if r[1] == tied[r[0]]})
    f.log_lines = {r[0]: (r[4] or "", r[5]) for r in conns if r[5] is not None}
    f.captures.update(r[4] for r in conns if r[4])
    _add_notices(f, [[n.asDict() for n in r[3] or ()] for r in conns])
    fr = table("frames")
    agg = fr.agg(F.count(F.lit(1)), F.min("time"), F.max("time"), F.sum("frames"),
                 F.count(F.when(F.col("frames").isNull(), 1)),
                 F.count(F.when(F.col("time").isNull(), 1))).first()
    f.untimed_frames = agg[5]
    f.frames = _wire_frames(agg[0], agg[3], agg[4])
    f.first_time, f.last_time = agg[1], agg[2]
    f.by_performative = {r[0]: r[1] for r in fr.groupBy("performative").count().collect()}
    # a coordinator's declares and discharges are no messages (counted as transactions,
    # from the links)
    d = table("deliveries").where(F.col("coordinator").isNull())
    f.by_outcome = {r[0]: r[1] for r in d.groupBy("outcome").count().collect()}
    f.deliveries = sum(f.by_outcome.values())
    ends = d.agg(F.count(F.when(F.col("at_end"), 1)),
                 F.count(F.when(F.col("incomplete"), 1))).first()
    f.at_end, f.incomplete = ends[0], ends[1]
    f.links = [r.asDict(recursive=True) for r in table("links").collect()]
    f.transactions = _transactions(f.links)
    f.stall_threshold = _stall_threshold(f.links)
    shared = (table("links").where(F.col("address").isNotNull()).groupBy("address")
              .agg(F.countDistinct("link_id").alias("links")).where(F.col("links") > 1))
    dd = d.join(shared, "address")
    lat = dd.where(F.col("latency").isNotNull() & ~F.col("presettled"))
    stats = {r["address"]: r for r in lat.groupBy("address").agg(
        F.count(F.lit(1)).alias("count"),
        F.expr("percentile_disc(0.5) WITHIN GROUP (ORDER BY latency)").alias("p50"),
        F.expr("percentile_disc(0.9) WITHIN GROUP (ORDER BY latency)").alias("p90"),
        F.expr("percentile_disc(0.99) WITHIN GROUP (ORDER BY latency)").alias("p99"),
        F.max("latency").alias("max")).collect()}
    outs: dict[str, list[tuple[str, int]]] = {}
    totals: dict[str, int] = {}
    nlinks: dict[str, int] = {}
    for r in dd.groupBy("address", "outcome", "links").count().collect():
        outs.setdefault(r["address"], []).append((r["outcome"], r["count"]))
        totals[r["address"]] = totals.get(r["address"], 0) + r["count"]
        nlinks[r["address"]] = r["links"]
    for r in shared.collect():
        a = r["address"]
        st = stats.get(a)
        f.addresses.append({
            "address": a, "links": r["links"], "deliveries": totals.get(a, 0),
            "outcomes": sorted(outs.get(a, [])), "count": st["count"] if st else 0,
            "p50": st["p50"] if st else None, "p90": st["p90"] if st else None,
            "p99": st["p99"] if st else None, "max": st["max"] if st else None})
    v = table("violations").select(*_VIOLATION_COLUMNS,
                                   F.unix_micros("time").alias("time_us"))
    f.captures.update(r[0] for r in v.select("capture").distinct().collect() if r[0])
    f.by_violation = {r[0]: r[1] for r in v.groupBy("kind").count().collect()}
    first = v.orderBy("time_us").limit(MAX_LISTED_VIOLATIONS).collect()
    if len(first) == MAX_LISTED_VIOLATIONS:  # (and those at the time of the last of them)
        first = v.where(F.col("time_us") <= first[-1]["time_us"]).collect()
    f.violations = [r.asDict() for r in first]
    return f
