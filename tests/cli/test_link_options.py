"""`--link-name` and `--capability` (send, recv, browse): the attach carries them, and a
peer that routes by capability (the proton broker: `topic` makes a topic) acts on them."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from amqpcli.errors import Exit
from tests.net.clirun import amqp, queue_name
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT
from tests.peers.broker import Broker


def test_the_attach_carries_the_name_and_capabilities(serve: ServePeers) -> None:
    url = f"{serve()}/{queue_name()}"
    r = amqp("send", url, "x", "--link-name", "orders-in", "--capability", "queue", "--trace")
    assert r.returncode == 0, r.stderr
    ours = [line for line in r.stderr.splitlines() if "-> [0]  attach" in line]
    assert len(ours) == 1
    assert 'name="orders-in"' in ours[0] and "caps=queue)" in ours[0]
    r = amqp("recv", url, "-c", "1", "--link-name", "orders-out", "--capability", "queue",
             "--capability", "shared", "--trace")
    assert r.returncode == 0, r.stderr
    ours = [line for line in r.stderr.splitlines() if "-> [0]  attach" in line]
    assert 'name="orders-out"' in ours[0] and "caps=queue,shared)" in ours[0]
    r = amqp("browse", url, "--capability", "queue", "--trace")
    assert r.returncode == 0, r.stderr
    assert "copy caps=queue)" in r.stderr


def _receivers(broker: Broker) -> list[tuple[str, str]]:
    """(link name, queue name) of each link the broker sends on."""
    return broker.call(lambda: sorted((o.link.name, o.queue.name)
                                      for o in broker.handler.out_links.values()))


def test_the_topic_capability_makes_a_topic_on_a_real_peer(broker: Broker) -> None:
    """Two receivers with `--capability topic` each get the message a sender with it
    sends (a queue would give it to one); a sender without it puts into a queue."""
    url = f"{broker.url}/news"
    procs = [subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "recv", url, "--capability", "topic", "-c", "1",
         "-t", "30", "--bodies-only", "--link-name", f"reader-{i}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env=cli_env()) for i in (1, 2)]
    try:
        deadline = time.monotonic() + 30
        while len(_receivers(broker)) < 2:
            assert time.monotonic() < deadline, "the receivers did not attach"
            time.sleep(0.05)
        names = [name for name, _ in _receivers(broker)]
        assert names == ["reader-1", "reader-2"]
        # each has its own subscription queue, not the queue "news"
        assert "news" not in [q for _, q in _receivers(broker)]
        r = amqp("send", url, "breaking", "--capability", "topic")
        assert r.returncode == 0, r.stderr
        outs = [p.communicate(timeout=30) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0, 0], [e for _, e in outs]
    assert [o.strip() for o, _ in outs] == ["breaking", "breaking"]
    r = amqp("send", url, "queued")
    assert r.returncode == 0, r.stderr
    assert broker.queue_bodies("news") == [b"queued"]


@pytest.mark.parametrize(("args", "says"), [
    (("send", "amqp://127.0.0.1:1/q", "x", "--link-name", ""), "--link-name needs a name"),
    # an empty name is no name: a durable subscription could not be found again by it
    (("recv", "amqp://127.0.0.1:1/q", "--subscription", ""), "--subscription needs a NAME"),
    (("recv", "amqp://127.0.0.1:1/q", "--container-id", ""), "--container-id needs an id"),
    (("send", "amqp://127.0.0.1:1/q", "x", "--container-id", ""), "--container-id needs an id"),
    (("recv", "amqp://127.0.0.1:1/q", "--capability", ""), "--capability needs a name"),
    (("browse", "amqp://127.0.0.1:1/q", "--capability", ""), "--capability needs a name"),
    (("recv", "amqp://127.0.0.1:1/q", "--subscription", "s", "--link-name", "l"),
     "takes no --link-name"),
    (("recv", "amqp://127.0.0.1:1/q", "--subscription", "s", "--unsubscribe",
      "--link-name", "l"), "takes no --link-name"),
])
def test_bad_link_options_are_usage_errors(args: tuple[str, ...], says: str) -> None:
    r = amqp(*args)
    assert r.returncode == Exit.USAGE, r.stderr
    assert says in r.stderr and "Traceback" not in r.stderr


def test_a_link_name_too_long_for_the_peer_is_a_usage_error(serve: ServePeers) -> None:
    """Our attach would be over the peer's max-frame-size: said so, nothing sent (the
    peer would end the connection with a framing error, blaming nobody)."""
    r = amqp("send", f"{serve()}/q", "x", "--link-name", "L" * 70_000)
    assert r.returncode == Exit.USAGE, r.stderr
    assert r.stderr.strip().splitlines()[-1] == (
        "amqp: error: our attach would be 70047 bytes, over the peer's max-frame-size 65536: "
        "the link's name, address, filters or capabilities are too long for it")
