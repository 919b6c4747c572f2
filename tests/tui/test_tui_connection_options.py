"""`amqp tui`: a connection option its source has no use for is a one-line usage error
(exit 2) naming the option and why, as `--open-hostname` with `--proxy` was: a capture
(`--pcap`, `--live`) and `--serve` connect nowhere, and through `--proxy` each application
makes its own connection (the proxy takes where and how to reach the broker only). They
were ignored without a word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from amqpcli.cli.app import main
from amqpcli.tui.synth import write_conversation
from tests.net.clirun import amqp

PCAP = "--pcap replays a capture and connects nowhere"
LIVE = "--live captures from an interface and connects nowhere"
SERVE = ("--serve plays the broker, which applications connect to (--listen), and connects "
         "nowhere")
PROXY = ("through --proxy each application makes its own connection (its SASL, its open); "
         "the proxy only reaches the broker at URL (TLS: amqps://)")


@pytest.fixture
def capture(tmp_path: Path) -> str:
    path = tmp_path / "c.pcapng"
    write_conversation(path, 2)
    return str(path)


@pytest.mark.parametrize(("source", "options", "message"), [
    (["--pcap", "{capture}"], ["--user", "u", "--password", "p"],
     f"--user, --password go with --recv or --send: {PCAP}"),
    (["--pcap", "{capture}"], ["--ca-file", "/nonexistent.pem"],  # (not read: no such file)
     f"--ca-file goes with --proxy, --recv or --send: {PCAP}"),
    (["--live", "lo"], ["--sasl-mechanism", "PLAIN"],
     f"--sasl-mechanism goes with --recv or --send: {LIVE}"),
    (["--live", "lo"], ["--open-hostname", "vhost:x", "--insecure"],
     f"--insecure, --open-hostname go with --recv or --send: {LIVE}"),
    (["--serve"], ["--port", "5673"],  # (--listen is serve's port)
     f"--port goes with --proxy, --recv or --send: {SERVE}"),
    (["--serve"], ["--max-frame-size", "1024", "--idle-timeout", "5"],
     f"--idle-timeout, --max-frame-size go with --recv or --send: {SERVE}"),
    (["--proxy", "5999", "amqp://127.0.0.1:1"], ["--container-id", "x", "--tls-upgrade"],
     f"--tls-upgrade, --container-id go with --recv or --send: {PROXY}"),
    (["--proxy", "5999", "amqp://127.0.0.1:1"], ["--open-hostname", "vhost:x"],
     f"--open-hostname goes with --recv or --send: {PROXY}"),
    (["--proxy", "5999", "amqp://127.0.0.1:1"], ["--user", "u", "--password", "p"],
     f"--user, --password go with --recv or --send: {PROXY}"),
], ids=["pcap-credentials", "pcap-tls", "live-sasl", "live-open-hostname", "serve-port",
        "serve-frame-size", "proxy-open", "proxy-open-hostname", "proxy-credentials"])
def test_an_option_the_source_does_not_use_is_refused(
        capture: str, source: list[str], options: list[str], message: str) -> None:
    r = amqp("tui", *[a.format(capture=capture) for a in source], *options, timeout=60)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.splitlines() == [f"amqp: error: {message}"]


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any]]]:
    calls: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr("amqpcli.tui.app.run", lambda source, **kw: calls.append((source, kw)))
    monkeypatch.delenv("AMQP_URL", raising=False)
    return calls


def test_the_options_a_source_uses_are_taken(started: list[Any]) -> None:
    main(["tui", "amqps://broker.example", "--proxy", "7000", "--port", "5999",
          "--server-name", "sni.example", "--connect-timeout", "3"])
    main(["tui", "amqp://h/orders", "--recv", "--open-hostname", "vhost:x", "--user", "u",
          "--password", "p", "--container-id", "c", "--max-frame-size", "1024"])
    (proxy, _), (recv, _) = started
    upstream = proxy.upstream
    assert upstream.endpoint.hostport == "broker.example:5999"
    assert (upstream.tls.server_name, upstream.connect_timeout) == ("sni.example", 3.0)
    cfg = recv.cfg
    assert (cfg.hostname, cfg.endpoint.user, cfg.container_id, cfg.max_frame_size) == (
        "vhost:x", "u", "c", 1024)


@pytest.mark.parametrize(("args", "message"), [
    (["amqp://127.0.0.1:1/q", "--recv", "--listen", "26002"], "--listen goes with --serve"),
    (["--serve", "--capture-filter", "port 1"], "--capture-filter goes with --live"),
    (["--serve", "--speed", "2"], "--speed goes with --pcap"),
    (["amqp://127.0.0.1:1/q", "--send", "--credit", "5"], "--credit goes with --recv"),
    (["--pcap", "{capture}", "--frame-log", "64"],
     ("--frame-log goes with a source shown as it comes (--live, --proxy, --recv, --send, "
      "--serve, a pipe): a capture file is replayed whole")),
], ids=["recv-listen", "serve-capture-filter", "serve-speed", "send-credit",
        "pcap-frame-log"])
def test_an_option_of_another_source_is_refused(
        capture: str, args: list[str], message: str) -> None:
    """`tui URL --recv --listen 26002` ran and ignored --listen (a --serve option)."""
    r = amqp("tui", *[a.format(capture=capture) for a in args], timeout=60)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.splitlines() == [f"amqp: error: {message}"]


def test_a_profile_setting_the_proxy_cannot_use_is_said_and_left_out(
        started: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A profile's open_hostname was ignored without a word, and its user refused as
    `bad broker URL 'amqp://guest:***@127.0.0.1:5672'`, a URL never typed: a profile is
    kept for every command, so what --proxy cannot use is a warning naming it."""
    config = tmp_path / "config.toml"
    config.write_text('[profiles.lab]\nopen_hostname = "vhost:x"\nuser = "guest"\n'
                      'password_env = "LAB_PW"\nconnect_timeout = 3\n')
    monkeypatch.setenv("AMQP_CONFIG", str(config))
    monkeypatch.setenv("LAB_PW", "secret")
    main(["tui", "--proxy", "26001", "@lab"])
    (proxy, _), = started
    assert proxy.upstream.endpoint.url() == "amqp://127.0.0.1:5672"
    assert proxy.upstream.connect_timeout == 3.0
    assert capsys.readouterr().err.splitlines() == [
        f"amqp: warning: profile 'lab': user, password_env, open_hostname not used: {PROXY}"]


