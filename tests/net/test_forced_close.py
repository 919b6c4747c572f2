"""`forced_close`: only the peer's own close with `amqp:connection:forced` is a drop to
reconnect after; any other error (another condition, a failed write out) stays an error."""

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
