"""Subcommands that are part of the product but not built yet: each says so and exits 2.

When a subcommand is built, its stub is removed from here and its own module is imported
in `amqpcli/cli/commands.py`. Every subcommand is built now; `not_built` in `app.py`
stays for the next one.
"""

from __future__ import annotations
