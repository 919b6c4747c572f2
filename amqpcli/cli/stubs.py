"""Subcommands that are part of the product but not built yet: each says so and exits 2.

When a subcommand is built, its stub is removed from here and its own module is imported
in `amqpcli/cli/commands.py`.
"""

from __future__ import annotations

import typer

from amqpcli.cli.app import app, not_built

_CTX = {"allow_extra_args": True, "ignore_unknown_options": True}


@app.command(context_settings=_CTX, help="Send messages to a node. (not built yet)")
def send(ctx: typer.Context) -> None:
    not_built("send")


@app.command(context_settings=_CTX, help="Receive messages from a node; --copy browses. (not built yet)")
def recv(ctx: typer.Context) -> None:
    not_built("recv")


@app.command(context_settings=_CTX, help="List what a node holds without consuming. (not built yet)")
def browse(ctx: typer.Context) -> None:
    not_built("browse")


@app.command(context_settings=_CTX, help="Decode AMQP bytes into a readable tree. (not built yet)")
def decode(ctx: typer.Context) -> None:
    not_built("decode")


@app.command("pcap-dump", context_settings=_CTX, help="Rebuild conversations and deliveries from captures. (not built yet)")
def pcap_dump(ctx: typer.Context) -> None:
    not_built("pcap-dump")


@app.command(context_settings=_CTX, help="Watch links, unsettled maps and deliveries live. (not built yet)")
def tui(ctx: typer.Context) -> None:
    not_built("tui")
