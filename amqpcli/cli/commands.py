"""Registers every subcommand on the app. One import per subcommand module."""

from amqpcli.cli import stubs  # noqa: F401
