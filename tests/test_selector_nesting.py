"""A selector nested too deeply (parentheses, NOT, signs) is a selector syntax error
naming the limit, for every user of the parser (pcap-dump --selector, a serve link's
selector filter), not a RecursionError; a long arithmetic chain evaluates without one."""

from __future__ import annotations

import pytest

from amqpcli.codec.types import Described, Symbol
from amqpcli.engine import LinkRefused
from amqpcli.peer import Broker
from amqpcli.selector import MAX_NESTING, SelectorError, compile_selector
from tests.net.clirun import amqp_in_process as run
from tests.paths import CAPTURES_DIR, require
from tests.peer.test_broker import Net, _receiver

CAPTURE = CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng"
TOO_DEEP = f"selector nested too deeply (more than {MAX_NESTING} levels)"

DEEP = {
    "parentheses": "(" * 3000 + "a=1" + ")" * 3000,
    "minus": "-" * 3000 + "1=1",
    "plus": "+" * 3000 + "a=1",
    "not": "NOT " * 3000 + "a=1",
    "mixed": "(NOT -" * 60 + "a=1" + ")" * 60,
}


@pytest.mark.parametrize("text", DEEP.values(), ids=DEEP.keys())
def test_too_deep_is_a_selector_error(text: str) -> None:
    with pytest.raises(SelectorError, match=r"^selector nested too deeply \(more than "
                       rf"{MAX_NESTING} levels\) at position \d+$"):
        compile_selector(text)


def test_the_limit_itself_is_fine() -> None:
    n = MAX_NESTING
    assert compile_selector("(" * n + "a = 1" + ")" * n).matches(lambda k: 1)
    assert compile_selector("NOT " * n + "a").matches(lambda k: n % 2 == 0)
    assert compile_selector("-" * n + "a = 1").matches(lambda k: 1)
    assert compile_selector("(" * (n - 1) + "-a = -1" + ")" * (n - 1)).matches(lambda k: 1)
    with pytest.raises(SelectorError, match="nested too deeply"):
        compile_selector("(" * n + "-a = -1" + ")" * n)


def test_long_arithmetic_chains_evaluate() -> None:
    def one(k: str) -> object:
        return 1

    assert compile_selector("a + " * 3000 + "a = 3001").matches(one)
    assert compile_selector("a * " * 3000 + "a = 1").matches(one)
    assert compile_selector("a - " * 3000 + "a = -2999").matches(one)
    # left to right, as before
    assert compile_selector("10 - 3 - 2 = 5").matches(one)
    assert compile_selector("24 / 4 / 3 = 2").matches(one)
    assert compile_selector("2 + 3 * 4 - 6 / 2 = 11").matches(one)
    assert compile_selector("missing + 1 + 2 IS NULL").matches(lambda k: None)


@pytest.mark.parametrize("text", [DEEP["parentheses"], DEEP["minus"]],
                         ids=["parentheses", "minus"])
def test_pcap_dump_refuses_it_as_usage(text: str) -> None:
    code, out, err = run("pcap-dump", str(require(CAPTURE)), "--selector", text)
    assert (code, out) == (2, "")
    assert err == f"amqp: error: --selector: {TOO_DEEP} at position 101\n"


def test_serve_refuses_the_link_as_a_bad_selector() -> None:
    net = Net(Broker())
    client, events = net.connect()
    deep = {Symbol("jms-selector"):
            Described(Symbol("apache.org:selector-filter:string"), DEEP["parentheses"])}
    link = _receiver(net, client, "q", filter=deep)
    refused = [e for e in events if isinstance(e, LinkRefused) and e.link is link]
    assert refused and str(refused[0].error.condition) == "amqp:invalid-field"
    assert TOO_DEEP in str(refused[0].error.description)
