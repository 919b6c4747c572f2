"""The Textual TUI (`amqp tui`). Only what the command line needs before the TUI's own
modules are imported lives here."""

KEEP_ENDED = 100  # ended connections a source shown as it comes keeps, by default
