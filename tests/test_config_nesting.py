"""A config file nested too deeply for the TOML reader (tomllib recurses into arrays and
inline tables) is a one-line usage error naming the file, not an internal
RecursionError."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.net.clirun import amqp


@pytest.mark.parametrize("value", [
    "[" * 3000 + "1" + "]" * 3000,
    "{b=" * 3000 + "1" + "}" * 3000,
], ids=["arrays", "inline-tables"])
def test_a_deep_config_file_is_a_usage_error(tmp_path: Path, value: str) -> None:
    config = tmp_path / "deep.toml"
    config.write_text(f"a={value}\n")
    r = amqp("send", "@p/q", "x", env={"AMQP_CONFIG": str(config)})
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"amqp: error: config file {str(config)!r} cannot be read: arrays or "
                        "inline tables nested too deeply\n")


def test_a_config_file_nested_a_little_is_read(tmp_path: Path) -> None:
    config = tmp_path / "some.toml"
    config.write_text("a=" + "[" * 50 + "1" + "]" * 50 + "\n")
    r = amqp("send", "@p/q", "x", env={"AMQP_CONFIG": str(config)})
    assert r.returncode == 2
    assert "unknown table(s) or key(s) a" in r.stderr, r.stderr
