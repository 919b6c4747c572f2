"""`amqp tui` option handling: which source each set of options builds, and the refusals."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from amqpcli.cli.app import main
from amqpcli.tui.synth import write_conversation
from tests.dissect.helpers import basic, write


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    calls: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr("amqpcli.tui.app.run", lambda source, **kw: calls.append((source, kw)))
    monkeypatch.delenv("AMQP_URL", raising=False)
    return calls


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as e:
        main(argv)
    return int(e.value.code or 0), capsys.readouterr().err.strip()


def test_pcap_builds_a_replay(started: list[Any], tmp_path: Path) -> None:
    path = tmp_path / "c.pcapng"
    write_conversation(path, 5)
    main(["tui", "--pcap", str(path), "--speed", "4", "--play", "--refresh", "5"])
    ((source, kw),) = started
    assert source.kind == "replay" and source.speed == 4 and source.autoplay
    assert kw == {"refresh_hz": 5.0}


def test_proxy_takes_the_broker_from_the_url(started: list[Any]) -> None:
    main(["tui", "amqps://broker.example:5671", "--proxy", "7000", "--insecure"])
    ((source, _),) = started
    assert source.listen == ("127.0.0.1", 7000)
    assert source.upstream.endpoint.host == "broker.example" and source.upstream.endpoint.tls
    assert not source.upstream.tls.verify


def test_proxy_takes_the_half_close_bound(started: list[Any]) -> None:
    # as `amqp proxy --half-close-timeout`: 30 s unless given, 0 waits for ever
    main(["tui", "amqp://broker:5672", "--proxy", "7000"])
    main(["tui", "amqp://broker:5672", "--proxy", "7000", "--half-close-timeout", "0"])
    (default, _), (never, _) = started
    assert default.half_close_timeout == 30.0 and never.half_close_timeout == 0.0


def test_recv_and_send_build_our_own_link(started: list[Any]) -> None:
    main(["tui", "amqp://h:1/orders", "--recv", "--credit", "3"])
    main(["tui", "amqp://h:1/orders", "--send"])
    (recv, kw), (send, _) = started
    assert recv.kind == "client" and recv.receive and kw["credit_step"] == 3
    assert recv.cfg.endpoint.address == "orders"
    assert send.kind == "client" and not send.receive


def test_serve_listens_on_loopback_by_default(started: list[Any]) -> None:
    main(["tui", "--serve", "--listen", "5673"])
    ((source, _),) = started
    assert source.kind == "client" and source.listen == ("127.0.0.1", 5673)


def test_live_options(started: list[Any]) -> None:
    main(["tui", "--live", "lo", "--capture-filter", "tcp port 5672", "--fast-capture"])
    ((source, _),) = started
    assert source.kind == "live" and source.fast and source.bpf_filter == "tcp port 5672"


def test_frame_log_length_and_its_old_spelling(started: list[Any]) -> None:
    main(["tui", "--serve", "--listen", "0", "--frame-log", "64"])
    main(["tui", "--serve", "-l", "0", "--frames", "32"])  # the old spelling, hidden
    (new, _), (old, _) = started
    assert new.store.limit == 64 and old.store.limit == 32


@pytest.fixture
def lab_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[profiles.lab]\nurl = "amqp://lab.example:5680/orders"\n')
    monkeypatch.setenv("AMQP_CONFIG", str(config))


def test_a_profile_is_the_broker(started: list[Any], lab_profile: None) -> None:
    main(["tui", "--profile", "lab", "--recv"])
    main(["tui", "@lab/invoices", "--send"])
    (recv, _), (send, _) = started
    assert recv.cfg.endpoint.host == "lab.example" and recv.cfg.endpoint.port == 5680
    assert recv.cfg.endpoint.address == "orders" and recv.receive
    assert send.cfg.endpoint.address == "invoices" and not send.receive


def test_amqp_url_is_the_broker(started: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMQP_URL", "amqp://env.example/orders")
    main(["tui", "--recv"])
    ((source, _),) = started
    assert source.cfg.endpoint.host == "env.example"


def test_a_profile_with_a_capture_is_refused(started: list[Any], capsys: pytest.CaptureFixture[str],
                                             tmp_path: Path, lab_profile: None) -> None:
    path = tmp_path / "c.pcapng"
    write_conversation(path, 2)
    code, err = _fails(["tui", "--pcap", str(path), "--profile", "lab"], capsys)
    assert code == 2 and err == "amqp: error: --pcap takes no URL nor --profile"
    assert started == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tui"], "amqp: error: nothing to watch"),
        (["tui", "--pcap", "a", "--live", "lo"], "amqp: error: pick one source: --pcap, --live"),
        (["tui", "--recv"], "amqp: error: --recv needs a broker URL"),
        (["tui", "amqp://h", "--pcap", "x"], "amqp: error: --pcap takes no URL"),
        (["tui", "--pcap", "/nonexistent.pcapng"], "amqp: error: /nonexistent.pcapng: no such file"),
        (["tui", "amqp://h", "--serve"], "amqp: error: --serve takes no URL"),
        (["tui", "--pcap", "x", "--speed", "-1"], "amqp: error: --speed must be"),
        (["tui", "--serve", "--frame-log", "8"], "amqp: error: --history must be at least 1 and --frame-log"),
        (["tui", "--pcap", "x", "--speed", "nan"], "amqp: error: --speed must be"),
        (["tui", "--pcap", "x", "--amqp-port", "99999"], "amqp: error: --amqp-port 99999: not a TCP port"),
        (["tui", "--pcap", "x", "--record", "y.pcapng"], "amqp: error: --record goes with --proxy"),
        (["tui", "--pcap", "x", "--half-close-timeout", "5"],
         "amqp: error: --half-close-timeout goes with --proxy"),
        (["tui", "--serve", "--fast-capture"], "amqp: error: --fast-capture goes with --live"),
        (["tui", "--live", "lo", "--play"], "amqp: error: --play goes with --pcap"),
        (["tui", "--serve", "--amqp-port", "5673"], "amqp: error: --amqp-port goes with --pcap or --live"),
        (["tui", "amqp://h/q", "--recv", "--credit", "0"], "amqp: error: --credit must be between 1"),
        (["tui", "amqp://h/q", "--recv", "--credit", "2147483648"], "amqp: error: --credit must be"),
    ],
)
def test_refusals(started: list[Any], capsys: pytest.CaptureFixture[str], argv: list[str],
                  message: str) -> None:
    code, err = _fails(argv, capsys)
    assert code == 2
    assert err.startswith(message) and "\n" not in err
    assert started == []


@pytest.mark.parametrize("content", [b"hello\n", b""], ids=["text", "empty"])
def test_a_file_that_is_no_capture_is_refused_before_the_screen_opens(
        started: list[Any], capsys: pytest.CaptureFixture[str], tmp_path: Path,
        content: bytes) -> None:
    path = tmp_path / "not.pcap"
    path.write_bytes(content)
    code, err = _fails(["tui", "--pcap", str(path)], capsys)
    assert code == 8 and "not a capture file" in err and "\n" not in err
    assert started == []


def test_a_damaged_capture_still_opens(started: list[Any], tmp_path: Path) -> None:
    path = tmp_path / "c.pcapng"
    write_conversation(path, 50)
    cut = tmp_path / "cut.pcapng"
    cut.write_bytes(path.read_bytes()[:-7])  # the last block cut short
    main(["tui", "--pcap", str(cut)])
    assert len(started) == 1


def test_a_capture_with_nothing_readable_is_an_error_before_the_screen_opens(
        tmp_path: Path) -> None:
    """Damaged before its first frame (not at its start): one line, exit 8, as pcap-dump
    exits; the TUI opened with the error in its title and exited 0."""
    path = tmp_path / "c.pcapng"
    write_conversation(path, 5)
    cut = tmp_path / "cut.pcapng"
    cut.write_bytes(path.read_bytes()[:300])  # the handshake's packets, the last one cut
    for argv in (["pcap-dump", str(cut)], ["tui", "--pcap", str(cut)]):
        p = subprocess.run([sys.executable, "-m", "amqpcli", *argv], capture_output=True,
                           text=True, stdin=subprocess.DEVNULL, timeout=60, check=False)
        assert p.returncode == 8, argv
        assert p.stderr.startswith(f"amqp: error: {cut}: truncated pcapng file")
        assert p.stderr.count("\n") == 1 and p.stdout == "", argv  # no screen was drawn


def test_a_folder_is_its_capture_files(started: list[Any], tmp_path: Path) -> None:
    """As pcap-dump takes a folder: its capture files merged by time (it was 'no such
    file'); a folder without any is refused as pcap-dump refuses it."""
    folder = tmp_path / "set"
    folder.mkdir()
    write(folder / "a.pcapng", basic(2))
    gz = folder / "b.pcap.gz"
    gz.write_bytes(gzip.compress(write(tmp_path / "b.pcap", basic(3), port=5673).read_bytes()))
    (folder / "notes.txt").write_text("not a capture")
    main(["tui", "--pcap", str(folder)])
    ((source, _),) = started
    source.load()
    assert source.controller is not None
    assert [k for k, _ in source.connections()] == [] and len(source.loaded.labels) == 2
    source.controller.seek(len(source.controller))
    assert [k for k, _ in source.connections()] == ["c1", "c2"]
    deliveries = [lk.deliveries for c in source.snapshot(None, None, source.now()).tree
                  for s in c.sessions for lk in s.links]
    assert deliveries == [2, 3]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SystemExit) as e:
        main(["tui", "--pcap", str(empty)])
    assert e.value.code == 2 and len(started) == 1
