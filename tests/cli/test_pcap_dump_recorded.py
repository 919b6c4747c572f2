"""`amqp pcap-dump` on captures the test records itself: dumpcap on the loopback while
known traffic runs through RabbitMQ and the proton peers, then every delivery's outcome
and settlement in our output is held against what the test did."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from proton import Message

from tests.net.clirun import amqp, queue_name
from tests.peers import outcomes as oc

pytestmark = pytest.mark.integration


def _grown(path: Path, than: int) -> bool:
    return path.exists() and path.stat().st_size > than


@contextmanager
def recording(port: int, path: Path) -> Iterator[Path]:
    """dumpcap on lo for `tcp port PORT` while the block runs; stopped with SIGINT.

    The capture is known to run once a probe connection to the port shows up in the file;
    at the end the file is given time to take the last packets (it grows in batches)
    before dumpcap is stopped. Both waits are bounded hang guards, not timed assertions.
    """
    import socket

    proc = subprocess.Popen(["dumpcap", "-q", "-i", "lo", "-f", f"tcp port {port}", "-w",
                             str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(100):
            if _grown(path, 0):
                break
            time.sleep(0.05)
        header = path.stat().st_size if path.exists() else 0
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            except OSError:
                pass
            time.sleep(0.1)
            if _grown(path, header):
                break
        else:
            pytest.fail("dumpcap did not start capturing")
        yield path
        last, stable = -1, 0
        for _ in range(100):
            size = path.stat().st_size
            stable = stable + 1 if size == last else 0
            if stable >= 4:
                break
            last = size
            time.sleep(0.25)
    finally:
        proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 0, err.decode(errors="replace") if err else ""


def dump(path: Path, *args: str, port: int, record: str = "delivery") -> list[dict[str, Any]]:
    """The JSON records of kind `record` (notices about the capture are left out)."""
    r = amqp("pcap-dump", str(path), "--json", "--amqp-port", str(port), *args)
    assert r.returncode == 0, r.stderr
    objs = [json.loads(x) for x in r.stdout.splitlines()]
    return [o for o in objs if o["record"] == record]


def _port(url: str) -> int:
    return urlsplit(url).port or 5672


def test_outcomes_against_rabbitmq(rabbitmq_url: str, tmp_path: Path) -> None:
    port = _port(rabbitmq_url)
    q = queue_name()
    url = f"{rabbitmq_url}//queue/{q}"
    with recording(port, tmp_path / "rabbit.pcapng") as cap:
        r = amqp("send", url, "m", "--message-id", "{n}", "--count", "4")
        assert r.returncode == 0, r.stderr
        r = amqp("recv", url, "-c", "1", "-t", "10", "--outcome", "release")
        assert r.returncode == 0, r.stderr
        r = amqp("recv", url, "-c", "3", "-t", "10", "--credit", "1",
                 "--outcome", "reject:amqp:internal-error=bad,accept")
        assert r.returncode == 0, r.stderr
        assert "reject 2" in r.stderr and "accept 1" in r.stderr
        r = amqp("send", url, "p", "--count", "2", "--presettled")
        assert r.returncode == 0, r.stderr
    # other tests may talk to the same node meanwhile: only our queue's links count
    dels = dump(cap, "--deliveries", "--address", f"/queue/{q}", port=port)
    by_conn: dict[str, list[dict[str, Any]]] = {}
    for d in dels:
        by_conn.setdefault(d["connection"], []).append(d)
    assert len(by_conn) == 4
    c1, c2, c3, c4 = by_conn.values()
    # our sends: RabbitMQ accepted each, settling as the receiver
    assert [(d["from"], d["outcome"], d["settled-by"]) for d in c1] == [
        ("client", "accepted", "receiver")] * 4
    assert [d["message"]["properties"]["message-id"] for d in c1] == ["1", "2", "3", "4"]
    # the first receive released message 1
    assert [(d["from"], d["outcome"], d["settled-by"]) for d in c2] == [
        ("server", "released", "receiver")]
    # the second applies its outcomes in turn: reject (with our condition), accept, reject
    assert [d["outcome"] for d in c3] == ["rejected", "accepted", "rejected"]
    err = c3[0]["state"]["rejected"]["error"]["error"]
    assert (err["condition"], err["description"]) == ("amqp:internal-error", "bad")
    # pre-settled sends have no outcome: settled with their transfer
    assert [(d["outcome"], d["presettled"], d["latency"]) for d in c4] == [
        ("settled", True, 0.0)] * 2
    (summary,) = dump(cap, "--summary", "--address", f"/queue/{q}", port=port,
                      record="summary")
    assert summary["by-outcome"] == {"accepted": 5, "released": 1, "rejected": 2, "settled": 2}
    assert summary["violations"] == []
    assert len(summary["links"]) == 4


def test_messages_rabbitmq_gave_properties_are_followed(rabbitmq_url: str,
                                                        tmp_path: Path) -> None:
    """RabbitMQ 3.10 gives a message sent without a properties section one on the way out
    (its `subject`: the routing key), which changes its bare message: `--messages` still
    follows each across the queue as one message, known by its form as sent."""
    port = _port(rabbitmq_url)
    q = queue_name()
    url = f"{rabbitmq_url}//queue/{q}"
    with recording(port, tmp_path / "rabbit.pcapng") as cap:
        # (our send gives a message no properties section unless an option fills one)
        r = amqp("send", url, "bare {n}", "--expand", "--count", "5")
        assert r.returncode == 0, r.stderr
        r = amqp("send", url, "own {n}", "--expand", "--count", "3", "--message-id", "id-{n}")
        assert r.returncode == 0, r.stderr
        r = amqp("recv", url, "-c", "8", "-t", "10")
        assert r.returncode == 0, r.stderr
    only_ours = ("--address", f"/queue/{q}")
    dels = dump(cap, "--deliveries", *only_ours, port=port)
    sent = {d["message"]["bare-sha256"]: d["message"] for d in dels if d["from"] == "client"}
    got = [d["message"] for d in dels if d["from"] == "server"]
    assert len(sent) == len(got) == 8
    # what the broker did: the five sent bare came out with a subject, the others as sent
    assert sum("properties" not in m for m in sent.values()) == 5
    assert [m["properties"] for m in got][:5] == [{"subject": q}] * 5
    assert {m["bare-sha256"] for m in got[5:]} == {s for s, m in sent.items()
                                                   if "properties" in m}
    messages = dump(cap, "--messages", *only_ours, port=port, record="message")
    assert len(messages) == 8
    for m in messages:
        into, out_of = m["hops"]
        assert (into["from"], out_of["from"]) == ("client", "server")
        assert into["outcome"] == out_of["outcome"] == "accepted"
        assert "properties-added" not in into
        assert m["bare-sha256"] in sent  # known by the message as sent
    bare = [m for m in messages if m["message-id"] is None]
    own = [m for m in messages if m["message-id"] is not None]
    assert len(bare) == 5 and all(m["hops"][1]["properties-added"] is True for m in bare)
    assert [m["message-id"] for m in own] == ["id-1", "id-2", "id-3"]
    assert all("properties-added" not in m["hops"][1] for m in own)
    r = amqp("pcap-dump", str(cap), "-m", *only_ours)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    consumer = bare[0]["hops"][1]["connection"]
    assert all(line.endswith(f" {consumer} <- /queue/{q} +properties accepted")
               for line in lines[:5])
    assert lines[-1].startswith("8 messages: 0 seen once, 8 on two or more deliveries")


def test_outcomes_against_proton_peers(direct_receiver: Callable[..., Any],
                                       direct_sender: Callable[..., Any],
                                       tmp_path: Path) -> None:
    rules = [oc.Accept(), oc.Reject("amqp:x", "no"), oc.Release(), oc.Modify(failed=True)]
    rx = direct_receiver(outcome=lambda m: rules[m.index % 4])
    port = _port(rx.url)
    with recording(port, tmp_path / "proton-rx.pcapng") as cap:
        r = amqp("send", f"{rx.url}/q", "m", "--count", "8")
        assert r.returncode == 6, r.stderr  # some were rejected, released, modified
        r = amqp("send", f"{rx.url}/q", "p", "--count", "3", "--presettled")
        assert r.returncode == 0, r.stderr
    dels = dump(cap, "--deliveries", port=port)
    unsettled = sorted((d for d in dels if d["connection"] == "c1"),
                       key=lambda d: d["delivery-id"])
    assert [d["outcome"] for d in unsettled] == [
        "accepted", "rejected", "released", "modified"] * 2
    assert {d["settled-by"] for d in unsettled} == {"receiver"}
    assert unsettled[3]["state"]["modified"]["delivery-failed"] is True
    pre = [d for d in dels if d["connection"] == "c2"]
    assert [(d["outcome"], d["presettled"]) for d in pre] == [("settled", True)] * 3
    # what the peer did is what we reconstructed
    names = {oc.Accept: "accepted", oc.Reject: "rejected", oc.Release: "released",
             oc.Modify: "modified"}
    got = rx.messages()
    assert [names[type(m.outcome)] for m in got[:8]] == [d["outcome"] for d in unsettled]
    assert [m.presettled for m in got] == [False] * 8 + [True] * 3

    tx = direct_sender([Message(body=f"s{i}") for i in range(3)])
    port = _port(tx.url)
    with recording(port, tmp_path / "proton-tx.pcapng") as cap:
        r = amqp("recv", f"{tx.url}/q", "-c", "3", "-t", "10", "--settle-mode", "second")
        assert r.returncode == 0, r.stderr
        tx.wait_for_outcomes(3)
    dels = dump(cap, "--deliveries", port=port)
    assert len(dels) == 3
    for d in dels:
        assert d["from"] == "server" and d["outcome"] == "accepted"
        assert d["rcv-settle-mode"] == "second"
        kinds = [(e["side"], e["kind"], e.get("settled", False)) for e in d["timeline"]]
        # the receiver says accepted without settling, the sender settles, then the
        # receiver settles too
        assert kinds[0] == ("server", "transfer", False)
        assert ("client", "disposition", False) in kinds
        assert kinds.index(("client", "disposition", False)) < kinds.index(
            next(k for k in kinds if k[0] == "server" and k[1] in ("disposition", "settle")))
        # settled first by the sender: its latency runs to that frame, not to the
        # receiver's settlement after it
        first = next(e for e in d["timeline"] if e.get("settled"))
        assert first["side"] == "server" and d["settled-by"] == "sender"
        assert d["settled-time"] == first["time"]


class _LiveDump:
    """`amqp pcap-dump --live lo` (tshark, or dumpcap with `fast`) on `port`, its JSON
    lines gathered by a thread as they come."""

    def __init__(self, port: int, fast: bool, own_group: bool = False) -> None:
        """`own_group`: amqp leads a process group of its own (and its children's), as
        a command run from a terminal does."""
        import os
        import sys
        import threading

        from tests.paths import REPO_ROOT

        env = {**os.environ, "NO_COLOR": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "amqpcli", "pcap-dump", "--live", "lo", "--capture-filter",
             f"tcp port {port}", "--amqp-port", str(port), "--deliveries", "--frames",
             "--json", "--summary", *(["--fast-capture"] if fast else [])],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO_ROOT, env=env,
            start_new_session=own_group)
        self.lines: list[dict[str, Any]] = []
        self._reader = threading.Thread(
            target=lambda: self.lines.extend(json.loads(x) for x in self.proc.stdout or []),
            daemon=True)
        self._reader.start()

    def deliveries(self, address: str | None = None) -> list[dict[str, Any]]:
        return [o for o in list(self.lines) if o["record"] == "delivery"
                and (address is None or o["address"] == address)]

    def until_capturing(self, url: str) -> None:
        """tshark and dumpcap take a moment to start capturing: send to `url` until a
        delivery shows up (bounded: a hang guard, not a timed assertion)."""
        from proton.utils import BlockingConnection

        for _ in range(30):
            conn = BlockingConnection(url)
            conn.create_sender("live").send(Message(body="hi"))
            conn.close()
            if self.deliveries():
                return
            time.sleep(0.5)

    def descendants(self) -> set[int]:
        """The pids of the processes amqp started, and of theirs."""
        from pathlib import Path

        found: set[int] = set()
        todo = [self.proc.pid]
        while todo:
            pid = todo.pop()
            try:
                kids = [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
            except OSError:
                continue
            found.update(kids)
            todo += kids
        return found

    def signal_group(self) -> None:
        """SIGINT to amqp's whole process group (see `own_group`): a terminal's Ctrl-C."""
        import os

        os.killpg(self.proc.pid, signal.SIGINT)

    def interrupt(self, *, sent: bool = False) -> str:
        """Ctrl-C (unless `sent` already); the run's stderr."""
        if not sent:
            self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=60)
        self._reader.join(timeout=10)
        return self.proc.stderr.read().decode() if self.proc.stderr else ""


