"""Registers every subcommand on the app. One import per subcommand module."""

from amqpcli.cli import stubs  # noqa: F401
from amqpcli.cli import browse, recv, send  # noqa: F401
from amqpcli.cli import decode  # noqa: F401
from amqpcli.cli import proxy, tui  # noqa: F401
