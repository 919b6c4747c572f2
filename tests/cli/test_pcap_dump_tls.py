"""`amqp pcap-dump --tls-keylog`: TLS flows decrypted through tshark, found by their
handshake on any port, beside plain AMQP that reads as it does without a key log; TLS
flows without keys shown as encrypted and named; key logs that are not key logs.

The captures are written by the tests: TLS sessions run in memory (no sockets) carry
crafted AMQP conversations, their records written as TCP conversations, and the client
writes its session keys to a key log as SSLKEYLOGFILE does."""

from __future__ import annotations

import json
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from amqpcli.capture.tcp import C2S, S2C, Direction
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec import composites as c
from tests.capture.tls_session import tls_session
from tests.dissect.helpers import Script, basic
from tests.net.clirun import amqp
from tests.paths import REPO_ROOT
from tests.peers.tls import Certs, make_certs

START = 1_700_000_000_000_000_000


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("pki"))


def tls_conversation(w: CaptureWriter, certs: Certs, keylog: Path, script: Script, *,
                     port: int, client: int, start_s: int,
                     version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_3, mss: int = 1460) -> None:
    """A TLS session (in memory) carrying `script`, written into `w` as the TCP
    conversation 10.0.0.1:`client` -> 10.0.0.2:`port`; the client's keys go to `keylog`."""
    conv = TcpConversation(w, client=("10.0.0.1", client), server=("10.0.0.2", port),
                           start_ns=START + start_s * 1_000_000_000, step_ns=100_000,
                           mss=mss)
    conv.handshake()
    tls_session(conv, certs.server_cert, certs.server_key, keylog,
                ((d, data) for d, data, _t in script.steps), version)
    conv.close()


def upgraded_conversation(w: CaptureWriter, certs: Certs, keylog: Path, script: Script, *,
                          port: int, client: int, start_s: int) -> None:
    """As `tls_conversation`, after the AMQP TLS header both ways (protocol id 2: TLS
    on the AMQP connection, as `send --tls-upgrade` asks for it)."""
    conv = TcpConversation(w, client=("10.0.0.1", client), server=("10.0.0.2", port),
                           start_ns=START + start_s * 1_000_000_000, step_ns=100_000)
    conv.handshake()
    conv.send(C2S, b"AMQP\x02\x01\x00\x00")
    conv.send(S2C, b"AMQP\x02\x01\x00\x00")
    tls_session(conv, certs.server_cert, certs.server_key, keylog,
                ((d, data) for d, data, _t in script.steps))
    conv.close()


def plain_conversation(w: CaptureWriter, script: Script, *, port: int, client: int,
                       start_s: int) -> None:
    conv = TcpConversation(w, client=("10.0.0.1", client), server=("10.0.0.2", port),
                           start_ns=START + start_s * 1_000_000_000, step_ns=100_000)
    conv.handshake()
    for d, data, _t in script.steps:
        conv.send(Direction(d), data)
    conv.close()


def dump(*args: str, code: int = 0) -> tuple[list[dict[str, Any]], str]:
    """The JSON records of `pcap-dump ARGS --json`, and its stderr."""
    r = amqp("pcap-dump", *args, "--json")
    assert r.returncode == code, r.stderr
    return [json.loads(x) for x in r.stdout.splitlines()], r.stderr


def deliveries(records: list[dict[str, Any]]) -> dict[str, list[tuple[int, str]]]:
    """(delivery-id, outcome) of each connection's deliveries, by the client's port."""
    conns = {o["connection"]: o for o in records if o["record"] == "connection"}
    out: dict[str, list[tuple[int, str]]] = {}
    for o in records:
        if o["record"] == "delivery":
            port = conns[o["connection"]]["client"].rsplit(":", 1)[1]
            out.setdefault(port, []).append((o["delivery-id"], o["outcome"]))
    return out


def accepted(n: int) -> list[tuple[int, str]]:
    return [(i, "accepted") for i in range(n)]


def no_secrets(keylog: Path, *texts: str) -> None:
    secrets = [w for line in keylog.read_text().splitlines() if not line.startswith("#")
               for w in line.split()[1:]]
    assert secrets
    for text in texts:
        assert not any(s in text for s in secrets)


