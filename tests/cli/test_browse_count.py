"""`amqp browse` says what it actually saw (the first --count messages, or those before an
interrupt) and still checks, or says it did not check, whether the peer copied."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.net.clirun import amqp, json_lines, queue_name
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration


def test_browse_count_says_first_and_still_checks_copy(rabbitmq_url: str) -> None:
    q = queue_name("browse-count")
    url = f"{rabbitmq_url}//queue/{q}"
    assert amqp("send", url, "x", "--count", "5", "--message-id", "{n}").returncode == 0
    r = amqp("browse", url, "--count", "2")
    assert r.returncode == 0, r.stderr
    assert f"first 2 messages on '/queue/{q}'" in r.stderr
    assert "second browse saw 0 of the 2 messages" in r.stderr  # RabbitMQ consumes on copy
    r = amqp("browse", url, "--count", "2", "--json")
    summary = json.loads(r.stderr.strip().splitlines()[-1])["browse"]
    assert summary["copy-consumed"] == 2
    r = amqp("recv", url, "-c", "5", "-t", "10", "--json", "-q")  # all still there
    assert sorted(m["properties"]["message-id"] for m in json_lines(r.stdout)) == list("12345")


def test_browse_count_of_identical_messages_says_copy_not_checked(rabbitmq_url: str) -> None:
    url = f"{rabbitmq_url}//queue/{queue_name('browse-same')}"
    assert amqp("send", url, "x", "--count", "5").returncode == 0
    r = amqp("browse", url, "--count", "2", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stderr.strip().splitlines()[-1])["browse"]
    assert "copy-consumed" not in summary and summary["copy-not-checked"]


def test_browse_count_on_a_copying_peer(serve: ServePeers) -> None:
    url = serve()
    assert amqp("send", f"{url}/b3", "x", "--count", "5", "--message-id", "{n}").returncode == 0
    r = amqp("browse", f"{url}/b3", "--count", "2", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stderr.strip().splitlines()[-1])["browse"]
    assert summary["copy-consumed"] == 0 and "warning" not in r.stderr
    r = amqp("browse", f"{url}/b3")
    assert "amqp: 5 messages on 'b3'" in r.stderr and "first" not in r.stderr


def test_interrupted_browse_says_what_it_saw(serve: ServePeers) -> None:
    url = serve()
    r = amqp("send", f"{url}/int1", "x", "--count", "60000", "--message-id", "{n}", "-q")
    assert r.returncode == 0, r.stderr
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "browse", f"{url}/int1", "--credit", "100", "--json"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env=cli_env(),
    )
    time.sleep(2.5)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    summary = json.loads(err.strip().splitlines()[-2])["browse"]
    assert 0 < summary["received"] < 60000 and summary["copy-not-checked"] == "interrupted"
    # what was held is released before the close, and said (it went unsaid)
    assert summary["held-and-released"] == summary["received"]
    p = subprocess.Popen(
        [sys.executable, "-m", "amqpcli", "browse", f"{url}/int1", "--credit", "100"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT,
        env=cli_env(),
    )
    time.sleep(2.5)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert re.search(r"amqp: \d+ messages seen on 'int1' before the interrupt", err), err
    assert "not checked whether the peer copied or consumed them" in err
