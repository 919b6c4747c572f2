"""A path given empty is a usage error naming the option: `pcap-dump ''` read the current
folder (Typer reads '' as the path '.'), `proxy --record ''` proxied without recording
(an empty name is false), `send --from ''` said only that '' could not be read."""

from __future__ import annotations

import pytest

from tests.net.clirun import amqp

# nothing listens on port 1: no run gets as far as connecting
_URL = "amqp://127.0.0.1:1/q"


@pytest.mark.parametrize(("args", "what"), [
    (("pcap-dump", ""), "FILES: the capture file name is empty"),
    (("pcap-dump", "-", ""), "FILES: the capture file name is empty"),
    (("pcap-dump", "x.pcapng", "--tls-keylog", ""), "--tls-keylog: the file name is empty"),
    (("send", _URL, "--from", ""), "--from: the file name is empty"),
    (("send", _URL, "--file", ""), "--file: the file name is empty"),
    (("send", _URL, "hi", "--ca-file", ""), "--ca-file: the file name is empty"),
    (("send", _URL, "hi", "--password-file", ""), "--password-file: the file name is empty"),
    (("recv", _URL, "--out", ""), "--out: the file name is empty"),
    (("proxy", "127.0.0.1:0", _URL, "--record", ""), "--record: the file name is empty"),
    (("proxy", "127.0.0.1:0", "amqps://127.0.0.1:1", "--cert", ""),
     "--cert: the file name is empty"),
    (("tui", "--pcap", ""), "--pcap: the capture file name is empty"),
    (("tui", "--proxy", "127.0.0.1:0", _URL, "--record", ""), "--record: the file name is empty"),
])
def test_an_empty_path_is_a_usage_error_naming_the_option(args: tuple[str, ...],
                                                          what: str) -> None:
    r = amqp(*args, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stderr == f"amqp: error: {what}\n"
    assert r.stdout == ""