def test_plain_amqp_reads_the_same_with_a_key_log(certs: Certs, tmp_path: Path) -> None:
    """TLS on 5671 beside plain AMQP on 5672 and on an --amqp-port: every delivery of
    each, and the plain connections' records exactly as without the key log (tshark was
    told that those ports carry TLS, and the plain flows kept little but their headers)."""
    cap, keys = tmp_path / "mixed.pcapng", tmp_path / "keys.log"
    with CaptureWriter(cap) as w:
        tls_conversation(w, certs, keys, basic(3), port=5671, client=40001, start_s=0)
        plain_conversation(w, basic(4), port=5672, client=40002, start_s=1)
        plain_conversation(w, basic(2), port=5680, client=40003, start_s=2)
    args = (str(cap), "--amqp-port", "5680", "--deliveries", "--connections")
    records, err = dump(*args, "--tls-keylog", str(keys))
    assert deliveries(records) == {"40001": accepted(3), "40002": accepted(4),
                                   "40003": accepted(2)}
    assert "note" not in err
    no_secrets(keys, err, json.dumps(records))
    # the plain connections: the same frame records (packet numbers too) as without keys
    for port in ("5672", "5680"):
        with_keys, _ = dump(str(cap), "--amqp-port", "5680", "-C", f":{port}",
                            "--tls-keylog", str(keys))
        without, _ = dump(str(cap), "--amqp-port", "5680", "-C", f":{port}")
        frames = [o for o in without if o["record"] == "frame"]
        assert len(frames) > 10 and all(o["packet"] for o in frames)
        assert with_keys == without


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_2],
                         ids=["tls1.3", "tls1.2"])
def test_tls_is_found_by_its_handshake_on_any_port(certs: Certs, tmp_path: Path,
                                                   version: ssl.TLSVersion) -> None:
    """TLS on a port that is not 5671 and not an --amqp-port is decrypted (it gave the
    handshake's part of the plaintext and no delivery)."""
    cap, keys = tmp_path / "tls.pcapng", tmp_path / "keys.log"
    with CaptureWriter(cap) as w:
        tls_conversation(w, certs, keys, basic(5), port=5871, client=40001, start_s=0,
                         version=version)
        tls_conversation(w, certs, keys, basic(2), port=8443, client=40002, start_s=1,
                         version=version)
    records, err = dump(str(cap), "--tls-keylog", str(keys), "--deliveries",
                        "--connections")
    assert deliveries(records) == {"40001": accepted(5), "40002": accepted(2)}
    conns = [(o["client"], o["server"], o["protocol"]) for o in records
             if o["record"] == "connection"]
    assert conns == [("10.0.0.1:40001", "10.0.0.2:5871", "amqp-1.0"),
                     ("10.0.0.1:40002", "10.0.0.2:8443", "amqp-1.0")]
    assert err == ""


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_2],
                         ids=["tls1.3", "tls1.2"])
def test_a_segment_that_ends_several_records_gives_them_all(certs: Certs, tmp_path: Path,
                                                            version: ssl.TLSVersion) -> None:
    """A 60 KB message in TLS records of 16 KB, in segments as loopback's (64 KiB): one
    segment ends several records, and each one's plaintext is read (only the first was:
    the stream came out short, the transfer cut, its disposition a violation)."""
    body = "x" * 60_000
    script = Script().open().sender_link().transfer(0, body).dispose(0, c.Accepted()).close()
    cap, keys = tmp_path / "big.pcapng", tmp_path / "keys.log"
    with CaptureWriter(cap) as w:
        tls_conversation(w, certs, keys, script, port=5671, client=40001, start_s=0,
                         version=version, mss=65_483)
    records, err = dump(str(cap), "--tls-keylog", str(keys), "--deliveries")
    (d,) = [o for o in records if o["record"] == "delivery"]
    assert (d["outcome"], d.get("incomplete")) == ("accepted", None)
    assert d["size"] > 60_000
    assert not [o for o in records if o["record"] in ("violation", "notice")], records
    assert err == ""