@pytest.mark.parametrize("fast", [False, True], ids=["tshark", "dumpcap"])
def test_live_capture_prints_as_traffic_flows(direct_receiver: Callable[..., Any],
                                              fast: bool) -> None:
    """`--live lo` (tshark, or dumpcap with `--fast-capture`): frames and deliveries
    appear while the capture runs; Ctrl-C ends it with the summary of what was seen."""
    rx = direct_receiver()
    live = _LiveDump(_port(rx.url), fast)
    try:
        live.until_capturing(rx.url)
    finally:
        err = live.interrupt()
    lines = live.lines
    dels = live.deliveries()
    assert dels, err
    assert live.proc.returncode == 130 and err == "amqp: interrupted\n"
    summary = lines[-1]
    assert summary["record"] == "summary"
    assert summary["deliveries"] >= len(dels)
    assert all(d["outcome"] == "accepted" and d["settled-by"] == "receiver" for d in dels)
    assert any(o["record"] == "frame" and (o.get("performative") or {}).get("transfer")
               for o in lines)


@pytest.mark.parametrize("fast", [False, True], ids=["tshark", "dumpcap"])
def test_live_capture_ctrl_c_keeps_what_was_captured(direct_receiver: Callable[..., Any],
                                                     fast: bool) -> None:
    """Ctrl-C right after a burst: the capture ends gently, and every delivery that was
    on the wire before it is shown, settled (a capture stopped at once lost those still
    in the kernel's buffer or in the pipe, and showed the last one unsettled)."""
    from proton.utils import BlockingConnection

    rx = direct_receiver()
    live = _LiveDump(_port(rx.url), fast)
    try:
        live.until_capturing(rx.url)
        assert live.deliveries(), "the capture never started"
        conn = BlockingConnection(rx.url)
        sender = conn.create_sender("burst")
        for i in range(200):
            sender.send(Message(body=f"{i:04}" * 500))  # each waits for its outcome
        conn.close()
    finally:
        err = live.interrupt()
    assert (live.proc.returncode, err) == (130, "amqp: interrupted\n"), err
    burst = live.deliveries("burst")
    assert len(burst) == 200
    assert all(d["outcome"] == "accepted" and d["settled-by"] == "receiver" for d in burst)


