"""`recv --save-bodies DIR`: each body as bytes in a file of its own (a binary body as it
is, not as the hex of --bodies-only), numbered on after what DIR holds, and a message
accepted only once its file is on disk."""

from __future__ import annotations

import base64
import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from amqpcli.codec import composites as c
from amqpcli.codec.encode import encode
from amqpcli.codec.message import Message
from amqpcli.codec.types import Int, Symbol
from tests.net.clirun import amqp, amqp_in_process, json_lines
from tests.net.servepeer import ServePeers, cli_env
from tests.paths import REPO_ROOT
from tests.peers import DirectSender
from tests.peers.net import free_port

BINARY = bytes(range(256)) * 3

BODIES = [  # the body as --from gives it, and the file's bytes
    ({"data": [{"binary": base64.b64encode(BINARY).decode()}]}, BINARY),
    ({"data": [{"binary-text": "two "}, {"binary": "AP8="}]}, b"two \x00\xff"),
    ({"value": {"binary": "AP8Q"}}, b"\x00\xff\x10"),
    ({"value": "text, é\n"}, "text, é\n".encode()),
    ({"value": {"int": 5}}, encode(c.AmqpValue(value=Int(5)))),  # other values: AMQP-encoded
    ({"sequence": [[1, "x"]]}, encode(c.AmqpSequence(value=[1, "x"]))),
    (None, b""),
]


def _send_bodies(q: str, tmp_path: Path) -> None:
    src = tmp_path / "m.jsonl"
    src.write_text("".join(json.dumps({"properties": {"subject": "s"}} if b is None
                                      else {"body": b}) + "\n"
                           for b, _ in BODIES))
    r = amqp("send", q, "--from", str(src), "-q")
    assert r.returncode == 0, r.stderr


