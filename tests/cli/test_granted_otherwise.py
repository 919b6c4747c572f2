"""A peer that grants a link other than we asked (its attach's terminus or settle mode):
each field that changes what the run does is one warning on stderr, naming the field and
both values as the frame lines draw them (`asked unsettled, got settled`). An address the
peer names where we asked for none (a dynamic node, the anonymous relay) is no warning.

The peers are proton's: they answer the attach as the direct peers do, then change the
terminus before proton writes the attach (it is written once the handler returns)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from proton import Described, Link, Terminus, symbol

from tests.net.clirun import amqp
from tests.peers import DirectReceiver, DirectSender, PeerThread
from tests.peers.direct import DirectReceiverHandler, DirectSenderHandler
from tests.peers.outcomes import Accept

pytestmark = pytest.mark.integration

Change = Callable[[Any], None]  # changes the proton link's answer before it goes


class _ReceiverGranting(DirectReceiverHandler):
    def __init__(self, change: Change, rcv_settle_mode: int | None) -> None:
        super().__init__(Accept(), 10, True, rcv_settle_mode)
        self.change = change

    def on_link_remote_open(self, event: Any) -> None:
        opening = bool(event.link.state & Link.LOCAL_UNINIT)
        super().on_link_remote_open(event)
        if opening:
            self.change(event.link)


class _SenderGranting(DirectSenderHandler):
    def __init__(self, change: Change, presettle: bool | None) -> None:
        super().__init__([b"\x00Sw\xa1\x01a"], presettle)
        self.change = change

    def on_link_remote_open(self, event: Any) -> None:
        opening = bool(event.link.state & Link.LOCAL_UNINIT)
        super().on_link_remote_open(event)
        if opening:
            self.change(event.link)


class _GrantingReceiver(DirectReceiver):
    """A direct receiver whose answer to an attach `change` alters."""

    def __init__(self, change: Change, rcv_settle_mode: int | None = None) -> None:
        PeerThread.__init__(self, _ReceiverGranting(change, rcv_settle_mode))


class _GrantingSender(DirectSender):
    """A direct sender of one message whose answer to an attach `change` alters."""

    def __init__(self, change: Change, presettle: bool | None = None) -> None:
        PeerThread.__init__(self, _SenderGranting(change, presettle))


def _warnings(stderr: str) -> list[str]:
    return [line.removeprefix("amqp: warning: ") for line in stderr.splitlines() if "warning" in line]


def _unchanged(link: Any) -> None:
    pass


def _target_elsewhere(link: Any) -> None:
    link.target.address = "elsewhere"


def test_send_to_an_address_the_peer_changes(peers: Callable[..., Any]) -> None:
    rcv = peers(_GrantingReceiver(_target_elsewhere))
    r = amqp("send", f"{rcv.url}/q", "x")
    assert r.returncode == 0, r.stderr
    assert _warnings(r.stderr) == [('the peer changed target.address: asked "q", '
                                   'got "elsewhere"')]
    # the anonymous relay asks for no address: whatever the peer names is its business
    r = amqp("send", rcv.url, "x", "--to", "q", "--force-relay")
    assert r.returncode == 0, r.stderr
    assert _warnings(r.stderr) == []


def _target_without_address(link: Any) -> None:
    link.target.address = None


def test_a_peer_that_does_not_echo_the_address(peers: Callable[..., Any]) -> None:
    # a target with no address says nothing of where the messages go
    rcv = peers(_GrantingReceiver(_target_without_address))
    r = amqp("send", f"{rcv.url}/q", "x")
    assert r.returncode == 0, r.stderr
    assert _warnings(r.stderr) == []
    assert rcv.links()[0].target == "q"


def test_send_with_a_receiver_settle_mode_the_peer_changes(peers: Callable[..., Any]) -> None:
    rcv = peers(_GrantingReceiver(_unchanged, rcv_settle_mode=Link.RCV_SECOND))
    r = amqp("send", f"{rcv.url}/q", "x", "--json")
    assert r.returncode == 0, r.stderr
    assert _warnings(r.stderr) == [("the peer changed rcv-settle-mode: asked first, "
                                   "got second")]


def _source_other(link: Any) -> None:
    link.source.address = "other"


def _not_durable(link: Any) -> None:
    link.source.durability = Terminus.NONDURABLE
    link.source.expiry_policy = Terminus.EXPIRE_WITH_LINK


def _moved(link: Any) -> None:
    link.source.distribution_mode = Terminus.DIST_MODE_MOVE


def _not_dynamic(link: Any) -> None:
    link.source.dynamic = False
    link.source.address = "fixed"


def _filters_otherwise(link: Any) -> None:
    link.source.filter.clear()
    link.source.filter.put_object({
        symbol("jms-selector"): Described(symbol("apache.org:selector-filter:string"), "n > 1"),
        symbol("extra"): Described(symbol("example.org:extra"), 7),
    })


@pytest.mark.parametrize(("change", "presettle", "args", "said"), [
    (_source_other, None, [], [('the peer changed source.address: asked "src", '
                               'got "other"')]),
    (_unchanged, False, ["--presettled"],
     ["the peer changed snd-settle-mode: asked settled, got unsettled"]),
    (_unchanged, True, [], []),  # (a sender settle mode we left to the peer)
    (_not_durable, None, ["--subscription", "s1"],
     ["the peer changed source.durable: asked unsettled-state, got none",
      "the peer changed source.expiry-policy: asked never, got link-detach"]),
    (_moved, None, ["--copy"],
     ["the peer changed source.distribution-mode: asked copy, got move"]),
    (_filters_otherwise, None, ["--selector", "n > 3",
                                "--filter", ('odd={"described": {"symbol": "example.org:odd"}, '
                                            '"value": 1}')],
     # (each filter as the terminus text draws it)
     [('the peer changed source.filter.jms-selector: asked selector("n > 3"), got '
       'selector("n > 1")'),
      "the peer dropped source.filter.odd: asked example.org:odd(long:1)",
      "the peer added source.filter.extra: got example.org:extra(long:7)"]),
], ids=["address", "snd-settle-mode", "left-to-the-peer", "durable", "distribution-mode",
        "filters"])
def test_recv_from_a_source_the_peer_changes(peers: Callable[..., Any], change: Change,
                                             presettle: bool | None, args: list[str],
                                             said: list[str]) -> None:
    snd = peers(_GrantingSender(change, presettle))
    r = amqp("recv", f"{snd.url}/src", "-c", "1", "-t", "10", *args)
    assert r.returncode == 0, r.stderr
    assert _warnings(r.stderr) == said


def test_recv_from_a_dynamic_node(peers: Callable[..., Any]) -> None:
    # the peer names a dynamic node: its address is no warning, a node that is not
    # dynamic is
    snd = peers(_GrantingSender(_not_dynamic))
    r = amqp("recv", snd.url, "--dynamic", "-c", "1", "-t", "10")
    assert r.returncode == 0, r.stderr
    assert _warnings(r.stderr) == [("the peer changed source.dynamic: asked true, "
                                   "got false")]
