"""A trace-log frame line whose field holds a value its type cannot take (a string or a
double where the spec has a uint, a number in an array of char) is a line that does not
parse, and the warning names the field and what it holds (it gave Python's own words:
`'<' not supported between instances of 'int' and 'str'`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from amqpcli.capture.tracelog import TraceSyntaxError, parse_frame_line
from tests.net.clirun import amqp

HEAD = "[0x5615f156b170]: AMQP:FRAME:0 -> "


@pytest.mark.parametrize(("body", "said"), [
    ('@open(16) [container-id="a", max-frame-size="big"]',
     'the open: its max-frame-size (a uint) holds the string "big" at column 30'),
    ('@open(16) [container-id="a", channel-max=b"x"]',
     'the open: its channel-max (a ushort) holds the binary b"x" at column 30'),
    ('@open(16) [container-id="a", idle-time-out=1.5]',
     "the open: its idle-time-out (a uint) holds the number 1.5 at column 30"),
    ('@transfer(20) [handle=0, delivery-id=1, delivery-tag="t"]',
     'the transfer: its delivery-tag (a binary) holds the string "t" at column 41'),
    ('@attach(18) [name="a", handle=0, role=false, offered-capabilities=@<char>[1]]',
     ("the attach: its offered-capabilities (an array of char) holds the number 1 at "
      "column 46")),
    ('@attach(18) [name="a", handle=0, role=false, source=@source(40) [timeout="t"]]',
     'the attach: its source.timeout (a uint) holds the string "t" at column 46'),
])
def test_the_field_and_what_it_holds_are_named(body: str, said: str) -> None:
    with pytest.raises(TraceSyntaxError) as e:
        parse_frame_line(HEAD + body)
    assert str(e.value) == f"cannot encode {said}"


def test_pcap_dump_says_it_in_one_line(tmp_path: Path) -> None:
    log = tmp_path / "t.log"
    log.write_text(f'{HEAD}@open(16) [container-id="a", channel-max="x"]\n'
                   f'{HEAD}@open(16) [container-id="after"]\n')
    r = amqp("pcap-dump", str(log))
    assert r.returncode == 0, r.stderr
    [warning] = [w for w in r.stderr.splitlines() if "t.log:1:" in w]
    assert warning.endswith('t.log:1: a frame line that does not parse (cannot encode the '
                            'open: its channel-max (a ushort) holds the string "x" at column '
                            '30); skipped')