def test_tls_after_the_amqp_tls_header_is_decrypted(certs: Certs, tmp_path: Path) -> None:
    """TLS asked for by the AMQP TLS header (protocol id 2) is decrypted as TLS from its
    first bytes is (it went on as encrypted, the note asking for the key log given);
    without its keys it is AMQP over TLS, encrypted, as before."""
    cap, keys, other = tmp_path / "up.pcapng", tmp_path / "keys.log", tmp_path / "other.log"
    with CaptureWriter(cap) as w:
        upgraded_conversation(w, certs, keys, basic(3), port=5672, client=40001, start_s=0)
        tls_conversation(w, certs, other, basic(1), port=5671, client=40002, start_s=1)
    records, err = dump(str(cap), "--tls-keylog", str(keys), "--deliveries",
                        "--connections", "-C", ":40001")
    assert deliveries(records) == {"40001": accepted(3)}
    (conn,) = [o for o in records if o["record"] == "connection"]
    assert conn["protocol"] == "amqp-1.0"
    assert "give --tls-keylog" not in err and "give --tls-keylog" not in json.dumps(records)
    records, err = dump(str(cap), "--tls-keylog", str(other), "--connections", "-C",
                        ":40001")
    (conn,) = [o for o in records if o["record"] == "connection"]
    assert conn["protocol"] == "amqp-tls"


@pytest.mark.parametrize("version", [ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_2],
                         ids=["tls1.3", "tls1.2"])
def test_tls_flows_without_keys_show_as_encrypted(certs: Certs, tmp_path: Path,
                                                  version: ssl.TLSVersion) -> None:
    """A key log with the keys of one of two sessions: the other connection is listed,
    encrypted, not left out; a note names it."""
    cap, keys = tmp_path / "tls.pcapng", tmp_path / "keys.log"
    first, second = tmp_path / "first.log", tmp_path / "second.log"
    with CaptureWriter(cap) as w:
        tls_conversation(w, certs, first, basic(3), port=5671, client=40001, start_s=0,
                         version=version)
        tls_conversation(w, certs, second, basic(2), port=5671, client=40002, start_s=1,
                         version=version)
    keys.write_text(first.read_text())
    records, err = dump(str(cap), "--tls-keylog", str(keys), "--deliveries",
                        "--connections")
    assert deliveries(records) == {"40001": accepted(3)}
    conns = {o["client"]: o for o in records if o["record"] == "connection"}
    assert list(conns) == ["10.0.0.1:40001", "10.0.0.1:40002"]
    assert conns["10.0.0.1:40002"]["protocol"] == "tls"
    text = f"TLS: encrypted, not decoded (no keys for it in {keys})"
    assert conns["10.0.0.1:40002"]["notes"] == [text]
    notices = [o for o in records if o["record"] == "notice"]
    assert [(n["connection"], n["kind"], n["text"]) for n in notices] == [
        ("c2", "encrypted", text)]
    assert err == (f"amqp: note: 1 TLS flow could not be decrypted: {keys} has no keys for "
                   "it (10.0.0.1:40002 -> 10.0.0.2:5671)\n")
    no_secrets(keys, err, json.dumps(records))


def test_a_key_log_of_other_sessions_names_the_flows(certs: Certs, tmp_path: Path) -> None:
    """No key fits: the TLS flows are named as not decrypted, and the capture is not
    said to hold "0 packets, no TCP flows"."""
    cap, keys, other = tmp_path / "tls.pcapng", tmp_path / "keys.log", tmp_path / "other.log"
    with CaptureWriter(cap) as w:
        tls_conversation(w, certs, keys, basic(2), port=5871, client=40001, start_s=0)
        tls_conversation(w, certs, keys, basic(2), port=5871, client=40002, start_s=1)
    with CaptureWriter(tmp_path / "elsewhere.pcapng") as w:
        tls_conversation(w, certs, other, basic(1), port=5871, client=40003, start_s=0)
    r = amqp("pcap-dump", str(cap), "--tls-keylog", str(other))
    assert r.returncode == 8 and r.stdout == ""
    assert r.stderr.splitlines() == [
        (f"amqp: note: 2 TLS flows could not be decrypted: {other} has no keys for them "
         "(10.0.0.1:40001 -> 10.0.0.2:5871, 10.0.0.1:40002 -> 10.0.0.2:5871)"),
        f"amqp: error: no AMQP traffic in {cap} (2 TCP flows: 2 tls)"]
    # on an AMQP port they are connections, each encrypted
    records, err = dump(str(cap), "--tls-keylog", str(other), "--amqp-port", "5871")
    notices = [(o["connection"], o["text"]) for o in records if o["record"] == "notice"]
    assert notices == [(c, f"TLS: encrypted, not decoded (no keys for it in {other})")
                       for c in ("c1", "c2")]
    assert "2 TLS flows could not be decrypted" in err


