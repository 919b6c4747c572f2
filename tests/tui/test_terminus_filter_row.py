"""The link pane's filter row draws each filter as the frame lines and `pcap-dump --links`
do (`selector=selector("n > 3")`), whole; it showed the described value's raw form
(`{:selector: @(0x468c00000004 = apache.org:selector-filter:string) "n > 3"}`)."""

from __future__ import annotations

from amqpcli.codec import composites as c
from amqpcli.codec.types import Described, Symbol
from amqpcli.tui.adapter import terminus_rows

SELECTOR = Described(Symbol("apache.org:selector-filter:string"), "color = 'red' AND " + "n > 4 " * 20)


def test_filters_as_the_terminus_text_draws_them_whole() -> None:
    flt = {Symbol("selector"): SELECTOR,
           Symbol("no-local"): Described(Symbol("apache.org:no-local-filter:list"), [])}
    rows = {r.field: r for r in terminus_rows(c.Source(address="q", filter=flt),
                                              c.Source(address="q"))}
    assert rows["filter"].requested == (
        f'selector=selector("{SELECTOR.value}") no-local=no-local')
    assert rows["filter"].granted == ""


def test_a_filter_answered_null_is_not_applied() -> None:
    rows = {r.field: r for r in terminus_rows(
        c.Source(address="q", filter={Symbol("selector"): SELECTOR}),
        c.Source(address="q", filter={Symbol("selector"): None}))}
    assert rows["filter"].granted == "selector=not-applied"
