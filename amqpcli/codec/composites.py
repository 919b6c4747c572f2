"""AMQP 1.0 composite types and restricted types, from the spec XML.

Written by scripts/gen_spec.py from ../shared/specs/amqp-1.0/*.xml; change the script,
not this file. tests/codec/test_spec_tables.py holds these tables against the XML.
"""

# Slots stay in spec order, the order of the encoded list.
# ruff: noqa: RUF023
from __future__ import annotations

from typing import Any

from .types import (
    Composite,
    Field,
    Symbol,
    UByte,
    UInt,
    UShort,
)

PRIMITIVES: tuple[str, ...] = (
    "null",
    "boolean",
    "ubyte",
    "ushort",
    "uint",
    "ulong",
    "byte",
    "short",
    "int",
    "long",
    "float",
    "double",
    "decimal32",
    "decimal64",
    "decimal128",
    "char",
    "timestamp",
    "uuid",
    "binary",
    "string",
    "symbol",
    "list",
    "map",
    "array",
)

# Restricted types without a descriptor: name -> the type they restrict.
RESTRICTED: dict[str, str] = {
    "role": "boolean",
    "sender-settle-mode": "ubyte",
    "receiver-settle-mode": "ubyte",
    "handle": "uint",
    "seconds": "uint",
    "milliseconds": "uint",
    "delivery-tag": "binary",
    "delivery-number": "sequence-no",
    "transfer-number": "sequence-no",
    "sequence-no": "uint",
    "message-format": "uint",
    "ietf-language-tag": "symbol",
    "fields": "map",
    "amqp-error": "symbol",
    "connection-error": "symbol",
    "session-error": "symbol",
    "link-error": "symbol",
    "annotations": "map",
    "message-id-ulong": "ulong",
    "message-id-uuid": "uuid",
    "message-id-binary": "binary",
    "message-id-string": "string",
    "address-string": "string",
    "terminus-durability": "uint",
    "terminus-expiry-policy": "symbol",
    "std-dist-mode": "symbol",
    "filter-set": "map",
    "node-properties": "fields",
    "sasl-code": "ubyte",
    "transaction-id": "binary",
    "txn-capability": "symbol",
    "transaction-error": "symbol",
}

# Named values of restricted types: type -> {choice name: value}.
CHOICES: dict[str, dict[str, Any]] = {
    "role": {
        "sender": False,
        "receiver": True,
    },
    "sender-settle-mode": {
        "unsettled": UByte(0),
        "settled": UByte(1),
        "mixed": UByte(2),
    },
    "receiver-settle-mode": {
        "first": UByte(0),
        "second": UByte(1),
    },
    "amqp-error": {
        "internal-error": Symbol("amqp:internal-error"),
        "not-found": Symbol("amqp:not-found"),
        "unauthorized-access": Symbol("amqp:unauthorized-access"),
        "decode-error": Symbol("amqp:decode-error"),
        "resource-limit-exceeded": Symbol("amqp:resource-limit-exceeded"),
        "not-allowed": Symbol("amqp:not-allowed"),
        "invalid-field": Symbol("amqp:invalid-field"),
        "not-implemented": Symbol("amqp:not-implemented"),
        "resource-locked": Symbol("amqp:resource-locked"),
        "precondition-failed": Symbol("amqp:precondition-failed"),
        "resource-deleted": Symbol("amqp:resource-deleted"),
        "illegal-state": Symbol("amqp:illegal-state"),
        "frame-size-too-small": Symbol("amqp:frame-size-too-small"),
    },
    "connection-error": {
        "connection-forced": Symbol("amqp:connection:forced"),
        "framing-error": Symbol("amqp:connection:framing-error"),
        "redirect": Symbol("amqp:connection:redirect"),
    },
    "session-error": {
        "window-violation": Symbol("amqp:session:window-violation"),
        "errant-link": Symbol("amqp:session:errant-link"),
        "handle-in-use": Symbol("amqp:session:handle-in-use"),
        "unattached-handle": Symbol("amqp:session:unattached-handle"),
    },
    "link-error": {
        "detach-forced": Symbol("amqp:link:detach-forced"),
        "transfer-limit-exceeded": Symbol("amqp:link:transfer-limit-exceeded"),
        "message-size-exceeded": Symbol("amqp:link:message-size-exceeded"),
        "redirect": Symbol("amqp:link:redirect"),
        "stolen": Symbol("amqp:link:stolen"),
    },
    "terminus-durability": {
        "none": UInt(0),
        "configuration": UInt(1),
        "unsettled-state": UInt(2),
    },
    "terminus-expiry-policy": {
        "link-detach": Symbol("link-detach"),
        "session-end": Symbol("session-end"),
        "connection-close": Symbol("connection-close"),
        "never": Symbol("never"),
    },
    "std-dist-mode": {
        "move": Symbol("move"),
        "copy": Symbol("copy"),
    },
    "sasl-code": {
        "ok": UByte(0),
        "auth": UByte(1),
        "sys": UByte(2),
        "sys-perm": UByte(3),
        "sys-temp": UByte(4),
    },
    "txn-capability": {
        "local-transactions": Symbol("amqp:local-transactions"),
        "distributed-transactions": Symbol("amqp:distributed-transactions"),
        "promotable-transactions": Symbol("amqp:promotable-transactions"),
        "multi-txns-per-ssn": Symbol("amqp:multi-txns-per-ssn"),
        "multi-ssns-per-txn": Symbol("amqp:multi-ssns-per-txn"),
    },
    "transaction-error": {
        "unknown-id": Symbol("amqp:transaction:unknown-id"),
        "transaction-rollback": Symbol("amqp:transaction:rollback"),
        "transaction-timeout": Symbol("amqp:transaction:timeout"),
    },
}


