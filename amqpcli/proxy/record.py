"""Recording a proxy's traffic as a pcapng file that `amqp pcap-dump` and Wireshark read.

Each proxied connection becomes one synthetic TCP conversation between the application's
address and the broker's, with a handshake, the bytes of each direction as they were
forwarded (at the time they were read), and a FIN exchange when it ends. The capture
package writes the packets; this module only decides what goes in.
"""

from __future__ import annotations

import os
from typing import Any

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.errors import Exit, UserError

RAW_IP = 101  # link type: packets start at the IP header
MSS = 65000  # one segment per forwarded chunk where the chunk allows


class Recorder:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        try:
            self.writer = CaptureWriter(path, linktype=RAW_IP)
        except OSError as e:
            raise UserError(f"cannot write {os.fspath(path)}: {(e.strerror or str(e)).lower()}",
                            Exit.USAGE) from None
        self._convs: dict[int, TcpConversation] = {}
        self.closed = False

    def open(self, conn: Any) -> None:
        t = int(conn.started * 1e9)
        conv = TcpConversation(self.writer, conn.client, conn.upstream, start_ns=t, step_ns=1000)
        conv.handshake()
        self._convs[conn.index] = conv

    def data(self, conn: Any, side: str, data: bytes, time: float) -> None:
        conv = self._convs.get(conn.index)
        if conv is None or self.closed:
            return
        conv.now = max(conv.now, int(time * 1e9))
        conv.send(C2S if side == "client" else S2C, bytes(data), mss=MSS, ack=False)

    def end(self, conn: Any) -> None:
        conv = self._convs.pop(conn.index, None)
        if conv is not None and not self.closed:
            conv.close()

    def close(self) -> None:
        if self.closed:
            return
        for conv in self._convs.values():
            conv.close()
        self._convs.clear()
        self.writer.close()
        self.closed = True
