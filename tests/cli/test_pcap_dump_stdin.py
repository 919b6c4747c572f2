"""`amqp pcap-dump -`: a capture on standard input (`tcpdump -U -w - | amqp pcap-dump -`),
printed as it arrives; and Ctrl-C or SIGTERM during any dump: the reading stops, and
what was seen is still shown (frames so far, deliveries left open, the end views), exit
130 with "amqp: interrupted" alone on stderr."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from amqpcli.capture.files import read_batches, read_packets
from amqpcli.capture.writer import CaptureWriter
from amqpcli.dissect import Dissector, FrameRecord
from tests.paths import CAPTURES_DIR, REPO_ROOT, require

RABBIT = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"
DEADLINE = 60  # seconds a line may take to come (a hang fails instead of blocking the suite)


@pytest.fixture(scope="module", autouse=True)
def _capture() -> None:
    require(RABBIT)


def _amqp(*args: str, **kw: object) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("AMQP_URL", "AMQP_DEBUG")}
    return subprocess.Popen([sys.executable, "-m", "amqpcli", *args], cwd=REPO_ROOT,
                            env={**env, "NO_COLOR": "1"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **kw)  # type: ignore[call-overload]


def _dump(args: list[str], stdin: bytes) -> tuple[int, str, str]:
    p = _amqp("pcap-dump", *args, stdin=subprocess.PIPE)
    out, err = p.communicate(stdin, timeout=DEADLINE)
    return p.returncode, out.decode(), err.decode()


def _as_pcap(path: Path, dest: Path, *, compress: bool = False) -> bytes:
    """The same packets as classic pcap (µs, big-endian), optionally gzipped."""
    with CaptureWriter(dest, format="pcap", nanosecond=False, byte_order=">",
                       compress=compress) as w:
        for ts, _lt, data in read_packets(str(path)):
            w.write(ts, bytes(data))
    return dest.read_bytes()


@pytest.mark.parametrize("view", [[], ["--deliveries", "--summary"], ["--json"],
                                  ["--frames-only"]])
@pytest.mark.parametrize("form", ["pcapng", "pcap", "pcap.gz"])
def test_standard_input_gives_what_the_file_gives(tmp_path: Path, form: str,
                                                  view: list[str]) -> None:
    if form == "pcapng":
        data = RABBIT.read_bytes()
        path = RABBIT
    else:
        path = tmp_path / f"c.{form}"
        data = _as_pcap(RABBIT, path, compress=form.endswith(".gz"))
    from_file = _dump([str(path), *view], b"")
    from_stdin = _dump(["-", *view], data)
    assert from_file[0] == 0 and from_file[1]
    assert from_stdin == from_file


def test_standard_input_merges_with_files(tmp_path: Path) -> None:
    other = CAPTURES_DIR / "amqp010-qpid-python-echo.pcapng"
    require(other)
    both = _dump([str(RABBIT), str(other), "--summary"], b"")
    assert both[0] == 0
    assert _dump(["-", str(other), "--summary"], RABBIT.read_bytes()) == both


def _packet_ends(path: Path) -> list[int]:
    """Where each packet's block ends in the file (one read covers this small file)."""
    (buf, records), = list(read_batches(str(path)))
    ends = []
    for _ts, _lt, start, _stop in records:
        block = start - 28  # an enhanced packet block's header
        ends.append(block + int.from_bytes(buf[block + 4 : block + 8], "little"))
    return ends


def _first_disposition_packet(path: Path) -> int:
    for rec in Dissector().read(str(path)):
        if isinstance(rec, FrameRecord) and getattr(rec.item, "name", "") == "disposition":
            return rec.packet
    raise AssertionError("no disposition")