@pytest.mark.parametrize("fast", [False, True], ids=["tshark", "dumpcap"])
def test_live_capture_terminal_ctrl_c_during_a_burst(direct_receiver: Callable[..., Any],
                                                     fast: bool) -> None:
    """A terminal's Ctrl-C (SIGINT to amqp's whole process group) while a burst is
    flowing: the capture process does not get it and is ended gently by amqp, so every
    delivery sent before it is shown with its outcome, settled (the capture process,
    stopped at once by the signal, lost what it had not yet read: the last deliveries
    were missing or unsettled); amqp exits as after any Ctrl-C and leaves no capture
    process behind."""
    import os
    import threading

    from proton.utils import BlockingConnection

    rx = direct_receiver()
    live = _LiveDump(_port(rx.url), fast, own_group=True)
    sent = 0
    stop = threading.Event()
    failed: list[BaseException] = []

    def burst() -> None:
        nonlocal sent
        try:
            conn = BlockingConnection(rx.url)
            sender = conn.create_sender("burst")
            while not stop.is_set():
                sender.send(Message(body=f"{sent:04}" * 500))  # each waits for its outcome
                sent += 1
            conn.close()
        except BaseException as e:  # noqa: BLE001 - reported below
            failed.append(e)

    sending = threading.Thread(target=burst, daemon=True)
    signalled = False
    try:
        live.until_capturing(rx.url)
        assert live.deliveries(), "the capture never started"
        capturing = live.descendants()
        assert capturing, "no capture process"
        sending.start()
        for _ in range(3000):  # a hang guard: the burst is well under way
            if sent >= 150 or failed or not sending.is_alive():
                break
            time.sleep(0.01)
        live.signal_group()
        signalled = True
        stop.set()
        sending.join(timeout=30)
    finally:
        stop.set()
        err = live.interrupt(sent=signalled)
    assert not failed, failed
    assert sent >= 150
    assert (live.proc.returncode, err) == (130, "amqp: interrupted\n"), err
    assert live.lines[-1]["record"] == "summary"
    got = live.deliveries("burst")
    assert [d["delivery-id"] for d in got] == list(range(sent))
    assert all(d["outcome"] == "accepted" and d["settled-by"] == "receiver" for d in got)
    for _ in range(100):  # a hang guard: the capture processes are gone
        left = {pid for pid in capturing if os.path.exists(f"/proc/{pid}")}
        if not left:
            break
        time.sleep(0.1)
    assert not left, left


