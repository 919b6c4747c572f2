"""Connection level: headers, SASL, open/close, heartbeats and idle-timeout."""

from __future__ import annotations

from amqpcli.codec import composites as c
from amqpcli.engine import (
    ConnectionClosed,
    ConnectionOpened,
    Heartbeat,
    ProtocolHeaderSeen,
    SaslMechanismChosen,
    SaslOutcome,
    Violation,
)
from amqpcli.engine.sasl import AUTH, SaslConfig, plain_credentials

from .harness import Pair, of, plain


def test_open_without_sasl() -> None:
    p = Pair()
    assert p.client.is_open and p.peer.is_open
    opened = of(p.client_events, ConnectionOpened)
    assert [e.side for e in opened] == ["client", "server"]
    assert opened[1].open.container_id == "amqpcli-peer"
    headers = of(p.peer_events, ProtocolHeaderSeen)
    assert [(h.side, h.protocol) for h in headers] == [("client", "amqp"), ("server", "amqp")]
    assert p.wire[0][1][:8] == b"AMQP\x00\x01\x00\x00"


def test_sasl_plain() -> None:
    seen: list[tuple[str, bytes | None]] = []

    def check(mech: str, resp: bytes | None) -> int:
        seen.append((mech, resp))
        return 0

    p = Pair(client={"sasl": plain("alice", "pw")},
             peer={"sasl": SaslConfig(offer=("ANONYMOUS", "PLAIN"), authenticate=check)})
    assert p.client.is_open
    assert seen[0][0] == "PLAIN"
    assert plain_credentials(seen[0][1] or b"") == ("", "alice", "pw")
    out = of(p.client_events, SaslOutcome)
    assert out[0].ok and out[0].mechanism == "PLAIN" and out[0].side == "server"
    # SASL header first, then the AMQP header after the outcome
    assert p.wire[0][1][:8] == b"AMQP\x03\x01\x00\x00"


def test_sasl_anonymous_when_no_credentials() -> None:
    p = Pair(client={"sasl": SaslConfig()}, peer={"sasl": SaslConfig()})
    assert p.client.is_open
    assert of(p.peer_events, SaslMechanismChosen)[0].mechanism == "ANONYMOUS"


def test_sasl_preference_order_and_forced_mechanism() -> None:
    p = Pair(client={"sasl": SaslConfig(mechanism="ANONYMOUS", username="u", password="p")},
             peer={"sasl": SaslConfig()})
    assert of(p.peer_events, SaslMechanismChosen)[0].mechanism == "ANONYMOUS"
    p = Pair(client={"sasl": SaslConfig(external=True, username="u", password="p")},
             peer={"sasl": SaslConfig(offer=("EXTERNAL", "PLAIN"))})
    assert of(p.peer_events, SaslMechanismChosen)[0].mechanism == "EXTERNAL"


def test_sasl_forced_mechanism_not_offered_fails_locally() -> None:
    p = Pair(client={"sasl": SaslConfig(mechanism="EXTERNAL")},
             peer={"sasl": SaslConfig(offer=("PLAIN",))})
    closed = of(p.client_events, ConnectionClosed)
    assert closed and closed[0].side == "client"
    assert str(closed[0].error.condition) == "amqp:unauthorized-access"
    assert "PLAIN" in closed[0].error.description
    assert p.client.failed and not p.client.is_open


def test_sasl_authentication_failure() -> None:
    p = Pair(client={"sasl": plain()},
             peer={"sasl": SaslConfig(authenticate=lambda m, r: AUTH)})
    out = of(p.client_events, SaslOutcome)
    assert out and not out[0].ok and out[0].code == AUTH
    assert p.client.failed and p.peer.failed
    assert not p.client.is_open
    assert not of(p.client_events, ConnectionOpened)


def test_close_with_error_is_answered() -> None:
    p = Pair()
    p.client.close(c.Error(condition=c.Symbol("amqp:internal-error"), description="bye"))
    p.pump()
    closed = of(p.peer_events, ConnectionClosed)
    assert [e.side for e in closed] == ["client", "server"]
    assert str(closed[0].error.condition) == "amqp:internal-error"
    assert closed[1].error is None
    assert p.client.connection.state == "closed" and p.peer.connection.state == "closed"


def test_heartbeats_at_half_the_peer_idle_timeout() -> None:
    p = Pair(client={"idle_timeout": 10.0}, peer={"idle_timeout": 4.0})
    t0 = p.t
    # the client must send within 4 s: its timer says 2 s after its last frame
    deadline = p.client.next_timer()
    assert deadline is not None and deadline <= t0 + 2.0
    evs = p.client.handle_timer(deadline)
    assert of(evs, Heartbeat) and of(evs, Heartbeat)[0].side == "client"
    data = p.client.data_to_send()
    assert data == b"\x00\x00\x00\x08\x02\x00\x00\x00"  # an empty frame
    evs = p.peer.receive_data(data, deadline)
    assert of(evs, Heartbeat)[0].side == "client"
    assert not of(evs, Violation)


def test_idle_timeout_closes_with_resource_limit_exceeded() -> None:
    p = Pair(peer={"idle_timeout": 4.0})
    last = max(t for side, _, t in p.wire if side == "client")
    deadline = p.peer.next_timer()
    assert deadline is not None
    # the peer's own heartbeat duty (client has no idle-timeout) is none: the deadline
    # is its idle check, 4 s after the last frame it received
    assert deadline == last + 4.0
    assert not of(p.peer.handle_timer(last + 3.9), Violation)
    evs = p.peer.handle_timer(last + 4.0)
    v = of(evs, Violation)
    assert v and v[0].kind == "idle-timeout" and v[0].side == "client"
    closed = of(evs, ConnectionClosed)
    assert closed[0].side == "server"
    assert str(closed[0].error.condition) == "amqp:resource-limit-exceeded"
    evs = p.pump()
    assert p.client.connection.state == "closed"