class Open(Composite):
    __slots__ = (
        "container_id",
        "hostname",
        "max_frame_size",
        "channel_max",
        "idle_time_out",
        "outgoing_locales",
        "incoming_locales",
        "offered_capabilities",
        "desired_capabilities",
        "properties",
    )
    NAME = "open"
    CODE = 0x10
    SYMBOL = "amqp:open:list"
    SOURCE = "list"
    PROVIDES = ("frame",)
    FIELDS = (
        Field("container-id", "string", True, False, None),
        Field("hostname", "string", False, False, None),
        Field("max-frame-size", "uint", False, False, UInt(4294967295)),
        Field("channel-max", "ushort", False, False, UShort(65535)),
        Field("idle-time-out", "milliseconds", False, False, None),
        Field("outgoing-locales", "ietf-language-tag", False, True, None),
        Field("incoming-locales", "ietf-language-tag", False, True, None),
        Field("offered-capabilities", "symbol", False, True, None),
        Field("desired-capabilities", "symbol", False, True, None),
        Field("properties", "fields", False, False, None),
    )

    def __init__(
        self,
        container_id: Any = None,
        hostname: Any = None,
        max_frame_size: Any = None,
        channel_max: Any = None,
        idle_time_out: Any = None,
        outgoing_locales: Any = None,
        incoming_locales: Any = None,
        offered_capabilities: Any = None,
        desired_capabilities: Any = None,
        properties: Any = None,
    ) -> None:
        self._raw = None
        self.container_id = container_id
        self.hostname = hostname
        self.max_frame_size = max_frame_size
        self.channel_max = channel_max
        self.idle_time_out = idle_time_out
        self.outgoing_locales = outgoing_locales
        self.incoming_locales = incoming_locales
        self.offered_capabilities = offered_capabilities
        self.desired_capabilities = desired_capabilities
        self.properties = properties

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 10 items."""
        (
            o.container_id,
            o.hostname,
            o.max_frame_size,
            o.channel_max,
            o.idle_time_out,
            o.outgoing_locales,
            o.incoming_locales,
            o.offered_capabilities,
            o.desired_capabilities,
            o.properties,
        ) = v


class Begin(Composite):
    __slots__ = (
        "remote_channel",
        "next_outgoing_id",
        "incoming_window",
        "outgoing_window",
        "handle_max",
        "offered_capabilities",
        "desired_capabilities",
        "properties",
    )
    NAME = "begin"
    CODE = 0x11
    SYMBOL = "amqp:begin:list"
    SOURCE = "list"
    PROVIDES = ("frame",)
    FIELDS = (
        Field("remote-channel", "ushort", False, False, None),
        Field("next-outgoing-id", "transfer-number", True, False, None),
        Field("incoming-window", "uint", True, False, None),
        Field("outgoing-window", "uint", True, False, None),
        Field("handle-max", "handle", False, False, UInt(4294967295)),
        Field("offered-capabilities", "symbol", False, True, None),
        Field("desired-capabilities", "symbol", False, True, None),
        Field("properties", "fields", False, False, None),
    )

    def __init__(
        self,
        remote_channel: Any = None,
        next_outgoing_id: Any = None,
        incoming_window: Any = None,
        outgoing_window: Any = None,
        handle_max: Any = None,
        offered_capabilities: Any = None,
        desired_capabilities: Any = None,
        properties: Any = None,
    ) -> None:
        self._raw = None
        self.remote_channel = remote_channel
        self.next_outgoing_id = next_outgoing_id
        self.incoming_window = incoming_window
        self.outgoing_window = outgoing_window
        self.handle_max = handle_max
        self.offered_capabilities = offered_capabilities
        self.desired_capabilities = desired_capabilities
        self.properties = properties

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 8 items."""
        (
            o.remote_channel,
            o.next_outgoing_id,
            o.incoming_window,
            o.outgoing_window,
            o.handle_max,
            o.offered_capabilities,
            o.desired_capabilities,
            o.properties,
        ) = v