def _line(p: subprocess.Popen[bytes]) -> bytes:
    assert p.stdout is not None
    ready, _, _ = select.select([p.stdout], [], [], DEADLINE)
    assert ready, "no output while standard input stays open"
    return p.stdout.readline()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_lines_come_as_input_arrives_and_a_signal_still_shows_what_was_seen(
        sig: signal.Signals) -> None:
    data = RABBIT.read_bytes()
    # every packet up to the first disposition: c1's transfers, none settled yet
    cut = _packet_ends(RABBIT)[_first_disposition_packet(RABBIT) - 2]
    p = _amqp("pcap-dump", "-", "--frames", "--deliveries", "--summary",
              stdin=subprocess.PIPE, start_new_session=True)
    assert p.stdin is not None
    p.stdin.write(data[:cut])
    p.stdin.flush()
    first = _line(p)  # printed while standard input is still open
    assert b"SASL protocol header" in first
    assert _wait_for_reader(p), "the dump did not come back to wait for input"
    p.send_signal(sig)
    out, err = p.communicate(timeout=DEADLINE)
    p.stdin.close()
    text = out.decode()
    assert p.returncode == 130
    assert err.decode() == "amqp: interrupted\n"
    # the deliveries left open when the reading stopped, then the summary
    assert "unsettled" in text and "accepted" not in text.split("connections:")[0]
    assert "connections: 1" in text and "deliveries: 20" in text
    assert "violations: 0" in text


def test_a_signal_stops_a_file_being_read(tmp_path: Path) -> None:
    """Reading a named pipe (a path, not `-`) that nothing more is written to: the
    signal ends the wait, and the views are printed."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    p = _amqp("pcap-dump", str(fifo), "--summary", start_new_session=True)
    with open(fifo, "wb") as w:
        w.write(RABBIT.read_bytes()[: _packet_ends(RABBIT)[10]])
        w.flush()
        # what was written is read; then the dump waits on the open pipe
        assert _wait_for_reader(p), "the dump did not come back to wait for input"
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=DEADLINE)
    assert p.returncode == 130, err
    assert err.decode() == "amqp: interrupted\n"
    assert "connections: 1" in out.decode()


def _wait_for_reader(p: subprocess.Popen[bytes]) -> bool:
    """Until the process waits on its input again after reading what there was (its
    state in /proc: sleeping in a pipe read)."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        try:
            wchan = Path(f"/proc/{p.pid}/wchan").read_text()
            stat = Path(f"/proc/{p.pid}/stat").read_text().split()[2]
        except OSError:
            return False
        if stat == "S" and "pipe" in wchan:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(("args", "message"), [
    (["-", "-"], "- (standard input) can be given once"),
    (["-", "--out", "tables"], "--out reads capture files and folders, not standard input"),
    (["-", "--tls-keylog", "keys.log"],
     "--tls-keylog decrypts capture files, not standard input"),
])
def test_what_standard_input_cannot_do_is_a_usage_error(args: list[str], message: str) -> None:
    code, out, err = _dump(args, RABBIT.read_bytes())
    assert code == 2 and out == ""
    assert err == f"amqp: error: {message}\n"


def test_a_terminal_on_standard_input_is_a_usage_error() -> None:
    main, other = pty.openpty()
    try:
        p = _amqp("pcap-dump", "-", stdin=other)
        out, err = p.communicate(timeout=DEADLINE)
    finally:
        os.close(main)
        os.close(other)
    assert p.returncode == 2 and out == b""
    assert b"standard input is a terminal; pipe a capture into it" in err


def test_nothing_on_standard_input() -> None:
    code, out, err = _dump(["-"], b"")
    assert code == 8 and out == ""
    assert "<stdin>: not a capture file" in err


class _Counting:
    """A `waiting` context manager that counts how often it was entered."""

    def __init__(self) -> None:
        self.entered = 0
        self.inside = False

    def __enter__(self) -> None:
        assert not self.inside
        self.inside = True
        self.entered += 1

    def __exit__(self, *exc: object) -> None:
        self.inside = False


@pytest.mark.parametrize("compress", [False, True])
def test_every_read_of_a_capture_is_inside_waiting(tmp_path: Path, compress: bool) -> None:
    path = tmp_path / "c.pcap"
    _as_pcap(RABBIT, path, compress=compress)
    w = _Counting()
    size = 512
    packets = [(ts, bytes(d)) for ts, _lt, d in read_packets(str(path), block_size=size,
                                                              waiting=w)]
    assert packets == [(ts, bytes(d)) for ts, _lt, d in read_packets(str(path))]
    assert w.entered >= len(_uncompressed(path)) // size  # a wait for every block
    assert not w.inside


def _uncompressed(path: Path) -> bytes:
    import gzip

    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
