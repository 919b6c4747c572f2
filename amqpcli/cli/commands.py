"""Registers the subcommands on the app: every one, or only the one a run names.

Each subcommand's module adds its command to `app` when imported. `amqp --help`, a name
that is no command, shell completion and the generated completions and man pages need
every command; `amqp send …` needs only `send`, and importing and building the others
would be start-up time spent for nothing.
"""

from __future__ import annotations

# Command name -> its module under amqpcli.cli, in the order `amqp --help` lists them
# (recv first: browse imports it).
MODULES: dict[str, str] = {
    "recv": "recv",
    "browse": "browse",
    "decode": "decode",
    "pcap-dump": "pcap_dump",
    "proxy": "proxy",
    "send": "send",
    "serve": "serve",
    "tui": "tui",
}


def register(name: str | None = None) -> None:
    """Import the module of command `name`, or of every command when `name` is None or
    no command's name."""
    module = MODULES.get(name) if name is not None else None
    for m in [module] if module is not None else [*MODULES.values(), "stubs"]:
        # __import__, not importlib.import_module: the same import path as an import
        # statement, so `python -X importtime` still reports these modules.
        __import__(f"amqpcli.cli.{m}")
