"""pcap-dump's note for a link whose termini were granted otherwise draws each value as
the frame lines do and as the client's warning does (`asked second, granted first`):
it showed the wire types (`asked ubyte:1, granted ubyte:0`) and a note repeating the field
(`(rcv-settle-mode changed)`)."""

from __future__ import annotations

from pathlib import Path

from amqpcli.codec import composites as c
from amqpcli.codec.types import UByte
from tests.dissect.helpers import RECEIVER, SENDER, Script, dissect, write


def test_values_are_drawn_by_their_names(tmp_path: Path) -> None:
    s = Script().open()
    s.c(c.Attach(name="to-q", handle=0, role=SENDER, rcv_settle_mode=UByte(1),
                 source=c.Source(address="me"), target=c.Target(address="q", durable=2),
                 initial_delivery_count=0))
    s.s(c.Attach(name="to-q", handle=0, role=RECEIVER, rcv_settle_mode=UByte(0),
                 source=c.Source(address="me"), target=c.Target(address="elsewhere",
                                                                 durable=0)))
    (note,) = dissect(write(tmp_path / "granted.pcapng", s.close())).notices
    assert note.text == (
        "link 'to-q': server granted differently: rcv-settle-mode: asked second, granted "
        "first; target.address: asked \"q\", granted \"elsewhere\"; target.durable: asked "
        "unsettled-state, granted none"), note.text


def test_a_dropped_filter_is_drawn_as_the_terminus_draws_it(tmp_path: Path) -> None:
    # a selector the broker left out of its answer (Part 3 §3.5.3, source filter): the
    # note showed the described value's descriptor and two characters of the selector
    from amqpcli.codec.types import Described, Symbol

    selector = {Symbol("selector"): Described(Symbol("apache.org:selector-filter:string"),
                                              "color = 'red' AND n > 4")}
    s = Script().open()
    s.c(c.Attach(name="sel", handle=0, role=RECEIVER,
                 source=c.Source(address="q", filter=selector), target=c.Target()))
    s.s(c.Attach(name="sel", handle=0, role=SENDER, source=c.Source(address="q"),
                 target=c.Target(), initial_delivery_count=0))
    (note,) = dissect(write(tmp_path / "dropped.pcapng", s.close())).notices
    assert note.text == (
        "link 'sel': server granted differently: source.filter.selector: asked "
        "selector(\"color = 'red' AND n > 4\"), granted none (filter dropped: "
        "selector)"), note.text


def test_a_filter_key_from_the_peer_is_escaped(tmp_path: Path) -> None:
    # the key is the peer's text: a terminal escape in it reached the output raw
    from amqpcli.codec.types import Described, Symbol

    key = Symbol("ev\x1b[31mil")
    s = Script().open()
    s.c(c.Attach(name="sel", handle=0, role=RECEIVER, target=c.Target(),
                 source=c.Source(address="q", filter={key: Described(
                     Symbol("apache.org:selector-filter:string"), "n > 1")})))
    s.s(c.Attach(name="sel", handle=0, role=SENDER, source=c.Source(address="q"),
                 target=c.Target(), initial_delivery_count=0))
    (note,) = dissect(write(tmp_path / "key.pcapng", s.close())).notices
    assert "\x1b" not in note.text
    assert note.text.endswith(
        'source.filter.ev\\x1b[31mil: asked selector("n > 1"), granted none '
        "(filter dropped: ev\\x1b[31mil)"), note.text
