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


# --- --links: 0-10 has destinations where 1.0 has links -------------------------------


def test_links_lists_the_destinations_of_a_0_10_connection() -> None:
    # --links printed nothing for a 0-10 capture
    code, text, err = run("pcap-dump", ECHO, "--links")
    assert code == 0, err
    assert text.splitlines() == [
        ('c1 s1 destination "echo" (client sends) session "lab-session" channel 1: '
         "3 transfers (201 B) accepted=0 rejected=0 released=0 completed=3 unsettled=0"),
        ('c1 s1 destination "echo" (server sends) session "lab-session" channel 1: '
         "3 transfers (201 B) accepted=0 rejected=0 released=0 completed=0 unsettled=3"),
        ('c1 s1 destination "lab-queue" (client sends) session "lab-session" channel 1: '
         "1 transfer (10 B) accepted=0 rejected=0 released=0 completed=1 unsettled=0"),
    ]
    records = _jsonl("--links")
    assert [(r["record"], r["protocol"], r["destination"], r["sender"]) for r in records] == [
        ("destination", "amqp-0-10", "echo", "client"),
        ("destination", "amqp-0-10", "echo", "server"),
        ("destination", "amqp-0-10", "lab-queue", "client")]
    first = records[0]
    assert (first["session"], first["session-name"], first["channel"]) == (1, "lab-session", 1)
    assert first["outcomes"] == {"accepted": 0, "rejected": 0, "released": 0, "completed": 3,
                                 "unsettled": 0}
    assert first["subscription"] is None
    # the same messages as --connections and --deliveries count, the same sizes
    assert sum(r["transfers"] for r in records) == 7
    dels = _jsonl("-d")
    assert sum(r["bytes"] for r in records) == sum(d["size"] for d in dels)


def test_links_of_0_10_follow_the_filters() -> None:
    _, text, _ = run("pcap-dump", ECHO, "--links", "--link", "lab-*")
    assert [line.split(" (")[0] for line in text.splitlines()] == [
        'c1 s1 destination "lab-queue"']
    # the records --state keeps belong to the echo destination the server sends to
    _, text, _ = run("pcap-dump", ECHO, "--links", "--state", "unsettled")
    assert [line.split(":")[0] for line in text.splitlines()] == [
        'c1 s1 destination "echo" (server sends) session "lab-session" channel 1']


def _subscribed_capture(path: Path, credit: int = 3) -> Path:
    """A client that subscribes destination "d" to queue "q" in credit mode on session
    "s" (`credit` messages), takes three messages and accepts, rejects and releases one
    each, then cancels. Frames: one per control and command, two per transfer."""
    from amqpcli.amqp010 import PROTOCOL_HEADER, Command, Control, SequenceSet, encode_assembly
    from tests.amqp010.pcap_write import write

    def ctl(side: str, qname: str, **f: object) -> tuple[str, bytes]:
        return side, encode_assembly(Control.make(qname, **f), 1)

    def cmd(side: str, qname: str, body: bytes | None = None, **f: object) -> tuple[str, bytes]:
        return side, encode_assembly(Command.make(qname, **f), 1, (), body)

    chunks = [("client", PROTOCOL_HEADER), ("server", PROTOCOL_HEADER),
              ctl("client", "session.attach", name=b"s"),
              ctl("server", "session.attached", name=b"s"),
              ctl("client", "session.command-point", command_id=0, command_offset=0),
              ctl("server", "session.command-point", command_id=0, command_offset=0),
              cmd("client", "message.subscribe", queue="q", destination="d"),
              cmd("client", "message.set-flow-mode", destination="d", flow_mode=0),
              cmd("client", "message.flow", destination="d", unit=0, value=credit),
              cmd("client", "message.flow", destination="d", unit=1, value=0xFFFFFFFF)]
    chunks += [cmd("server", "message.transfer", b"m%d" % i, destination="d")
               for i in range(3)]
    chunks += [cmd("client", "message.accept", transfers=SequenceSet.of(0)),
               cmd("client", "message.reject", transfers=SequenceSet.of(1), code=1, text="x"),
               cmd("client", "message.release", transfers=SequenceSet.of(2)),
               cmd("client", "message.cancel", destination="d"),
               ctl("server", "session.completed", commands=SequenceSet(((0, 7),)))]
    write(path, chunks)
    return path


