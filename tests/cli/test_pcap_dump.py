"""`amqp pcap-dump` on the bundled captures and on crafted, truncated, corrupt and
non-AMQP captures: every output mode, filters, redaction, exit codes."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from amqpcli.capture.tcp import C2S
from amqpcli.capture.writer import CaptureWriter, TcpConversation
from amqpcli.codec import composites as c
from amqpcli.codec.frames import encode_frame
from amqpcli.codec.types import UShort
from tests.dissect.helpers import Script, basic, write
from tests.net.clirun import amqp_in_process
from tests.paths import CAPTURES_DIR, require

RABBIT = str(CAPTURES_DIR / "rabbitmq-sasl-plain-send-recv.pcapng")
ECHO010 = str(CAPTURES_DIR / "amqp010-qpid-python-echo.pcapng")


run = amqp_in_process


def jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module", autouse=True)
def _captures() -> None:
    require(Path(RABBIT))
    require(Path(ECHO010))


def test_frame_lines() -> None:
    code, out, err = run("pcap-dump", RABBIT)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 77
    assert lines[0].endswith("c1 -> AMQP 1.0 SASL protocol header (03 01 00 00)")
    transfer = next(x for x in lines if " transfer " in x)
    assert " c1 -> [0]  transfer    handle=0 id=0 tag=b\"1\"" in transfer
    assert "(147 bytes)" in transfer  # the message summarised
    assert "\x1b[" not in out  # plain when piped


def test_password_redacted_unless_asked() -> None:
    _, out, _ = run("pcap-dump", RABBIT, "--performative", "sasl-init")
    assert out.count("sasl-init") == 2 and "guest\\x00***" in out and "guest\\x00guest" not in out
    _, out, _ = run("pcap-dump", RABBIT, "--performative", "sasl-init", "--show-secrets")
    assert "guest\\x00guest" in out
    _, out, _ = run("pcap-dump", RABBIT, "--json", "--performative", "sasl-init")
    for obj in jsonl(out):
        assert obj["redacted"] is True
        resp = obj["performative"]["sasl-init"]["initial-response"]
        assert b"guest" not in base64.b64decode(resp).split(b"\0")[-1]


def test_deliveries() -> None:
    code, out, _ = run("pcap-dump", RABBIT, "--deliveries")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 40
    assert all(" accepted " in x and "by receiver" in x for x in lines)
    assert sum(" c1 -> " in x for x in lines) == 20 and sum(" c2 <- " in x for x in lines) == 20
    assert all(x.rstrip().endswith("ms") for x in lines)


def test_json_is_lossless_and_complete() -> None:
    from amqpcli.codec.message import Message
    from amqpcli.render.message import load_sections, message_to_json

    _, out, _ = run("pcap-dump", RABBIT, "--json", "--frames", "--deliveries")
    objs = jsonl(out)
    frames = [o for o in objs if o["record"] == "frame"]
    dels = [o for o in objs if o["record"] == "delivery"]
    assert len(frames) == 77 and len(dels) == 40
    assert {o["protocol"] for o in objs} == {"amqp-1.0"}
    t = next(o for o in frames if o.get("performative") and "transfer" in o["performative"])
    # the frame's payload, and its message in the format `recv --json` writes
    msg = load_sections(Message.decode(base64.b64decode(t["payload"])))
    assert t["message"] == json.loads(json.dumps(message_to_json(msg)))
    d = dels[0]
    assert d["outcome"] == "accepted" and d["settled-by"] == "receiver"
    assert [e["kind"] for e in d["timeline"]] == ["transfer", "disposition"]
    assert d["message"]["application-properties"]["seq"] == 0


def test_links_connections_summary() -> None:
    code, out, _ = run("pcap-dump", RABBIT, "--links", "--connections", "--summary")
    assert code == 0
    assert "c1 s1 link '1780b387-cc04-4d1e-8815-e06dfbd99d89-/queue/lab.cap.c' (client sends)" in out
    assert "deliveries 20 (2969 B): accepted=20" in out
    assert "sasl: offered ANONYMOUS AMQPLAIN PLAIN, chose PLAIN, outcome ok" in out
    assert 'container="rabbit@vm" max-frame=32768' in out
    assert "by performative: transfer 40, header 8" in out
    assert "by outcome: accepted 40" in out
    assert "violations: 0" in out
    _, out, _ = run("pcap-dump", RABBIT, "--summary", "--links", "--connections", "--json")
    kinds = [o["record"] for o in jsonl(out)]
    assert kinds == ["link", "link", "connection", "connection", "summary"]
    conn = jsonl(out)[2]
    assert conn["sasl"] == {"offered": ["ANONYMOUS", "AMQPLAIN", "PLAIN"], "mechanism": "PLAIN",
                            "outcome": "ok"}
    assert conn["open-server"]["open"]["container-id"] == "rabbit@vm"


@pytest.mark.parametrize("args, frames", [
    (["-C", "c2"], 38),
    (["-C", "46610"], 39),
    (["--performative", "transfer,disposition"], 44),
    (["--state", "accepted"], 4),
    (["--link", "7351*"], 25),
    (["--address", "/queue/lab.cap.c", "-C", "c1"], 26),
    (["--since", "0.3"], 38),
    (["--until", "23:35:48.1"], 39),
])
def test_filters(args: list[str], frames: int) -> None:
    code, out, _ = run("pcap-dump", RABBIT, *args)
    assert code == 0
    assert len(out.splitlines()) == frames


@pytest.mark.parametrize("args, message", [
    (["--performative", "transfr"], ("--performative: unknown performative 'transfr' (did you "
                                     "mean 'transfer'?")),
    (["--performative", "flow,message.transfr"], "unknown performative 'message.transfr'"),
    (["--state", "acepted"], "--state: unknown state 'acepted' (did you mean 'accepted'?"),
    (["--until", "25:00:00"], "--until: not a time of day: '25:00:00'"),
    (["--since", "10:61"], "--since: not a time of day: '10:61'"),
    (["--since", "1", "--until", "0.5"], "--since 1 is after --until 0.5"),
    (["--since", "nan"], "--since: not a time: 'nan'"),
    (["--since", "abc"], "--since: not a time: 'abc'"),
    (["--until", "2026-13-01"], "--until: not a time: '2026-13-01'"),
    (["--performative", ""], "--performative: a name is needed"),
    (["--state", " , "], "--state: a name is needed"),
    # an empty glob matched nothing, quietly
    (["-a", ""], "--address: an address or a glob is needed (got '')"),
    (["--address", "q", "--address", " "], "--address: an address or a glob is needed"),
    (["--link", ""], "--link: a link name or a glob is needed (got '')"),
])
def test_filter_typos_are_usage_errors(args: list[str], message: str) -> None:
    # a misspelt name or an impossible time matches nothing: say so, do not print nothing
    code, out, err = run("pcap-dump", RABBIT, *args)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args, message", [
    (["--amqp-port", "99999"], "--amqp-port 99999: not a TCP port"),
    (["--amqp-port", "0"], "--amqp-port 0: not a TCP port"),
    (["--stall", "nan"], "--stall must be positive"),
    (["-c", "5"], "--count N (N at least 1) goes with --live"),
    (["--out", "{tmp}/t", "--state", "rejected"], "--state: not with --out"),
    (["--out", "{tmp}/t", "-C", "c1", "--frames-only"],
     "--connection, --frames-only: not with --out"),
])
def test_options_that_cannot_apply_are_usage_errors(args: list[str], message: str,
                                                    tmp_path: Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    code, out, err = run("pcap-dump", RABBIT, *args)
    assert code == 2 and out == "" and message in err
    assert not (tmp_path / "t").exists()  # no tables were written


def test_a_connection_filter_that_names_nothing_says_so() -> None:
    code, out, err = run("pcap-dump", RABBIT, "-C", "c9", "-C", "c2")
    assert code == 0 and len(out.splitlines()) == 38  # c2's frames, as -C c2 alone
    assert "--connection c9 matched no connection (there are c1 to c" in err
    assert "c2" not in err.split("there are")[0]


@pytest.mark.parametrize(("args", "note"), [
    (["--since", "2999-01-01"], "--since 2999-01-01 is after the last packet"),
    (["--since", "100000"], "--since 100000 is after the last packet"),
    (["--until", "1999-01-01T00:00:00"], "--until 1999-01-01T00:00:00 is before the first packet"),
])
def test_a_time_range_outside_the_capture_says_so(args: list[str], note: str) -> None:
    code, out, err = run("pcap-dump", RABBIT, *args)
    assert code == 0 and out == ""
    assert err.startswith(f"amqp: note: {note} (the capture runs from 20")
    code, out, err = run("pcap-dump", RABBIT, "--since", "0.01", "--until", "2999-01-01")
    assert code == 0 and out and err == ""  # a range that overlaps: no note


def test_every_filter_name_is_one_the_records_use() -> None:
    from amqpcli.dissect.filters import STATES, known_performatives

    names = known_performatives()
    assert {"transfer", "sasl-init", "heartbeat", "header", "error",
            "message.transfer", "execution.sync"} <= names
    # every delivery outcome the records can carry can be asked for
    _, out, _ = run("pcap-dump", RABBIT, "-d", "--json")
    assert {d["outcome"] for d in jsonl(out)} <= STATES
    _, out, _ = run("pcap-dump", ECHO010, "-d", "--json")
    assert {d["outcome"] for d in jsonl(out)} <= STATES


def test_filters_on_deliveries() -> None:
    _, out, _ = run("pcap-dump", RABBIT, "-d", "-C", "c2", "--state", "accepted")
    assert len(out.splitlines()) == 20
    _, out, _ = run("pcap-dump", RABBIT, "-d", "--state", "rejected")
    assert out == ""


def test_amqp010_in_the_same_formats() -> None:
    code, out, _ = run("pcap-dump", ECHO010)
    assert code == 0
    assert "c1 -> [1]  message.transfer sync destination=echo" in out
    _, out, _ = run("pcap-dump", ECHO010, "--json")
    objs = jsonl(out)
    assert {o["protocol"] for o in objs} == {"amqp-0-10"}
    assert sum(o.get("method") == "message.transfer" for o in objs) == 7
    _, out, _ = run("pcap-dump", ECHO010, "-d", "--json")
    dels = jsonl(out)
    assert len(dels) == 7 and all(d["protocol"] == "amqp-0-10" for d in dels)
    # the client's transfers were completed by the server
    client = [d for d in dels if d["from"] == "client"]
    assert {d["outcome"] for d in client} == {"completed"}


def test_frames_only_is_the_same_frames_without_bodies() -> None:
    _, full, _ = run("pcap-dump", RABBIT)
    _, brief, _ = run("pcap-dump", RABBIT, "--frames-only")
    assert len(full.splitlines()) == len(brief.splitlines())
    for a, b in zip(full.splitlines(), brief.splitlines(), strict=True):
        assert a.startswith(b)
    assert "bytes)" not in brief


def test_truncated_capture(tmp_path: Path) -> None:
    data = Path(RABBIT).read_bytes()
    cut = tmp_path / "cut.pcapng"
    cut.write_bytes(data[: len(data) // 2])
    code, out, err = run("pcap-dump", str(cut), "-d")
    assert code == 8
    assert "what could be read was printed" in err and err.count("\n") == 1
    assert 0 < len(out.splitlines()) < 40  # the deliveries that were readable


def test_corrupt_amqp_stream(tmp_path: Path) -> None:
    s = Script().open().sender_link()
    s.transfer(0).dispose(0, c.Accepted())
    s.raw(C2S, b"\x00\x00\x00\x20\x02\x00\x00\x00" + b"\xee" * 24)  # a frame of garbage
    s.transfer(1).dispose(1, c.Accepted()).close()
    code, out, err = run("pcap-dump", str(write(tmp_path / "bad.pcapng", s)))
    assert code == 8
    assert "1 frame could not be decoded" in err
    assert "frame error" in out and "violation framing-error" in out
    assert out.count("transfer ") == 2  # the frames after it are read


def test_not_amqp(tmp_path: Path) -> None:
    path = tmp_path / "http.pcapng"
    with CaptureWriter(path) as w:
        conv = TcpConversation(w, server=("10.0.0.2", 80))
        conv.handshake()
        conv.send(C2S, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        conv.close()
    code, out, err = run("pcap-dump", str(path))
    assert code == 8 and out == ""
    assert "no AMQP traffic" in err and "(1 TCP flow: 1 unknown)" in err
    text = tmp_path / "t.txt"
    text.write_text("hello\n")
    code, out, err = run("pcap-dump", str(text))
    assert code == 8 and "not a capture file" in err and out == ""
    # nothing was printed, and the line does not say otherwise
    assert err.endswith("; no packet could be read\n") and err.count("\n") == 1


def test_usage_errors(tmp_path: Path) -> None:
    assert run("pcap-dump")[0] == 2
    assert run("pcap-dump", str(tmp_path / "missing.pcap"))[0] == 2
    code, _, err = run("pcap-dump", RABBIT, "--since", "yesterday")
    assert code == 2 and "--since: not a time" in err
    # (the folder name was left out of the error: ": exists and is not an empty folder")
    code, out, err = run("pcap-dump", RABBIT, "--out", "")
    assert (code, out, err) == (2, "", "amqp: error: --out: the folder name is empty\n")


def test_crafted_outcomes_on_delivery_lines(tmp_path: Path) -> None:
    s = basic(1, sasl=False)
    s.steps = s.steps[:-2]  # no close
    s.transfer(1).dispose(1, c.Rejected(error=c.Error(condition="amqp:x")))
    s.transfer(2, settled=True)
    s.transfer(3)
    code, out, _ = run("pcap-dump", str(write(tmp_path / "o.pcapng", s, fin=False)), "-d")
    assert code == 0
    lines = out.splitlines()
    assert "accepted" in lines[0] and "by receiver" in lines[0]
    assert "rejected (amqp:x)" in lines[1]
    assert "settled" in lines[2] and "presettled" in lines[2]
    assert "unsettled" in lines[3] and "unsettled at end" in lines[3]


def test_colour_when_asked() -> None:
    code, out, _ = run("pcap-dump", RABBIT, "--color", "--performative", "transfer", "-C", "c1")
    assert code == 0
    first = out.splitlines()[0]
    assert "\x1b[32mtransfer\x1b[0m" in first  # the performative, coloured
    assert "\x1b[36mc1\x1b[0m" in first  # the connection
    _, plain, _ = run("pcap-dump", RABBIT, "--no-color", "--performative", "transfer", "-C", "c1")
    assert "\x1b[" not in plain and len(plain.splitlines()) == len(out.splitlines())


@pytest.mark.parametrize("args", [
    ["--capture-filter", "tcp port 7", "--amqp-port", "7", "-c", "3"],
    ["--bpf", "tcp port 7", "--port", "7", "--count", "3"],  # the old spellings, hidden
    ["--bpf", "tcp port 7", "-p", "7", "-c", "3"],
    ["--capture-filter", "tcp port 7", "--amqp-port", "7", "-c", "3", "--fast-capture"],
])
def test_live_capture_options_and_their_old_spellings(monkeypatch: pytest.MonkeyPatch,
                                                       args: list[str]) -> None:
    seen: list[tuple[Any, ...]] = []

    def fake_events(dis: Any, files: Any, live: Any, keylog: Any, bpf: Any, count: Any,
                    stop: Any, fast: bool) -> Any:
        seen.append((live, bpf, count, sorted(dis.ports), fast))
        return iter(())

    monkeypatch.setattr("amqpcli.cli.pcap_dump._events", fake_events)
    code, _, err = run("pcap-dump", "--live", "lo", *args)
    assert code == 8 and "no AMQP traffic" in err  # nothing was captured
    assert seen == [("lo", "tcp port 7", 3, [7, 5672], "--fast-capture" in args)]


def test_capture_filter_without_live_is_a_usage_error() -> None:
    code, out, err = run("pcap-dump", RABBIT, "--capture-filter", "tcp port 5672")
    assert code == 2 and "--capture-filter goes with --live" in err and out == ""


def test_old_short_flags_of_views_are_gone() -> None:
    # -c is --count everywhere, -l --listen, -P --property
    for flag in ("-l", "-P"):
        code, _, err = run("pcap-dump", RABBIT, flag)
        assert code == 2 and "No such option" in err, flag
    # and -s --selector, as in recv and browse (it was --summary here once)
    code, _, err = run("pcap-dump", RABBIT, "-s")
    assert code == 2 and "Option '-s' requires an argument" in err


def test_folders_and_globs_are_read_by_every_view(tmp_path: Path) -> None:
    # as --out reads them: the capture files in a folder, a quoted glob's matches
    (tmp_path / "caps").mkdir()
    for i in range(2):  # two connections (servers on two ports)
        write(tmp_path / "caps" / f"c{i}.pcapng", basic(3), port=5672 + i)
    code, out, err = run("pcap-dump", str(tmp_path / "caps"), "--summary")
    assert code == 0, err
    assert out.startswith("connections: 2")
    code, out2, err = run("pcap-dump", str(tmp_path / "caps" / "*.pcapng"), "--summary")
    assert code == 0 and out2 == out, err
    code, _, err = run("pcap-dump", str(tmp_path / "caps"), "--format", "ndjson")
    assert code == 2 and "--format and --engine go with --out" in err


def test_a_link_neither_side_detached_says_how_it_went(tmp_path: Path) -> None:
    """`state=detached` read as if a detach had been seen: a link ended by its session's
    end or its connection's close says so, in text and JSON (text: as its state, not
    `detached (no detach: ...)`, which contradicted itself)."""
    ended = Script()
    ended.open().sender_link().transfer(0).dispose(0, c.Accepted())
    ended.sender_link("second", handle=1)
    ended.c(c.Detach(handle=1, closed=True)).s(c.Detach(handle=1, closed=True))
    ended.c(c.End()).s(c.End())
    path = write(tmp_path / "ended.pcapng", ended.close())
    code, out, err = run("pcap-dump", str(path), "--links")
    assert code == 0, err
    states = [line.split(" state=")[1] for line in out.splitlines() if " state=" in line]
    assert states == ["ended-with-session", "detached"]
    _, out, _ = run("pcap-dump", str(path), "--links", "--json")
    assert [o.get("detached-with") for o in jsonl(out)] == ["end", None]
    code, out, _ = run("pcap-dump", RABBIT, "--links")
    assert out.count("state=closed-with-connection") == 2


@pytest.mark.parametrize("error", ["xx", UShort(5)], ids=["string", "ushort"])
def test_a_close_whose_error_is_no_error_list(tmp_path: Path, error: Any) -> None:
    """A damaged close carrying a plain value where its error belongs: `--connections`
    stopped with an internal error and the tables wrote "None"; it is shown as it came."""
    s = Script()
    s.open().sender_link()
    s.raw(C2S, encode_frame(c.Close(error=error)))
    path = write(tmp_path / "close.pcapng", s.close())
    code, out, err = run("pcap-dump", str(path), "--connections")
    assert code == 0, err
    if error == "xx":
        assert 'close "xx"' in out
    code, _, err = run("pcap-dump", str(path), "--out", str(tmp_path / "t"), "--format", "ndjson")
    assert code == 0, err
    (row,) = [json.loads(line) for f in (tmp_path / "t" / "connections").rglob("*.json")
              for line in f.read_text().splitlines()]
    assert row["close_error"] in ("xx", "5")


def test_the_last_frame_of_a_delivery_in_several_shows_its_message(tmp_path: Path) -> None:
    """As `amqp decode --brief` does, and as the docs say: the transfer that completes a
    message summarises it, in several frames too (the line gave only the last piece's
    size); a filter that leaves the first pieces out does not change it."""
    from amqpcli.codec.composites import AmqpValue
    from amqpcli.codec.message import Message

    msg = Message(AmqpValue("a multi-frame body " * 20)).encode()
    s = Script().open().sender_link()
    s.c(c.Transfer(handle=0, delivery_id=0, delivery_tag=b"t", message_format=0, more=True),
        payload=msg[:100])
    s.c(c.Transfer(handle=0, more=True), payload=msg[100:250])
    s.c(c.Transfer(handle=0), payload=msg[250:])
    path = write(tmp_path / "multi.pcapng", s.dispose(0, c.Accepted()).close())
    want = 'value "a multi-frame body a multi-frame body'
    for args in ([], ["--performative", "transfer"], ["--deliveries", "--frames"]):
        code, out, err = run("pcap-dump", str(path), *args)
        assert code == 0, err
        lines = [ln for ln in out.splitlines() if "transfer" in ln]
        assert want in lines[-1]
        assert lines[-1].endswith(f"({len(msg)} bytes in all)"), lines[-1]
        assert lines[0].endswith("(100 bytes)") and lines[1].endswith("(150 bytes)")
    code, out, _ = run("pcap-dump", str(path), "--since", "0.0105")  # the last frame only
    (line,) = [ln for ln in out.splitlines() if "transfer" in ln]
    assert want in line and line.endswith("bytes in all)"), out
