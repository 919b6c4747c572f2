"""`pcap-dump`'s `--connection` and `--since`/`--until` on crafted captures: an address,
endpoint or port names exactly that (no substring matches), and a time of day in a
capture that crosses midnight falls on the right side of it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.dissect.filters import Filter, parse_time
from amqpcli.dissect.records import Conn
from amqpcli.dissect.seen import SeenConns
from amqpcli.errors import Exit, UserError
from tests.dissect.helpers import basic
from tests.net.clirun import amqp_in_process

Endpoint = tuple[str, int]


run = amqp_in_process


def _ns(iso: str) -> int:
    return int(datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp()) * 1_000_000_000


def capture(path: Path, conns: list[tuple[Endpoint, Endpoint, int]]) -> Path:
    """One short AMQP 1.0 conversation (open, a link, a delivery, close) per (client,
    server, start in ns since the epoch), in that order."""
    with CaptureWriter(path) as w:
        for client, server, start in conns:
            conv = TcpConversation(w, client=client, server=server, start_ns=start)
            conv.handshake()
            for d, data, t in basic(1, sasl=False).steps:
                conv.send(d, data, time_ns=start + int(t * 1e9))
            conv.close()
    return path


def labels(out: str) -> set[str]:
    """The connections that lines of output are about (frame lines, `--connections`)."""
    found = set()
    for line in out.splitlines():
        words = line.split()
        for w in words[:2]:
            if w[:1] == "c" and w[1:].isdigit():
                found.add(w)
                break
    return found


# --- --connection -----------------------------------------------------------------------

T0 = _ns("2026-11-22T10:00:00")
HOSTS = [
    (("10.1.0.1", 40000), ("10.0.0.2", 5672)),  # c1
    (("10.1.0.10", 4000), ("10.0.0.2", 5672)),  # c2
    (("10.1.0.11", 40001), ("10.0.0.2", 5673)),  # c3
    (("::1", 40002), ("::1", 5672)),  # c4
    (("2001:db8::1", 4000), ("2001:db8::10", 5672)),  # c5
]


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("hosts") / "hosts.pcapng"
    return str(capture(path, [(c, s, T0 + i * 1_000_000_000)
                              for i, (c, s) in enumerate(HOSTS)]))


@pytest.mark.parametrize(("value", "expected"), [
    ("10.1.0.1", {"c1"}),  # not 10.1.0.10, 10.1.0.11
    ("10.1.0.10", {"c2"}),
    ("10.0.0.2", {"c1", "c2", "c3"}),  # the server's address: either endpoint counts
    (":4000", {"c2", "c5"}),  # not 40000-40002
    (":40000", {"c1"}),
    (":5673", {"c3"}),
    ("5673", {"c3"}),  # a bare number is a port too
    ("10.1.0.1:40000", {"c1"}),
    ("10.0.0.2:5673", {"c3"}),
    ("::1", {"c4"}),
    ("[::1]", {"c4"}),
    ("[::1]:5672", {"c4"}),
    ("[::1]:40002", {"c4"}),
    ("[0:0::0:1]:5672", {"c4"}),  # the same address written otherwise
    ("2001:db8::1", {"c5"}),  # not 2001:db8::10
    ("[2001:db8::10]:5672", {"c5"}),
    ("10.1.0.0/28", {"c1", "c2", "c3"}),
    ("2001:db8::/64", {"c5"}),
    ("::1/128", {"c4"}),  # a network written from `::` (was read as a port: ':1/128')
    ("::/0", {"c4", "c5"}),
    ("c1", {"c1"}),
    ("c1,c3", {"c1", "c3"}),
    ("2", {"c2"}),  # a connection's number
])
def test_a_connection_is_named_exactly(hosts: str, value: str, expected: set[str]) -> None:
    code, out, err = run("pcap-dump", hosts, "--connections", "-C", value)
    assert code == 0 and err == ""
    assert labels(out) == expected
    code, out, err = run("pcap-dump", hosts, "-C", value)  # frame lines too
    assert code == 0 and labels(out) == expected


@pytest.mark.parametrize("value", ["10.1.0.1:4000", "[2001:db8::1]:5672", "c6", ":40003",
                                   "10.1.0.100"])
def test_a_connection_value_like_another_matches_nothing(hosts: str, value: str) -> None:
    code, out, err = run("pcap-dump", hosts, "--connections", "-C", value)
    assert code == 0 and out == ""
    assert f"--connection {value} matched no connection (there are c1 to c5)" in err


@pytest.mark.parametrize(("value", "message"), [
    ("", "--connection: a connection is needed"),
    (" , ", "--connection: a connection is needed"),
    ("foo", "--connection: not a connection: 'foo'"),
    ("10.1.0.", "--connection: not a connection: '10.1.0.'"),
    (":99999", "--connection :99999: not a TCP port"),
    ("10.1.0.1:x", "--connection 10.1.0.1:x: not a TCP port"),
    ("[::1", "--connection: not a connection: '[::1'"),
    ("10.1.0.0/33", "--connection: not a network: '10.1.0.0/33'"),
])
def test_a_connection_value_of_no_known_form_is_a_usage_error(hosts: str, value: str,
                                                              message: str) -> None:
    code, out, err = run("pcap-dump", hosts, "-C", value)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_the_filter_object_names_connections_exactly() -> None:
    c1 = Conn(1, "c1", "10.1.0.1:40000", "10.0.0.2:5672", "amqp-1.0", 0.0)
    c10 = Conn(10, "c10", "10.1.0.10:40009", "10.0.0.2:5672", "amqp-1.0", 0.0)
    c11 = Conn(11, "c11", "[::1]:40010", "[::1]:5672", "amqp-1.0", 0.0)
    flt = Filter(connections=["10.1.0.1"])
    assert flt.conn(c1) and not flt.conn(c10) and not flt.conn(c11)
    flt = Filter(connections=[":4000"])
    assert not any(flt.conn(c) for c in (c1, c10, c11))
    seen = SeenConns(flt)
    seen.add_all([c1, c10, c11])
    assert seen.unnamed() == [":4000"]
    flt = Filter(connections=["c1"])
    assert flt.conn(c1) and not flt.conn(c10) and not flt.conn(c11)
    flt = Filter(connections=["[::1]:5672"])
    assert flt.conn(c11) and not flt.conn(c1)
    with pytest.raises(UserError) as e:
        Filter(connections=[""])
    assert e.value.code == Exit.USAGE


# --- --since / --until ------------------------------------------------------------------

# 2026-11-21 23:35:48 to 2026-11-22 01:20: c1 before midnight, c2 and c3 after
MIDNIGHT = [
    (("10.0.0.1", 40001), ("10.0.0.2", 5672), _ns("2026-11-21T23:35:48")),
    (("10.0.0.1", 40002), ("10.0.0.2", 5672), _ns("2026-11-22T00:30:00")),
    (("10.0.0.1", 40003), ("10.0.0.2", 5672), _ns("2026-11-22T01:10:00")),
    (("10.0.0.1", 40004), ("10.0.0.2", 5672), _ns("2026-11-22T01:20:00")),
]


@pytest.fixture(scope="module")
def midnight(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(capture(tmp_path_factory.mktemp("midnight") / "m.pcapng", MIDNIGHT))


@pytest.mark.parametrize(("args", "expected"), [
    (["--since", "01:00:00"], {"c3", "c4"}),  # after midnight: the next day's 01:00
    (["--until", "01:00:00"], {"c1", "c2"}),
    (["--since", "00:00", "--until", "01:15"], {"c2", "c3"}),
    (["--since", "23:40:00"], {"c2", "c3", "c4"}),  # before midnight: the first day's
    (["--until", "23:40:00"], {"c1"}),
    (["--since", "23:30", "--until", "00:45"], {"c1", "c2"}),  # across midnight
    (["--since", "23:00:00"], {"c1", "c2", "c3", "c4"}),  # shortly before the capture
    (["--since", "11:35:49"], {"c1", "c2", "c3", "c4"}),  # 12 h before: the first day's
    (["--since", "2026-11-22T01:00:00"], {"c3", "c4"}),  # ISO 8601 as before
    (["--since", "+3600"], {"c3", "c4"}),  # seconds from the first packet as before
    (["--until", "0"], {"c1"}),
])
def test_a_time_of_day_falls_on_the_right_side_of_midnight(midnight: str, args: list[str],
                                                           expected: set[str]) -> None:
    code, out, err = run("pcap-dump", midnight, *args)
    assert code == 0 and err == ""
    assert labels(out) == expected


def test_a_time_of_day_more_than_12_hours_before_the_capture_is_the_next_days(
        midnight: str) -> None:
    # 11:35:47 would be just over 12 h before the first packet: read as the next day's,
    # after the capture's last packet
    code, out, err = run("pcap-dump", midnight, "--since", "11:35:47")
    assert code == 0 and out == ""
    assert "--since 11:35:47 is after the last packet" in err


FIRST_LATE = datetime(2026, 11, 21, 23, 35, 48, tzinfo=UTC).timestamp()
FIRST_EARLY = datetime(2026, 11, 22, 8, 0, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("text", "first", "expected"), [
    ("01:00:00", FIRST_LATE, "2026-11-22T01:00:00"),
    ("00:00", FIRST_LATE, "2026-11-22T00:00:00"),
    ("23:40", FIRST_LATE, "2026-11-21T23:40:00"),
    ("23:00", FIRST_LATE, "2026-11-21T23:00:00"),
    ("11:35:48", FIRST_LATE, "2026-11-21T11:35:48"),  # exactly 12 h before
    ("11:35:47.5", FIRST_LATE, "2026-11-22T11:35:47.5"),  # more than 12 h before
    # a capture from the morning: every time of day is that day's
    ("00:00", FIRST_EARLY, "2026-11-22T00:00:00"),
    ("21:00", FIRST_EARLY, "2026-11-22T21:00:00"),
    ("07:59", FIRST_EARLY, "2026-11-22T07:59:00"),
    ("2026-11-22T01:00:00+01:00", FIRST_LATE, "2026-11-22T00:00:00"),
    ("1.5", FIRST_LATE, "2026-11-21T23:35:49.5"),
    ("+0", FIRST_LATE, "2026-11-21T23:35:48"),
])
def test_parse_time(text: str, first: float, expected: str) -> None:
    want = datetime.fromisoformat(expected).replace(tzinfo=UTC).timestamp()
    assert parse_time(text, first, "--since") == pytest.approx(want)


@pytest.mark.parametrize("option", ["--since", "--until"])
@pytest.mark.parametrize("value", ["-1", "-0.5", "-3600"])
def test_a_negative_offset_is_a_usage_error(midnight: str, option: str, value: str) -> None:
    code, out, err = run("pcap-dump", midnight, option, value)
    assert code == 2 and out == ""
    assert f"{option}: not a time: {value!r}" in err and len(err.strip().splitlines()) == 1
    with pytest.raises(UserError) as e:
        parse_time(value, FIRST_LATE, option)
    assert e.value.code == Exit.USAGE
