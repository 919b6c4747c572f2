"""Captures → conversations, deliveries and outcomes: the one pipeline from capture events
to records, shared by `amqp pcap-dump` and anything else that reads AMQP from TCP flows.

    from amqpcli.dissect import Dissector, Filter
    dis = Dissector(keep_payload=True)
    for rec in dis.read(["a.pcapng"]):        # or dis.run(events) for live/decrypted events
        ...                                   # FrameRecord, DeliveryRecord, ViolationRecord, Notice
    dis.conns                                 # Conn per flow: links (LinkStats), counters
    dis.capture_errors                        # a damaged file: what went wrong, and where

* AMQP 1.0 flows: one `DirectionReader` per direction (the codec's `FrameReader`, plus
  resynchronisation after a gap, a mid-stream start or a corrupt frame header) and one
  engine `Observer` per connection. Its events become records: deliveries that reached
  their end (`DeliveryRecord`), protocol violations (`ViolationRecord`), link notes (terminus granted
  differently, unsettled maps reconciled on re-attach, refusals), credit and credit
  stalls per link.
* AMQP 0-10 flows: `amqpcli.amqp010.ConnectionObserver`; its messages become
  `DeliveryRecord`s with protocol "amqp-0-10".
* TLS flows: one `Notice` each (decrypt them first with `amqpcli.capture.live.decrypt_tls`
  and feed those events to `run`).

`Filter` (filters.py) selects records by connection, address, link name, performative,
delivery state and time range; `stats.Summary` aggregates the end-of-capture summary.
"""

from amqpcli.dissect.filters import Filter
from amqpcli.dissect.pipeline import DEFAULT_PORTS, Dissector, Record
from amqpcli.dissect.records import (
    AMQP010,
    AMQP10,
    Conn,
    DeliveryRecord,
    FilePacket,
    FrameRecord,
    LinkStats,
    Notice,
    ViolationRecord,
)
from amqpcli.dissect.stats import Summary
from amqpcli.dissect.streams import DirectionReader, find_boundary

__all__ = [
    "AMQP010",
    "AMQP10",
    "DEFAULT_PORTS",
    "Conn",
    "DeliveryRecord",
    "DirectionReader",
    "Dissector",
    "FilePacket",
    "Filter",
    "FrameRecord",
    "LinkStats",
    "Notice",
    "Record",
    "Summary",
    "ViolationRecord",
    "find_boundary",
]
