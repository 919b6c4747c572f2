"""Captures → per-direction, timestamped byte chunks for each TCP flow.

This package knows nothing of AMQP frames: it reads capture files, reassembles TCP and
says which protocol each flow speaks. The public API:

* `read_capture(paths, ports=(), all_flows=False)` → iterator of events, several files
  merged by time (each opened when the merged stream reaches its first packet, so a
  ring buffer's files are read one at a time):
    - `Opened(flow, time_ns)` once a flow's protocol and roles are known,
    - `Data(flow, direction, time_ns, data, offset)` — `data` is the segment's payload:
      `bytes` sliced from the block read for the usual frame of a single file (IPv4
      without options or IPv6 without extension headers, no VLAN tag), else possibly a
      memoryview into the block (other frames, several files merged): it stays valid,
      but keeping it keeps that block alive, so `bytes()` what you hold on to,
    - `Gap(flow, direction, time_ns, offset, size)` — bytes the capture does not hold
      (at the time of the packet after the hole; the bytes held after it come next, each
      segment's with its own time, and `dec.packets` of a `decoder` passed in is each
      event's own packet number: see `amqpcli.capture.tcp`),
    - `Closed(flow, direction, time_ns, how)` — how is "fin", "rst" (sent by that side),
      "reset-by-peer" (ended by the other side's RST) or "end".
  `direction` is `C2S` (client → server) or `S2C`; `flow` is a `Flow` (`client`, `server`,
  `protocol`, `selected`, `by_port`, `handshake`, `index`, `key`, `first_ns`,
  `retransmitted`, `reordered`). Only flows that speak AMQP (any version, by their
  header) or whose header is missing but use one of `ports` get Data events; every flow
  gets one `Opened`.
  The client is the SYN sender; without a handshake, the side whose first bytes are a
  protocol header or TLS ClientHello; else the side not on an AMQP port (5672, 5671,
  5682 or `ports`); else the side with the higher port (see `amqpcli.capture.tcp`).
  Times are integers: nanoseconds since the Unix epoch. Reading one file keeps memory
  proportional to the open connections, not to the file.
* `read_packets(path)` → `(time_ns, linktype, data)` per record (pcap / pcapng / gzip);
  `read_batches(path)` the same a file block at a time (records as offsets into the
  block); `merge_packets(iterators)` merges by time.
* `read_segments(path)` → `(flow_key, time_ns, Segment)`: packets keyed by their canonical
  4-tuple, for executors that group a capture set by flow before reassembly;
  `reassemble((time_ns, segment) pairs in time order)` (a `FlowTracker` fed with
  `feed_segment`, then `finish()`) produces the same events as `read_capture` (a flow's identity across tasks is its `key`
  and `first_ns`; `index` only counts flows within one tracker).
* `FlowTracker`, `PacketDecoder`: the two stages, for live sources and custom loops.
* `detect(first_bytes)` → protocol name (`AMQP_1_0`, `AMQP_SASL`, `AMQP_TLS`, `AMQP_0_10`,
  `AMQP_0_9_1`, …, `TLS`, `UNKNOWN`).
* `CaptureError` (a `UserError`, exit code DECODE) with `.path` and `.offset`: raised
  after every readable event was yielded.
* `amqpcli.capture.writer`: writes pcap/pcapng and synthesises TCP conversations.
* `amqpcli.capture.live`: `live_capture` (pyshark) and `dumpcap_capture` (a pcapng pipe
  into the fast reader) on an interface, and `decrypt_tls` with a key log file; all three
  give the same events. `read_stream` reads a capture someone else writes into a pipe
  (a named pipe, standard input) by dumpcap's path, each event as its packet comes; a
  `PipeStream` (`amqpcli.capture.files`) reads such a pipe so another thread can stop it.
"""

from amqpcli.capture.decode import PacketDecoder, Segment, format_ip
from amqpcli.capture.detect import (
    AMQP_0_9_1,
    AMQP_0_10,
    AMQP_1_0,
    AMQP_PROTOCOLS,
    AMQP_SASL,
    AMQP_TLS,
    TLS,
    UNKNOWN,
    detect,
)
from amqpcli.capture.files import CaptureError, merge_packets, read_batches, read_packets
from amqpcli.capture.reader import read_capture, read_segments, reassemble
from amqpcli.capture.tcp import (
    C2S,
    S2C,
    Closed,
    Data,
    Direction,
    Event,
    Flow,
    FlowKey,
    FlowTracker,
    Gap,
    Opened,
    flow_key,
)

__all__ = [
    "AMQP_0_9_1", "AMQP_0_10", "AMQP_1_0", "AMQP_PROTOCOLS", "AMQP_SASL", "AMQP_TLS", "C2S",
    "S2C", "TLS", "UNKNOWN", "CaptureError", "Closed", "Data", "Direction", "Event", "Flow",
    "FlowKey", "FlowTracker", "Gap", "Opened", "PacketDecoder", "Segment", "detect",
    "flow_key", "format_ip", "merge_packets", "read_batches", "read_capture", "read_packets",
    "read_segments", "reassemble",
]
