"""amqpcli: a command-line toolkit for AMQP 1.0 (and reading AMQP 0-10)."""

__version__ = "0.1.0"
