"""`python -m amqpcli` and the `amqp` command (`run`): Ctrl-C while the command's modules
are still loading (its first tenth of a second) ends it as an interrupt does later, one
line and exit 130, not with a traceback."""

import sys


def run() -> None:
    try:
        from amqpcli.cli.app import main

        main()
    except KeyboardInterrupt:  # (before main's own handling is in place)
        print("amqp: interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    run()