def test_open_advertises_half_the_idle_timeout() -> None:
    # Part 2 §2.4.5: the idle-time-out sent SHOULD be half the actual threshold
    p = Pair(client={"idle_timeout": 4.0}, peer={"idle_timeout": 0.001})
    opened = {e.side: e.open for e in of(p.client_events, ConnectionOpened)}
    assert opened["client"].idle_time_out == 2000
    assert opened["server"].idle_time_out == 1  # never 0 (that would mean none)
    assert p.peer.connection.idle_timeout("client") == 2.0
    p = Pair()
    assert all(e.open.idle_time_out is None for e in of(p.client_events, ConnectionOpened))


def test_advertised_idle_timeout_is_half_and_not_under_a_second_from_a_second_on() -> None:
    from amqpcli.engine.endpoint import advertised_idle_timeout

    # below 1000 ms RabbitMQ refuses the open (4.x) or sends no heartbeats (3.x)
    assert [advertised_idle_timeout(s) for s in (0.001, 0.5, 1, 1.5, 2, 3, 4, 4000000)] == [
        1, 250, 1000, 1000, 1000, 1500, 2000, 2000000000]
    p = Pair(client={"idle_timeout": 1.0})
    assert p.peer.connection.open["client"].idle_time_out == 1000


def test_silence_longer_than_advertised_but_under_the_threshold_is_not_closed() -> None:
    from amqpcli.codec.frames import encode_frame

    p = Pair(client={"idle_timeout": 4.0})
    last = p.t
    # the peer heartbeats at half what it was told (2 s): 1 s
    beat = p.peer.next_timer()
    assert beat is not None and abs(beat - (last + 1.0)) < 0.01
    assert p.client.next_timer() == last + 4.0  # the client's own threshold
    # silent for 3 s: more than the 2 s advertised, less than the 4 s threshold they stand
    # for: no violation
    evs = p.client.receive_data(encode_frame(None), last + 3.0)
    assert not of(evs, Violation)
    assert not of(evs, ConnectionClosed) and not p.client.data_to_send()
    assert p.client.is_open
    # then silent for the whole threshold: closed by the timer
    assert p.client.next_timer() == last + 7.0
    evs = p.client.handle_timer(last + 7.0)
    closed = of(evs, ConnectionClosed)
    assert closed and closed[0].side == "client"
    assert str(closed[0].error.condition) == "amqp:resource-limit-exceeded"


def test_a_frame_ending_a_silence_past_the_threshold_closes() -> None:
    from amqpcli.codec.frames import encode_frame

    p = Pair(client={"idle_timeout": 4.0})
    # the timer was not run in time: the frame that ends 5 s of silence is judged
    evs = p.client.receive_data(encode_frame(None), p.t + 5.0)
    closed = of(evs, ConnectionClosed)
    assert closed and str(closed[0].error.condition) == "amqp:resource-limit-exceeded"


def test_frame_after_close_is_reported_not_processed() -> None:
    p = Pair()
    p.client.close()
    p.pump()
    evs = p.inject("peer", c.Begin(next_outgoing_id=0, incoming_window=1, outgoing_window=1))
    v = of(evs, Violation)
    assert v and v[0].kind == "frame-after-close" and v[0].side == "client"


def test_client_without_sasl_against_a_server_that_requires_it() -> None:
    p = Pair(peer={"sasl": SaslConfig()})
    closed = of(p.client_events, ConnectionClosed)
    assert closed and closed[0].side == "client"
    assert "requires SASL" in closed[0].error.description
    assert p.client.failed and p.peer.failed


def test_client_with_sasl_against_a_server_without() -> None:
    p = Pair(client={"sasl": plain()})
    closed = of(p.client_events, ConnectionClosed)
    assert closed and "does not offer SASL" in closed[0].error.description
    assert not of(p.client_events + p.peer_events, Violation)


def test_peer_open_called_early_goes_out_after_sasl() -> None:
    p = Pair(client={"sasl": plain()}, peer={"sasl": SaslConfig(), "container_id": "x"},
             open=False)
    p.peer.open(properties={c.Symbol("product"): "test"})
    assert p.peer.data_to_send() == b""  # nothing before the client speaks
    p.client.open()
    p.pump()
    assert p.client.is_open
    opened = [e for e in of(p.client_events, ConnectionOpened) if e.side == "server"]
    assert opened[0].open.properties == {c.Symbol("product"): "test"}


def test_a_threshold_under_twice_the_advertised_is_raised_to_it() -> None:
    """--idle-timeout 1 advertises 1000 ms (no less: RabbitMQ); proton heartbeats at the
    advertised interval itself, a millisecond or so late each time: the threshold is 2 s,
    not 1 s, or every such beat would drop it."""
    p = Pair(peer={"idle_timeout": 1.0})
    assert p.client.connection.idle_timeout("server") == 1.0  # advertised: 1000 ms
    last = max(t for side, _, t in p.wire if side == "client")
    assert p.peer.next_timer() == last + 2.0
    assert not of(p.peer.handle_timer(last + 1.005), Violation)
    assert of(p.peer.handle_timer(last + 2.0), Violation)