def test_links_of_0_10_show_the_subscription_and_its_outcomes(tmp_path: Path) -> None:
    cap = str(_subscribed_capture(tmp_path / "subscribed.pcap"))
    code, text, err = run("pcap-dump", cap, "--links")
    assert code == 0, err
    assert text.splitlines() == [
        ('c1 s1 destination "d" (server sends) session "s" channel 1, subscribed to queue "q" '
         "(credit mode, cancelled): 3 transfers (6 B) accepted=1 rejected=1 released=1 "
         "completed=0 unsettled=0")]
    code, out, err = run("pcap-dump", cap, "--links", "--json")
    (rec,) = [json.loads(line) for line in out.splitlines()]
    assert rec["outcomes"] == {"accepted": 1, "rejected": 1, "released": 1, "completed": 0,
                               "unsettled": 0}
    sub = rec["subscription"]
    assert (sub["queue"], sub["flow-mode"], sub["accept-mode"], sub["acquire-mode"]) == (
        "q", "credit", 0, 0)
    assert sub["credit"] == {"message": 0, "byte": 0xFFFFFFFF}
    assert sub["cancelled"] is not None and sub["subscribes"] == 1


# --- frame numbers: a 0-10 record (an assembly) by its frames on the wire --------------


def test_0_10_records_are_numbered_by_their_frames_on_the_wire() -> None:
    # `frame` was the assembly's number: the last record said 30 of a connection of 43
    # frames, and a 3-frame transfer took one number
    frames = [r for r in _jsonl() if r["record"] == "frame" and "frame" in r]
    numbers = [r["frame"] for r in frames]
    assert numbers == sorted(set(numbers))
    assert numbers[-1] == sum(FRAMES.values())
    transfer = next(r for r in frames if r["method"] == "message.transfer")
    assert transfer["frame"] == 9 + 3  # after nine one-frame controls, its three frames


def test_a_0_10_violation_names_the_same_frame_in_text_and_json(tmp_path: Path) -> None:
    cap = str(_subscribed_capture(tmp_path / "short.pcap", credit=2))
    records = [json.loads(line) for line in run("pcap-dump", cap, "--json")[1].splitlines()]
    (v,) = [r for r in records if r["record"] == "violation"]
    transfers = [r for r in records if r.get("method") == "message.transfer"]
    # four controls, four commands, then transfers of two frames each: the third is 14
    assert [r["frame"] for r in transfers] == [10, 12, 14]
    assert v["frame"] == 14 and v["detail"] == "transfer 2 to 'd' beyond message credit"
    _, text, _ = run("pcap-dump", cap)
    (line,) = [x for x in text.splitlines() if "violation" in x]
    assert f"(frame 14, packet {v['packet']}): " in line


@pytest.mark.parametrize("option", [["-a", "d"], ["--link", "d"], ["--summary", "-a", "d"]])
def test_a_frame_with_a_0_10_violation_passes_the_link_filters(tmp_path: Path,
                                                               option: list[str]) -> None:
    """A 0-10 violation event has a `message` too, its text: the link filters read it as
    a message's destination (an internal error, nothing printed)."""
    cap = str(_subscribed_capture(tmp_path / "short.pcap", credit=2))
    code, out, err = run("pcap-dump", cap, *option)
    assert code == 0, err
    if "--summary" not in option:
        assert sum("message.transfer destination=d" in x for x in out.splitlines()) == 3


def test_selector_and_messages_say_they_leave_0_10_out() -> None:
    code, out, err = run("pcap-dump", ECHO, "-m", "-s", "a = 1")
    assert code == 0 and out.startswith("0 messages")
    assert err == ("amqp: note: --selector and --messages read AMQP 1.0 only: 1 AMQP 0-10 "
                   "connection left out\n")
    code, _, err = run("pcap-dump", ECHO, "-m")
    assert err == "amqp: note: --messages reads AMQP 1.0 only: 1 AMQP 0-10 connection left out\n"
