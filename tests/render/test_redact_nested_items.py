"""A SASL performative carried as a value, in the items and records that hold one: `decode
--json` values, messages and frames, `pcap-dump --json` frame records and `--deliveries
--json`. Masked as the text views mask it, the item or record says `"redacted": true`, and a
transfer whose message was masked gives its payload's size, not its bytes (as a SASL frame
gives none); `--show-secrets` writes it whole, and `send --from` replays only that."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from amqpcli.cli.send import replayed_message
from amqpcli.codec import composites as c
from amqpcli.codec.frames import AMQP_HEADER, encode_frame
from amqpcli.codec.types import Symbol, UInt
from tests.net.clirun import amqp, json_lines
from tests.net.servepeer import ServePeers
from tests.render.test_redact_nested import (
    INIT,
    MASKED,
    NESTED_MESSAGE,
    REPORTED,
    _capture,
    leaks,
)

MASKED_INIT = {"sasl-init": {"mechanism": "PLAIN",
                             "initial-response": base64.b64encode(MASKED).decode()}}


def _decode_json(data: bytes, *args: str) -> list[dict[str, Any]]:
    r = amqp("decode", "--json", *args, data.hex())
    assert r.returncode == 0, r.stderr
    return json_lines(r.stdout)


def test_decode_json_of_a_value() -> None:
    """A list holding a sasl-init (the report's plain_in_list.bin)."""
    data = bytes.fromhex("c0 22 01") + REPORTED[3:]
    (item,) = _decode_json(data)
    assert item["redacted"] is True
    assert item["value"] == [{"sasl-init": {"mechanism": "PLAIN",
                                            "initial-response": "AHF1c2VyACoqKg=="}}]
    (whole,) = _decode_json(data, "--show-secrets")
    assert "redacted" not in whole and leaks(json.dumps(whole), b"SEKRETplain")


def test_decode_json_of_a_message() -> None:
    (item,) = _decode_json(REPORTED)
    assert item["redacted"] is True and item["message"]["redacted"] is True
    assert not leaks(json.dumps(item), b"SEKRETplain")
    (whole,) = _decode_json(REPORTED, "--show-secrets")
    assert "redacted" not in whole and "redacted" not in whole["message"]
    assert replayed_message(whole) == REPORTED


def test_decode_json_of_a_transfer_frame() -> None:
    frame = encode_frame(c.Transfer(handle=UInt(0), delivery_id=UInt(0), delivery_tag=b"t0"),
                         0, NESTED_MESSAGE)
    items = _decode_json(AMQP_HEADER + frame)
    assert not leaks(json.dumps(items)), items
    transfer = items[1]
    assert transfer["redacted"] is True and "payload" not in transfer
    assert transfer["payload-size"] == len(NESTED_MESSAGE)
    assert transfer["message"]["body"] == {"value": [MASKED_INIT]}
    whole = _decode_json(AMQP_HEADER + frame, "--show-secrets")[1]
    assert "redacted" not in whole and base64.b64decode(whole["payload"]) == NESTED_MESSAGE
    assert replayed_message(whole) == NESTED_MESSAGE


def test_pcap_dump_json(tmp_path: Path) -> None:
    cap = _capture(tmp_path / "nested.pcapng")
    r = amqp("pcap-dump", str(cap), "--json")
    assert r.returncode == 0, r.stderr
    assert not leaks(r.stdout) and not leaks(r.stdout, b"Other1pw"), r.stdout
    records = [o for o in json_lines(r.stdout) if o.get("record") == "frame"]
    (transfer,) = [o for o in records if "transfer" in (o.get("performative") or {})]
    assert transfer["redacted"] is True and "payload" not in transfer
    assert transfer["payload-size"] == len(NESTED_MESSAGE)
    assert transfer["message"]["redacted"] is True
    # the SASL exchange's sasl-init, as before
    assert [o.get("redacted") for o in records].count(True) == 2
    r = amqp("pcap-dump", str(cap), "--json", "--show-secrets")
    assert r.returncode == 0, r.stderr
    assert leaks(r.stdout) and "redacted" not in r.stdout
    (whole,) = [o for o in json_lines(r.stdout)
                if "transfer" in (o.get("performative") or {})]
    assert base64.b64decode(whole["payload"]) == NESTED_MESSAGE
    assert replayed_message(whole) == NESTED_MESSAGE


@pytest.mark.parametrize("state", ["accepted", "rejected"])
def test_pcap_dump_deliveries_json(tmp_path: Path, state: str) -> None:
    """The delivery's message and its state (a rejection's error info holding one too)."""
    rejected = c.Rejected(error=c.Error(condition=Symbol("x"), info={Symbol("why"): INIT}))
    cap = _capture(tmp_path / "nested.pcapng", rejected if state == "rejected" else None)
    r = amqp("pcap-dump", str(cap), "--deliveries", "--json")
    assert r.returncode == 0, r.stderr
    assert not leaks(r.stdout), r.stdout
    (delivery,) = [o for o in json_lines(r.stdout) if o.get("record") == "delivery"]
    assert delivery["redacted"] is True and delivery["message"]["redacted"] is True
    r = amqp("pcap-dump", str(cap), "--deliveries", "--json", "--show-secrets")
    assert r.returncode == 0, r.stderr
    assert leaks(r.stdout) and "redacted" not in r.stdout
    (whole,) = [o for o in json_lines(r.stdout) if o.get("record") == "delivery"]
    assert replayed_message(whole) == NESTED_MESSAGE


@pytest.mark.integration
def test_send_from_replays_only_what_show_secrets_wrote(serve: ServePeers,
                                                         tmp_path: Path) -> None:
    cap = _capture(tmp_path / "nested.pcapng")
    url = serve("-q") + "/nested-replay"
    for extra in ((), ("--deliveries",)):
        masked = tmp_path / "masked.jsonl"
        masked.write_text(amqp("pcap-dump", str(cap), "--json", *extra).stdout)
        r = amqp("send", url, "--from", str(masked))
        assert r.returncode == 2
        line = next(i for i, o in enumerate(json_lines(masked.read_text()), 1)
                    if "message" in o)
        assert r.stderr == (
            f"amqp: error: {masked}:{line}: a SASL secret in its message was masked (***) "
            "when the JSON was written, so it is not the message that was sent; JSON written "
            "with --show-secrets (decode, pcap-dump) replays it\n")
        whole = tmp_path / "whole.jsonl"
        whole.write_text(amqp("pcap-dump", str(cap), "--json", "--show-secrets", *extra).stdout)
        r = amqp("send", url, "--from", str(whole))
        assert r.returncode == 0, r.stderr
    got = json_lines(amqp("recv", url, "--drain", "--json", "-q").stdout)
    assert len(got) == 2 and all(o["redacted"] for o in got)
