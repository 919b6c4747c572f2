"""`amqp respond` answering `amqp request` through `amqp serve` (the anonymous relay) and
through RabbitMQ 3.x (no relay: a sender link per reply-to), and a proton requester
(BlockingConnection, a dynamic node for its replies) through the proton test broker."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from proton import Message as PMessage
from proton.utils import BlockingConnection

from amqpcli.codec import composites as c
from amqpcli.codec.message import Message as AMessage
from amqpcli.render.message import message_bytes_from_json
from tests.net.clirun import amqp, cli_env, json_lines
from tests.net.servepeer import ServePeers
from tests.paths import REPO_ROOT
from tests.peers.broker import Broker

pytestmark = pytest.mark.integration


class Responding:
    """`amqp respond ARGS --json` running in the background; `finish()` waits for it."""

    def __init__(self, *args: str) -> None:
        self.p = subprocess.Popen(
            [sys.executable, "-m", "amqpcli", "respond", *args, "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
            env=cli_env())

    def finish(self) -> tuple[int, list[dict[str, Any]], dict[str, Any], str]:
        """Its exit code, the requests it printed, its summary and its stderr."""
        try:
            out, err = self.p.communicate(timeout=120)
        finally:
            if self.p.poll() is None:
                self.p.kill()
                self.p.wait()
        lines = [ln for ln in err.splitlines() if ln.startswith('{"respond"')]
        assert len(lines) == 1, err
        return self.p.returncode, json_lines(out), json.loads(lines[0])["respond"], err


def _props(obj: dict[str, Any]) -> Any:
    return AMessage.decode(message_bytes_from_json(obj)).properties


def _body(obj: dict[str, Any]) -> Any:
    """The message's body: its one section's value."""
    body = AMessage.decode(message_bytes_from_json(obj)).body
    return body.value if isinstance(body, c.AmqpValue) else [type(s).__name__ for s in body] + [
        s.value for s in body]


def test_request_answered_through_serve(serve: ServePeers) -> None:
    url = serve()
    r = Responding(f"{url}/service", "-c", "2", "-t", "30")
    p = amqp("request", f"{url}/service", "one", "two", "--message-id", "req-{n}",
             "--correlation-id", "corr-{n}", "--json")
    code, requests, summary, err = r.finish()
    assert p.returncode == 0, p.stderr
    assert code == 0, err
    replies = json_lines(p.stdout)
    # each reply carries the request's correlation-id and goes to its reply-to
    assert [(_props(o).correlation_id, _body(o)) for o in replies] == [
        ("corr-1", ["Data", b"one"]), ("corr-2", ["Data", b"two"])]
    reply_to = {_props(o).reply_to for o in requests}
    assert len(reply_to) == 1 and {_props(o).to for o in replies} == reply_to
    assert [_props(o).message_id for o in requests] == ["req-1", "req-2"]
    assert (summary["requests"], summary["replied"], summary["failed"], summary["relay"]) == (
        2, 2, 0, True)


def test_the_message_id_when_no_correlation_id_and_the_body_section_echoed(
        serve: ServePeers) -> None:
    url = serve()
    r = Responding(f"{url}/service", "-c", "1", "-t", "30")
    # an amqp-value request with only a message-id: amqp request matches the reply by it
    p = amqp("send", f"{url}/service", '{"list": ["a", {"int": 1}]}', "--json-body",
             "--message-id", "ulong:7", "--reply-to", "replies", "--content-type", "x/y")
    assert p.returncode == 0, p.stderr
    code, _, summary, err = r.finish()
    assert code == 0 and summary["replied"] == 1, err
    p = amqp("recv", f"{url}/replies", "-c", "1", "-t", "10", "--json")
    assert p.returncode == 0, p.stderr
    (reply,) = json_lines(p.stdout)
    props = _props(reply)
    assert (props.correlation_id, type(props.correlation_id).__name__) == (7, "ULong")
    assert (props.to, str(props.content_type)) == ("replies", "x/y")
    assert _body(reply) == ["a", 1] and type(_body(reply)[1]).__name__ == "Int"


def test_a_fixed_body(serve: ServePeers) -> None:
    url = serve()
    r = Responding(f"{url}/service", "-c", "1", "-t", "30", "--body", "int:42",
                   "--body-type", "value")
    p = amqp("request", f"{url}/service", "ping", "--json")
    assert p.returncode == 0, p.stderr
    assert r.finish()[0] == 0
    (reply,) = json_lines(p.stdout)
    assert (_body(reply), type(_body(reply)).__name__) == (42, "Int")


def test_unanswerable_requests_are_rejected_or_given_back(serve: ServePeers) -> None:
    """No reply-to: rejected, saying why. A reply-to the relay refuses (a dynamic node
    gone): the request is given back (modified, delivery-failed), still on the node
    afterwards, its delivery-count up by one. Exit 6."""
    url = serve()
    p = amqp("recv", url, "--dynamic", "-t", "0.2")
    (gone,) = [ln.split(": ")[-1] for ln in p.stderr.splitlines()
               if "dynamic node address" in ln]
    assert amqp("send", f"{url}/service", "no reply-to").returncode == 0
    p = amqp("send", f"{url}/service", "to a gone node", "--reply-to", gone,
             "--message-id", "kept")
    assert p.returncode == 0, p.stderr
    r = Responding(f"{url}/service", "-c", "2", "-t", "30")
    code, requests, summary, err = r.finish()
    assert code == 6, err
    assert len(requests) == 2
    assert (summary["requests"], summary["replied"], summary["rejected"],
            summary["given-back"]) == (2, 0, 1, 1)
    no_reply_to, refused = summary["errors"]
    assert no_reply_to == ("request 1: the request has no reply-to: there is nowhere to "
                           "send its reply: rejected")
    assert refused.startswith("request 2: reply not sent (rejected: amqp:not-found: ")
    assert refused.endswith("): given back")
    assert summary["error"] == "2 of 2 request(s) not answered"
    # nothing lost: the request given back is still there
    p = amqp("recv", f"{url}/service", "-c", "1", "-t", "10", "--json")
    assert p.returncode == 0, p.stderr
    (kept,) = json_lines(p.stdout)
    assert _props(kept).message_id == "kept"
    assert kept["header"]["delivery-count"] == 1, kept  # (a failed attempt, counted)


def test_a_request_that_cannot_be_written_is_not_answered(serve: ServePeers) -> None:
    """Standard output full: the request is neither answered nor settled (exit 2), and
    stays on the node."""
    url = serve()
    p = amqp("send", f"{url}/service", "hi", "--reply-to", "replies", "--message-id", "m")
    assert p.returncode == 0, p.stderr
    with open("/dev/full", "w") as full:
        p2 = subprocess.run(
            [sys.executable, "-m", "amqpcli", "respond", f"{url}/service", "-c", "1", "--json"],
            check=False, stdout=full, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
            env=cli_env(), timeout=120)
    assert p2.returncode == 2, p2.stderr
    assert p2.stderr.splitlines()[-1] == "amqp: error: cannot write standard output: No space left on device"
    assert json.loads(p2.stderr.splitlines()[0])["respond"]["replied"] == 0
    p = amqp("recv", f"{url}/replies", "-t", "0.5")
    assert p.returncode == 0 and p.stdout == "", p.stderr  # (no reply went)
    p = amqp("recv", f"{url}/service", "-c", "1", "-t", "10", "--json")
    assert p.returncode == 0, p.stderr
    assert [_props(o).message_id for o in json_lines(p.stdout)] == ["m"]


def test_reconnect_answers_every_request(serve: ServePeers) -> None:
    """A connection closed every three deliveries (a request in, its reply out, the next
    request in): with --reconnect every request is answered and none is left on the
    node. The first connection has the three requests come with its close, none answered:
    the credit shrinks, else each connection would take the same ones and answer none."""
    url = serve("--close-after", "3")
    for n in (1, 2, 3):
        p = amqp("send", f"{url}/service", f"r{n}", "--reply-to", "replies",
                 "--message-id", f"m{n}")
        assert p.returncode == 0, p.stderr
    r = Responding(f"{url}/service", "-t", "2", "--reconnect", "10")
    code, _, summary, err = r.finish()
    assert code == 0, err
    assert summary["reconnects"] >= 1 and summary["replied"] >= 3, summary
    p = amqp("recv", f"{url}/replies", "-t", "1", "--json", "--reconnect", "10")
    assert {_props(o).correlation_id for o in json_lines(p.stdout)} == {"m1", "m2", "m3"}
    p = amqp("recv", f"{url}/service", "-t", "0.5")
    assert p.stdout == "", p.stderr


def test_request_answered_through_rabbitmq(rabbitmq_url: str, rabbitmq_queue: str) -> None:
    """RabbitMQ 3.x offers no anonymous relay (nor dynamic nodes): the replies go on a
    link to the reply-to node."""
    r = Responding(f"{rabbitmq_url}/{rabbitmq_queue}", "-c", "3", "-t", "30")
    p = amqp("request", f"{rabbitmq_url}/{rabbitmq_queue}", "a", "b", "c",
             "--reply-to", f"{rabbitmq_queue}-replies", "--concurrency", "3", "--json")
    code, requests, summary, err = r.finish()
    assert p.returncode == 0, p.stderr
    assert code == 0, err
    assert sorted(_body(o)[1] for o in json_lines(p.stdout)) == [b"a", b"b", b"c"]
    assert len(requests) == 3
    assert (summary["replied"], summary["failed"], summary["relay"]) == (3, 0, False)


def test_a_proton_requester(peers: Any) -> None:
    """An independent requester: proton's BlockingConnection with a dynamic node for its
    replies, one request with a correlation-id and one with a message-id only."""
    broker: Broker = peers(Broker())
    r = Responding(f"{broker.url}/service", "-c", "2", "-t", "30")
    conn = BlockingConnection(broker.url, timeout=30)
    try:
        replies = conn.create_receiver(None, dynamic=True, credit=10)
        reply_to = replies.remote_source.address
        sender = conn.create_sender("service")
        sender.send(PMessage(body="twas brillig", reply_to=reply_to, correlation_id="c-1",
                             id="m-1"))
        sender.send(PMessage(body=b"\x00\x01", reply_to=reply_to, id="m-2"))
        got = []
        for _ in range(2):
            got.append(replies.receive(timeout=30))
            replies.accept()
    finally:
        conn.close()
    code, _, summary, err = r.finish()
    assert code == 0, err
    assert [(m.correlation_id, m.body, m.address) for m in got] == [
        ("c-1", "twas brillig", reply_to), ("m-2", b"\x00\x01", reply_to)]
    assert (summary["requests"], summary["replied"]) == (2, 2)


def test_requests_held_past_the_limit_are_given_back_mid_run(serve: ServePeers) -> None:
    """`HELD` requests whose reply the relay refused (their reply-to a temporary node
    that is not there) are given back as failed attempts while the run goes on, not at
    its end: the node delivers them again at once (to this responder, its only one),
    their delivery-count up by one; those held when the run ends are given back then.
    None is lost."""
    from amqpcli.net.responding import HELD
    from amqpcli.peer.store import TEMPORARY_PREFIX

    url = serve()
    gone = f"{TEMPORARY_PREFIX}0.gone"
    p = amqp("send", f"{url}/service", "ping", "--reply-to", gone, "-c", str(HELD),
             "--message-id", "m{n}")
    assert p.returncode == 0, p.stderr
    more = HELD // 2
    r = Responding(f"{url}/service", "-c", str(HELD + more), "-t", "30")
    code, requests, summary, err = r.finish()
    assert code == 6, err
    assert (summary["requests"], summary["replied"], summary["given-back"]) == (
        HELD + more, 0, HELD + more)
    counts = [o.get("header", {}).get("delivery-count", 0) for o in requests]
    assert counts == [0] * HELD + [1] * more, counts
    assert summary["errors"][0] == ("request 1: reply not sent (rejected: amqp:not-found: "
                                    f"anonymous relay: no node {gone!r}): given back")
    p = amqp("recv", f"{url}/service", "-t", "1", "--json")
    assert p.returncode == 0, p.stderr
    left = json_lines(p.stdout)
    assert sorted(_props(o).message_id for o in left) == sorted(f"m{n}" for n in
                                                                range(1, HELD + 1))


@pytest.mark.parametrize(("args", "said"), [
    (["amqp://127.0.0.1:1"], "no address"),
    (["amqp://127.0.0.1:1/q", "--json-body"], "--json-body is for --body"),
    (["amqp://127.0.0.1:1/q", "--body", "x", "--body-type", "nope"], "--body-type must be"),
    (["amqp://127.0.0.1:1/q", "--body", "{", "--json-body"], "body is not lossless JSON"),
    (["amqp://127.0.0.1:1/q", "-c", "0"], "--count must be at least 1"),
    (["amqp://127.0.0.1:1/q", "-t", "0"], "--timeout must be"),
])
def test_usage_errors(args: list[str], said: str) -> None:
    p = amqp("respond", *args)
    assert p.returncode == 2, p.stderr
    assert said in p.stderr and "Traceback" not in p.stderr


def test_requests_are_printed_as_requests(serve: ServePeers) -> None:
    """Labelled as the summary names them ("request 2"), not as recv's messages."""
    url = serve()
    p = amqp("send", f"{url}/service", "one", "--reply-to", "replies")
    assert p.returncode == 0, p.stderr
    p = amqp("respond", f"{url}/service", "-c", "1", "-t", "30")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].startswith("request 1  ("), p.stdout