def test_no_tcp_at_all_counts_the_packets_read(certs: Certs, tmp_path: Path) -> None:
    """A capture without TCP, with a key log: the packets tshark read are counted (it said
    "0 packets")."""
    import struct

    from amqpcli.capture.writer import checksum, link_frame

    keys = tmp_path / "keys.log"
    with CaptureWriter(tmp_path / "tls.pcapng") as w:
        tls_conversation(w, certs, keys, basic(1), port=5671, client=40001, start_s=0)
    cap = tmp_path / "udp.pcapng"
    with CaptureWriter(cap) as w:
        for i in range(3):
            udp = struct.pack("!HHHH", 40000, 53, 8 + 4, 0) + b"ping"
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i, 0x4000, 64, 17, 0,
                             bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
            ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
            w.write(START + i * 1000, link_frame(1, ip + udp))
    r = amqp("pcap-dump", str(cap), "--tls-keylog", str(keys))
    assert (r.returncode, r.stdout) == (8, "")
    assert r.stderr == f"amqp: error: no AMQP traffic in {cap} (3 packets, no TCP flows)\n"


@pytest.mark.parametrize(("content", "what"), [
    (b"", "holds no TLS keys"),
    (b"# TLS secrets log file, generated by OpenSSL / Python\n", "holds no TLS keys"),
    (b"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n", "not a TLS key log"),
    (bytes(range(256)) * 4, "not a TLS key log"),
], ids=["empty", "comments only", "a certificate", "binary"])
def test_a_file_that_is_not_a_key_log_is_a_usage_error(tmp_path: Path, content: bytes,
                                                       what: str) -> None:
    cap = tmp_path / "tls.pcapng"
    with CaptureWriter(cap) as w:
        plain_conversation(w, basic(1), port=5672, client=40001, start_s=0)
    keys = tmp_path / "keys.log"
    keys.write_bytes(content)
    r = amqp("pcap-dump", str(cap), "--tls-keylog", str(keys))
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"amqp: error: --tls-keylog {keys}: {what} (no CLIENT_RANDOM or "
                        "*_TRAFFIC_SECRET lines, as SSLKEYLOGFILE writes them)\n")


def test_a_key_log_that_is_no_regular_file_is_named_for_what_it_is(tmp_path: Path) -> None:
    # /dev/null was "no such key log file": it exists, and holds no keys
    cap = tmp_path / "tls.pcapng"
    with CaptureWriter(cap) as w:
        plain_conversation(w, basic(1), port=5672, client=40001, start_s=0)
    for keys, error in [
        ("/dev/null", ("--tls-keylog /dev/null: not a regular file, so it holds no TLS "
                       "session keys (give the file SSLKEYLOGFILE writes)")),
        (str(tmp_path), f"--tls-keylog {tmp_path}: a directory, not a TLS key log file"),
        (str(tmp_path / "none.log"), f"{tmp_path / 'none.log'}: no such key log file"),
    ]:
        r = amqp("pcap-dump", str(cap), "--tls-keylog", keys)
        assert (r.returncode, r.stdout, r.stderr) == (2, "", f"amqp: error: {error}\n"), keys


