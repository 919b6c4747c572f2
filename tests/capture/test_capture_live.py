"""The tshark-driven paths: TLS decryption with a key log, and live capture on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from capture_helpers import AMQP_HDR, SASL_HDR, frames

from amqpcli.capture import C2S, S2C, Closed, Data, Opened
from amqpcli.capture.live import TlsFlows, decrypt_tls, dumpcap_capture, live_capture
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from tests.capture.tls_session import tls_session

CLIENT_PLAIN = SASL_HDR + frames(20, 300, tag=5)
SERVER_PLAIN = SASL_HDR + frames(8, 120, tag=9)


def make_cert(tmp: Path) -> tuple[Path, Path]:
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost"],
                   check=True, capture_output=True)
    return cert, key


def tls_capture(tmp: Path, path: Path, keylog: Path) -> None:
    """A TLS session run in memory (no sockets), its records written as a capture."""
    cert, key = make_cert(tmp)
    with CaptureWriter(path) as w:
        conv = TcpConversation(w, server=("10.0.0.2", 5671), mss=500)
        conv.handshake()
        tls_session(conv, cert, key, keylog, ((C2S, CLIENT_PLAIN), (S2C, SERVER_PLAIN)))
        conv.close()


def test_decrypt_tls_with_key_log(tmp_path: Path) -> None:
    cap, keylog = tmp_path / "tls.pcapng", tmp_path / "keys.log"
    tls_capture(tmp_path, cap, keylog)
    assert keylog.stat().st_size > 0
    events = list(decrypt_tls(str(cap), str(keylog)))
    opened = [e for e in events if isinstance(e, Opened)]
    assert len(opened) == 1
    flow = opened[0].flow
    assert flow.protocol == "amqp-sasl" and flow.server_port == 5671
    streams = {d: b"".join(bytes(e.data) for e in events
                           if isinstance(e, Data) and e.direction == d) for d in (C2S, S2C)}
    assert streams[C2S] == CLIENT_PLAIN
    assert streams[S2C] == SERVER_PLAIN
    assert sorted(e.how for e in events if isinstance(e, Closed)) == ["fin", "fin"]
    # without the keys nothing is readable: the flow is a TLS flow (skipped, as the file
    # reader skips it), and the report names it as not decrypted
    keylog.write_text("")
    report = TlsFlows()
    events = list(decrypt_tls(str(cap), str(keylog), report=report))
    assert [e.flow.protocol for e in events if isinstance(e, Opened)] == ["tls"]
    assert not [e for e in events if isinstance(e, Data)]
    assert (report.decrypted, report.encrypted) == ([], [("10.0.0.1:40000", "10.0.0.2:5671")])


@pytest.mark.integration
@pytest.mark.parametrize("capture", [live_capture, dumpcap_capture])
def test_live_capture_on_loopback(capture: Any) -> None:
    assert os.geteuid() == 0, "live capture on lo needs root"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    client_bytes = AMQP_HDR + frames(50, 200)
    server_bytes = AMQP_HDR + frames(10, 64)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                c, _ = listener.accept()
            except OSError:
                return
            with c:
                got = b""
                while len(got) < len(client_bytes):
                    d = c.recv(65536)
                    if not d:
                        break
                    got += d
                c.sendall(server_bytes)

    def talk() -> None:
        # new connections until the capture has seen a complete one (it starts
        # asynchronously, so the first ones may be missed)
        while not stop.is_set():
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(client_bytes)
                s.shutdown(socket.SHUT_WR)
                while s.recv(65536):
                    pass
            stop.wait(0.2)

    threads = [threading.Thread(target=serve, daemon=True),
               threading.Thread(target=talk, daemon=True)]
    for t in threads:
        t.start()
    streams: dict[tuple[int, int], bytearray] = {}
    complete = None
    gen = capture("lo", f"tcp port {port}")
    try:
        for ev in gen:
            if isinstance(ev, Data):
                streams.setdefault((ev.flow.index, ev.direction), bytearray()).extend(ev.data)
            elif isinstance(ev, Closed) and ev.flow.handshake and ev.direction == S2C:
                complete = ev.flow
                break
    finally:
        stop.set()
        gen.close()
        listener.close()
    assert complete is not None
    assert complete.server_port == port and complete.protocol == "amqp-1.0"
    assert bytes(streams[(complete.index, C2S)]) == client_bytes
    assert bytes(streams[(complete.index, S2C)]) == server_bytes


def test_unknown_interface_is_a_user_error() -> None:
    from amqpcli.errors import UserError

    with pytest.raises(UserError, match="live capture on nosuchif0 failed: .*nosuchif0"):
        list(live_capture("nosuchif0", "tcp"))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("capture", [
    lambda: live_capture("lo", "tcp port ((", packet_count=1),
    lambda: dumpcap_capture("lo", "tcp port ((", packet_count=1),
    lambda: decrypt_tls(None, None, interface="lo", bpf_filter="tcp port ((", packet_count=1),
])
def test_a_capture_filter_that_does_not_compile_is_a_user_error(capture: Any) -> None:
    # Through tshark it waited for packets forever: dumpcap had given up on the filter.
    from amqpcli.errors import UserError

    with pytest.raises(UserError, match="live capture on lo failed: dumpcap: Invalid capture filter"):
        list(capture())


def test_missing_capture_file_for_decryption_is_a_user_error(tmp_path: Path) -> None:
    from amqpcli.errors import UserError

    keys = tmp_path / "keys.log"
    with pytest.raises(UserError, match="no such key log file"):
        list(decrypt_tls(str(tmp_path / "none.pcapng"), str(keys)))
    keys.write_text("")
    with pytest.raises(UserError, match="TLS decryption of .*failed"):
        list(decrypt_tls(str(tmp_path / "none.pcapng"), str(keys)))


def test_dumpcap_failure_is_a_user_error() -> None:
    from amqpcli.errors import UserError

    with pytest.raises(UserError, match="live capture on nosuchif0 failed"):
        list(dumpcap_capture("nosuchif0", "tcp"))


def test_decrypt_tls_with_keys_embedded_in_the_capture(tmp_path: Path) -> None:
    import struct

    from amqpcli.capture import read_packets

    plain, keylog = tmp_path / "tls.pcapng", tmp_path / "keys.log"
    tls_capture(tmp_path, plain, keylog)
    keys = keylog.read_bytes()
    embedded = tmp_path / "dsb.pcapng"
    with CaptureWriter(embedded) as w:
        # a decryption secrets block ("TLSK"), before the packets that need it
        w.write_block(0x0A, struct.pack("<II", 0x544C534B, len(keys)) + keys
                      + b"\0" * (-len(keys) & 3))
        for t, _lt, d in read_packets(plain):
            w.write(t, bytes(d))
    events = list(decrypt_tls(str(embedded), None))
    streams = {d: b"".join(bytes(e.data) for e in events
                           if isinstance(e, Data) and e.direction == d) for d in (C2S, S2C)}
    assert streams == {C2S: CLIENT_PLAIN, S2C: SERVER_PLAIN}
    # and our reader skips that block
    assert len(list(read_packets(embedded))) == len(list(read_packets(plain)))
