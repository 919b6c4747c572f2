"""`amqp send` numbers its deliveries' tags 1, 2, 3, ... whether a message fits in one
frame or is split over several (a large one used to take every other number)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers


def test_multi_frame_messages_get_consecutive_tags(serve: ServePeers, tmp_path: Path) -> None:
    url = serve("--max-frame-size", "1024")  # the frames we send are the peer's size
    body = tmp_path / "big.bin"
    body.write_bytes(b"x" * 5000)
    r = amqp("send", f"{url}/q", "--file", str(body), "--count", "3", "--trace")
    assert r.returncode == 0, r.stderr
    tags = re.findall(r"-> .*transfer .*\btag=b\"(\d+)\"", r.stderr)
    assert len(re.findall(r"-> .*transfer .*\bmore\b", r.stderr)) > 3  # several frames each
    assert tags == ["1", "2", "3"], r.stderr
