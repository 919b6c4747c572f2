"""`amqp send` refuses a value it cannot send as given, before it connects: one line naming
the option and the value, exit 2 (they were `internal error` after connecting, exit 1, or
were sent as something else). The URL is a closed port, so only an error found before
connecting exits 2 here (the old code got as far as the connection: exit 3)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.net.clirun import amqp
from tests.net.servepeer import cli_env
from tests.paths import REPO_ROOT

pytestmark = pytest.mark.integration

URL = "amqp://127.0.0.1:1/q"


def _one_line_usage_error(r: subprocess.CompletedProcess[str], *texts: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and all(t in lines[0] for t in texts), r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize(("args", "texts"), [
    # numbers past their type's range, wherever the value comes from
    (["x", "--creation-time", "99999999999999999999"],
     ["--creation-time: 99999999999999999999 is out of range for timestamp"]),
    (["x", "-P", "t:timestamp=99999999999999999999"],
     ["--property 't': 99999999999999999999 is out of range for timestamp"]),
    (["x", "-P", "f:float=1e40"], ["--property 'f': 1e+40 is out of range for float"]),
    (["x", "-A", "x-f:float=-1e40"], ["--annotation 'x-f': -1e+40 is out of range for float"]),
    (["x", "--footer", "t:timestamp=-99999999999999999999"],
     ["--footer 't': -99999999999999999999 is out of range for timestamp"]),
    (["--body-type", "value", "timestamp:99999999999999999999"],
     ["body: 99999999999999999999 is out of range for timestamp"]),
    (["--body-type", "value", "float:1e39"], ["body: 1e+39 is out of range for float"]),
    (["--body-type", "sequence", "[18446744073709551616]"],
     ["body: 18446744073709551616 is out of range for long"]),
    (["--body-type", "sequence", "[-9223372036854775809]"],
     ["body: -9223372036854775809 is out of range for long"]),
    (["--body-type", "value", "--json-body", '{"uint":99999999999}'],
     ["body: 99999999999 is out of range for uint"]),
    (["--body-type", "value", "--json-body", '{"map":{"a":{"uint":-1}}}'],
     ["body: -1 is out of range for uint"]),
    (["--body-type", "value", "--json-body", '{"array":[1,99999999999],"type":"int"}'],
     ["body: 99999999999 is out of range for int"]),
    (["--body-type", "value", "--json-body", '{"char":"ab"}'], ["body: 'ab' is not one character"]),
    (["--body-type", "value", "--json-body", "99999999999999999999999"],
     ["body: 99999999999999999999999 is out of range for long"]),
    (["-P", 'k:json={"list":[{"ushort":70000}]}', "--body-type", "value", "x"],
     ["--property 'k'"]),  # a list: refused for the section before its range
    # message-id and correlation-id: ulong, uuid, binary or string only
    (["x", "--message-id", "int:5"], ["--message-id: an id of type int is not allowed",
                                      "ulong, uuid, binary or string"]),
    (["x", "--message-id", "symbol:x"], ["--message-id: an id of type symbol is not allowed"]),
    (["x", "--correlation-id", "int:5"], ["--correlation-id: an id of type int"]),
    (["x", "--correlation-id", 'json:{"double":1.5}'], ["--correlation-id: an id of type double"]),
    # application-properties hold simple values only
    (["x", "-P", 'k:json={"map":{"a":1}}'],
     ["--property 'k': a value of type map is not allowed", "no map, list or array"]),
    (["x", "-P", "k:json=[1]"], ["--property 'k': a value of type list is not allowed"]),
    (["x", "-P", 'k:json={"array":[1],"type":"int"}'],
     ["--property 'k': a value of type array is not allowed"]),
    # a typed value says what it is or is refused
    (["--body-type", "value", "decimal32:1"], ["body: decimal32 has no TYPE:VALUE form", "json:"]),
    (["x", "-P", "d:decimal128=1"], ["--property 'd': decimal128 has no TYPE:VALUE form"]),
    (["--body-type", "value", "map:x"], ["body: map has no TYPE:VALUE form"]),
    (["x", "-P", "n:null=notempty"], ["--property 'n': bad null value 'notempty'",
                                      "null takes no value"]),
    (["--body-type", "sequence", "[1e999]"], ["not a finite number", '{"double": "Infinity"}']),
    (["--body-type", "value", "--json-body", '{"double":1e999}'], ["not a finite number"]),
    (["--body-type", "value", "--json-body", "NaN"], ["not a finite number"]),
])
def test_values_that_cannot_be_sent_are_usage_errors(args: list[str], texts: list[str]) -> None:
    _one_line_usage_error(amqp("send", URL, *args), *texts)


def test_stdin_closed_with_no_body_is_a_usage_error() -> None:
    # it sent an empty message and exited 0: `<&-` is not an empty input
    p = subprocess.run(
        [sys.executable, "-m", "amqpcli", "send", URL],
        capture_output=True, text=True, cwd=REPO_ROOT,
        env=cli_env(), timeout=60, preexec_fn=lambda: os.close(0), check=False,
    )
    _one_line_usage_error(p, "standard input is closed")