class Attach(Composite):
    __slots__ = (
        "name",
        "handle",
        "role",
        "snd_settle_mode",
        "rcv_settle_mode",
        "source",
        "target",
        "unsettled",
        "incomplete_unsettled",
        "initial_delivery_count",
        "max_message_size",
        "offered_capabilities",
        "desired_capabilities",
        "properties",
    )
    NAME = "attach"
    CODE = 0x12
    SYMBOL = "amqp:attach:list"
    SOURCE = "list"
    PROVIDES = ("frame",)
    FIELDS = (
        Field("name", "string", True, False, None),
        Field("handle", "handle", True, False, None),
        Field("role", "role", True, False, None),
        Field("snd-settle-mode", "sender-settle-mode", False, False, UByte(2)),
        Field("rcv-settle-mode", "receiver-settle-mode", False, False, UByte(0)),
        Field("source", "*", False, False, None),
        Field("target", "*", False, False, None),
        Field("unsettled", "map", False, False, None),
        Field("incomplete-unsettled", "boolean", False, False, False),
        Field("initial-delivery-count", "sequence-no", False, False, None),
        Field("max-message-size", "ulong", False, False, None),
        Field("offered-capabilities", "symbol", False, True, None),
        Field("desired-capabilities", "symbol", False, True, None),
        Field("properties", "fields", False, False, None),
    )

    def __init__(
        self,
        name: Any = None,
        handle: Any = None,
        role: Any = None,
        snd_settle_mode: Any = None,
        rcv_settle_mode: Any = None,
        source: Any = None,
        target: Any = None,
        unsettled: Any = None,
        incomplete_unsettled: Any = None,
        initial_delivery_count: Any = None,
        max_message_size: Any = None,
        offered_capabilities: Any = None,
        desired_capabilities: Any = None,
        properties: Any = None,
    ) -> None:
        self._raw = None
        self.name = name
        self.handle = handle
        self.role = role
        self.snd_settle_mode = snd_settle_mode
        self.rcv_settle_mode = rcv_settle_mode
        self.source = source
        self.target = target
        self.unsettled = unsettled
        self.incomplete_unsettled = incomplete_unsettled
        self.initial_delivery_count = initial_delivery_count
        self.max_message_size = max_message_size
        self.offered_capabilities = offered_capabilities
        self.desired_capabilities = desired_capabilities
        self.properties = properties

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 14 items."""
        (
            o.name,
            o.handle,
            o.role,
            o.snd_settle_mode,
            o.rcv_settle_mode,
            o.source,
            o.target,
            o.unsettled,
            o.incomplete_unsettled,
            o.initial_delivery_count,
            o.max_message_size,
            o.offered_capabilities,
            o.desired_capabilities,
            o.properties,
        ) = v


class Flow(Composite):
    __slots__ = (
        "next_incoming_id",
        "incoming_window",
        "next_outgoing_id",
        "outgoing_window",
        "handle",
        "delivery_count",
        "link_credit",
        "available",
        "drain",
        "echo",
        "properties",
    )
    NAME = "flow"
    CODE = 0x13
    SYMBOL = "amqp:flow:list"
    SOURCE = "list"
    PROVIDES = ("frame",)
    FIELDS = (
        Field("next-incoming-id", "transfer-number", False, False, None),
        Field("incoming-window", "uint", True, False, None),
        Field("next-outgoing-id", "transfer-number", True, False, None),
        Field("outgoing-window", "uint", True, False, None),
        Field("handle", "handle", False, False, None),
        Field("delivery-count", "sequence-no", False, False, None),
        Field("link-credit", "uint", False, False, None),
        Field("available", "uint", False, False, None),
        Field("drain", "boolean", False, False, False),
        Field("echo", "boolean", False, False, False),
        Field("properties", "fields", False, False, None),
    )

    def __init__(
        self,
        next_incoming_id: Any = None,
        incoming_window: Any = None,
        next_outgoing_id: Any = None,
        outgoing_window: Any = None,
        handle: Any = None,
        delivery_count: Any = None,
        link_credit: Any = None,
        available: Any = None,
        drain: Any = None,
        echo: Any = None,
        properties: Any = None,
    ) -> None:
        self._raw = None
        self.next_incoming_id = next_incoming_id
        self.incoming_window = incoming_window
        self.next_outgoing_id = next_outgoing_id
        self.outgoing_window = outgoing_window
        self.handle = handle
        self.delivery_count = delivery_count
        self.link_credit = link_credit
        self.available = available
        self.drain = drain
        self.echo = echo
        self.properties = properties

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 11 items."""
        (
            o.next_incoming_id,
            o.incoming_window,
            o.next_outgoing_id,
            o.outgoing_window,
            o.handle,
            o.delivery_count,
            o.link_credit,
            o.available,
            o.drain,
            o.echo,
            o.properties,
        ) = v