def test_a_profile_url_with_a_user_and_address_is_taken_for_its_broker(
        started: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A profile URL with a user and an address was refused naming a URL never typed
    (`bad broker URL 'amqp://alice@127.0.0.1:5672/orders'`), and an unset `password_env`
    stopped --proxy, which needs no password: the proxy takes the URL's broker and says
    what it leaves out, as for the profile's other keys."""
    config = tmp_path / "config.toml"
    config.write_text('[profiles.lab]\nurl = "amqp://alice@127.0.0.1:5671/orders"\n'
                      'password_env = "LAB_UNSET"\n')
    monkeypatch.setenv("AMQP_CONFIG", str(config))
    monkeypatch.delenv("LAB_UNSET", raising=False)
    main(["tui", "--proxy", "26001", "@lab"])
    (proxy, _), = started
    assert proxy.upstream.endpoint.url() == "amqp://127.0.0.1:5671"
    assert capsys.readouterr().err.splitlines() == [
        f"amqp: warning: profile 'lab': the url's user and address not used: {PROXY}",
        f"amqp: warning: profile 'lab': password_env not used: {PROXY}"]
    # an address asked for here is refused as written
    r = amqp("tui", "--proxy", "26001", "@lab/queue/x", timeout=60,
             env={"AMQP_CONFIG": str(config)})
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.splitlines()[-1] == (
        "amqp: error: @lab/queue/x: the proxy forwards each client's own connection, so the "
        "address 'queue/x' would not be used; give @lab")
    r = amqp("tui", "--proxy", "26001", timeout=60,
             env={"AMQP_CONFIG": str(config), "AMQP_URL": "@lab/q"})
    assert (r.returncode, r.stderr) == (2, (
        "amqp: error: @lab/q (from $AMQP_URL): the proxy forwards each client's own "
        "connection, so the address 'q' would not be used; give @lab\n"))
    config.write_text('[profiles.lab]\nurl = "amqp://a:5671,amqp://b:5671"\n')
    r = amqp("tui", "--proxy", "26001", "@lab", timeout=60, env={"AMQP_CONFIG": str(config)})
    assert (r.returncode, r.stderr) == (2, (
        "amqp: error: profile 'lab': its url is a failover list, and the proxy reaches one "
        "broker: give its URL (amqp://host:port)\n"))
    config.write_text('[profiles.lab]\nurl = "amqp://alice@127.0.0.1:5671/orders"\n'
                      'password_env = "LAB_UNSET"\n')
    # --recv still needs the password
    r = amqp("tui", "--recv", "@lab", timeout=60, env={"AMQP_CONFIG": str(config)})
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.splitlines() == [
        "amqp: error: profile 'lab': password_env LAB_UNSET is not set"]
