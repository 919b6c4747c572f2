"""`amqp pcap-dump --selector`: the messages a JMS-style selector selects — their transfer
frames (a message in several frames judged by its first), their deliveries, the messages
view and the summary — and a selector that does not parse as a usage error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message
from amqpcli.codec.types import DecodeError
from tests.dissect.helpers import Script, write
from tests.net.clirun import amqp_in_process as run
from tests.paths import require

SAMPLE = Path(__file__).parents[2] / "amqpcli" / "examples" / "serve-session.pcapng"


def _ok(*args: str) -> str:
    code, out, err = run("pcap-dump", str(require(SAMPLE)), *args)
    assert code == 0, err
    return out


def test_one_message_by_its_id_in_every_view() -> None:
    (frame,) = _ok("--selector", "JMSMessageID = 'order-5'").splitlines()
    assert " transfer " in frame and " id=4 " in frame
    (delivery,) = _ok("--selector", "JMSMessageID = 'order-5'", "-d").splitlines()
    assert " #4 " in delivery and " rejected " in delivery
    (message, totals) = _ok("--selector", "properties.message-id = 'order-5'", "-m").splitlines()
    assert 'id="order-5"' in message and totals.startswith("1 message: ")
    summary = _ok("--selector", "JMSMessageID IN ('order-5', 'order-7')", "--summary")
    assert "deliveries: 2\n" in summary


def test_application_properties_and_three_valued_logic() -> None:
    every = _ok("-d").splitlines()
    assert _ok("--selector", "region = 'eu'", "-d").splitlines() == every
    assert _ok("--selector", "region <> 'eu'", "-d") == ""
    assert _ok("--selector", "colour = 'red' OR region LIKE 'e_'", "-d").splitlines() == every
    # a property no message has: unknown, never selected (also with NOT)
    assert _ok("--selector", "NOT (colour = 'red')", "-d") == ""


def _multi_frame(tmp_path: Path) -> Path:
    """Two messages of three transfer frames each, red then blue, their properties in
    the first frame; then a one-frame red one."""
    s = Script().open().sender_link()
    for did, colour in ((0, "red"), (1, "blue")):
        msg = Message(body=b"x" * 300, application_properties={"colour": colour}).encode()
        pieces = [msg[:100], msg[100:200], msg[200:]]
        for i, piece in enumerate(pieces):
            s.c(c.Transfer(handle=0, delivery_id=did if i == 0 else None,
                           delivery_tag=b"t%d" % did if i == 0 else None,
                           message_format=0 if i == 0 else None,
                           more=i < len(pieces) - 1), payload=piece)
    s.c(c.Transfer(handle=0, delivery_id=2, delivery_tag=b"t2", message_format=0),
        payload=Message(body=b"y", application_properties={"colour": "red"}).encode())
    s.dispose(0, c.Accepted(), 2).close()
    return write(tmp_path / "multi.pcapng", s)


def test_a_message_in_several_frames_is_judged_by_its_first(tmp_path: Path) -> None:
    path = str(_multi_frame(tmp_path))
    code, out, err = run("pcap-dump", path, "--selector", "colour = 'red'", "--json")
    assert code == 0, err
    frames = [json.loads(line) for line in out.splitlines()]
    transfers = [f["performative"]["transfer"] for f in frames]
    # the three frames of the red one, not the blue one's, then the one-frame red one
    assert [t.get("delivery-id") for t in transfers] == [0, None, None, 2]
    code, out, _ = run("pcap-dump", path, "--selector", "colour = 'blue'", "-d")
    assert code == 0 and [line.split()[4] for line in out.splitlines()] == ["#1"]


def test_a_selector_that_does_not_parse_is_a_usage_error() -> None:
    code, out, err = run("pcap-dump", str(require(SAMPLE)), "--selector", "colour = ")
    assert code == 2 and out == ""
    assert err == ("amqp: error: --selector: expected a value at position 10, found 'end of "
                   "selector'\n")
    # one that is no condition: it selected nothing, as if no message matched
    code, out, err = run("pcap-dump", str(require(SAMPLE)), "--selector", "region + 1", "-d")
    assert code == 2 and out == ""
    assert err.startswith("amqp: error: --selector: expected a condition at position 1, found "
                          "'region + 1', an arithmetic expression (")
    assert err.count("\n") == 1


def test_head_of_a_message_cut_short() -> None:
    """`Message.decode(head=True)`: the sections before the body, from a first frame that
    reaches the body; one that ends before it may lack a section: DecodeError."""
    whole = Message(body=b"z" * 500, properties=c.Properties(message_id="m"),
                    application_properties={"k": 1}).encode()
    body_at = whole.index(b"\x00\x53\x75")
    for cut in (len(whole), 200, body_at + 8):  # (its descriptor and size whole)
        head = Message.decode(whole[:cut], head=True)
        assert head.properties is not None and head.properties.message_id == "m"
        assert head.application_properties is not None and head.body is None
    for cut in (body_at, body_at - 3, 5):  # at the body's start, inside a section, before
        with pytest.raises(DecodeError):
            Message.decode(whole[:cut], head=True)


def _big_head(tmp_path: Path) -> Path:
    """A message whose application properties do not fit its first frame: a red one
    whose colour comes in its second frame."""
    msg = Message(body=b"x", application_properties={"pad": "p" * 300,
                                                     "colour": "red"}).encode()
    s = Script().open().sender_link()
    for i, piece in enumerate((msg[:100], msg[100:])):
        s.c(c.Transfer(handle=0, delivery_id=0 if i == 0 else None,
                       delivery_tag=b"t" if i == 0 else None,
                       message_format=0 if i == 0 else None, more=i == 0), payload=piece)
    s.dispose(0, c.Accepted()).close()
    return write(tmp_path / "big-head.pcapng", s)


def test_a_first_frame_that_ends_before_the_body_is_not_judged(tmp_path: Path) -> None:
    path = str(_big_head(tmp_path))
    for selector in ("colour = 'red'", "colour IS NULL"):  # neither said of it wrongly
        code, out, err = run("pcap-dump", path, "-s", selector, "--performative", "transfer")
        assert code == 0 and out == "", (selector, out, err)
    # the delivery is judged whole
    code, out, _ = run("pcap-dump", path, "-s", "colour = 'red'", "-d")
    assert code == 0 and len(out.splitlines()) == 1
    code, out, _ = run("pcap-dump", path, "-s", "colour IS NULL", "-d")
    assert code == 0 and out == ""


def test_header_fields_with_a_minus_and_unknown_fields() -> None:
    """`header.priority-1` is the priority less one (it was one unknown name, and
    selected nothing); a header or properties field that does not exist is a usage error
    naming those that do."""
    every = _ok("-d").splitlines()
    assert every and _ok("--selector", "header.priority-1 = 3", "-d").splitlines() == every
    assert _ok("--selector", "header.delivery-count-1 < 0", "-d").splitlines() == every
    code, out, err = run("pcap-dump", str(require(SAMPLE)), "--selector", "header.prio > 3")
    assert code == 2 and out == ""
    assert err == ("amqp: error: --selector: unknown header field 'header.prio' at position "
                   "1 (did you mean 'header.priority'? header fields: durable, priority, "
                   "ttl, first-acquirer, delivery-count)\n")
