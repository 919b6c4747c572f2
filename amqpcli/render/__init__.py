"""How values, frames and messages look: the one place that knows (docs/message-format.md).

Modules, each with one job; import from them directly (nothing is imported here, so a
caller pays only for what it uses):

* `types`      — what things are called: AMQP type names, descriptor names (spec and
                 well-known ones), restricted-type choices, ISO timestamps
* `redact`     — `redact(value, show_secrets)`: SASL passwords and credentials masked; every
                 renderer goes through it
* `text`       — `value_tree`/`Node` (one tree for rich and plain output), `plain_lines`,
                 `rich_tree`, `format_value` (compact one-line values)
* `frameline`  — `frame_line`/`item_line`: one line per frame (time, connection,
                 direction, channel, performative, key fields, body summary)
* `jsonvalues` — `to_json`/`from_json`: the typed, lossless JSON encoding of values
* `message`    — `message_to_json`/`message_from_json`/`message_bytes_from_json`,
                 `message_tree`
* `items`      — decoded items (headers, frames, errors, messages, values) as JSON and
                 trees, and back to bytes
* `hexdump`    — `hex_window`: the bytes around an error offset
"""
