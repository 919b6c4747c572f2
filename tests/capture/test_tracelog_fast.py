"""The trace-log reader's fast paths (amqpcli.capture.tracelog) against a straightforward
reading: the same frame lines from generated and mutated lines, byte for byte, and the
same errors. The reference here is the reader as it was before them: the general
`_Parser` reading every value, strings and payloads character by character, the line
expression with a lazy body, every time through strptime."""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any

import pytest

from amqpcli.capture import tracelog as t
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.types import Composite
from tests.capture.test_tracelog import ROUTER_LOG

_REFERENCE_LINE = re.compile(
    r"^(?:(?P<date>\d{4}-\d\d-\d\d)[ T](?P<clock>\d\d:\d\d:\d\d(?:\.\d+)?)"
    r"(?:\s*(?P<zone>Z|UTC|[+-]\d\d:?\d\d))?\s+)?"
    r".*?\[(?P<conn>[^\[\]\s]+)\]:\s*(?:[A-Z]+:)?(?:FRAME:)?\s*(?P<channel>\d+)?\s*"
    r"(?P<dir>->|<-)\s+(?P<body>\S.*?)\s*$")


class _ReferenceParser(t._Parser):
    def quoted(self, after: str) -> bytes:
        return self._quoted_each(after)


def _reference_payload(p: t._Parser) -> bytes:
    text = p.text
    quoted = p.peek('"')
    out = bytearray()
    i = p.pos + quoted
    end = len(text)
    if quoted:
        end = text.rstrip(" ").rfind('"')
        if end == p.pos:
            raise p.fail("a payload that does not end")
    while i < end:
        if text[i] == "\\":
            i = t._escape(text, i, out, p)
        else:
            out += text[i].encode("utf-8")
            i += 1
    p.pos = i + quoted
    if p.pos < len(text.rstrip(" ")):
        raise p.fail(f"more after the payload: {text[p.pos:p.pos + 12]!r}")
    return bytes(out)


def _reference_time(m: re.Match[str]) -> int:
    whole, _, frac = m.group("clock").partition(".")
    zone = m.group("zone") or "+0000"
    if zone in ("Z", "UTC"):
        zone = "+0000"
    try:
        stamp = dt.datetime.strptime(f"{m.group('date')} {whole} {zone.replace(':', '')}",
                                     "%Y-%m-%d %H:%M:%S %z")
    except ValueError:  # (the line's error: a warning, not the reader's crash)
        said = " ".join(g for g in m.group("date", "clock", "zone") if g)
        raise t.TraceSyntaxError(f"no such time: {said}", m.start("date")) from None
    ns = int((frac + "000000000")[:9]) if frac else 0
    return int(stamp.timestamp()) * 1_000_000_000 + ns


def reference_frame_line(line: str) -> t.FrameLine:
    m = _REFERENCE_LINE.match(line)
    if m is None:
        raise t.NotAFrame
    body = t._LOCATION.sub("", m.group("body"))
    conn, outgoing = m.group("conn"), m.group("dir") == "->"
    tm = _reference_time(m) if m.group("date") else None
    word = body.split(" ", 1)[0]
    if word in t._HEADERS:
        return t.FrameLine(conn, outgoing, "header", t._HEADERS[word], tm)
    if word == "EOS":
        return t.FrameLine(conn, outgoing, "eos", b"", tm)
    channel = t._channel(m)
    if body.upper() == "(EMPTY FRAME)":
        return t.FrameLine(conn, outgoing, "empty", encode_frame(None, channel), tm)
    if not body.startswith("@"):
        raise t.NotAFrame
    cut = False
    if t._TRUNCATED.search(body):
        body = t._TRUNCATED.sub("", body)
        cut = True
    p = _ReferenceParser(body)
    performative = p.value()
    if not isinstance(performative, Composite) or performative.CODE not in t._FRAME_TYPES:
        raise t.TraceSyntaxError(f"not a performative: {body[:p.pos][:40]!r}", 0)
    payload = b""
    p.skip_spaces()
    if p.pos < len(body):
        size_m = re.compile(r"\((\d{1,20})\)\s?").match(body, p.pos)
        if size_m is None:
            raise p.fail(f"more after the performative: {body[p.pos:p.pos + 12]!r}")
        p.pos = size_m.end()
        payload = _reference_payload(p)
        if not cut and len(payload) != int(size_m.group(1)):
            raise t.TraceSyntaxError(f"the payload is {len(payload)} bytes, the line says "
                                     f"{size_m.group(1)}", size_m.start())
    frame = t.encoded_frame(performative, channel, payload, body)
    return t.FrameLine(conn, outgoing, "frame", frame, tm, performative, cut)


