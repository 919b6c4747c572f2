"""`amqp proxy` of a client that died while sending a frame (its connection reset, or its
stream ended, inside it): the frame was cut short, which the proxy's output says as
`amqp pcap-dump` of its recording says it, a `truncated` notice, not a frame error (was:
`frame error ... expected a frame of N bytes, found end of input after M bytes`, and a
framing-error violation in the model)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers
from tests.proxy.dying_client import die_mid_frame

ENDED = {"rst": "the connection was reset (RST)", "fin": "the stream ended (FIN)"}


def _proxy(url: str, record: Path, how: str, as_json: bool) -> tuple[str, int, int]:
    """The proxy's stdout for one client that died mid-frame, (its bytes of that frame, the
    frame's size)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "proxy", "127.0.0.1:0", url, "--record",
         str(record), *(["--json"] if as_json else [])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    try:
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", proc.stderr.readline())
        assert m
        sent, size = die_mid_frame(int(m.group(1)), reset=how == "rst")
        while "bytes up" not in (line := proc.stderr.readline()):  # c1 ended
            assert line, "the proxy stopped"
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    return out, sent, size


@pytest.mark.parametrize("how", ["rst", "fin"])
def test_the_proxy_says_the_frame_was_cut_short(serve: ServePeers, tmp_path: Path,
                                                how: str) -> None:
    record = tmp_path / "p.pcapng"
    out, sent, size = _proxy(serve("--no-sasl"), record, how, as_json=False)
    lines = out.splitlines()
    [at] = [i for i, x in enumerate(lines) if " !! " in x]
    frames = [x for x in lines[:at] if "protocol header" not in x]  # (the cut one's number)
    notice = (f"c1 !! client: {ENDED[how]} inside frame {len(frames) + 1} from the client "
              f"(transfer, {sent} of {size} bytes)")
    assert lines[at].endswith(notice), out
    assert "frame error" not in out
    # the recording reads the same
    dump = amqp("pcap-dump", str(record))
    assert dump.returncode == 0, dump.stdout + dump.stderr
    assert dump.stdout.splitlines() == lines


def test_the_proxy_json_has_pcap_dumps_notice(serve: ServePeers, tmp_path: Path) -> None:
    record = tmp_path / "p.pcapng"
    out, sent, size = _proxy(serve("--no-sasl"), record, "rst", as_json=True)
    objs = [json.loads(x) for x in out.splitlines()]
    assert [o for o in objs if o.get("item") == "error"] == []
    [notice] = [o for o in objs if o["record"] == "notice"]
    assert (notice["kind"], notice["side"]) == ("truncated", "client")
    assert notice["text"].endswith(f"from the client (transfer, {sent} of {size} bytes)")
    dump = amqp("pcap-dump", str(record), "--json")
    assert dump.returncode == 0, dump.stdout + dump.stderr
    [recorded] = [o for o in json_lines(dump.stdout) if o["record"] == "notice"]
    del recorded["packet"]  # (no capture packet behind the proxy's records)
    assert notice == recorded
    assert [o for o in json_lines(dump.stdout) if o["record"] == "violation"] == []