def test_bodies_saved_as_bytes_numbered_on(serve: ServePeers, tmp_path: Path) -> None:
    q = f"{serve()}/q"
    _send_bodies(q, tmp_path)
    out = tmp_path / "bodies"  # made by the run
    r = amqp("recv", q, "--drain", "--save-bodies", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    names = [f"{n:06d}.bin" for n in range(1, len(BODIES) + 1)]
    assert sorted(os.listdir(out)) == names  # (no temporary file left)
    for name, (_, data) in zip(names, BODIES, strict=True):
        assert (out / name).read_bytes() == data, name
    assert f"{len(BODIES)} bodies saved: {out}/000001.bin to {names[-1]}" in r.stderr
    assert f"received {len(BODIES)}, accept {len(BODIES)}" in r.stderr
    # a second run adds to the first: nothing overwritten
    (out / "000042.bin").write_bytes(b"someone else's")
    assert amqp("send", q, "again", "-q").returncode == 0
    r = amqp("recv", q, "--drain", "--save-bodies", str(out), "--json-summary")
    assert r.returncode == 0, r.stderr
    assert (out / "000043.bin").read_bytes() == b"again"
    assert (out / "000042.bin").read_bytes() == b"someone else's"
    assert (out / "000001.bin").read_bytes() == BINARY
    summary = json.loads(r.stderr.strip().splitlines()[-1])["recv"]
    assert summary["saved-bodies"] == {"dir": str(out), "count": 1, "first": "000043.bin",
                                       "last": "000043.bin"}


def test_browse_saves_bodies_and_leaves_them(serve: ServePeers, tmp_path: Path) -> None:
    q = f"{serve()}/q"
    _send_bodies(q, tmp_path)
    r = amqp("browse", q, "--save-bodies", str(tmp_path / "b"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "b" / "000001.bin").read_bytes() == BINARY
    assert len(os.listdir(tmp_path / "b")) == len(BODIES)
    r = amqp("recv", q, "--drain", "-q", "--json")
    assert len(json_lines(r.stdout)) == len(BODIES)


def _limited_recv(args: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    """recv with files limited to `limit` bytes (a write past it fails with EFBIG, as on a
    full disk; Python ignores SIGXFSZ)."""
    def limit_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "amqpcli", "recv", *args],
                          capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
                          env=cli_env(), preexec_fn=limit_files, check=False)


def test_a_body_not_saved_is_not_accepted(serve: ServePeers, tmp_path: Path) -> None:
    q = f"{serve()}/q"
    for body in ("first", "x" * 200_000, "third"):
        (tmp_path / "body").write_text(body)
        r = amqp("send", q, "--file", str(tmp_path / "body"), "--message-id", body[:5], "-q")
        assert r.returncode == 0, r.stderr
    out = tmp_path / "bodies"
    r = _limited_recv([q, "--drain", "--save-bodies", str(out)], 100_000)
    assert r.returncode == 2, r.stderr
    assert f"--save-bodies: cannot write in {str(out)!r}" in r.stderr
    assert "(after 1 message(s))" in r.stderr
    assert os.listdir(out) == ["000001.bin"]  # the one cut short is not left behind
    assert (out / "000001.bin").read_bytes() == b"first"
    # the first was accepted; the one that failed and the one after it stay on the node
    r = amqp("recv", q, "--drain", "--json", "-q")
    assert [m["properties"]["message-id"] for m in json_lines(r.stdout)] == ["xxxxx", "third"]


def test_a_sasl_secret_in_a_body_is_saved_masked(
        direct_sender: Callable[..., DirectSender], tmp_path: Path) -> None:
    sasl = c.SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\0user\0hunter2")
    snd = direct_sender([Message(sasl).encode()])
    out = tmp_path / "bodies"
    r = amqp("recv", f"{snd.url}/src", "-c", "1", "-t", "10", "--save-bodies", str(out))
    assert r.returncode == 0, r.stderr
    saved = (out / "000001.bin").read_bytes()
    assert b"hunter2" not in saved and b"\0user\0***" in saved
    assert "message 1: its body holds a SASL secret: saved masked" in r.stderr


@pytest.mark.parametrize(("args", "said"), [
    (("--json",), "--save-bodies writes bodies to files and nothing else: it takes no --json"),
    (("--bodies-only",), "it takes no --bodies-only"),
    (("--out", "f.jsonl"), "it takes no --out"),
])
@pytest.mark.parametrize("command", ["recv", "browse"])
def test_refused_with_other_outputs(command: str, args: tuple[str, ...], said: str,
                                    tmp_path: Path) -> None:
    url = f"amqp://127.0.0.1:{free_port()}/q"  # nothing listens: exit 3 once it tries
    code, out, err = amqp_in_process(command, url, "--save-bodies", str(tmp_path), *args)
    assert (code, out) == (2, ""), err
    assert said in err


def test_refused_dir(tmp_path: Path) -> None:
    url = f"amqp://127.0.0.1:{free_port()}/q"
    code, _, err = amqp_in_process("recv", url, "--save-bodies", "")
    assert code == 2 and "--save-bodies: the folder name is empty" in err
    (tmp_path / "f").write_text("")
    code, _, err = amqp_in_process("recv", url, "--save-bodies", str(tmp_path / "f"))
    assert code == 2 and f"--save-bodies: cannot use {str(tmp_path / 'f')!r}: not a folder" in err
    code, _, err = amqp_in_process("recv", url, "--save-bodies", str(tmp_path / "f" / "g"))
    assert code == 2 and err.rstrip().endswith(": not a folder"), err


def test_a_vendor_format_message_is_saved_and_shown_whole(serve: ServePeers,
                                                          tmp_path: Path) -> None:
    """A message of a vendor's message-format (not 0) is no AMQP message, though its bytes
    may decode as one: its payload is saved whole (and --bodies-only shows it whole), not
    the body they would decode to."""
    q = f"{serve()}/q"
    src = tmp_path / "m.jsonl"
    line = {"body": {"value": "hi"}, "message-format": 0x80013700}
    src.write_text(json.dumps(line) + "\n" + json.dumps(line) + "\n")
    assert amqp("send", q, "--from", str(src), "-q").returncode == 0
    payload = encode(c.AmqpValue(value="hi"))
    out = tmp_path / "bodies"
    r = amqp("recv", q, "-c", "1", "--save-bodies", str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "000001.bin").read_bytes() == payload
    assert "message-format is 2147563264 (a vendor's): its payload saved whole" in r.stderr
    r = amqp("recv", q, "-c", "1", "--bodies-only")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "0x" + payload.hex() + "\n", r.stdout
