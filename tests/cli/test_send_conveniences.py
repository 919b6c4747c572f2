"""`amqp send`'s conveniences of other producers' tools: a body of N bytes (`--size`),
message numbers modulo K in values (`{n%K}`, and unknown placeholders refused), and a
plain JSON object as a map body (`-b map`); times relative to now (`now+60s`, tested in
test_send_relative_times.py) as they go out."""

from __future__ import annotations

import json
import time

import pytest

from amqpcli.cli.send import body_value, build_template
from amqpcli.codec.types import Symbol, UInt
from amqpcli.errors import UserError
from amqpcli.net.outgoing import (
    SIZED_PATTERN,
    check_placeholders,
    expand,
    has_placeholder,
    sized_body,
    unknown_placeholder,
)
from tests.net.clirun import amqp
from tests.net.servepeer import ServePeers

NOWHERE = "amqp://127.0.0.1:1/q"  # (usage errors are said before any connect)


def _template(props: dict[str, str | None] | None = None, properties: list[str] | None = None,
              body_type: str = "data"):  # type: ignore[no-untyped-def]
    return build_template(body_type, props or {}, None, None, None, None, properties or [],
                          [], [], [])


# --- map bodies ------------------------------------------------------------------------

def test_a_map_body_is_a_plain_json_object() -> None:
    value = body_value(b'{"op": "sum", "args": [1, 2], "n": {"uint": 5}}', "map", False)
    assert value == {"op": "sum", "args": [1, 2], "n": 5}
    assert type(value["n"]) is UInt  # (values in the lossless JSON format)
    assert body_value(b"{}", "map", False) == {}


@pytest.mark.parametrize("body", [b"[1, 2]", b'"text"', b"5"])
def test_a_map_body_that_is_no_json_object_is_refused(body: bytes) -> None:
    with pytest.raises(UserError, match="--body-type map needs a JSON object body"):
        body_value(body, "map", False)


def test_a_map_body_names_a_bad_value_where_it_is() -> None:
    with pytest.raises(UserError, match=r"^body is not lossless JSON: \.a: unknown type tag 'b'"):
        body_value(b'{"a": {"b": 1}}', "map", False)


def test_a_map_body_with_json_body_is_a_lossless_map() -> None:
    value = body_value(b'{"map": {"x-a": 1}, "keys": "symbol"}', "map", True)
    assert value == {Symbol("x-a"): 1} and type(next(iter(value))) is Symbol
    with pytest.raises(UserError, match="needs a map value"):
        body_value(b"[1]", "map", True)


def test_a_plain_object_refused_as_lossless_json_hints_at_a_map_body() -> None:
    with pytest.raises(UserError) as e:
        body_value(b'{"op":"sum","args":[1,2]}', "value", True)
    assert str(e.value) == (
        "body is not lossless JSON: $: expected one type tag, found ['args', 'op'] (for a "
        "plain JSON object as a map body: --body-type map without --json-body, or "
        '{"map": {...}})')
    with pytest.raises(UserError) as e:
        body_value(b'[{"a": 1}]', "sequence", False)
    assert "--body-type map" not in str(e.value)  # (no object at the top: no hint)


def test_a_map_body_goes_out_as_an_amqp_value_holding_a_map() -> None:
    from amqpcli.codec.message import Message

    template = _template(body_type="map")
    msg = Message.decode(template.encode(1, {"op": "sum"}).payload)
    assert msg.value == {"op": "sum"}


# --- sized bodies ----------------------------------------------------------------------