class Transfer(Composite):
    __slots__ = (
        "handle",
        "delivery_id",
        "delivery_tag",
        "message_format",
        "settled",
        "more",
        "rcv_settle_mode",
        "state",
        "resume",
        "aborted",
        "batchable",
    )
    NAME = "transfer"
    CODE = 0x14
    SYMBOL = "amqp:transfer:list"
    SOURCE = "list"
    PROVIDES = ("frame",)
    FIELDS = (
        Field("handle", "handle", True, False, None),
        Field("delivery-id", "delivery-number", False, False, None),
        Field("delivery-tag", "delivery-tag", False, False, None),
        Field("message-format", "message-format", False, False, None),
        Field("settled", "boolean", False, False, None),
        Field("more", "boolean", False, False, False),
        Field("rcv-settle-mode", "receiver-settle-mode", False, False, None),
        Field("state", "*", False, False, None),
        Field("resume", "boolean", False, False, False),
        Field("aborted", "boolean", False, False, False),
        Field("batchable", "boolean", False, False, False),
    )

    def __init__(
        self,
        handle: Any = None,
        delivery_id: Any = None,
        delivery_tag: Any = None,
        message_format: Any = None,
        settled: Any = None,
        more: Any = None,
        rcv_settle_mode: Any = None,
        state: Any = None,
        resume: Any = None,
        aborted: Any = None,
        batchable: Any = None,
    ) -> None:
        self._raw = None
        self.handle = handle
        self.delivery_id = delivery_id
        self.delivery_tag = delivery_tag
        self.message_format = message_format
        self.settled = settled
        self.more = more
        self.rcv_settle_mode = rcv_settle_mode
        self.state = state
        self.resume = resume
        self.aborted = aborted
        self.batchable = batchable

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 11 items."""
        (
            o.handle,
            o.delivery_id,
            o.delivery_tag,
            o.message_format,
            o.settled,
            o.more,
            o.rcv_settle_mode,
            o.state,
            o.resume,
            o.aborted,
            o.batchable,
        ) = v


class Disposition(Composite):
    __slots__ = ("role", "first", "last", "settled", "state", "batchable")
    NAME = "disposition"
    CODE = 0x15
    SYMBOL = "amqp:disposition:list"
    SOURCE = "list"
    PROVIDES = ("frame",)
    FIELDS = (
        Field("role", "role", True, False, None),
        Field("first", "delivery-number", True, False, None),
        Field("last", "delivery-number", False, False, None),
        Field("settled", "boolean", False, False, False),
        Field("state", "*", False, False, None),
        Field("batchable", "boolean", False, False, False),
    )

    def __init__(
        self,
        role: Any = None,
        first: Any = None,
        last: Any = None,
        settled: Any = None,
        state: Any = None,
        batchable: Any = None,
    ) -> None:
        self._raw = None
        self.role = role
        self.first = first
        self.last = last
        self.settled = settled
        self.state = state
        self.batchable = batchable

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 6 items."""
        (
            o.role,
            o.first,
            o.last,
            o.settled,
            o.state,
            o.batchable,
        ) = v


class Detach(Composite):
    __slots__ = ("handle", "closed", "error")
    NAME = "detach"
    CODE = 0x16
    SYMBOL = "amqp:detach:list"
    SOURCE = "list"
    PROVIDES = ("frame",)
    FIELDS = (
        Field("handle", "handle", True, False, None),
        Field("closed", "boolean", False, False, False),
        Field("error", "error", False, False, None),
    )

    def __init__(self, handle: Any = None, closed: Any = None, error: Any = None) -> None:
        self._raw = None
        self.handle = handle
        self.closed = closed
        self.error = error

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 3 items."""
        (
            o.handle,
            o.closed,
            o.error,
        ) = v


class End(Composite):
    __slots__ = ("error",)
    NAME = "end"
    CODE = 0x17
    SYMBOL = "amqp:end:list"
    SOURCE = "list"
    PROVIDES = ("frame",)
    FIELDS = (Field("error", "error", False, False, None),)

    def __init__(self, error: Any = None) -> None:
        self._raw = None
        self.error = error

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 1 items."""
        (o.error,) = v


class Close(Composite):
    __slots__ = ("error",)
    NAME = "close"
    CODE = 0x18
    SYMBOL = "amqp:close:list"
    SOURCE = "list"
    PROVIDES = ("frame",)
    FIELDS = (Field("error", "error", False, False, None),)

    def __init__(self, error: Any = None) -> None:
        self._raw = None
        self.error = error

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 1 items."""
        (o.error,) = v


class Error(Composite):
    __slots__ = ("condition", "description", "info")
    NAME = "error"
    CODE = 0x1D
    SYMBOL = "amqp:error:list"
    SOURCE = "list"
    PROVIDES = ()
    FIELDS = (
        Field("condition", "symbol", True, False, None),
        Field("description", "string", False, False, None),
        Field("info", "fields", False, False, None),
    )

    def __init__(self, condition: Any = None, description: Any = None, info: Any = None) -> None:
        self._raw = None
        self.condition = condition
        self.description = description
        self.info = info

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 3 items."""
        (
            o.condition,
            o.description,
            o.info,
        ) = v


