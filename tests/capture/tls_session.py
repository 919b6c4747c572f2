"""A TLS session run in memory (no sockets) whose records are written into a capture as
a TCP conversation, the client's keys to a key log as SSLKEYLOGFILE has them: captures
for the TLS decryption tests."""

from __future__ import annotations

import ssl
from collections.abc import Iterable
from pathlib import Path

from amqpcli.capture.tcp import C2S, S2C
from amqpcli.capture.writer import TcpConversation


def tls_session(conv: TcpConversation, cert: Path, key: Path, keylog: Path,
                steps: Iterable[tuple[int, bytes]],
                version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_3) -> None:
    """Handshake, then each `(direction, bytes)` of `steps` (C2S: the client writes)
    through the session, its records sent on `conv` as they come; `conv` is left open."""
    cctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    cctx.check_hostname = False
    cctx.verify_mode = ssl.CERT_NONE
    cctx.maximum_version = version
    cctx.keylog_filename = str(keylog)
    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    sctx.load_cert_chain(str(cert), str(key))
    c_in, c_out, s_in, s_out = (ssl.MemoryBIO() for _ in range(4))
    ends = (cctx.wrap_bio(c_in, c_out), sctx.wrap_bio(s_in, s_out, server_side=True))

    def pump() -> None:
        while c_out.pending or s_out.pending:
            if c_out.pending:
                b = c_out.read()
                conv.send(C2S, b)
                s_in.write(b)
            if s_out.pending:
                b = s_out.read()
                conv.send(S2C, b)
                c_in.write(b)

    done = [False, False]
    while not all(done):
        for i, end in enumerate(ends):
            if not done[i]:
                try:
                    end.do_handshake()
                    done[i] = True
                except ssl.SSLWantReadError:
                    pass
        pump()
    for d, data in steps:
        ends[d].write(data)
        pump()
        got = b""
        while len(got) < len(data):
            got += ends[1 - d].read(65536)
        assert got == data
