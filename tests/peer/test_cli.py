"""`amqp send` / `recv` / `browse` against `amqp serve`: the tests our client passes
against the real peers, where the feature exists."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.net.clirun import amqp, json_lines, queue_name

pytestmark = pytest.mark.integration

Serve = Callable[..., Any]


def _bodies(out: str) -> list[str]:
    return [m["body"]["data"][0]["binary-text"] for m in json_lines(out)]


def _send(url: str, *bodies: str, extra: tuple[str, ...] = ()) -> None:
    for b in bodies:
        r = amqp("send", url, b, *extra)
        assert r.returncode == 0, r.stderr


def test_move_send_then_recv(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    r = amqp("send", url, "m", "--count", "5", "--message-id", "{n}")
    assert r.returncode == 0, r.stderr
    assert "accepted 5" in r.stdout
    r = amqp("recv", url, "-c", "3", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert [m["properties"]["message-id"] for m in json_lines(r.stdout)] == ["1", "2", "3"]
    r = amqp("recv", url, "--drain", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert [m["properties"]["message-id"] for m in json_lines(r.stdout)] == ["4", "5"]
    r = amqp("recv", url, "--drain", "-t", "10")
    assert r.returncode == 0 and "received 0" in r.stderr  # consumed for good


def test_lossless_round_trip_through_serve(serve: Serve, tmp_path: Any) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    r = amqp("send", url, "int:7", "--body-type", "value", "-P", "k:uuid=00000000-0000-0000-0000-000000000001",
             "--subject", "subj", "--priority", "9", "-A", "x-opt-a=b")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "-c", "1", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    got = json_lines(r.stdout)[0]
    assert got["body"] == {"value": {"int": 7}}
    assert got["properties"]["subject"] == "subj" and got["header"]["priority"] == 9
    assert got["message-annotations"] == {"x-opt-a": "b"}


def test_browse_does_not_consume(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    _send(url, *[f"b{i}" for i in range(4)])
    for _ in range(2):
        r = amqp("browse", url, "--json")
        assert r.returncode == 0, r.stderr
        assert _bodies(r.stdout) == ["b0", "b1", "b2", "b3"]
        summary = json.loads(r.stderr.strip().splitlines()[-1])["browse"]
        assert summary["copy-consumed"] == 0 and "warning" not in r.stderr
    r = amqp("recv", url, "--copy", "-c", "2", "-t", "10", "--json")
    assert r.returncode == 0 and _bodies(r.stdout) == ["b0", "b1"]
    assert "(copy)" in s.wait_log(r"attach .*client receives from .*\(copy")
    r = amqp("recv", url, "--drain", "-t", "10", "--json")
    assert _bodies(r.stdout) == ["b0", "b1", "b2", "b3"]  # all still there for a consumer


def test_selectors(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    for i in range(6):
        _send(url, f"m{i}", extra=("-P", f"n:int={i}", "-P", f"color={'red' if i % 2 else 'blue'}",
                                  "--priority", str(i)))
    r = amqp("browse", url, "--selector", "n > 3", "--json")
    assert _bodies(r.stdout) == ["m4", "m5"]
    r = amqp("browse", url, "--selector", "color = 'red' AND n BETWEEN 2 AND 5", "--json")
    assert _bodies(r.stdout) == ["m3", "m5"]
    r = amqp("browse", url, "--selector", "n IN (0, 4) OR JMSPriority = 1", "--json")
    assert _bodies(r.stdout) == ["m0", "m1", "m4"]
    r = amqp("browse", url, "--selector", "color LIKE 'b%' AND NOT n = 0", "--json")
    assert _bodies(r.stdout) == ["m2", "m4"]
    r = amqp("browse", url, "--selector", "missing IS NULL AND header.priority >= 5", "--json")
    assert _bodies(r.stdout) == ["m5"]
    # a consuming selector takes only what matches; the rest stays, in order
    r = amqp("recv", url, "--selector", "n < 2", "--drain", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert _bodies(r.stdout) == ["m0", "m1"]
    r = amqp("browse", url, "--json")
    assert _bodies(r.stdout) == ["m2", "m3", "m4", "m5"]


def test_bad_selector_is_refused(serve: Serve) -> None:
    s = serve()
    # (--selector would be refused before connecting: the peer gets it as a raw filter)
    flt = json.dumps({"described": {"symbol": "apache.org:selector-filter:string"},
                      "value": "n >>> 3"})
    r = amqp("recv", f"{s.url}/q", "--filter", f"jms-selector={flt}", "-c", "1", "-t", "5")
    assert r.returncode == 4, r.stderr
    assert "amqp:invalid-field" in r.stderr
    s.wait_log(r"refused link .*amqp:invalid-field")


def test_dynamic_node(serve: Serve) -> None:
    s = serve()
    r = amqp("recv", s.url, "--dynamic", "-t", "1")
    assert r.returncode == 0, r.stderr
    address = r.stderr.split("dynamic node address: ")[1].split()[0]
    assert address == "amqp-serve.tmp.1.amqp-receiver-1", r.stderr  # named after its link
    s.wait_log(r"detach")
    # deleted with its link (delete-on-close), and its name is not re-created
    r = amqp("browse", f"{s.url}/{address}")
    assert r.returncode != 0 and "amqp:not-found" in r.stderr, r.stderr


def test_durable_subscription(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}//topic/news"
    sub = ["--subscription", "s1", "--container-id", "cli-sub-test"]
    r = amqp("recv", url, *sub, "-t", "1")  # create it
    assert r.returncode == 0, r.stderr
    s.wait_log(r"subscription kept")
    assert amqp("send", url, "one").returncode == 0  # sent while we are away
    r = amqp("recv", url, *sub, "-c", "1", "-t", "10", "--json")
    assert r.returncode == 0, r.stderr
    assert _bodies(r.stdout) == ["one"]
    assert "durable subscription resumed" in s.log
    r = amqp("recv", url, *sub, "--unsubscribe")
    assert r.returncode == 0, r.stderr
    assert amqp("send", url, "two").returncode == 0  # no subscriber now: dropped
    r = amqp("recv", url, *sub, "-c", "1", "-t", "2")
    assert r.returncode == 5  # a fresh subscription has nothing


def test_topic_without_subscription_fans_out(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}//topic/t1"
    r = amqp("send", url, "nobody-listens")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "-c", "1", "-t", "1")
    assert r.returncode == 5  # a topic keeps nothing for receivers that come later


def test_transactions_commit_and_rollback(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    r = amqp("send", url, "t", "--count", "4", "--txn-size", "2", "--message-id", "{n}", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["transactions"]["committed"] == 2, summary
    r = amqp("send", url, "r", "--count", "3", "--txn-size", "3", "--rollback")
    assert r.returncode == 0, r.stderr
    assert "rolled back 1" in r.stdout
    r = amqp("recv", url, "--drain", "-t", "10", "--json")
    assert [m["properties"]["message-id"] for m in json_lines(r.stdout)] == ["1", "2", "3", "4"]
    assert "committed (2 sends" in s.log and "rolled back (3 sends" in s.log


def test_four_outcomes_from_a_receiver(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    _send(url, "acc", "rej", "rel", "mod")
    r = amqp("recv", url, "-c", "4", "-t", "10", "--container-id", "A",
             "--outcome", "accept,reject,release,modify:failed:undeliverable")
    assert r.returncode == 0, r.stderr
    r = amqp("browse", url, "--json")
    left = json_lines(r.stdout)
    # accept and reject removed it; release and modify gave it back
    assert _bodies(r.stdout) == ["rel", "mod"]
    assert left[1]["header"]["delivery-count"] == 1  # modified{delivery-failed}
    assert left[0].get("header", {}).get("delivery-count", 0) == 0  # released: not a failure
    # undeliverable-here: never again to that link (same container, same link name) ...
    r = amqp("recv", url, "--drain", "-t", "10", "--container-id", "A", "--json")
    assert r.returncode == 0, r.stderr
    assert _bodies(r.stdout) == ["rel"]
    # ... but another link gets it
    r = amqp("recv", url, "--drain", "-t", "10", "--container-id", "B", "--json")
    assert _bodies(r.stdout) == ["mod"]


def test_modify_without_failure_keeps_delivery_count(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    _send(url, "x")
    r = amqp("recv", url, "-c", "1", "-t", "10", "--outcome", "modify")
    assert r.returncode == 0, r.stderr
    r = amqp("browse", url, "--json")
    assert json_lines(r.stdout)[0].get("header", {}).get("delivery-count", 0) == 0


def test_sasl_plain_required(serve: Serve) -> None:
    s = serve("--user", "alice", "--password", "s3cret", "--trace")
    url = f"amqp://alice:s3cret@127.0.0.1:{s.port}/q"
    assert amqp("send", url, "ok").returncode == 0
    s.wait_out(r"c1 -> \[0\] +sasl-init +mechanism=PLAIN")
    assert "s3cret" not in "\n".join(s.stdout)  # redacted in the trace
    r = amqp("send", f"amqp://alice:wrong@127.0.0.1:{s.port}/q", "no")
    assert r.returncode == 3, r.stderr
    r = amqp("send", f"{s.url}/q", "anonymous")
    assert r.returncode == 3, r.stderr
    assert "s3cret" not in s.log and "wrong" not in s.log
    s.wait_log(r"SASL PLAIN refused for user 'alice'")
    r = amqp("recv", url, "--drain", "-t", "10", "--json")
    assert _bodies(r.stdout) == ["ok"]


def test_faults_seen_by_our_sender(serve: Serve) -> None:
    s = serve("--reject", "at:2", "--release", "at:3", "--modify", "every:4", "--seed", "1")
    url = f"{s.url}/{queue_name()}"
    r = amqp("send", url, "x", "--count", "8", "--json")
    assert r.returncode == 6, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["accepted"], summary["rejected"], summary["released"], summary["modified"]) == (4, 1, 1, 2)
    assert "amqp:precondition-failed" in r.stdout
    r = amqp("recv", url, "--drain", "-t", "10")
    assert "received 4" in r.stderr  # only the accepted ones were stored


def test_trace_prints_frames(serve: Serve) -> None:
    s = serve("--trace", "-q")
    r = amqp("send", f"{s.url}/q", "hi")
    assert r.returncode == 0, r.stderr
    s.wait_out(r"c1 <- \[0\] +close")
    text = "\n".join(s.stdout)
    assert "c1 -> AMQP 1.0 SASL protocol header" in text
    for pattern in (r"c1 -> \[0\] +open", r"c1 <- \[0\] +open", r"c1 -> \[0\] +transfer .*hi",
                    r"c1 <- \[0\] +disposition .*accepted"):
        assert re.search(pattern, text), pattern
    assert "c1 open from" not in s.log  # -q: no log lines


def test_one_megabyte_in_small_frames_both_ways(serve: Serve, tmp_path: Any) -> None:
    import base64
    import hashlib

    s = serve("--max-frame-size", "4096")
    url = f"{s.url}/{queue_name()}"
    data = bytes(range(256)) * 4096
    f = tmp_path / "big.bin"
    f.write_bytes(data)
    r = amqp("send", url, "--file", str(f))
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "-c", "1", "-t", "30", "--json", "--max-frame-size", "4096")
    assert r.returncode == 0, r.stderr
    obj = json_lines(r.stdout)[0]
    body = obj["body"]["data"][0]
    got = base64.b64decode(body["binary"]) if "binary" in body else None
    assert got is not None and hashlib.sha256(got).digest() == hashlib.sha256(data).digest()


def test_presettled_beyond_the_credit_window(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    r = amqp("send", url, "x", "--count", "1200", "--presettled")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "--drain", "-t", "10", "--credit", "300", "-q", "--json")
    assert r.returncode == 0, r.stderr
    assert len(json_lines(r.stdout)) == 1200


def test_settle_mode_second(serve: Serve) -> None:
    s = serve()
    url = f"{s.url}/{queue_name()}"
    _send(url, "a", "b")
    r = amqp("recv", url, "-c", "2", "-t", "10", "--settle-mode", "second")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "--drain", "-t", "10")
    assert "received 0" in r.stderr


def test_usage_errors_and_port_in_use(serve: Serve) -> None:
    for args, text in ((["--user", "a"], "--user and --password go together"),
                       (["--reject", "sometimes"], "--reject: expected a share"),
                       (["--credit", "-1"], "--credit must be between 0 and 2147483647"),
                       (["--listen", "nope:x"], "bad listen address")):
        r = amqp("serve", *args)
        assert r.returncode == 2 and text in r.stderr, (args, r.stderr)
    s = serve()
    r = amqp("serve", "--listen", f"127.0.0.1:{s.port}")
    assert r.returncode == 3, r.stderr
    assert r.stderr.strip() == f"amqp: error: cannot listen on 127.0.0.1:{s.port}: address already in use"
