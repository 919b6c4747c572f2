"""`amqp send` and `amqp recv` against RabbitMQ 3.10 with the AMQP 1.0 plugin."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from urllib.parse import urlsplit

import pytest

from tests.net.clirun import amqp, json_lines, queue_name

pytestmark = pytest.mark.integration


def _q(url: str, name: str) -> str:
    return f"{url}//queue/{name}"


def _anon(url: str, name: str) -> str:
    p = urlsplit(url)
    return f"amqp://{p.hostname}:{p.port}//queue/{name}"


def test_plain_send_anonymous_recv_round_trip(rabbitmq_url: str) -> None:
    q = queue_name()
    r = amqp("send", _q(rabbitmq_url, q), "hello", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["sent"] == 1 and summary["accepted"] == 1 and summary["in-doubt"] == 0
    r = amqp("recv", _anon(rabbitmq_url, q), "--count", "1", "--timeout", "10", "--json")
    assert r.returncode == 0, r.stderr
    (msg,) = json_lines(r.stdout)
    assert msg["body"] == {"data": [{"binary-text": "hello"}]}


def test_every_section_and_type(rabbitmq_url: str) -> None:
    # No delivery annotations here: RabbitMQ 3.10 resets the connection on them (see
    # test_delivery_annotations_break_rabbitmq_…); the proton peer tests cover them.
    q = queue_name()
    uid = uuid.uuid4()
    r = amqp(
        "send", _q(rabbitmq_url, q), "int:42", "--body-type", "value",
        "--durable", "--priority", "7", "--ttl", "600000", "--first-acquirer",
        "--message-id", "id-{n}", "--user-id", "guest", "--to", "somewhere",
        "--subject", "subj", "--reply-to", "/queue/replies", "--correlation-id", f"uuid:{uid}",
        "--content-type", "text/plain", "--content-encoding", "utf-8",
        "--absolute-expiry-time", "2030-01-02T03:04:05Z", "--creation-time", "1700000000000",
        "--group-id", "g", "--group-sequence", "3", "--reply-to-group-id", "rg",
        "-P", "s=text", "-P", "i:int=-5", "-P", "l:long=123456789012", "-P", "u:uint=7",
        "-P", "ub:ubyte=255", "-P", "b:bool=true", "-P", "d:double=1.5", "-P", "f:float=2.5",
        "-P", "sym:symbol=abc", "-P", f"uu:uuid={uid}", "-P", "ts:timestamp=1700000000123",
        "-P", "bin:binary=hex:00ff", "-P", "n:null=", "-P", "c:char=x", "-P", "sh:short=-3",
        "-A", "x-opt-k:string=v", "--footer", "x-opt-f=foot",
    )
    assert r.returncode == 0, r.stderr
    r = amqp("recv", _q(rabbitmq_url, q), "-c", "1", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    (m,) = json_lines(r.stdout)
    assert m["body"] == {"value": {"int": 42}}
    h = m["header"]
    assert h["durable"] is True and h["priority"] == 7 and h["ttl"] == 600000
    p = m["properties"]
    assert p["message-id"] == "id-1" and p["to"] == "somewhere" and p["subject"] == "subj"
    assert p["correlation-id"] == {"uuid": str(uid)}
    assert p["content-type"] == "text/plain" and p["group-sequence"] == 3
    assert p["absolute-expiry-time"] == "2030-01-02T03:04:05.000Z"
    ap = m["application-properties"]
    assert ap["s"] == "text" and ap["i"] == {"int": -5} and ap["l"] == 123456789012
    assert ap["u"] == {"uint": 7} and ap["ub"] == {"ubyte": 255} and ap["b"] is True
    assert ap["d"] == {"double": 1.5} and ap["f"] == {"float": 2.5}
    assert ap["sym"] == {"symbol": "abc"} and ap["uu"] == {"uuid": str(uid)}
    assert ap["n"] is None and ap["c"] == {"char": "x"} and ap["sh"] == {"short": -3}
    assert m["message-annotations"]["x-opt-k"] == "v"
    assert m["footer"]["x-opt-f"] == "foot"


@pytest.mark.parametrize(
    ("args", "body"),
    [
        (["--body-type", "sequence", '[1, {"uint": 2}, "three"]'],
         {"sequence": [[1, {"uint": 2}, "three"]]}),
        (["--body-type", "value", "--json-body", '{"map": {"a": [1, 2]}}'],
         {"value": {"map": {"a": [1, 2]}}}),
        (["--body-type", "value", "plain text"], {"value": "plain text"}),
    ],
)
def test_body_sections(rabbitmq_url: str, args: list[str], body: dict[str, object]) -> None:
    q = queue_name()
    r = amqp("send", _q(rabbitmq_url, q), *args)
    assert r.returncode == 0, r.stderr
    r = amqp("recv", _q(rabbitmq_url, q), "-c", "1", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert json_lines(r.stdout)[0]["body"] == body


def test_lines_count_and_stdin(rabbitmq_url: str) -> None:
    q = queue_name()
    r = amqp("send", _q(rabbitmq_url, q), "--lines", "--json", input=b"a\nb\r\nc\n")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["accepted"] == 3
    r = amqp("send", _q(rabbitmq_url, q), "x", "--count", "5", "--presettled", "--json")
    assert json.loads(r.stdout)["settled"] == 5
    r = amqp("recv", _q(rabbitmq_url, q), "-c", "8", "-t", "10", "--json")
    bodies = [m["body"]["data"][0]["binary-text"] for m in json_lines(r.stdout)]
    assert bodies == ["a", "b", "c", "x", "x", "x", "x", "x"]


def test_outcomes(rabbitmq_url: str) -> None:
    q = queue_name()
    amqp("send", _q(rabbitmq_url, q), "m", "--message-id", "{n}", "--count", "4")
    # release puts it back; reject drops it; accept consumes it.
    r = amqp("recv", _q(rabbitmq_url, q), "-c", "1", "-t", "10", "--outcome", "release", "--json")
    assert r.returncode == 0 and json_lines(r.stdout)[0]["properties"]["message-id"] == "1"
    r = amqp("recv", _q(rabbitmq_url, q), "-c", "3", "-t", "10", "--credit", "1", "--json",
             "--outcome", "reject:amqp:internal-error=bad,accept")
    assert r.returncode == 0, r.stderr
    assert "reject 2" in r.stderr and "accept 1" in r.stderr
    r = amqp("recv", _q(rabbitmq_url, q), "-c", "1", "-t", "10")
    assert r.returncode == 0 and "accept 1" in r.stderr
    r = amqp("recv", _q(rabbitmq_url, q), "-c", "1", "-t", "2")
    assert r.returncode == 5  # TIMEOUT: nothing is left
    assert "received 0 of 1" in r.stderr


def test_release_until_quiet_writes_each_message_once_and_ends(rabbitmq_url: str) -> None:
    """RabbitMQ puts a released message back at the head of the queue and delivers it again
    at once: released one by one, the same messages came for ever and `--timeout` (no
    message for S seconds) never came. They are held to the end of the run instead."""
    q = queue_name()
    amqp("send", _q(rabbitmq_url, q), "m", "--message-id", "{n}", "--count", "3")
    r = amqp("recv", _q(rabbitmq_url, q), "-t", "2", "--outcome", "release", "--json",
             timeout=60)
    assert r.returncode == 0, r.stderr
    assert [m["properties"]["message-id"] for m in json_lines(r.stdout)] == ["1", "2", "3"]
    assert "release 3" in r.stderr
    # all given back, in their order
    r = amqp("recv", _q(rabbitmq_url, q), "-c", "3", "-t", "10", "--json")
    assert [m["properties"]["message-id"] for m in json_lines(r.stdout)] == ["1", "2", "3"]


@pytest.mark.parametrize("outcome", ["modify", "modify:failed", "modify:failed:undeliverable"])
def test_rabbitmq_refuses_modified_and_loses_nothing(rabbitmq_url: str, outcome: str) -> None:
    """RabbitMQ 3.10 does not support `modified` (it ends the session on one); its source
    says so in `outcomes`, so recv refuses up front (exit 4, one line) and the message
    stays on the queue."""
    q = queue_name()
    amqp("send", _q(rabbitmq_url, q), "m")
    r = amqp("recv", _q(rabbitmq_url, q), "-c", "1", "-t", "10", "--outcome", outcome)
    assert r.returncode == 4
    errors = [line for line in r.stderr.splitlines() if line.startswith("amqp: error:")]
    assert errors == [(f"amqp: error: the peer does not support the modified outcome on "
                       f"'/queue/{q}' (its source offers: accepted, rejected, released)")]
    assert len(r.stderr.splitlines()) == 1
    r = amqp("recv", _q(rabbitmq_url, q), "-c", "1", "-t", "10", "--json")
    assert r.returncode == 0 and len(json_lines(r.stdout)) == 1


def test_one_megabyte_in_small_frames(rabbitmq_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    q = queue_name()
    body = bytes(range(256)) * 4096  # 1 MiB, not text
    f = tmp_path / "body.bin"
    f.write_bytes(body)
    r = amqp("send", _q(rabbitmq_url, q), "--file", str(f), "--max-frame-size", "4096")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", _q(rabbitmq_url, q), "-c", "1", "-t", "30", "--json",
             "--max-frame-size", "4096")
    assert r.returncode == 0, r.stderr
    (m,) = json_lines(r.stdout)
    got = base64.b64decode(m["body"]["data"][0]["binary"])
    assert hashlib.sha256(got).digest() == hashlib.sha256(body).digest()


def test_out_file_and_replay(rabbitmq_url: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    q1, q2 = queue_name(), queue_name()
    amqp("send", _q(rabbitmq_url, q1), "one", "-P", "k:int=1", "--message-id", "{n}", "-c", "3")
    out = tmp_path / "msgs.jsonl"
    r = amqp("recv", _q(rabbitmq_url, q1), "-c", "3", "-t", "10", "--json", "--out", str(out))
    assert r.returncode == 0 and r.stdout == ""
    first = json_lines(out.read_text())
    r = amqp("send", _q(rabbitmq_url, q2), "--from", str(out), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["accepted"] == 3
    r = amqp("recv", _q(rabbitmq_url, q2), "-c", "3", "-t", "10", "--json")
    again = json_lines(r.stdout)
    # The bare message (properties, application-properties, body) comes back unchanged.
    assert [m["bare-sha256"] for m in again] == [m["bare-sha256"] for m in first]


def test_errors_are_one_line(rabbitmq_url: str) -> None:
    p = urlsplit(rabbitmq_url)
    r = amqp("send", f"amqp://guest:wrong-secret@{p.hostname}:{p.port}/x", "hi")
    assert r.returncode == 3
    assert r.stderr.strip().count("\n") == 0 and "authentication failed" in r.stderr
    assert "wrong-secret" not in r.stderr + r.stdout
    r = amqp("send", f"{rabbitmq_url}/queue/no-leading-slash", "hi")
    assert r.returncode == 4 and r.stderr.startswith("amqp: error: the peer")
    assert "guest" not in r.stderr.replace("guest@", "")


def test_delivery_annotations_break_rabbitmq_and_are_reported_in_doubt(rabbitmq_url: str) -> None:
    """A RabbitMQ 3.10 quirk, recorded in docs/send-recv.md: a message with delivery
    annotations makes it reset the connection without an outcome. The message is then
    in doubt (exit 7), by number, never silently counted as sent."""
    q = queue_name()
    r = amqp("send", _q(rabbitmq_url, q), "x", "--delivery-annotation", "x-opt-d:int=1",
             "--message-id", "da-{n}", "--json")
    assert r.returncode == 7, r.stderr
    summary = json.loads(r.stdout)
    assert summary["in-doubt"] == 1 and summary["accepted"] == 0
    assert summary["in-doubt-messages"] == [{"number": 1, "message-id": "da-1"}]
    assert "connection reset by peer" in r.stderr


def test_rabbitmq_does_not_keep_durable_subscriptions(rabbitmq_url: str) -> None:
    """A RabbitMQ 3.10 quirk recorded in docs/send-recv.md (the proton broker keeps them:
    tests/cli/test_recv_proton.py). If this fails, the quirk is gone: update the doc."""
    url = f"{rabbitmq_url}//topic/{queue_name('news')}"
    sub = ["--subscription", "s1", "--container-id", f"c-{queue_name()}"]
    r = amqp("recv", url, *sub, "-t", "1")
    assert r.returncode == 0 and "warning" not in r.stderr  # granted as asked
    assert amqp("send", url, "while away").returncode == 0
    r = amqp("recv", url, *sub, "-c", "1", "-t", "2")
    assert r.returncode == 5  # nothing was kept
