"""A proton trace-log line with a binary value where a string or symbol belongs is a
line that does not parse, as any other type mismatch: a warning, the line skipped, the
rest read (it was an internal error, AttributeError, and nothing after it printed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from amqpcli.capture.tracelog import TraceSyntaxError, parse_frame_line

HEAD = "[0x5615f156b170]: AMQP:FRAME:0 -> "


@pytest.mark.parametrize("body", [
    '@open(16) [container-id=b"x"]',
    '@open(16) [container-id="a", offered-capabilities=b"x"]',
    '@open(16) [container-id="a", desired-capabilities=[b"x"]]',
    '@open(16) [container-id="a", hostname=b"x"]',
    '@attach(18) [name=b"x", handle=0, role=false]',
    '@sasl-mechanisms(64) [sasl-server-mechanisms=b"x"]',
    '@sasl-init(65) [mechanism=b"PLAIN"]',
])
def test_a_binary_for_text_is_a_line_that_does_not_parse(body: str) -> None:
    with pytest.raises(TraceSyntaxError):
        parse_frame_line(HEAD + body)


def test_pcap_dump_warns_and_goes_on(tmp_path: Path) -> None:
    log = tmp_path / "t.log"
    log.write_text(
        f'{HEAD}@open(16) [container-id=b"x"]\n'
        f'{HEAD}@open(16) [container-id="a", offered-capabilities=b"x"]\n'
        f'{HEAD}@open(16) [container-id="a", max-frame-size="big"]\n'
        f'{HEAD}@sasl-mechanisms(64) [sasl-server-mechanisms=b"x"]\n'
        f'{HEAD}@open(16) [container-id="after"]\n')
    r = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(log)],
                       check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    warnings = r.stderr.splitlines()
    for n in (1, 2, 3):
        assert any(f"t.log:{n}: a frame line that does not parse (" in w for w in warnings), (
            r.stderr)
    assert any("t.log:4: a SASL frame line that does not parse" in w for w in warnings)
    assert 'container-id="after"' in r.stdout