def test_tls_flows_on_other_ports_are_mentioned(certs: Certs, tmp_path: Path) -> None:
    """Without a key log, TLS on a port that is neither 5671 nor an AMQP port is not a
    connection; a note says how many such flows there were, and on which ports."""
    cap, keys = tmp_path / "mixed.pcapng", tmp_path / "keys.log"
    with CaptureWriter(cap) as w:
        plain_conversation(w, basic(2), port=5672, client=40001, start_s=0)
        tls_conversation(w, certs, keys, basic(1), port=5871, client=40002, start_s=1)
        tls_conversation(w, certs, keys, basic(1), port=8443, client=40003, start_s=2)
        tls_conversation(w, certs, keys, basic(1), port=5871, client=40004, start_s=3)
    r = amqp("pcap-dump", str(cap), "--summary")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ("amqp: note: 3 TLS flows on ports 5871, 8443 not read (give "
                        "--tls-keylog FILE to decrypt them)\n")
    # with the keys they are read
    records, err = dump(str(cap), "--tls-keylog", str(keys), "--deliveries",
                        "--connections")
    assert deliveries(records) == {"40001": accepted(2), "40002": accepted(1),
                                   "40003": accepted(1), "40004": accepted(1)}
    assert err == ""


def tls_over_loopback(certs: Certs, keylog: Path, script: Script, port: int) -> None:
    """`script` over a real TLS connection to 127.0.0.1:`port` (a server thread here);
    the client appends its keys to `keylog`."""
    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    sctx.load_cert_chain(str(certs.server_cert), str(certs.server_key))
    cctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    cctx.check_hostname = False
    cctx.verify_mode = ssl.CERT_NONE
    cctx.keylog_filename = str(keylog)

    def play(sock: Any, mine: int) -> None:
        for d, data, _t in script.steps:
            if d == mine:
                sock.sendall(data)
            else:
                got = 0
                while got < len(data):
                    chunk = sock.recv(len(data) - got)
                    assert chunk, "peer closed early"
                    got += len(chunk)

    with socket.create_server(("127.0.0.1", port)) as listener:
        def serve() -> None:
            conn, _ = listener.accept()
            with sctx.wrap_socket(conn, server_side=True) as s:
                play(s, S2C)

        t = threading.Thread(target=serve, daemon=True)
        t.start()
        with cctx.wrap_socket(socket.create_connection(("127.0.0.1", port))) as c:
            play(c, C2S)
        t.join(timeout=30)


@pytest.mark.integration
def test_live_decryption_on_an_amqp_port(certs: Certs, free_port: int,
                                         tmp_path: Path) -> None:
    """`--live lo --amqp-port P --tls-keylog`: TLS on P is decrypted as it flows (only
    5671 was; P gave the handshake's part of the plaintext and no delivery). The key log
    starts empty: the clients write their keys as they connect."""
    keys = tmp_path / "keys.log"
    keys.write_text("")
    proc = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "pcap-dump", "--live", "lo", "--amqp-port",
         str(free_port), "--tls-keylog", str(keys), "--deliveries", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO_ROOT)
    lines: list[dict[str, Any]] = []
    reader = threading.Thread(
        target=lambda: lines.extend(json.loads(x) for x in proc.stdout or []), daemon=True)
    reader.start()

    def complete() -> list[list[tuple[int, str]]]:
        by_conn: dict[str, list[tuple[int, str]]] = {}
        for o in lines[:]:  # (the reader thread adds to it)
            if o["record"] == "delivery":
                by_conn.setdefault(o["connection"], []).append((o["delivery-id"],
                                                                o["outcome"]))
        return [d for d in by_conn.values() if d == accepted(3)]

    try:
        # tshark takes a moment to start capturing: a conversation at a time until one
        # shows up whole (bounded: a hang guard, not a timed assertion)
        for _ in range(40):
            tls_over_loopback(certs, keys, basic(3), free_port)
            time.sleep(0.5)
            if complete():
                break
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        reader.join(timeout=10)
    err = proc.stderr.read().decode() if proc.stderr else ""
    assert (proc.returncode, err) == (130, "amqp: interrupted\n")
    assert complete()
    no_secrets(keys, err, json.dumps(lines))
