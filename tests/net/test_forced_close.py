"""`forced_close`: only the peer's own close with `amqp:connection:forced`, its end of our
session as a broker shutting down or its operator closing the connection does (RabbitMQ's
amqp:internal-error "shutdown" or connection-forced reason), or its detach of one of our
links with `amqp:link:detach-forced`, is a drop to reconnect after; any other error
(another condition or reason, a failed write out) stays an error."""

from __future__ import annotations

from types import SimpleNamespace

from amqpcli.codec import composites as c
from amqpcli.codec.types import Symbol
from amqpcli.errors import Exit, UserError
from amqpcli.net.client import FORCED, REMOTE, Client, forced_close
from amqpcli.net.config import ConnectionConfig


def _closed_with(condition: str) -> tuple[Client, UserError]:
    client = Client(ConnectionConfig())
    close = c.Close(error=c.Error(condition=Symbol(condition)))
    client.engine = SimpleNamespace(connection=SimpleNamespace(close={REMOTE: close}))
    client.error = UserError(f"the peer closed the connection: {condition}", Exit.REFUSED)
    return client, client.error


def test_the_peers_forced_close_is_a_drop() -> None:
    client, error = _closed_with(FORCED)
    assert forced_close(client, error)


def test_other_conditions_and_other_errors_are_not() -> None:
    client, error = _closed_with("amqp:unauthorized-access")
    assert not forced_close(client, error)
    client, _ = _closed_with(FORCED)
    assert not forced_close(client, UserError("cannot write standard output", Exit.USAGE))
    assert not forced_close(None, UserError("x", Exit.REFUSED))
    fresh = Client(ConnectionConfig())
    assert not forced_close(fresh, UserError("x", Exit.REFUSED))


def test_a_link_detached_with_detach_forced_is_a_drop() -> None:
    def detached_with(condition: str) -> tuple[Client, UserError]:
        client = Client(ConnectionConfig())
        detach = c.Detach(handle=0, closed=True, error=c.Error(condition=Symbol(condition)))
        error = UserError(f"the peer detached the link: {condition}", Exit.REFUSED)
        link = SimpleNamespace(error=error, link=SimpleNamespace(detach={REMOTE: detach}))
        client._links[1] = link  # type: ignore[assignment]
        return client, error

    assert forced_close(*detached_with("amqp:link:detach-forced"))
    assert not forced_close(*detached_with("amqp:not-found"))
    client, _ = detached_with("amqp:link:detach-forced")
    assert not forced_close(client, UserError("another error", Exit.REFUSED))


def test_a_session_ended_as_a_broker_shuts_down_is_a_drop() -> None:
    # RabbitMQ ends every session with amqp:internal-error "shutdown" when it stops, and
    # with the connection-forced reason (320) when its operator closes the connection.
    def ended_with(condition: str, description: str | None) -> tuple[Client, UserError]:
        client = Client(ConnectionConfig())
        end = c.End(error=c.Error(condition=Symbol(condition), description=description))
        client.engine = SimpleNamespace(connection=SimpleNamespace(close={}))
        client._session = SimpleNamespace(end={REMOTE: end})
        client.error = UserError("the peer ended the session", Exit.REFUSED)
        return client, client.error

    assert forced_close(*ended_with("amqp:internal-error", "shutdown"))
    # rabbitmqctl close_all_connections "maintenance" (3.10)
    operator = ("{shutdown,{connection_closing,{server_initiated_close,320,"
                "<<109,97,105,110,116,101,110,97,110,99,101>>}}}")
    assert forced_close(*ended_with("amqp:internal-error", operator))
    assert not forced_close(*ended_with("amqp:internal-error", "out of disk"))
    assert not forced_close(*ended_with("amqp:internal-error", None))
    assert not forced_close(*ended_with("amqp:unauthorized-access", "shutdown"))
    assert not forced_close(*ended_with("amqp:unauthorized-access", operator))
    # the application's own errors, in the same wrapping: not a drop
    assert not forced_close(*ended_with("amqp:internal-error", "shutdown: disk full"))
    assert not forced_close(*ended_with(
        "amqp:internal-error", "{shutdown,{server_initiated_close,404,<<78,79>>}}"))
    assert not forced_close(*ended_with(
        "amqp:internal-error", "{shutdown,{connection_closing,{server_initiated_close,541,"
        "<<73,78>>}}}"))