class Header(Composite):
    __slots__ = ("durable", "priority", "ttl", "first_acquirer", "delivery_count")
    NAME = "header"
    CODE = 0x70
    SYMBOL = "amqp:header:list"
    SOURCE = "list"
    PROVIDES = ("section",)
    FIELDS = (
        Field("durable", "boolean", False, False, None),
        Field("priority", "ubyte", False, False, None),
        Field("ttl", "milliseconds", False, False, None),
        Field("first-acquirer", "boolean", False, False, None),
        Field("delivery-count", "uint", False, False, None),
    )

    def __init__(
        self,
        durable: Any = None,
        priority: Any = None,
        ttl: Any = None,
        first_acquirer: Any = None,
        delivery_count: Any = None,
    ) -> None:
        self._raw = None
        self.durable = durable
        self.priority = priority
        self.ttl = ttl
        self.first_acquirer = first_acquirer
        self.delivery_count = delivery_count

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 5 items."""
        (
            o.durable,
            o.priority,
            o.ttl,
            o.first_acquirer,
            o.delivery_count,
        ) = v


class DeliveryAnnotations(Composite):
    __slots__ = ("value",)
    NAME = "delivery-annotations"
    CODE = 0x71
    SYMBOL = "amqp:delivery-annotations:map"
    SOURCE = "map"
    PROVIDES = ("section",)
    HAS_VALUE = True
    FIELDS = ()

    def __init__(self, value: Any = None) -> None:
        self._raw = None
        self.value = value


class MessageAnnotations(Composite):
    __slots__ = ("value",)
    NAME = "message-annotations"
    CODE = 0x72
    SYMBOL = "amqp:message-annotations:map"
    SOURCE = "map"
    PROVIDES = ("section",)
    HAS_VALUE = True
    FIELDS = ()

    def __init__(self, value: Any = None) -> None:
        self._raw = None
        self.value = value


class Properties(Composite):
    __slots__ = (
        "message_id",
        "user_id",
        "to",
        "subject",
        "reply_to",
        "correlation_id",
        "content_type",
        "content_encoding",
        "absolute_expiry_time",
        "creation_time",
        "group_id",
        "group_sequence",
        "reply_to_group_id",
    )
    NAME = "properties"
    CODE = 0x73
    SYMBOL = "amqp:properties:list"
    SOURCE = "list"
    PROVIDES = ("section",)
    FIELDS = (
        Field("message-id", "*", False, False, None),
        Field("user-id", "binary", False, False, None),
        Field("to", "*", False, False, None),
        Field("subject", "string", False, False, None),
        Field("reply-to", "*", False, False, None),
        Field("correlation-id", "*", False, False, None),
        Field("content-type", "symbol", False, False, None),
        Field("content-encoding", "symbol", False, False, None),
        Field("absolute-expiry-time", "timestamp", False, False, None),
        Field("creation-time", "timestamp", False, False, None),
        Field("group-id", "string", False, False, None),
        Field("group-sequence", "sequence-no", False, False, None),
        Field("reply-to-group-id", "string", False, False, None),
    )

    def __init__(
        self,
        message_id: Any = None,
        user_id: Any = None,
        to: Any = None,
        subject: Any = None,
        reply_to: Any = None,
        correlation_id: Any = None,
        content_type: Any = None,
        content_encoding: Any = None,
        absolute_expiry_time: Any = None,
        creation_time: Any = None,
        group_id: Any = None,
        group_sequence: Any = None,
        reply_to_group_id: Any = None,
    ) -> None:
        self._raw = None
        self.message_id = message_id
        self.user_id = user_id
        self.to = to
        self.subject = subject
        self.reply_to = reply_to
        self.correlation_id = correlation_id
        self.content_type = content_type
        self.content_encoding = content_encoding
        self.absolute_expiry_time = absolute_expiry_time
        self.creation_time = creation_time
        self.group_id = group_id
        self.group_sequence = group_sequence
        self.reply_to_group_id = reply_to_group_id

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 13 items."""
        (
            o.message_id,
            o.user_id,
            o.to,
            o.subject,
            o.reply_to,
            o.correlation_id,
            o.content_type,
            o.content_encoding,
            o.absolute_expiry_time,
            o.creation_time,
            o.group_id,
            o.group_sequence,
            o.reply_to_group_id,
        ) = v


class ApplicationProperties(Composite):
    __slots__ = ("value",)
    NAME = "application-properties"
    CODE = 0x74
    SYMBOL = "amqp:application-properties:map"
    SOURCE = "map"
    PROVIDES = ("section",)
    HAS_VALUE = True
    FIELDS = ()

    def __init__(self, value: Any = None) -> None:
        self._raw = None
        self.value = value


class Data(Composite):
    __slots__ = ("value",)
    NAME = "data"
    CODE = 0x75
    SYMBOL = "amqp:data:binary"
    SOURCE = "binary"
    PROVIDES = ("section",)
    HAS_VALUE = True
    FIELDS = ()

    def __init__(self, value: Any = None) -> None:
        self._raw = None
        self.value = value


class AmqpSequence(Composite):
    __slots__ = ("value",)
    NAME = "amqp-sequence"
    CODE = 0x76
    SYMBOL = "amqp:amqp-sequence:list"
    SOURCE = "list"
    PROVIDES = ("section",)
    HAS_VALUE = True
    FIELDS = ()

    def __init__(self, value: Any = None) -> None:
        self._raw = None
        self.value = value


