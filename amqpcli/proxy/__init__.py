"""`amqp proxy`: forward an application's AMQP connections to a broker and watch them.

* `Proxy(listen, upstream_config, on_open=, on_item=, on_close=, on_chunk=, recorder=)`:
  asyncio; `await proxy.start()` → bound (host, port); `await proxy.serve()`;
  `await proxy.close()`. Bytes are forwarded untouched; a copy goes through the codec's
  frame reader into one engine `Observer` per connection (`ProxyConnection.observer`).
  `on_item` gets each frame, and a `ProxyNotice` for a frame a stream's end cut short.
  `proxy.connections` are the open ones: an ended one goes to `on_close`, then is dropped.
* `parse_listen("5673" | "host:5673" | "[::1]:5673")` → (host, port), loopback by default.
* `Recorder(path)`: writes what was forwarded as a pcapng file.
"""

from amqpcli.proxy.record import Recorder
from amqpcli.proxy.server import (
    CLIENT,
    SERVER,
    Proxy,
    ProxyConnection,
    ProxyNotice,
    parse_listen,
)

__all__ = ["CLIENT", "SERVER", "Proxy", "ProxyConnection", "ProxyNotice", "Recorder",
           "parse_listen"]
