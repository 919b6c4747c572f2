"""The engine's peer endpoint, with one addition the broker needs: a say in credit.

When a receiver grants credit (or drains), the engine answers a drain by itself as soon
as nothing is queued on the link. A broker must first put on the link what the node
holds for that receiver, so `PeerEndpoint` calls `on_credit(link)` before the engine's
own handling of the flow, and `after_credit(link, event)` after it. The engine's answer
(one flow for a drain, one for an echo) asks the broker for its `available` through
`available_for(link)` (an `Endpoint` attribute): the broker does not answer them itself.
`before_write()` runs before the bytes are taken, so outcomes decided one by one can go
out together (one disposition frame for a run of delivery-ids).

A flow can arrive before our attach reply: a client may send its attach and its first
flow (a drain, say) in one write, and the manual link policy attaches only when the
broker decides. The engine cannot answer a flow on a link we have not attached, so such
a flow is kept and acted on (credit fed, drain completed, echo and `available` answered)
as soon as `accept_link` attaches our end. If the client detached the link meanwhile
(attach and detach in one write), `accept_link` answers with attach then detach (the
engine does), and the kept flow is dropped: nothing is sent on the link.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from amqpcli.engine import CreditChanged, Endpoint, Link

__all__ = ["PeerEndpoint"]


def _nothing(*_: Any) -> None:
    return None


class PeerEndpoint(Endpoint):
    def __init__(self, **kw: Any) -> None:
        kw.setdefault("link_policy", "manual")
        super().__init__("peer", **kw)
        self.on_credit: Callable[[Link], None] = _nothing
        self.after_credit: Callable[[Link, CreditChanged], None] = _nothing
        self.before_write: Callable[[], None] = _nothing
        # flows the client sent on a link before we attached our end (the last one, with
        # echo kept if any of them asked for it)
        self._early_flows: dict[Link, CreditChanged] = {}

    def data_to_send(self) -> bytes:
        self.before_write()
        return super().data_to_send()

    def accept_link(self, link: Link, source: Any = None, target: Any = None,
                    **kw: Any) -> None:
        super().accept_link(link, source, target, **kw)
        early = self._early_flows.pop(link, None)
        if early is not None and self.local in link.handle:
            self._on_remote_flow(early)

    def refuse_link(self, link: Link, error: Any = None, *, echo: bool = True) -> None:
        self._early_flows.pop(link, None)
        super().refuse_link(link, error, echo=echo)

    def _on_remote_flow(self, ev: CreditChanged) -> None:
        link = ev.link
        if link is not None and self.local not in link.attach:
            earlier = self._early_flows.get(link)
            if earlier is not None and earlier.echo and not ev.echo:
                ev = dataclasses.replace(ev, echo=True)
            self._early_flows[link] = ev
            return
        ours = link is not None and link.sender == self.local and self.local in link.handle
        if ours and link is not None:
            self.on_credit(link)
        super()._on_remote_flow(ev)
        if ours and link is not None and self.local in link.handle and (
                self.local not in link.detach):
            self.after_credit(link, ev)