class AmqpValue(Composite):
    __slots__ = ("value",)
    NAME = "amqp-value"
    CODE = 0x77
    SYMBOL = "amqp:amqp-value:*"
    SOURCE = "*"
    PROVIDES = ("section",)
    HAS_VALUE = True
    FIELDS = ()

    def __init__(self, value: Any = None) -> None:
        self._raw = None
        self.value = value


class Footer(Composite):
    __slots__ = ("value",)
    NAME = "footer"
    CODE = 0x78
    SYMBOL = "amqp:footer:map"
    SOURCE = "map"
    PROVIDES = ("section",)
    HAS_VALUE = True
    FIELDS = ()

    def __init__(self, value: Any = None) -> None:
        self._raw = None
        self.value = value


class Received(Composite):
    __slots__ = ("section_number", "section_offset")
    NAME = "received"
    CODE = 0x23
    SYMBOL = "amqp:received:list"
    SOURCE = "list"
    PROVIDES = ("delivery-state",)
    FIELDS = (
        Field("section-number", "uint", True, False, None),
        Field("section-offset", "ulong", True, False, None),
    )

    def __init__(self, section_number: Any = None, section_offset: Any = None) -> None:
        self._raw = None
        self.section_number = section_number
        self.section_offset = section_offset

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 2 items."""
        (
            o.section_number,
            o.section_offset,
        ) = v


class Accepted(Composite):
    __slots__ = ()
    NAME = "accepted"
    CODE = 0x24
    SYMBOL = "amqp:accepted:list"
    SOURCE = "list"
    PROVIDES = ("delivery-state", "outcome")
    FIELDS = ()

    def __init__(self) -> None:
        self._raw = None


class Rejected(Composite):
    __slots__ = ("error",)
    NAME = "rejected"
    CODE = 0x25
    SYMBOL = "amqp:rejected:list"
    SOURCE = "list"
    PROVIDES = ("delivery-state", "outcome")
    FIELDS = (Field("error", "error", False, False, None),)

    def __init__(self, error: Any = None) -> None:
        self._raw = None
        self.error = error

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 1 items."""
        (o.error,) = v


class Released(Composite):
    __slots__ = ()
    NAME = "released"
    CODE = 0x26
    SYMBOL = "amqp:released:list"
    SOURCE = "list"
    PROVIDES = ("delivery-state", "outcome")
    FIELDS = ()

    def __init__(self) -> None:
        self._raw = None


class Modified(Composite):
    __slots__ = ("delivery_failed", "undeliverable_here", "message_annotations")
    NAME = "modified"
    CODE = 0x27
    SYMBOL = "amqp:modified:list"
    SOURCE = "list"
    PROVIDES = ("delivery-state", "outcome")
    FIELDS = (
        Field("delivery-failed", "boolean", False, False, None),
        Field("undeliverable-here", "boolean", False, False, None),
        Field("message-annotations", "fields", False, False, None),
    )

    def __init__(
        self,
        delivery_failed: Any = None,
        undeliverable_here: Any = None,
        message_annotations: Any = None,
    ) -> None:
        self._raw = None
        self.delivery_failed = delivery_failed
        self.undeliverable_here = undeliverable_here
        self.message_annotations = message_annotations

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 3 items."""
        (
            o.delivery_failed,
            o.undeliverable_here,
            o.message_annotations,
        ) = v


class Source(Composite):
    __slots__ = (
        "address",
        "durable",
        "expiry_policy",
        "timeout",
        "dynamic",
        "dynamic_node_properties",
        "distribution_mode",
        "filter",
        "default_outcome",
        "outcomes",
        "capabilities",
    )
    NAME = "source"
    CODE = 0x28
    SYMBOL = "amqp:source:list"
    SOURCE = "list"
    PROVIDES = ("source",)
    FIELDS = (
        Field("address", "*", False, False, None),
        Field("durable", "terminus-durability", False, False, UInt(0)),
        Field("expiry-policy", "terminus-expiry-policy", False, False, Symbol("session-end")),
        Field("timeout", "seconds", False, False, UInt(0)),
        Field("dynamic", "boolean", False, False, False),
        Field("dynamic-node-properties", "node-properties", False, False, None),
        Field("distribution-mode", "symbol", False, False, None),
        Field("filter", "filter-set", False, False, None),
        Field("default-outcome", "*", False, False, None),
        Field("outcomes", "symbol", False, True, None),
        Field("capabilities", "symbol", False, True, None),
    )

    def __init__(
        self,
        address: Any = None,
        durable: Any = None,
        expiry_policy: Any = None,
        timeout: Any = None,
        dynamic: Any = None,
        dynamic_node_properties: Any = None,
        distribution_mode: Any = None,
        filter: Any = None,
        default_outcome: Any = None,
        outcomes: Any = None,
        capabilities: Any = None,
    ) -> None:
        self._raw = None
        self.address = address
        self.durable = durable
        self.expiry_policy = expiry_policy
        self.timeout = timeout
        self.dynamic = dynamic
        self.dynamic_node_properties = dynamic_node_properties
        self.distribution_mode = distribution_mode
        self.filter = filter
        self.default_outcome = default_outcome
        self.outcomes = outcomes
        self.capabilities = capabilities

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 11 items."""
        (
            o.address,
            o.durable,
            o.expiry_policy,
            o.timeout,
            o.dynamic,
            o.dynamic_node_properties,
            o.distribution_mode,
            o.filter,
            o.default_outcome,
            o.outcomes,
            o.capabilities,
        ) = v


