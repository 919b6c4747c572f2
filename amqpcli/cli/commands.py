"""The subcommands: each one's name, module and help text, and registering them on the app.

Each subcommand's module adds its command to `app` when imported, with the help text
given here. A run that names a command imports that command's module only; a name that
is no command, shell completion and the generated completions and man pages import every
one. `amqp --help` (and `amqp` alone) lists the commands from this table without
importing any of them (`amqpcli.cli.app._listing`): it shows only names and help texts.
"""

from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    module: str  # under amqpcli.cli
    help: str  # what `amqp NAME --help` says first; its first sentence is `amqp --help`'s


# In the order `amqp --help` lists them.
COMMANDS: dict[str, Command] = {
    "recv": Command(
        "recv",
        "Receive messages from a node; --copy browses without consuming. "
        "Exit codes: see docs/send-recv.md.",
    ),
    "browse": Command(
        "browse",
        "List what a node holds without consuming it: a copy link drained to the end. "
        "Warns when the peer consumed the messages despite agreeing to copy.",
    ),
    "decode": Command(
        "decode",
        "Decode AMQP bytes into a readable tree: a frame stream (with or without protocol "
        "header), a single frame, an encoded message, or any sequence of AMQP values. Input "
        "is hex (plain, 0x-prefixed, hexdump -C, xxd or od -t x1), base64 or raw bytes, from the "
        "argument, a file or stdin.",
    ),
    "pcap-dump": Command(
        "pcap_dump",
        "Rebuild conversations, deliveries and outcomes from captures (AMQP 1.0 and 0-10).",
    ),
    "proxy": Command(
        "proxy",
        "Forward an application's AMQP connections to a broker and print every frame.",
    ),
    "send": Command(
        "send",
        "Send messages to a node. Exit codes: see docs/send-recv.md.",
    ),
    "request": Command(
        "request",
        "Send requests and print their replies: each request's reply-to names a dynamic node "
        "(or --reply-to), replies are matched by correlation-id, round trips timed. See "
        "docs/request.md.",
    ),
    "respond": Command(
        "respond",
        "Answer the requests on a node: each reply goes to its request's reply-to, "
        "correlated as amqp request matches it, and the request is accepted once its reply "
        "is. See docs/request.md.",
    ),
    "serve": Command(
        "serve",
        "Run a local AMQP 1.0 peer with in-memory queues (move and copy, selectors, dynamic "
        "nodes, durable subscriptions, transactions) and fault injection. See docs/serve.md.",
    ),
    "tui": Command(
        "tui",
        "Watch links, unsettled maps and deliveries live.",
    ),
}


def register(name: str | None = None) -> None:
    """Import the module of command `name`, or of every command when `name` is None or
    no command's name."""
    command = COMMANDS.get(name) if name is not None else None
    modules = [command.module] if command is not None else [
        c.module for c in COMMANDS.values()]
    for m in modules:
        # __import__, not importlib.import_module: the same import path as an import
        # statement, so `python -X importtime` still reports these modules.
        __import__(f"amqpcli.cli.{m}")