def _outcome(parse: Any, line: str) -> tuple[Any, ...]:
    try:
        fl = parse(line)
    except Exception as e:  # noqa: BLE001 (the same error, whatever it is)
        return (type(e).__name__, str(e))
    perf = fl.performative
    return (fl.conn, fl.outgoing, fl.kind, fl.data, fl.time_ns, fl.cut,
            None if perf is None else (type(perf).__name__, repr(vars_of(perf))))


def vars_of(c: Composite) -> list[tuple[str, Any, str]]:
    """A composite's fields with their Python types (an int's width is its type)."""
    out = []
    for f in c.FIELDS:
        v = getattr(c, f.attr)
        out.append((f.attr, vars_of(v) if isinstance(v, Composite) else v, type(v).__name__))
    return out


_PAYLOAD = bytes(range(256))
SEEDS = [line for line in ROUTER_LOG.splitlines() if "PROTOCOL" in line] + [
    ('[0x55d0]:0 -> @transfer(20) [handle=0x0, delivery-id=0x1f4, delivery-tag=b"\\x00\\x01", '
    'message-format=0x0, settled=false, more=false] (7) "\\x00Sw\\xa1\\x02hi"'),
    ('[0x55d0]:1 <- @transfer(20) [handle=0x0, delivery-id=0x0, delivery-tag=b""\\x03", '
    'message-format=0x0] (6) "\\x00Sw\\xa0\\x02""'),
    ('[0x55d0]:0 -> @disposition(21) [role=true, first=0x0, last=0x2, settled=true, '
    'state=@modified(39) [delivery-failed=true, undeliverable-here=false]]'),
    ('[0x55d0]:0 -> @flow(19) [next-incoming-id=0x0, incoming-window=0x7fffffff, '
    'next-outgoing-id=0x0, outgoing-window=0x7fffffff, handle=0x0, delivery-count=0x0, '
    'link-credit=0x1f4, drain=false]'),
    ('[0x55d0]:0 <- @attach(18) [name="r:1", handle=0x1, role=true, snd-settle-mode=0x0, '
    'rcv-settle-mode=0x0, source=@source(40) [address="q \\x22a\\x22", durable=0x0, '
    'expiry-policy=:"link-detach", timeout=0x0, dynamic=false], target=@target(41) [], '
    'initial-delivery-count=0x0, max-message-size=0x0]'),
    ('[0x55d0]:0 -> @detach(22) [handle=0x1, closed=true, error=@error(29) '
    '[condition=:"amqp:not-found", description="no \\"q\\" \\\\ here"]]'),
    '[0x55d0]:0 -> @sasl-init(65) [mechanism=:PLAIN, initial-response=b"\\x00a\\x00b"]',
    ('[0x55d0]:0 -> @begin(17) [next-outgoing-id=-5, incoming-window=4294967296, '
    'outgoing-window=0x1ffffffff, handle-max=12]'),
    '2020-02-29 23:59:59.5 -0130 X [C1]:0 -> @end(23) []',
    '2021-06-01T01:02:03Z X [C1]:0 -> @close(24) [error=@error(29) [condition=:x]]',
    '2021-06-01 01:02:03.123456789 UTC X [C1]:0 <- @open(16) [container-id="\\xc3\\xa9"]',
    '2021-06-01 24:00:00 +0000 X [C1]:0 <- @open(16) [container-id="a"]',
    '2021-06-01 23:59:60 +0000 X [C1]:0 <- @open(16) [container-id="a"]',
    '[C1]:0 -> @transfer(20) [handle=0x0] (9) \\x00Sw\\xb1abcde ... (truncated)',
]
# what mutations put in or take out: the characters the grammar turns on
_ALPHABET = '"\\,[]{}()=@: x0b9-.eEfF\'nrt_<>/Z+' + "\u00e9"


