"""Option names across subcommands: one long option has one short flag everywhere, and one
short flag means one long option everywhere. The inconsistencies known today are listed;
a new one fails, and so does fixing one without taking it off the list."""

from __future__ import annotations

import sys
from collections import defaultdict

from tests.paths import SCRIPTS_DIR

# Short flags that stand for different long options in different subcommands.
KNOWN_SHORT_CLASHES = {
    "-P": "send --property, pcap-dump --performative",
    "-b": "send --body-type, decode --brief",
    "-c": "send/recv/browse --count, pcap-dump --connections (pcap-dump --count has none)",
    "-l": "send --lines, pcap-dump --links, serve/tui --listen",
    "-s": "recv/browse --selector, pcap-dump --summary",
}
# Long options with a short flag in some subcommands and another (or none) in others.
KNOWN_LONG_MISMATCHES = {
    "--brief": "decode -b, pcap-dump none",
    "--count": "send/recv/browse -c, pcap-dump none",
    "--port": "pcap-dump -p (a port to read as AMQP), the connection option none (the broker's port)",
}


def _model():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(SCRIPTS_DIR))
    try:
        import gen_docs
    finally:
        sys.path.pop(0)
    return gen_docs.read_cli()


def _tables() -> tuple[dict[str, set[str]], dict[str, set[tuple[str, ...]]]]:
    short_to_long: dict[str, set[str]] = defaultdict(set)
    long_to_short: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for c in _model().commands:
        for o in c.options:
            longs = [n for n in o.names if n.startswith("--")]
            shorts = tuple(sorted(n for n in o.names if not n.startswith("--")))
            for s in shorts:
                short_to_long[s].add(longs[0])
            for n in longs:
                long_to_short[n].add(shorts)
    return short_to_long, long_to_short


def test_short_flags_mean_one_option() -> None:
    short_to_long, _ = _tables()
    clashes = {s for s, longs in short_to_long.items() if len(longs) > 1}
    assert clashes == set(KNOWN_SHORT_CLASHES), {s: sorted(short_to_long[s]) for s in clashes}


def test_long_options_have_one_short_flag() -> None:
    _, long_to_short = _tables()
    mismatches = {n for n, shorts in long_to_short.items() if len(shorts) > 1}
    assert mismatches == set(KNOWN_LONG_MISMATCHES), {n: sorted(long_to_short[n]) for n in mismatches}
