"""Subcommands that are part of the product but not built yet: each says so and exits 2.

When a subcommand is built, its stub is removed from here and its own module is imported
in `amqpcli/cli/commands.py`.
"""

from __future__ import annotations

import typer

from amqpcli.cli.app import app, not_built

_CTX = {"allow_extra_args": True, "ignore_unknown_options": True}


@app.command("pcap-dump", context_settings=_CTX, help="Rebuild conversations and deliveries from captures. (not built yet)")
def pcap_dump(ctx: typer.Context) -> None:
    not_built("pcap-dump")