def test_count_not_met_within_the_timeout(serve: ServePeers) -> None:
    url = serve()
    p = amqp("respond", f"{url}/service", "-c", "1", "-t", "0.5")
    assert p.returncode == 5, p.stderr
    assert p.stderr.splitlines() == [
        "amqp: requests 0, replied 0, failed 0 in " + p.stderr.split(" in ", 1)[1]
        .splitlines()[0],
        "amqp: error: received 0 of 1 request(s) before the timeout"]


def test_reply_properties_built_from_the_request() -> None:
    from amqpcli.net.responding import reply_correlation

    assert reply_correlation(c.Properties(message_id="m", correlation_id="c")) == "c"
    assert reply_correlation(c.Properties(message_id="m")) == "m"
    assert reply_correlation(None) is None


def test_the_reply_options_are_under_their_own_heading() -> None:
    """--body, --body-type and --json-body shape the reply: under respond's "Reply"
    heading, not send's "Message" (whose declaration of the last two is shared, and
    stays as it was)."""
    import typer

    from amqpcli.cli import app as app_module

    app_module._register()
    commands = typer.main.get_command(app_module.app).commands  # type: ignore[attr-defined]

    def panels(command: str) -> dict[str, str | None]:
        return {p.name: getattr(p, "rich_help_panel", None)
                for p in commands[command].params}

    respond, send = panels("respond"), panels("send")
    assert [respond[n] for n in ("body", "body_type", "json_body")] == ["Reply"] * 3
    assert [send[n] for n in ("body_type", "json_body")] == ["Message"] * 2
