"""`amqp tui --live ''` reached dumpcap as an interface without a name (an odd dumpcap
error), and `--capture-filter ''` captured everything: both are usage errors naming the
option, as an empty view filter is (`pcap-dump --performative ''`)."""

from __future__ import annotations

import pytest

from amqpcli.cli.options import check_given
from amqpcli.errors import UserError
from tests.net.clirun import amqp


@pytest.mark.parametrize(("args", "line"), [
    (("tui", "--live", ""), "--live: an interface name is needed (got '')"),
    (("tui", "--live", "  "), "--live: an interface name is needed (got '  ')"),
    (("tui", "--live", "lo", "--capture-filter", ""),
     ("--capture-filter: a BPF filter is needed (got ''; leave the option out for the "
     "default, tcp)")),
    (("pcap-dump", "--live", ""), "--live: an interface name is needed (got '')"),
    (("pcap-dump", "--live", "lo", "--capture-filter", " "),
     ("--capture-filter: a BPF filter is needed (got ' '; leave the option out for the "
      "default: the AMQP ports)")),
])
def test_an_empty_interface_or_capture_filter_is_a_usage_error(args: tuple[str, ...],
                                                               line: str) -> None:
    r = amqp(*args, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"amqp: error: {line}\n")


def test_check_given() -> None:
    check_given(None, "--live", "an interface name")  # not given
    check_given("lo", "--live", "an interface name")
    with pytest.raises(UserError, match=r"^--x: a thing is needed \(got ''; hint\)$"):
        check_given("", "--x", "a thing", "hint")
    with pytest.raises(UserError, match="not UTF-8"):
        check_given("a\udcff", "--x", "a thing")
