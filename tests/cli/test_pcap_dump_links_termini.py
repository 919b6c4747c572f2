"""`pcap-dump --links` draws each terminus with its capabilities (what was requested
beside what was granted where they differ, as for addresses), and a refused link (its
attach answered with a null terminus, then a detach with an error) with the termini its
attach asked for and `state=refused`, not as a link to null; `--json` keeps the
capabilities as they came."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from tests.dissect.helpers import RECEIVER, SENDER, Script, write_connections
from tests.net.clirun import amqp


def _caps(*names: str) -> list[Symbol]:
    return [Symbol(n) for n in names]


def _capture(path: Path) -> str:
    """c1 sends to q asking for capabilities queue and "a,b" (one capability), granted
    queue; c2 receives from news with topic, granted as asked; c3 sends to bad1 and c4
    receives from bad2 with queue: both refused."""
    c1 = Script().open()
    c1.c(c.Attach(name="to-q", handle=0, role=SENDER, source=c.Source(address="me"),
                  target=c.Target(address="q", capabilities=_caps("queue", "a,b")),
                  initial_delivery_count=0))
    c1.s(c.Attach(name="to-q", handle=0, role=RECEIVER, source=c.Source(address="me"),
                  target=c.Target(address="q", capabilities=_caps("queue"))))
    c2 = Script().open()
    c2.c(c.Attach(name="from-news", handle=0, role=RECEIVER,
                  source=c.Source(address="news", capabilities=Symbol("topic")),
                  target=c.Target(address="me")))
    c2.s(c.Attach(name="from-news", handle=0, role=SENDER,
                  source=c.Source(address="news", capabilities=Symbol("topic")),
                  target=c.Target(address="me"), initial_delivery_count=0))
    c4 = Script().open()
    c4.c(c.Attach(name="from-bad2", handle=0, role=RECEIVER,
                  source=c.Source(address="bad2", capabilities=_caps("queue")),
                  target=c.Target(address="me")))
    c4.s(c.Attach(name="from-bad2", handle=0, role=SENDER, source=None, target=None,
                  initial_delivery_count=0))
    c4.s(c.Detach(handle=0, closed=True, error=c.Error(condition=Symbol("amqp:not-found"))))
    c4.c(c.Detach(handle=0, closed=True))
    return write_connections(path, [
        c1.close(), c2.close(),
        Script().open().refused_link("to-bad1", "bad1", source="me").close(), c4.close(),
    ])


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _capture(tmp_path_factory.mktemp("termini") / "termini.pcapng")


def _links(out: str) -> dict[str, list[str]]:
    """Each link's lines, by connection."""
    by_conn: dict[str, list[str]] = {}
    for line in out.splitlines():
        if line.startswith("c"):
            by_conn[line.split()[0]] = [line]
        else:
            by_conn[list(by_conn)[-1]].append(line)
    return by_conn


def test_links_show_capabilities_and_what_a_refused_link_asked_for(capture: str) -> None:
    r = amqp("pcap-dump", capture, "--links")
    assert r.returncode == 0, r.stderr
    links = _links(r.stdout)
    first, req = links["c1"][:2]
    assert ' source="me" target="q" caps=queue state=' in first
    assert req == '    target: requested "q" caps=queue,"a,b", granted "q" caps=queue'
    assert ' source="news" caps=topic target="me" state=closed-with-connection' in links["c2"][0]
    assert not links["c2"][1].startswith("    source:")  # granted as asked
    assert links["c3"][0].endswith(' source="me" target="bad1" state=refused')
    assert links["c4"][0].endswith(' source="bad2" caps=queue target="me" state=refused')
    for conn in ("c3", "c4"):
        assert not any("granted null" in ln or "=null" in ln for ln in links[conn])
        assert links[conn][-1].endswith("refused by server: amqp:not-found")


def test_json_keeps_capabilities_as_they_came(capture: str) -> None:
    r = amqp("pcap-dump", capture, "--links", "--json", "-C", "c1", "-C", "c4")
    assert r.returncode == 0, r.stderr
    links = [o for o in map(json.loads, r.stdout.splitlines()) if o["record"] == "link"]
    assert [o["state"] for o in links] == ["detached", "refused"]
    asked = links[0]["attach-client"]["attach"]["target"]["target"]["capabilities"]
    granted = links[0]["attach-server"]["attach"]["target"]["target"]["capabilities"]
    assert asked == {"array": ["queue", "a,b"], "type": "symbol"}
    assert granted == {"array": ["queue"], "type": "symbol"}
    source = links[1]["attach-client"]["attach"]["source"]["source"]
    assert source["address"] == "bad2" and source["capabilities"] == {
        "array": ["queue"], "type": "symbol"}
    assert links[1]["attach-server"]["attach"].get("source") is None


def test_a_terminus_left_out_or_naming_nothing_is_no_difference(tmp_path: Path) -> None:
    """A receiver's target with no address (ours) answered by an attach without one
    (RabbitMQ's) was "target: requested (no address), granted null" on every such link;
    the same with null on both sides, and a target naming an address the responder left
    out is still a difference. The link's terminus is the one it was given."""
    def receiver(name: str, asked: c.Target | None, granted: c.Target | None) -> Script:
        s = Script().open()
        s.c(c.Attach(name=name, handle=0, role=RECEIVER, source=c.Source(address="q"),
                     target=asked))
        s.s(c.Attach(name=name, handle=0, role=SENDER, source=c.Source(address="q"),
                     target=granted, initial_delivery_count=0))
        return s.close()

    path = write_connections(tmp_path / "left-out.pcapng", [
        receiver("no-address", c.Target(), None),
        receiver("both-null", None, None),
        receiver("named", c.Target(address="me"), None),
    ])
    r = amqp("pcap-dump", path, "--links")
    assert r.returncode == 0, r.stderr
    links = _links(r.stdout)
    assert ' target=(no address) state=' in links["c1"][0]
    assert ' target=null state=' in links["c2"][0]
    for conn in ("c1", "c2"):
        assert not links[conn][1].startswith("    target:"), links[conn]
    assert ' target="me" state=' in links["c3"][0]
    assert links["c3"][1] == '    target: requested "me", granted null'
