"""Values from the command line and from `send --from` lines past what AMQP can carry are
one-line usage errors: a `json:` value nested without end (`-P`, `-A`: the 200 levels of
JSON bodies and `--from` lines, not an internal RecursionError), a float past even a
double's range (was sent as infinity, as an explicit `inf` still is), a `{"float": …}`
past a float's range in a JSON message (was an internal OverflowError), and a `to` or
`reply-to` property that is not a string (was sent as it was)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from amqpcli.cli.options import typed_value
from amqpcli.codec.types import Float
from amqpcli.errors import UserError, cut_middle
from amqpcli.render.jsonvalues import JsonValueError, from_json
from amqpcli.render.message import message_from_json
from tests.net.clirun import amqp_in_process as run

NOWHERE = "amqp://127.0.0.1:1/q"  # (refused before any connect)


def _deep_list(n: int) -> str:
    return '{"list":[' * n + "]}" * n


@pytest.mark.parametrize("option", ["-P", "-A"])
def test_a_deep_json_value_is_a_usage_error(option: str) -> None:
    value = _deep_list(5000)
    code, out, err = run("send", option, f"k:json={value}", NOWHERE, "hi")
    what = "--property" if option == "-P" else "--annotation"
    assert (code, out) == (2, "")
    assert err == (f"amqp: error: {what} 'k': bad json value {cut_middle(value)!r}: "
                   "nested more than 200 deep\n")


def test_json_values_within_the_limit() -> None:
    assert typed_value("json", _deep_list(100), "x") is not None  # 200 levels of JSON
    with pytest.raises(UserError, match="nested more than 200 deep"):
        typed_value("json", _deep_list(101), "x")
    with pytest.raises(UserError, match="nested more than 200 deep"):
        typed_value("json", "[" * 200_000 + "]" * 200_000, "x")
    assert typed_value("json", '{"map": [["a", {"list": [1, 2]}]]}', "x") == {"a": [1, 2]}
    # a short bad value is still shown whole
    with pytest.raises(UserError, match=r"^x: bad json value '\{bad': "):
        typed_value("json", "{bad", "x")


def test_a_float_past_a_doubles_range_is_an_error() -> None:
    for text in ("1e309", "-1e400"):
        with pytest.raises(UserError, match=f"bad float value '{text}': out of range for a "
                           r"float \(at most ±3.4028234663852886e\+38\)"):
            typed_value("float", text, "--property 'k'")
    for text in ("inf", "-Infinity", "+inf"):  # asked for by name, as for double
        v = typed_value("float", text, "x")
        assert type(v) is Float and math.isinf(v)
    assert math.isnan(typed_value("float", "nan", "x"))
    assert typed_value("float", "1.5", "x") == Float(1.5)


def test_a_float_past_its_range_from_the_command_line() -> None:
    code, _, err = run("send", "-P", "k:float=1e309", NOWHERE, "hi")
    assert (code, err) == (2, ("amqp: error: --property 'k': bad float value '1e309': out of "
                              "range for a float (at most ±3.4028234663852886e+38)\n"))


def _line(tmp_path: Path, line: str) -> tuple[int, str]:
    path = tmp_path / "m.jsonl"
    path.write_text(line + "\n")
    code, out, err = run("send", "--from", str(path), NOWHERE)
    assert out == ""
    return code, err.replace(str(path), "FILE")


def test_a_json_float_past_its_range_is_an_error(tmp_path: Path) -> None:
    code, err = _line(tmp_path, '{"application-properties":{"k":{"float":1e39}},'
                                '"body":{"data":[{"binary-text":"x"}]}}')
    assert (code, err) == (2, ("amqp: error: FILE:1: not a message in the JSON format: "
                              "application-properties.k.float: 1e+39 is out of range for "
                              "float (32-bit: use double for larger numbers)\n"))
    with pytest.raises(JsonValueError, match=r"^v.array\[1\]: -1e\+39 is out of range"):
        from_json({"array": [1, -1e39], "type": "float"}, "v")
    assert from_json({"float": 3.4028234663852886e38}) == Float(3.4028234663852886e38)
    assert math.isinf(from_json({"float": "-Infinity"}))


@pytest.mark.parametrize(("field", "value", "kind"), [
    ("to", "5", "long"),
    ("reply-to", '{"symbol": "q"}', "symbol"),
    ("to", '{"list": ["q"]}', "list"),
    ("reply-to", "true", "boolean"),
])
def test_an_address_that_is_not_a_string_is_an_error(tmp_path: Path, field: str, value: str,
                                                      kind: str) -> None:
    code, err = _line(tmp_path, f'{{"properties":{{"{field}":{value}}},'
                                '"body":{"data":[{"binary-text":"x"}]}}')
    assert (code, err) == (2, ("amqp: error: FILE:1: not a message in the JSON format: "
                              f"properties.{field}: expected a string (an address), found a "
                              f"value of type {kind}\n"))


def test_addresses_as_strings_are_taken() -> None:
    msg = message_from_json({"properties": {"to": "q", "reply-to": {"string": "r"},
                                            "subject": "s"}})
    assert (msg.properties.to, msg.properties.reply_to) == ("q", "r")
    assert message_from_json({"properties": {"to": None}}).properties.to is None
