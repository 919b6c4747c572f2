"""Real AMQP 1.0 peers for the test suite, written with python-qpid-proton's public API.

Each peer is a proton ``Container`` listening on 127.0.0.1 on a free port, run in a daemon
thread of the test process. Its state lives in that thread: read it with the peer's
methods, or ``peer.call(fn)`` (runs ``fn()`` there and returns the result) and
``peer.wait_for(predicate)`` (polls until truthy; ``TimeoutError`` is a hang guard). If the
peer's thread dies on an exception, the next call raises, and the fixture fails the test.
Peers offer SASL ANONYMOUS (and EXTERNAL over TLS); SASL PLAIN is RabbitMQ's job.
Every peer also has ``connections()`` (``net.ConnectionInfo``: container-id, hostname,
SASL user and mechanism, max-frame-size, idle-timeout, properties, capabilities of each
client open) and ``transport_errors()`` (failed TLS handshakes and the like). Every peer
takes ``max_frame_size=``, ``idle_timeout=`` (seconds; proton announces half of it),
``ssl_domain=``, ``port=`` and ``container_id=``: ``peers(Broker(max_frame_size=512))``.

Fixtures (``tests/conftest.py``)
--------------------------------
``rabbitmq_url`` (session)
    ``amqp://guest:guest@127.0.0.1:PORT`` of the private RabbitMQ node (AMQP 1.0 plugin,
    SASL PLAIN guest/guest and ANONYMOUS; addresses ``/queue/NAME``, ``/exchange/X/key``,
    ``/topic/key``). From ``$AMQP_TEST_RABBITMQ_URL`` (set by ``scripts/test.sh``), else
    started by ``scripts/rabbitmq.sh start`` (a fresh node: no queues) and left running.
    Fails, never skips.
``rabbitmq_queue``
    ``/queue/<test name>-<random>``: an address on that node no other test shares.
``broker`` -> ``Broker``
    A fresh broker per test; ``broker.url`` is ``amqp://127.0.0.1:PORT``.
``tls_certs`` (session) -> ``tls.Certs``
    CA, server certificate (127.0.0.1, localhost), client certificate, and an untrusted
    self-signed one, made with ``openssl`` in a temporary directory.
``tls_broker`` / ``tls_broker_client_auth`` -> ``Broker``
    The broker over TLS (``amqps://127.0.0.1:PORT``); the second requires a client
    certificate signed by the test CA. Client side: ``tls.client_domain(certs, ...)``.
``direct_receiver(**kw)`` -> ``DirectReceiver``;  ``direct_sender(messages, **kw)`` -> ``DirectSender``
    Factories; every peer they start is stopped at teardown.
``peers(peer)``
    Starts any peer (``peers(Broker(credit_window=5))``) and stops it at teardown.
``free_port`` (int), ``shared_dir``, ``testdata``, ``repo_root`` (paths; see ``tests/paths.py``).

Broker (``broker.py``)
----------------------
* Addresses name queues, created on first use. ``/topic/NAME``, ``topic://NAME`` or the
  ``topic`` terminus capability make a topic: each receiver gets its own subscription
  queue; a message sent with no subscribers is dropped.
* Receivers: distribution-mode ``move`` (default; consumers take turns) or ``copy``
  (browse; the attach reply says copy; nothing is consumed). Selector filter
  ``apache.org:selector-filter:string`` (any filter key) — see ``selector.py`` for the
  grammar; a bad one is refused (attach, then detach with ``amqp:invalid-field``). The
  reply's source echoes only the filters in force.
* Dynamic source or target: a temporary queue ``amqpcli.tmp.N`` (address in the attach
  reply), deleted when the link goes.
* Durable subscription: a topic receiver whose source has durability other than none and
  expiry-policy never, keyed by (container-id, link name); a detach (closed=false) keeps it,
  re-attaching resumes it, a detach with closed=true deletes it. Unsettled deliveries are
  released at detach and sent again (no unsettled-map resumption).
* Null target on a sender link: anonymous relay by the message's ``to`` (the broker offers
  ``ANONYMOUS-RELAY``).
* Outcomes from receivers: accepted removes, released returns, rejected drops (no
  dead-letter queue), modified returns it (delivery-failed adds one to the header's
  delivery-count, undeliverable-here keeps it from that link, message-annotations are
  merged). Settled without an outcome counts as accepted. Closing a link releases what it
  held. The bare message is forwarded byte for byte; only the header and message
  annotations are re-encoded when they change.
* Settle modes: the client's requested snd/rcv-settle-mode are honoured (presettled
  sends to receivers are removed when sent; rcv-settle-mode second waits for the sender
  to settle first).
* Transactions: a coordinator target; declare -> declared{txn-id}; transfers carrying
  transactional-state are held until discharge (commit stores them, rollback drops them);
  transactional outcomes from receivers keep the message acquired and apply on commit,
  release on rollback. Unknown txn-id -> rejected ``amqp:transaction:unknown-id``. Open
  transactions roll back when their coordinator link goes. ``discharge_delay=S`` acts on
  (and answers) each discharge S seconds after it comes.
* Methods: ``url``, ``port``, ``put(address, *messages_or_bytes)``, ``queue_bodies(name)``,
  ``queue_names()``, ``refused()`` (link name, error) pairs, ``transactions()`` counts,
  ``discharges()`` (requests received);
  ``handler.registry`` (``queues.Registry``) through ``call``.

DirectReceiver (``direct.py``)
------------------------------
Takes sender links on any address and records each message as ``Received``: ``raw`` (the
transfer's bytes exactly), ``bare`` (bare message bytes), ``message`` (proton ``Message``),
``presettled``, ``state`` (the state the transfer carried, e.g. transactional), ``outcome``.
Options: ``outcome=Accept()`` or any of ``Reject(condition, description)``, ``Release()``,
``Modify(failed, undeliverable, annotations)``, ``Hold()`` (decide later with
``decide(index, outcome)``), or a function ``Received -> outcome``; ``credit=10`` granted on
attach; ``replenish=True`` (one more per message; False: the test calls ``grant(n)``);
``rcv_settle_mode`` (``Link.RCV_FIRST``/``RCV_SECOND``, default: what the client asks).
Methods: ``messages()``, ``wait_for_messages(n)``, ``links()`` (``LinkInfo``), ``grant(n)``.

DirectSender (``direct.py``)
----------------------------
``DirectSender(messages, presettle=None, answer_drain=True)``: sends the list (proton
``Message`` or encoded bytes) in order on every receiving link that attaches, as credit
allows, answering drain (``answer_drain=False``: never).
Records each disposition it gets as ``SentOutcome(index, link, tag, state)`` where
``state`` is an ``outcomes.Observed`` (kind accepted/rejected/released/modified/…,
settled, condition, failed, undeliverable, annotations). Methods: ``outcomes()``,
``wait_for_outcomes(n)``, ``links()``.

Pitfall with proton's client in tests: binary values (a ``Data`` body, a binary
message-id, txn-ids) come back as ``memoryview``s into the decoded message's memory. Keep
the ``Message`` in a variable, or copy with ``bytes(...)``, before the message goes away:
``receiver.receive().body == b"..."`` reads freed memory. The peers copy or keep theirs.

Modules: ``net`` (free ports, the thread runner), ``queues`` (storage), ``selector``,
``transactions``, ``sections`` (split/rewrite encoded messages), ``outcomes``, ``tls``.
"""

from tests.peers.broker import Broker
from tests.peers.direct import DirectReceiver, DirectSender, LinkInfo, Received, SentOutcome
from tests.peers.net import ConnectionInfo, PeerThread, free_port
from tests.peers.outcomes import Accept, Hold, Modify, Observed, Reject, Release

__all__ = [
    "Accept",
    "Broker",
    "ConnectionInfo",
    "DirectReceiver",
    "DirectSender",
    "Hold",
    "LinkInfo",
    "Modify",
    "Observed",
    "PeerThread",
    "Received",
    "Reject",
    "Release",
    "SentOutcome",
    "free_port",
]
