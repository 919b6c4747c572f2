"""A `--filter` value the encoder has no bytes for (out of range for its type) is a usage
error naming the option, before anything connects; it was an internal error at the
attach."""

from __future__ import annotations

import pytest

from tests.net.clirun import amqp_in_process as run


@pytest.mark.parametrize(("value", "said"), [
    ('{"uint":-1}', "-1 is out of range for uint"),
    ('{"map":{"a":{"uint":99999999999}}}', "99999999999 is out of range for uint"),
])
def test_an_unencodable_filter_value_is_a_usage_error(value: str, said: str) -> None:
    code, _, err = run("recv", "amqp://127.0.0.1:1/q", "--filter", f"k={value}")
    assert code == 2, err
    assert f"--filter k: {said}" in err and "internal error" not in err
    assert "cannot connect" not in err
