"""`amqp proxy` as a command: lines on stdout, notes on stderr, Ctrl-C stops it cleanly
(exit 130)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from proton import Message
from proton.utils import BlockingConnection

from amqpcli.tui.sources.replay import load_capture
from tests.peers.broker import Broker


def _start(*args: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, "-m", "amqpcli", "proxy", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
    assert m, line
    return proc, int(m.group(1))


def _send_one(port: int) -> None:
    conn = BlockingConnection(f"amqp://127.0.0.1:{port}", timeout=30)
    try:
        conn.create_sender("q").send(Message(body="through the proxy"))
    finally:
        conn.close()


@pytest.mark.integration
@pytest.mark.parametrize("as_json", [False, True])
def test_proxy_command_prints_frames_and_records(broker: Broker, tmp_path: Path, as_json: bool) -> None:
    record = tmp_path / "p.pcapng"
    args = ["127.0.0.1:0", broker.url, "--record", str(record)] + (["--json"] if as_json else [])
    proc, port = _start(*args)
    notes = []
    try:
        _send_one(port)
        assert proc.stderr is not None
        while not notes or "c1 closed" not in notes[-1]:  # the proxy saw both ends close
            line = proc.stderr.readline()
            assert line, notes
            notes.append(line)
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    err = "".join(notes) + err
    assert proc.returncode == 130, err  # stopped by Ctrl-C: "interrupted"
    assert broker.queue_bodies("q") == ["through the proxy"]
    lines = out.splitlines()
    if as_json:
        objs = [json.loads(x) for x in lines]
        assert {o["connection"] for o in objs} == {"c1"}
        # pcap-dump's frame record shape: record kind, ISO time
        assert {o["record"] for o in objs} == {"frame"}
        assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", o["time"])
                   for o in objs)
        transfers = [o for o in objs if "transfer" in (o.get("performative") or {})]
        assert len(transfers) == 1 and transfers[0]["from"] == "client"
        assert transfers[0]["message"]["body"] == {"value": "through the proxy"}
    else:
        assert any(" c1 -> " in x and "transfer" in x and "through the proxy" in x for x in lines)
        assert any(" c1 <- " in x and "disposition" in x and "accepted" in x for x in lines)
    assert "c1 open 127.0.0.1:" in err and "c1 closed" in err
    # The recording is a readable capture holding every frame that was printed.
    frames = [r for r in load_capture(record).records if type(r.item).__name__ != "EndOfStream"]
    assert len(frames) == len(lines)
    if not as_json:
        # and reads back as the same lines, to the microsecond (the recording once
        # truncated what the lines rounded)
        dump = subprocess.run([sys.executable, "-m", "amqpcli", "pcap-dump", str(record)],
                              capture_output=True, text=True, timeout=60, check=False)
        assert dump.stdout.splitlines() == lines  # the same lines, the same labels


def test_proxy_command_refuses_a_bad_listen_address() -> None:
    proc = subprocess.run([sys.executable, "-m", "amqpcli", "proxy", "nope", "amqp://127.0.0.1:1"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "amqp: error: bad listen address 'nope': the port must be a number"
    ]


@pytest.mark.parametrize("args", [
    ["127.0.0.1:7001", "amqp://broker.example:5680"],
    ["--listen", "7001", "amqp://broker.example:5680"],
    ["amqp://broker.example:5680", "-l", "7001"],
])
def test_listen_as_argument_or_option(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    from amqpcli.cli.app import main

    seen: list[tuple[Any, ...]] = []

    async def fake_run_proxy(listen: tuple[str, int], cfg: Any, record: str | None, printer: Any,
                             half_close_timeout: float) -> None:
        seen.append((listen, cfg.endpoint.hostport))

    monkeypatch.setattr("amqpcli.cli.proxy.run_proxy", fake_run_proxy)
    main(["proxy", *args])
    assert seen == [(("127.0.0.1", 7001), "broker.example:5680")]


@pytest.mark.parametrize(("args", "message"), [
    (["--listen", "7001", "7002", "amqp://b"], "LISTEN given twice"),
    (["7001"], "give where to listen and the broker"),
    (["--listen", "7001"], "give where to listen and the broker"),
])
def test_listen_refusals(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    from amqpcli.cli.app import main

    with pytest.raises(SystemExit) as e:
        main(["proxy", *args])
    assert e.value.code == 2
    assert capsys.readouterr().err.startswith(f"amqp: error: {message}")


@pytest.mark.parametrize(("url", "unused"), [
    ("amqp://u:Secret-77@127.0.0.1:5672", "user, password"),
    ("amqp://127.0.0.1:5672//queue/x", "address"),
    ("amqps://u@127.0.0.1:5671/q", "user, address"),
])
def test_broker_url_parts_the_proxy_cannot_use_are_refused(
        capsys: pytest.CaptureFixture[str], url: str, unused: str) -> None:
    # they were accepted and ignored without a word
    from amqpcli.cli.app import main

    with pytest.raises(SystemExit) as e:
        main(["proxy", "127.0.0.1:0", url])
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"so its {unused} would not be used" in err, err
    assert "Secret-77" not in err


@pytest.mark.parametrize("listen", ["busy", "nosuch.invalid:5"])
def test_listen_failures_are_connection_errors_in_one_line(listen: str) -> None:
    # the proxy exited 2 with asyncio's text (the address twice); serve exits 3
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        if listen == "busy":
            listen = f"127.0.0.1:{taken.getsockname()[1]}"
        for cmd in (["proxy", listen, "amqp://127.0.0.1:1"], ["serve", "--listen", listen]):
            proc = subprocess.run([sys.executable, "-m", "amqpcli", *cmd], capture_output=True,
                                  text=True, timeout=60, check=False)
            lines = proc.stderr.strip().splitlines()
            assert proc.returncode == 3 and len(lines) == 1, (cmd, proc.stderr)
            assert lines[0].startswith(f"amqp: error: cannot listen on {listen}: ")
            assert ("address already in use" in lines[0] if "127.0.0.1" in listen
                    else "cannot resolve 'nosuch.invalid'" in lines[0]), lines[0]
