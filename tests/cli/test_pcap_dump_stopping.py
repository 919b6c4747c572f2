"""How Ctrl-C ends `amqp pcap-dump` (`Stopping`): a live capture is ended gently first,
and the reading stops at once only when there is nothing to end or on a second signal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from amqpcli.cli.pcap_dump import Out, Stopping
from tests.paths import CAPTURES_DIR, require

RABBIT = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"
AMQP010 = CAPTURES_DIR / "amqp010-qpid-python-echo.pcapng"


def _stopping(ended: list[bool], answer: bool | None) -> Stopping:
    stop = Stopping(Out(False, True))
    if answer is not None:
        def end() -> bool:
            ended.append(True)
            return answer
        stop.capturing(end)
    return stop


def test_first_signal_ends_a_live_capture_and_the_reading_goes_on() -> None:
    ended: list[bool] = []
    stop = _stopping(ended, True)
    with stop:
        stop._on_signal(signal.SIGINT, None)  # in a wait: no KeyboardInterrupt
    assert ended == [True] and stop.interrupted and not stop.stopped[0]
    with pytest.raises(KeyboardInterrupt), stop:
        stop._on_signal(signal.SIGINT, None)  # the second: at once
    assert ended == [True] and stop.stopped[0]


def test_nothing_to_end_stops_the_reading_at_once() -> None:
    for answer in (None, False):  # no live capture; its process not started yet
        ended: list[bool] = []
        stop = _stopping(ended, answer)
        with pytest.raises(KeyboardInterrupt), stop:
            stop._on_signal(signal.SIGTERM, None)
        assert stop.interrupted and stop.stopped[0]
        stop._on_signal(signal.SIGINT, None)  # ignored: the end is on its way
        assert len(ended) == (0 if answer is None else 1)


# --- a named pipe: its open waits for a writer --------------------------------------


def _blocked_in_open(pid: int) -> bool:
    """Whether the process waits in a named pipe's open for its writer (Linux)."""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            return f.read().strip() == "wait_for_partner"
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_stops_a_run_waiting_for_a_named_pipes_writer(tmp_path: Path,
                                                               sig: int) -> None:
    # The open of a capture was outside `waiting`: the signal only set a flag, the open
    # went on waiting, and only SIGKILL ended the run. Now it stops, exit 130.
    fifo = tmp_path / "f.pcapng"
    os.mkfifo(fifo)
    p = subprocess.Popen([sys.executable, "-m", "amqpcli", "pcap-dump", str(fifo)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):  # until it waits in the open (at most a minute)
            if _blocked_in_open(p.pid) or p.poll() is not None:
                break
            time.sleep(0.1)
        p.send_signal(sig)
        try:
            _out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            pytest.fail("still waiting for the named pipe's writer after the signal")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, err
    assert err.strip().splitlines()[-1] == "amqp: interrupted" and "Traceback" not in err


def _feed(fifo: Path, data: bytes) -> threading.Thread:
    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t


def test_a_named_pipe_named_is_read_once_alone_or_with_files(tmp_path: Path) -> None:
    # mkfifo f; tcpdump -w f & amqp pcap-dump f. Merged with files, it is opened once (a
    # file is peeked at for its first time and opened again when its turn comes: a pipe
    # opened again would wait for a writer that is gone).
    data = require(RABBIT).read_bytes()
    fifo = tmp_path / "f.pcapng"
    os.mkfifo(fifo)
    for extra in ([], [str(require(AMQP010))]):
        writer = _feed(fifo, data)
        p = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(fifo), *extra,
                            "--connections"], capture_output=True, text=True, timeout=120,
                           check=False)
        writer.join(60)
        assert p.returncode == 0, p.stderr
        conns = [line for line in p.stdout.splitlines() if line.startswith("c")]
        assert len(conns) == (2 if not extra else 3), p.stdout


@pytest.mark.parametrize("at, nths", [("transfer", range(1, 41, 3)),
                                      ("disposition", range(1, 5))])
def test_a_stop_loses_no_record_the_model_took_in(at: str, nths: range) -> None:
    """A stop comes between records; the reading ends before the next capture event, so
    the records of the event in hand all go out. The loop used to drop the record it had
    just pulled: a transfer whose delivery the model then reported unsettled at the end
    (one delivery more than transfers), or a disposition whose settled deliveries were
    never shown."""
    from amqpcli.dissect import DeliveryRecord, Dissector, FrameRecord
    from amqpcli.dissect.filters import performative_name

    for nth in nths:  # (the capture: 40 transfers, 4 dispositions)
        dis = Dissector()
        stopped = [False]
        transfers = deliveries = seen = 0
        for rec in dis.read(str(require(RABBIT)), stopped=stopped):
            name = performative_name(rec.item) if isinstance(rec, FrameRecord) else None
            if name == "transfer":
                transfers += 1
            if isinstance(rec, DeliveryRecord):
                deliveries += 1
            if name == at:
                seen += 1
                if seen == nth:
                    stopped[0] = True  # as a signal does
        assert stopped[0], nth
        deliveries += sum(isinstance(r, DeliveryRecord) for r in dis.finish())
        assert deliveries == transfers, (at, nth)