@pytest.mark.parametrize("size", [0, 1, 61, 62, 63, 1024])
def test_a_sized_body_is_the_pattern_repeated_to_its_size(size: int) -> None:
    body = sized_body(size)
    assert len(body) == size
    assert body == (SIZED_PATTERN * (size // len(SIZED_PATTERN) + 1))[:size]
    assert body.isascii() and (not body or body.isalnum())


# --- placeholders ----------------------------------------------------------------------

def test_n_modulo_k_cycles() -> None:
    assert [expand("g{n%3}", n) for n in range(1, 7)] == ["g1", "g2", "g0", "g1", "g2", "g0"]
    assert expand("{n}-{n%10}", 25) == "25-5"
    assert has_placeholder("g{n%3}") and not has_placeholder("g{{n%3}}")


@pytest.mark.parametrize(("text", "bad"), [
    ("g{seq}", "{seq}"), ("{N}", "{N}"), ("{n+1}", "{n+1}"), ("{n % 3}", "{n % 3}"),
    ("{n%0}", "{n%0}"), ("{n%x}", "{n%x}"), ("{uuid:8}", "{uuid:8}"), ("{n:05}", "{n:05}"),
    ("ok-{n}-{id}", "{id}"),
])
def test_an_unknown_placeholder_is_named(text: str, bad: str) -> None:
    assert unknown_placeholder(text) == bad
    with pytest.raises(UserError) as e:
        check_placeholders(text, "--group-id")
    assert str(e.value) == (f"--group-id: unknown placeholder {bad} (known: {{n}}, {{n%K}} "
                            f"(K a positive integer), {{uuid}}; {{{bad}}} is the text {bad})")


@pytest.mark.parametrize(("text", "literal"), [
    ("{{seq}}", "{seq}"), ("{{n%3}}", "{n%3}"), ("{{n+1}}", "{n+1}"),
    ('{"a": 1}', '{"a": 1}'), ("{}", "{}"), ("{a:1}", "{a:1}"),
    ("{AF2504E0-4F89-11D3-9A0C-0305E82C3301}", "{AF2504E0-4F89-11D3-9A0C-0305E82C3301}"),
])
def test_other_braces_and_escaped_placeholders_are_text(text: str, literal: str) -> None:
    assert unknown_placeholder(text) is None
    assert expand(text, 7) == literal


def test_an_unknown_placeholder_in_an_option_is_a_usage_error_naming_it() -> None:
    with pytest.raises(UserError, match=r"^--group-id: unknown placeholder \{seq\}"):
        _template({"group_id": "g{seq}"})
    with pytest.raises(UserError, match=r"^--property 'k': unknown placeholder \{i\}"):
        _template(properties=["k:int={i}"])


def test_a_value_modulo_k_is_checked_for_the_run_naming_the_first_bad_message() -> None:
    template = _template(properties=["k:byte={n%200}"])
    template.check_run(127)  # 1 … 127 fit a byte
    with pytest.raises(UserError, match=r"^message 128: --property 'k': bad byte value '128'"):
        template.check_run(300)


def test_a_large_modulus_is_checked_without_taking_each_message() -> None:
    # a uint past its range from message 4294967296 on, until n%K is 0 again
    template = _template({"group_sequence": "{n%5000000000}"})
    template.check_run(4294967295)
    with pytest.raises(UserError, match=r"^message 4294967296: --group-sequence"):
        template.check_run(10**12)


def test_the_first_bad_message_of_values_with_and_without_n() -> None:
    # the first failing message of either kind of value: a from 256 on (n%300 past a
    # ubyte), b from 10000 (1{n} past a short); then b from 128 (n past a byte)
    template = _template(properties=["a:ubyte={n%300}", "b:short=1{n}"])
    with pytest.raises(UserError, match=r"^message 256: --property 'a'"):
        template.check_run(10_000)
    template = _template(properties=["a:ubyte={n%300}", "b:byte={n}"])
    with pytest.raises(UserError, match=r"^message 128: --property 'b'"):
        template.check_run(10_000)


def test_a_body_with_an_unknown_placeholder_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    done = amqp("send", NOWHERE, "--expand", "body {seq}")
    assert done.returncode == 2
    assert "amqp: error: body: unknown placeholder {seq}" in done.stderr
    done = amqp("send", NOWHERE, "--expand", "--lines", "ok {n}\nbody {seq}")
    assert done.returncode == 2
    assert "amqp: error: line 2 of the BODY argument: body: unknown placeholder {seq}" in done.stderr


# --- the command -----------------------------------------------------------------------

@pytest.mark.parametrize(("args", "said"), [
    (["--size", "3", "hello"], "--size makes the body: a BODY argument does not go with it"),
    (["--size", "3", "-f", "x.bin"], "--size makes the body: --file does not go with it"),
    (["--size", "3", "--from", "x.jsonl"], "--size makes the body: --from does not go with it"),
    (["--size", "3", "--lines"], "--size makes the body: --lines does not go with it"),
    (["--size", "3", "--json-body"], "--size makes the body: --json-body does not go with it"),
    (["--size", "3", "-b", "map"], ("--size makes a data body (or with --body-type value a "
                                    "string): not a map one")),
    (["--size", "-1"], "--size must be 0-268435456 bytes (256 MiB)"),
    (["--group-id", "g{seq}"], "--group-id: unknown placeholder {seq}"),
    (["-b", "map", "[1]"], "--body-type map needs a JSON object body"),
    (["--absolute-expiry-time", "now+60"], "--absolute-expiry-time: bad timestamp value 'now+60'"),
])
def test_usage_errors(args: list[str], said: str) -> None:
    done = amqp("send", NOWHERE, *args)
    assert done.returncode == 2, done.stderr
    assert f"amqp: error: {said}" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_value_body_that_is_a_json_object_warns_that_it_goes_as_a_string() -> None:
    done = amqp("send", NOWHERE, "-b", "value", '{"op": "sum"}')
    assert done.stderr.startswith("amqp: warning: --body-type value sends this JSON object "
                                  "as a string; --body-type map sends it as a map\n")
    for body in ("{not json", "[1, 2]", "text"):
        assert "warning" not in amqp("send", NOWHERE, "-b", "value", body).stderr


@pytest.mark.integration
def test_the_conveniences_go_out_as_said(serve: ServePeers) -> None:
    url = serve() + "/q"
    before = int(time.time() * 1000)
    sent = amqp("send", url, "--size", "100", "-c", "4", "--group-id", "g{n%3}",
                "--message-id", "m{n}", "--absolute-expiry-time", "now+60s",
                "-A", "x-opt-scheduled-enqueue-time:timestamp=now+5m")
    assert sent.returncode == 0, sent.stderr
    assert amqp("send", url, "-b", "map", '{"op": "sum", "args": [1, 2]}').returncode == 0
    assert amqp("send", url, "--size", "70", "-b", "value").returncode == 0
    got = amqp("recv", url, "--count", "6", "--json", "-t", "10")
    assert got.returncode == 0, got.stderr
    messages = [json.loads(line) for line in got.stdout.splitlines()]
    sized = messages[:4]
    assert [m["properties"]["group-id"] for m in sized] == ["g1", "g2", "g0", "g1"]
    for m in sized:
        (data,) = m["body"]["data"]
        assert data == {"binary-text": sized_body(100).decode()}
    from amqpcli.render.jsonvalues import from_json

    expiry = from_json({"timestamp": sized[0]["properties"]["absolute-expiry-time"]})
    scheduled = from_json(sized[0]["message-annotations"]["x-opt-scheduled-enqueue-time"])
    assert before + 60_000 <= expiry < before + 120_000
    assert before + 300_000 <= scheduled < before + 360_000
    assert messages[4]["body"] == {"value": {"map": {"op": "sum", "args": [1, 2]}}}
    assert messages[5]["body"] == {"value": sized_body(70).decode()}
