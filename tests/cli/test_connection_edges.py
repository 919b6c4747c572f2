"""Connection edges of send, recv and browse: a peer that takes TCP but never opens is
retried by --reconnect; --trace on a stderr that cannot be written stops tracing, not
the run; option ranges."""

from __future__ import annotations

import socket
import threading

import pytest

from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers

pytestmark = pytest.mark.integration


def _silent_peer() -> tuple[int, list[int], threading.Event]:
    """A port that accepts connections and never says a word: a broker still starting."""
    srv = socket.create_server(("127.0.0.1", 0))
    accepted: list[int] = []
    stop = threading.Event()
    held: list[socket.socket] = []

    def run() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            held.append(conn)
            accepted.append(1)
        for c in held:
            c.close()
        srv.close()

    threading.Thread(target=run, daemon=True).start()
    return srv.getsockname()[1], accepted, stop


def test_reconnect_retries_a_peer_that_never_opens() -> None:
    port, accepted, stop = _silent_peer()
    try:
        r = amqp("send", f"amqp://127.0.0.1:{port}/q", "x", "--connect-timeout", "0.3",
                 "--reconnect", "2")
    finally:
        stop.set()
    assert r.returncode == 3, r.stderr
    assert "no AMQP open from the peer within 0.3s" in r.stderr
    assert len(accepted) == 3  # the first try and two more


@pytest.mark.parametrize("redirect", ["closed", "full"])
def test_trace_to_a_stderr_that_cannot_be_written_leaves_the_run_alone(
        serve: ServePeers, redirect: str) -> None:
    import subprocess
    import sys

    from tests.net.servepeer import cli_env
    from tests.paths import REPO_ROOT

    url = serve("-q") + "/tw"
    cmd = [sys.executable, "-m", "amqpcli", "send", url, "x", "-c", "2", "--trace"]
    if redirect == "closed":
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=None, cwd=REPO_ROOT,
                           env=cli_env(), timeout=60, check=False, close_fds=True,
                           preexec_fn=lambda: __import__("os").close(2))
    else:
        with open("/dev/full", "w") as full:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=full, cwd=REPO_ROOT,
                               env=cli_env(), timeout=60, check=False)
    assert r.returncode == 0
    assert r.stdout.decode().startswith("sent 2, accepted 2")


@pytest.mark.parametrize(("args", "text"), [
    (["recv", "--credit", "2147483648"], "--credit must be between 1 and 2147483647"),
    (["browse", "--credit", "4294967296"], "--credit must be between 1 and 2147483647"),
    (["send", "x", "--max-frame-size", "4294967296"],
     "--max-frame-size must be between 512 and 4294967295"),
])
def test_out_of_range_options(args: list[str], text: str) -> None:
    r = amqp(args[0], "amqp://127.0.0.1:1/q", *args[1:])
    assert r.returncode == 2 and text in r.stderr, r.stderr


def test_a_peer_that_closes_before_its_open_is_a_failure_to_connect() -> None:
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]

    def run() -> None:
        for _ in range(3):
            conn, _ = srv.accept()
            conn.recv(8)
            conn.close()
        srv.close()

    threading.Thread(target=run, daemon=True).start()
    r = amqp("send", f"amqp://127.0.0.1:{port}/q", "x", "--reconnect", "2")
    assert r.returncode == 3, r.stderr
    # never connected: not "cannot keep the connection"; closed having said nothing, as a
    # TLS port does with our header
    assert r.stderr == (f"amqp: error: cannot connect to 127.0.0.1:{port}: connection closed "
                        "by peer right after our protocol header: the peer may expect TLS "
                        "(amqps://)\n")


def test_a_peer_without_sasl_is_reached_with_sasl_mechanism_none(serve: ServePeers) -> None:
    url = serve("-q", "--no-sasl") + "/ns"
    r = amqp("send", url, "x")
    assert r.returncode == 3
    assert "does not offer SASL" in r.stderr and "--sasl-mechanism none" in r.stderr
    r = amqp("send", url, "x", "--sasl-mechanism", "none")
    assert r.returncode == 0, r.stderr
    r = amqp("recv", url, "-c", "1", "--sasl-mechanism", "NONE", "--json")
    assert r.returncode == 0 and '"binary-text":"x"' in r.stdout.replace(" ", ""), r.stderr
    r = amqp("send", url.replace("amqp://", "amqp://u@"), "x", "--sasl-mechanism", "none")
    assert r.returncode == 2 and "sends no credentials" in r.stderr


def test_an_open_over_512_goes_and_a_strict_peer_s_refusal_says_why(
        serve: ServePeers, rabbitmq_url: str, rabbitmq_queue: str) -> None:
    """Part 2 §2.7.1 asks a peer to accept 512 bytes before the opens are exchanged, no
    more: RabbitMQ (and proton) take a larger open, so it goes; a peer that holds to the
    limit (our serve) ends the connection, and the error says that was likely why."""
    long_id = "c" * 600  # an open of 644 bytes
    rabbitmq = f"{rabbitmq_url}/{rabbitmq_queue}"
    r = amqp("send", rabbitmq, "x", "--container-id", long_id)
    assert r.returncode == 0, r.stderr
    r = amqp("recv", rabbitmq, "-c", "1", "--container-id", long_id, "--bodies-only")
    assert (r.returncode, r.stdout) == (0, "x\n"), r.stderr
    url = serve("-q") + "/q"
    r = amqp("send", url, "x", "--container-id", long_id)
    assert r.returncode == 3
    assert r.stderr.endswith(
        "connection closed by peer (our open was 644 bytes, over the 512 every peer must "
        "accept before the opens are exchanged: a shorter --container-id or "
        "--open-hostname may be taken)\n"), r.stderr
    r = amqp("send", url, "x", "--container-id", "c" * 400)  # within: no word of it
    assert r.returncode == 0, r.stderr
