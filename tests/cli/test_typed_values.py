"""`KEY:TYPE=VALUE` values (`-P`, `-A`, `--footer`, …): a double past its range is an
error, not an infinity sent silently; integers are decimal unless their prefix says
otherwise, leading zeros allowed (`0{n}` gives 01, 02, …)."""

from __future__ import annotations

import math

import pytest

from amqpcli.cli.options import typed_value
from amqpcli.codec.types import Int, Long
from amqpcli.errors import UserError


def test_a_double_past_its_range_is_an_error() -> None:
    with pytest.raises(UserError, match="bad double value '1e400': out of range for a double"):
        typed_value("double", "1e400", "--property 'k'")
    assert typed_value("double", "1e308", "x") == 1e308
    for name in ("inf", "-Infinity", "+inf"):
        assert math.isinf(typed_value("double", name, "x"))  # asked for by name


def test_integers_decimal_with_leading_zeros_or_by_their_prefix() -> None:
    assert typed_value("int", "01", "x") == Int(1) and type(typed_value("int", "09", "x")) is Int
    assert typed_value("long", "0x10", "x") == Long(16)
    assert typed_value("long", "-0x10", "x") == Long(-16)
    assert typed_value("int", "0o17", "x") == 15 and typed_value("int", "0b101", "x") == 5
    with pytest.raises(UserError, match="bad int value '1_1'"):
        typed_value("int", "1_1", "x")
