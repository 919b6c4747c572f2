"""`amqp send`'s summary of rejected and modified outcomes shows what the peer wrote in
them, masked for the run's secrets: in a binary value too (the JSON gives it as base64,
the text as hex or escaped bytes, cut at 64 bytes), and in a string, a symbol or a key at
any depth (a list, a map, a described value, an array)."""

from __future__ import annotations

import base64
import json
import socket
import threading
from typing import Any

from amqpcli.codec import composites as c
from amqpcli.codec.types import Array, Described, Symbol
from amqpcli.engine import Endpoint, LinkAttached, MessageReceived, SaslConfig
from amqpcli.errors import register_secret
from amqpcli.net.outcomedetails import OutcomeDetails
from tests.net.clirun import amqp_in_process
from tests.net.onepeer import HANG_GUARD, one_connection

PASSWORD = "Zq9Secret-outcome"
RAW = PASSWORD.encode()


def _peer() -> tuple[int, threading.Thread]:
    """Logs the client in with SASL PLAIN (any credentials), rejects its first message
    and modifies its second, with the password in what they carry."""
    info = {
        # not text: hex in the text summary, cut at 64 bytes in the middle of the password
        Symbol("raw"): b"\xff" * 60 + RAW + b"\xfe",
        Symbol("said"): ["first", f"you logged in with {PASSWORD}"],
        Symbol("deep"): Described(Symbol("x:why"), {"key": [b"\x00" + RAW]}),
        Symbol(f"key-{PASSWORD}"): True,
    }
    states = [
        c.Rejected(error=c.Error(condition=Symbol("amqp:unauthorized-access"),
                                 description="see info", info=info)),
        c.Modified(delivery_failed=True,
                   message_annotations={Symbol("x-opt-why"): b"\x01\x02" + RAW}),
    ]

    def serve(conn: socket.socket) -> None:
        ep = Endpoint("peer", sasl=SaslConfig())
        t = 0.0
        received = 0
        while data := conn.recv(65536):
            t += 0.001
            for e in ep.receive_data(data, t):
                if isinstance(e, LinkAttached) and e.side == ep.remote:
                    ep.flow(e.link, 10)
                elif isinstance(e, MessageReceived):
                    ep.settle(e.delivery, states[min(received, 1)])
                    received += 1
            out = ep.data_to_send()
            if out:
                conn.sendall(out)

    return one_connection(serve)


def _base64_cores(raw: bytes) -> list[str]:
    """The base64 characters that `raw` alone decides, whatever it follows (its offset
    modulo 3 in a longer binary)."""
    cores = []
    for lead in range(3):
        text = base64.b64encode(b"\0" * lead + raw).decode()
        cores.append(text[4 if lead else 0:(lead + len(raw)) // 3 * 4])
    return cores


def _binaries(value: Any) -> list[bytes]:
    """Every binary value of a JSON form, decoded."""
    if isinstance(value, list):
        return [b for x in value for b in _binaries(x)]
    if isinstance(value, dict):
        found = [b for x in value.values() for b in _binaries(x)]
        if isinstance(value.get("binary"), str):
            found.append(base64.b64decode(value["binary"]))
        return found
    return []


def _send(port: int, *more: str) -> tuple[int, str, str]:
    return amqp_in_process("send", f"amqp://svc:{PASSWORD}@127.0.0.1:{port}/q", "x",
                           "--count", "2", "--window", "1", *more)


def test_no_form_of_the_password_in_the_json_summary() -> None:
    port, th = _peer()
    code, out, err = _send(port, "--json")
    th.join(HANG_GUARD)
    assert code == 6, err
    details = json.loads(out)["outcome-details"]
    assert [d["messages"] for d in details] == [[1], [2]], details
    binaries = _binaries(details)
    assert len(binaries) == 3 and all(b"***" in b for b in binaries), binaries
    for form in (PASSWORD, RAW.hex(), *_base64_cores(RAW)):
        assert form not in out + err, form
    assert "you logged in with ***" in out and "key-***" in out, out


def test_no_form_of_the_password_in_the_text_summary() -> None:
    port, th = _peer()
    code, out, err = _send(port)
    th.join(HANG_GUARD)
    assert code == 6, err
    lines = out.splitlines()[1:]
    assert [x.split(":")[0] for x in lines] == ["rejected 1 (message 1)",
                                                "modified 1 (message 2)"], out
    # (the binary cut short at 64 bytes ends with the first bytes of the password)
    for form in (PASSWORD, RAW.hex(), RAW[:4].hex(), repr(RAW)[2:-1]):
        assert form not in out + err, form
    assert "you logged in with ***" in lines[0], lines


def test_every_kind_of_value_is_masked_and_no_entry_lost() -> None:
    register_secret(PASSWORD)
    details = OutcomeDetails()
    annotations = {
        Symbol(PASSWORD): 1, Symbol("***"): 2,  # (masked alike: two entries still)
        Symbol("x-opt-list"): Array([Symbol(PASSWORD), Symbol("ok")], type="symbol"),
        Symbol("x-opt-bins"): Array([RAW + b"\xff"], type="binary"),
    }
    details.add(1, c.Modified(undeliverable_here=True, message_annotations=annotations))
    (group,) = details.to_json()
    text = json.dumps(group)
    for form in (PASSWORD, RAW.hex(), *_base64_cores(RAW)):  # (an array's binaries: base64)
        assert form not in text, (form, text)
    entries = group["state"]["modified"]["message-annotations"]["map"]
    assert len(entries) == 4, entries
    (line,) = details.lines()
    assert PASSWORD not in line and RAW.hex() not in line, line
