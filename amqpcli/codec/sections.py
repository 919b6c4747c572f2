"""The forms a message body takes (Part 3 §3.2.5-3.2.8): data sections, amqp-sequence
sections or one amqp-value, by the short names `amqp send --body-type` uses."""

from __future__ import annotations

BODY_TYPES = ("data", "value", "sequence")