def _mutations(rng: random.Random, line: str) -> str:
    chars = list(line)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(chars) + 1)
        op = rng.random()
        if op < 0.4:
            chars.insert(i, rng.choice(_ALPHABET))
        elif op < 0.7 and i < len(chars):
            del chars[i]
        elif i < len(chars):
            chars[i] = rng.choice(_ALPHABET)
    return "".join(chars)


def _generated(rng: random.Random) -> str:
    """A transfer or disposition line with random values and a random payload."""
    payload = bytes(rng.choice(_PAYLOAD) for _ in range(rng.randint(0, 40)))
    shown = "".join(rng.choice([f"\\x{b:02x}", chr(b) if 32 <= b < 127 and b not in b'"\\'
                                else f"\\x{b:02x}"]) for b in payload)
    tag = "".join(f"\\x{b:02x}" for b in rng.randbytes(rng.randint(0, 8)))
    stamp = (f"2023-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:"
             f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 10**6)}"
             f" {rng.choice(['+', '-'])}{rng.randint(0, 14):02d}{rng.choice(['00', '30'])} "
             "PROTOCOL (trace) ")
    if rng.random() < 0.5:
        return (f"{stamp if rng.random() < 0.5 else ''}[C{rng.randint(1, 9)}]:"
                f"{rng.randint(0, 3)} -> @transfer(20) [handle={rng.choice(['0x0', '7'])}, "
                f"delivery-id={hex(rng.randint(0, 2**32))}, delivery-tag=b\"{tag}\", "
                f"message-format=0x0, settled={rng.choice(['true', 'false'])}] "
                f"({len(payload)}) \"{shown}\"")
    state = rng.choice(["accepted(36) []", "released(38) []",
                        "received(35) [section-number=0x0, section-offset=0x0]"])
    return (f"{stamp}[C2]:0 <- @disposition(21) [role={rng.choice(['true', 'false'])}, "
            f"first={rng.randint(0, 99)}, last=0x{rng.randint(0, 99):x}, settled=true, "
            f"state=@{state}]")


def test_seed_lines_read_as_by_the_reference() -> None:
    for line in SEEDS:
        assert _outcome(t.parse_frame_line, line) == _outcome(reference_frame_line, line), line


@pytest.mark.parametrize("seed", range(4))
def test_generated_and_mutated_lines_read_as_by_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    lines = [_generated(rng) for _ in range(500)]
    lines += [_mutations(rng, rng.choice(SEEDS + lines)) for _ in range(4000)]
    for line in lines:
        assert _outcome(t.parse_frame_line, line) == _outcome(reference_frame_line, line), line


def test_values_read_as_by_the_reference() -> None:
    rng = random.Random(7)
    values = ['"a\\x22b"', 'b"\\x00\\xff"', ':"x y"', ':sym', '"say \\"hi\\""', '"\\q\\0"',
              '"bare"quote"', '"\\x4"', '"end\\', '{:a="b", "c"=[0x1, -2]}',
              '@<symbol>[:a, :"b c"]', 'UUID(00000000-0000-0000-0000-000000000001)']
    values += [_mutations(rng, rng.choice(values)) for _ in range(3000)]

    def reference(text: str) -> Any:
        p = _ReferenceParser(text)
        v = p.value()
        p.skip_spaces()
        if p.pos != len(text):
            raise p.fail(f"more after the value: {text[p.pos:p.pos + 12]!r}")
        return v

    for text in values:
        got: Any
        want: Any
        try:
            got = repr(t.parse_value(text))
        except Exception as e:  # noqa: BLE001
            got = (type(e).__name__, str(e))
        try:
            want = repr(reference(text))
        except Exception as e:  # noqa: BLE001
            want = (type(e).__name__, str(e))
        assert got == want, text


def test_the_common_shapes_take_the_fast_path() -> None:
    """(Else the tests above would hold the general parser to itself.)"""
    for name in ("transfer", "flow", "disposition", "attach", "detach", "begin", "end",
                 "sasl-init", "close"):
        fast = []
        for line in SEEDS:
            m = t._LINE.match(line)
            if m is not None and f"@{name}(" in line:
                fast.append(t._common_performative(t._without_location(m.group("body"))))
        assert any(f is not None for f in fast), name