class Target(Composite):
    __slots__ = (
        "address",
        "durable",
        "expiry_policy",
        "timeout",
        "dynamic",
        "dynamic_node_properties",
        "capabilities",
    )
    NAME = "target"
    CODE = 0x29
    SYMBOL = "amqp:target:list"
    SOURCE = "list"
    PROVIDES = ("target",)
    FIELDS = (
        Field("address", "*", False, False, None),
        Field("durable", "terminus-durability", False, False, UInt(0)),
        Field("expiry-policy", "terminus-expiry-policy", False, False, Symbol("session-end")),
        Field("timeout", "seconds", False, False, UInt(0)),
        Field("dynamic", "boolean", False, False, False),
        Field("dynamic-node-properties", "node-properties", False, False, None),
        Field("capabilities", "symbol", False, True, None),
    )

    def __init__(
        self,
        address: Any = None,
        durable: Any = None,
        expiry_policy: Any = None,
        timeout: Any = None,
        dynamic: Any = None,
        dynamic_node_properties: Any = None,
        capabilities: Any = None,
    ) -> None:
        self._raw = None
        self.address = address
        self.durable = durable
        self.expiry_policy = expiry_policy
        self.timeout = timeout
        self.dynamic = dynamic
        self.dynamic_node_properties = dynamic_node_properties
        self.capabilities = capabilities

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 7 items."""
        (
            o.address,
            o.durable,
            o.expiry_policy,
            o.timeout,
            o.dynamic,
            o.dynamic_node_properties,
            o.capabilities,
        ) = v


class DeleteOnClose(Composite):
    __slots__ = ()
    NAME = "delete-on-close"
    CODE = 0x2B
    SYMBOL = "amqp:delete-on-close:list"
    SOURCE = "list"
    PROVIDES = ("lifetime-policy",)
    FIELDS = ()

    def __init__(self) -> None:
        self._raw = None


class DeleteOnNoLinks(Composite):
    __slots__ = ()
    NAME = "delete-on-no-links"
    CODE = 0x2C
    SYMBOL = "amqp:delete-on-no-links:list"
    SOURCE = "list"
    PROVIDES = ("lifetime-policy",)
    FIELDS = ()

    def __init__(self) -> None:
        self._raw = None


class DeleteOnNoMessages(Composite):
    __slots__ = ()
    NAME = "delete-on-no-messages"
    CODE = 0x2D
    SYMBOL = "amqp:delete-on-no-messages:list"
    SOURCE = "list"
    PROVIDES = ("lifetime-policy",)
    FIELDS = ()

    def __init__(self) -> None:
        self._raw = None


class DeleteOnNoLinksOrMessages(Composite):
    __slots__ = ()
    NAME = "delete-on-no-links-or-messages"
    CODE = 0x2E
    SYMBOL = "amqp:delete-on-no-links-or-messages:list"
    SOURCE = "list"
    PROVIDES = ("lifetime-policy",)
    FIELDS = ()

    def __init__(self) -> None:
        self._raw = None


class SaslMechanisms(Composite):
    __slots__ = ("sasl_server_mechanisms",)
    NAME = "sasl-mechanisms"
    CODE = 0x40
    SYMBOL = "amqp:sasl-mechanisms:list"
    SOURCE = "list"
    PROVIDES = ("sasl-frame",)
    FIELDS = (Field("sasl-server-mechanisms", "symbol", True, True, None),)

    def __init__(self, sasl_server_mechanisms: Any = None) -> None:
        self._raw = None
        self.sasl_server_mechanisms = sasl_server_mechanisms

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 1 items."""
        (o.sasl_server_mechanisms,) = v


class SaslInit(Composite):
    __slots__ = ("mechanism", "initial_response", "hostname")
    NAME = "sasl-init"
    CODE = 0x41
    SYMBOL = "amqp:sasl-init:list"
    SOURCE = "list"
    PROVIDES = ("sasl-frame",)
    FIELDS = (
        Field("mechanism", "symbol", True, False, None),
        Field("initial-response", "binary", False, False, None),
        Field("hostname", "string", False, False, None),
    )

    def __init__(
        self, mechanism: Any = None, initial_response: Any = None, hostname: Any = None
    ) -> None:
        self._raw = None
        self.mechanism = mechanism
        self.initial_response = initial_response
        self.hostname = hostname

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 3 items."""
        (
            o.mechanism,
            o.initial_response,
            o.hostname,
        ) = v


class SaslChallenge(Composite):
    __slots__ = ("challenge",)
    NAME = "sasl-challenge"
    CODE = 0x42
    SYMBOL = "amqp:sasl-challenge:list"
    SOURCE = "list"
    PROVIDES = ("sasl-frame",)
    FIELDS = (Field("challenge", "binary", True, False, None),)

    def __init__(self, challenge: Any = None) -> None:
        self._raw = None
        self.challenge = challenge

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 1 items."""
        (o.challenge,) = v


