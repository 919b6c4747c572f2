"""`pcap-dump` of the qpid-python 0-10 echo capture: every view counts the same things
(sessions, messages, frames, sizes) and means one thing by each count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_decode_secrets import run
from tests.paths import CAPTURES_DIR, require

ECHO = str(CAPTURES_DIR / "amqp010-qpid-python-echo.pcapng")
# tshark's count of AMQP 0-10 frames in the capture, per side; 13 and 17 assemblies
FRAMES = {"client": 20, "server": 23}


@pytest.fixture(scope="module", autouse=True)
def _capture() -> None:
    require(Path(ECHO))


def _jsonl(*args: str) -> list[dict]:
    code, out, err = run("pcap-dump", ECHO, "--json", *args)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_connection_counts_agree_in_text_and_json() -> None:
    (conn,) = _jsonl("--connections")
    assert (conn["sessions"], conn["messages"], conn["subscriptions"]) == (2, 7, 0)
    assert conn["frames"] == FRAMES
    assert conn["assemblies"] == {"client": 13, "server": 17}
    _, text, _ = run("pcap-dump", ECHO, "--connections")
    assert "sessions 2, messages 7, subscriptions 0, violations 0" in text
    assert "client: 13 assemblies in 20 frames, 803 B" in text


def test_a_delivery_counts_frames_and_octets_as_decode_does() -> None:
    dels = _jsonl("-d")
    first = dels[0]
    # command, header and body segments: decode's "3 frames"
    assert first["frames"] == 3
    _, text, _ = run("pcap-dump", ECHO, "-d")
    assert "[3 frames]" in text.splitlines()[0]
    # size: header and body segments, in the record and in its transfer's entry
    assert first["size"] == 67
    assert first["timeline"][0]["detail"]["size"] == 67


def test_the_summary_counts_frames_on_the_wire() -> None:
    (summary,) = _jsonl("--summary")
    assert summary["frames"] == sum(FRAMES.values()) + 2  # and the two protocol headers