def _tls_conversation(port: int, certs: Any, keylog: Path, steps: list[Any]) -> None:
    """A TLS server and client in this process carrying `steps` (a crafted AMQP 1.0
    conversation); the client writes the session keys to `keylog`."""
    import socket
    import ssl
    import threading

    from amqpcli.capture.tcp import C2S

    srv_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    srv_ctx.load_cert_chain(str(certs.server_cert), str(certs.server_key))
    cli_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    cli_ctx.check_hostname = False
    cli_ctx.verify_mode = ssl.CERT_NONE
    cli_ctx.keylog_filename = str(keylog)
    lsock = socket.create_server(("127.0.0.1", port))

    def read_exactly(sock: Any, n: int) -> None:
        got = 0
        while got < n:
            chunk = sock.recv(n - got)
            assert chunk, "peer closed early"
            got += len(chunk)

    def play(sock: Any, mine: int) -> None:
        for d, data, _t in steps:
            if d == mine:
                sock.sendall(data)
            else:
                read_exactly(sock, len(data))

    def server() -> None:
        conn, _ = lsock.accept()
        with srv_ctx.wrap_socket(conn, server_side=True) as s:
            play(s, 1 - C2S)

    t = threading.Thread(target=server, daemon=True)
    t.start()
    with cli_ctx.wrap_socket(socket.create_connection(("127.0.0.1", port))) as c:
        play(c, C2S)
    t.join(timeout=30)
    lsock.close()


def test_tls_reported_and_decrypted_with_a_key_log(tls_certs: Any, free_port: int,
                                                  tmp_path: Path) -> None:
    from tests.dissect.helpers import basic

    keylog = tmp_path / "keys.log"
    script = basic(2, sasl=False)
    with recording(free_port, tmp_path / "tls.pcapng") as cap:
        _tls_conversation(free_port, tls_certs, keylog, script.steps)
    assert keylog.stat().st_size > 0
    # without keys: one notice, nothing decoded
    notices = dump(cap, port=free_port, record="notice")
    assert [n["kind"] for n in notices] == ["encrypted"]
    # with them: the flow is decrypted (through tshark) and decoded by our decoder
    dels = dump(cap, "--deliveries", "--tls-keylog", str(keylog), port=free_port)
    assert [(d["delivery-id"], d["outcome"]) for d in dels] == [(0, "accepted"), (1, "accepted")]
