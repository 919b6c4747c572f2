"""Capture sets → tables (connections, sessions, links, frames, deliveries, violations),
with one schema and two executors that write the same rows (`docs/pipeline.md`,
`docs/tables.md`).

    from amqpcli.pipeline.run import write_tables, summary_of
    write_tables(["caps/"], "out")                       # in-process
    write_tables(["caps/"], "out2", engine="spark")      # Spark, local[*] or --master
    summary_of("out")                                    # dissect.stats.Summary

* `schema`: `TABLES` (pyarrow schemas), `spark_schema`, `KEYS` (row identity).
* `rows`: `FlowJob` (one canonical flow key: segments → tracker → dissector → rows) and
  the row builder.
* `inputs`: capture sets (files, folders, globs) and the canonical segment order.
* `local` / `spark`: the executors; `output`: writing and reading tables back;
  `summary`: tables → the summary `pcap-dump --summary` renders; `run`: the CLI's entry.
"""
