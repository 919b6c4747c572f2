"""Registers every subcommand on the app. One import per subcommand module."""

from amqpcli.cli import (  # noqa: F401  # noqa: F401
    browse,
    decode,
    pcap_dump,
    proxy,
    recv,
    send,
    serve,
    stubs,
    tui,
)
