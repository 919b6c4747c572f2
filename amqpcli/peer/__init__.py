"""`amqp serve`: a small in-memory AMQP 1.0 peer on the project's own engine.

* `store` — queues, topics and their subscriptions, entries and who may take them;
* `selector` — the JMS-style selector language (parse once, evaluate per message);
* `faults` — the fault-injection options and the rules that pick messages;
* `broker` — `Broker`: the node logic, driven by engine events, with a decider hook
  for the outcome of each message a sender delivers (default: `Policy`, the faults);
* `endpoint` — `PeerEndpoint`: the engine's peer role plus a say in credit;
* `server` — `Server`: asyncio listener running one endpoint per connection.

Embedding (the TUI, tests): make a `Broker(faults, decide=...)`, a `Server(listen,
broker)`, `await server.start()`; a decider returning None leaves a message in
`broker.pending` until `broker.settle_incoming(incoming, outcome)`. To watch it from
another thread: `Server(..., on_connect=, on_events=, lock=)` (see `server`).
"""

from amqpcli.selector import Selector, SelectorError, compile_selector

from .broker import Broker, Decision, Incoming, PeerConnection, Policy
from .endpoint import PeerEndpoint
from .faults import Faults, Rule, check_rules, parse_rule
from .server import Server
from .store import Entry, Nodes, Queue

__all__ = [
    "Broker",
    "Decision",
    "Entry",
    "Faults",
    "Incoming",
    "Nodes",
    "PeerConnection",
    "PeerEndpoint",
    "Policy",
    "Queue",
    "Rule",
    "Selector",
    "SelectorError",
    "Server",
    "check_rules",
    "compile_selector",
    "parse_rule",
]