class SaslResponse(Composite):
    __slots__ = ("response",)
    NAME = "sasl-response"
    CODE = 0x43
    SYMBOL = "amqp:sasl-response:list"
    SOURCE = "list"
    PROVIDES = ("sasl-frame",)
    FIELDS = (Field("response", "binary", True, False, None),)

    def __init__(self, response: Any = None) -> None:
        self._raw = None
        self.response = response

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 1 items."""
        (o.response,) = v


class SaslOutcome(Composite):
    __slots__ = ("code", "additional_data")
    NAME = "sasl-outcome"
    CODE = 0x44
    SYMBOL = "amqp:sasl-outcome:list"
    SOURCE = "list"
    PROVIDES = ("sasl-frame",)
    FIELDS = (
        Field("code", "sasl-code", True, False, None),
        Field("additional-data", "binary", False, False, None),
    )

    def __init__(self, code: Any = None, additional_data: Any = None) -> None:
        self._raw = None
        self.code = code
        self.additional_data = additional_data

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 2 items."""
        (
            o.code,
            o.additional_data,
        ) = v


class Coordinator(Composite):
    __slots__ = ("capabilities",)
    NAME = "coordinator"
    CODE = 0x30
    SYMBOL = "amqp:coordinator:list"
    SOURCE = "list"
    PROVIDES = ("target",)
    FIELDS = (Field("capabilities", "symbol", False, True, None),)

    def __init__(self, capabilities: Any = None) -> None:
        self._raw = None
        self.capabilities = capabilities

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 1 items."""
        (o.capabilities,) = v


class Declare(Composite):
    __slots__ = ("global_id",)
    NAME = "declare"
    CODE = 0x31
    SYMBOL = "amqp:declare:list"
    SOURCE = "list"
    PROVIDES = ()
    FIELDS = (Field("global-id", "*", False, False, None),)

    def __init__(self, global_id: Any = None) -> None:
        self._raw = None
        self.global_id = global_id

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 1 items."""
        (o.global_id,) = v


class Discharge(Composite):
    __slots__ = ("txn_id", "fail")
    NAME = "discharge"
    CODE = 0x32
    SYMBOL = "amqp:discharge:list"
    SOURCE = "list"
    PROVIDES = ()
    FIELDS = (
        Field("txn-id", "*", True, False, None),
        Field("fail", "boolean", False, False, None),
    )

    def __init__(self, txn_id: Any = None, fail: Any = None) -> None:
        self._raw = None
        self.txn_id = txn_id
        self.fail = fail

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 2 items."""
        (
            o.txn_id,
            o.fail,
        ) = v


class Declared(Composite):
    __slots__ = ("txn_id",)
    NAME = "declared"
    CODE = 0x33
    SYMBOL = "amqp:declared:list"
    SOURCE = "list"
    PROVIDES = ("delivery-state", "outcome")
    FIELDS = (Field("txn-id", "*", True, False, None),)

    def __init__(self, txn_id: Any = None) -> None:
        self._raw = None
        self.txn_id = txn_id

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 1 items."""
        (o.txn_id,) = v


class TransactionalState(Composite):
    __slots__ = ("txn_id", "outcome")
    NAME = "transactional-state"
    CODE = 0x34
    SYMBOL = "amqp:transactional-state:list"
    SOURCE = "list"
    PROVIDES = ("delivery-state",)
    FIELDS = (
        Field("txn-id", "*", True, False, None),
        Field("outcome", "*", False, False, None),
    )

    def __init__(self, txn_id: Any = None, outcome: Any = None) -> None:
        self._raw = None
        self.txn_id = txn_id
        self.outcome = outcome

    @staticmethod
    def _fill(o: Any, v: list[Any]) -> None:
        """Set every field from a decoded list of exactly 2 items."""
        (
            o.txn_id,
            o.outcome,
        ) = v


ALL: tuple[type[Composite], ...] = (
    Open,
    Begin,
    Attach,
    Flow,
    Transfer,
    Disposition,
    Detach,
    End,
    Close,
    Error,
    Header,
    DeliveryAnnotations,
    MessageAnnotations,
    Properties,
    ApplicationProperties,
    Data,
    AmqpSequence,
    AmqpValue,
    Footer,
    Received,
    Accepted,
    Rejected,
    Released,
    Modified,
    Source,
    Target,
    DeleteOnClose,
    DeleteOnNoLinks,
    DeleteOnNoMessages,
    DeleteOnNoLinksOrMessages,
    SaslMechanisms,
    SaslInit,
    SaslChallenge,
    SaslResponse,
    SaslOutcome,
    Coordinator,
    Declare,
    Discharge,
    Declared,
    TransactionalState,
)
BY_CODE: dict[int, type[Composite]] = {c.CODE: c for c in ALL}
BY_SYMBOL: dict[str, type[Composite]] = {c.SYMBOL: c for c in ALL}
BY_NAME: dict[str, type[Composite]] = {c.NAME: c for c in ALL}
