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

_set = object.__setattr__

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
        _set(self, "_raw", None)
        _set(self, "container_id", container_id)
        _set(self, "hostname", hostname)
        _set(self, "max_frame_size", max_frame_size)
        _set(self, "channel_max", channel_max)
        _set(self, "idle_time_out", idle_time_out)
        _set(self, "outgoing_locales", outgoing_locales)
        _set(self, "incoming_locales", incoming_locales)
        _set(self, "offered_capabilities", offered_capabilities)
        _set(self, "desired_capabilities", desired_capabilities)
        _set(self, "properties", properties)


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
        _set(self, "_raw", None)
        _set(self, "remote_channel", remote_channel)
        _set(self, "next_outgoing_id", next_outgoing_id)
        _set(self, "incoming_window", incoming_window)
        _set(self, "outgoing_window", outgoing_window)
        _set(self, "handle_max", handle_max)
        _set(self, "offered_capabilities", offered_capabilities)
        _set(self, "desired_capabilities", desired_capabilities)
        _set(self, "properties", properties)


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
        _set(self, "_raw", None)
        _set(self, "name", name)
        _set(self, "handle", handle)
        _set(self, "role", role)
        _set(self, "snd_settle_mode", snd_settle_mode)
        _set(self, "rcv_settle_mode", rcv_settle_mode)
        _set(self, "source", source)
        _set(self, "target", target)
        _set(self, "unsettled", unsettled)
        _set(self, "incomplete_unsettled", incomplete_unsettled)
        _set(self, "initial_delivery_count", initial_delivery_count)
        _set(self, "max_message_size", max_message_size)
        _set(self, "offered_capabilities", offered_capabilities)
        _set(self, "desired_capabilities", desired_capabilities)
        _set(self, "properties", properties)


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
        _set(self, "_raw", None)
        _set(self, "next_incoming_id", next_incoming_id)
        _set(self, "incoming_window", incoming_window)
        _set(self, "next_outgoing_id", next_outgoing_id)
        _set(self, "outgoing_window", outgoing_window)
        _set(self, "handle", handle)
        _set(self, "delivery_count", delivery_count)
        _set(self, "link_credit", link_credit)
        _set(self, "available", available)
        _set(self, "drain", drain)
        _set(self, "echo", echo)
        _set(self, "properties", properties)


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
        _set(self, "_raw", None)
        _set(self, "handle", handle)
        _set(self, "delivery_id", delivery_id)
        _set(self, "delivery_tag", delivery_tag)
        _set(self, "message_format", message_format)
        _set(self, "settled", settled)
        _set(self, "more", more)
        _set(self, "rcv_settle_mode", rcv_settle_mode)
        _set(self, "state", state)
        _set(self, "resume", resume)
        _set(self, "aborted", aborted)
        _set(self, "batchable", batchable)


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
        _set(self, "_raw", None)
        _set(self, "role", role)
        _set(self, "first", first)
        _set(self, "last", last)
        _set(self, "settled", settled)
        _set(self, "state", state)
        _set(self, "batchable", batchable)


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
        _set(self, "_raw", None)
        _set(self, "handle", handle)
        _set(self, "closed", closed)
        _set(self, "error", error)


class End(Composite):
    __slots__ = ("error",)
    NAME = "end"
    CODE = 0x17
    SYMBOL = "amqp:end:list"
    SOURCE = "list"
    PROVIDES = ("frame",)
    FIELDS = (Field("error", "error", False, False, None),)

    def __init__(self, error: Any = None) -> None:
        _set(self, "_raw", None)
        _set(self, "error", error)


class Close(Composite):
    __slots__ = ("error",)
    NAME = "close"
    CODE = 0x18
    SYMBOL = "amqp:close:list"
    SOURCE = "list"
    PROVIDES = ("frame",)
    FIELDS = (Field("error", "error", False, False, None),)

    def __init__(self, error: Any = None) -> None:
        _set(self, "_raw", None)
        _set(self, "error", error)


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
        _set(self, "_raw", None)
        _set(self, "condition", condition)
        _set(self, "description", description)
        _set(self, "info", info)


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
        _set(self, "_raw", None)
        _set(self, "durable", durable)
        _set(self, "priority", priority)
        _set(self, "ttl", ttl)
        _set(self, "first_acquirer", first_acquirer)
        _set(self, "delivery_count", delivery_count)


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
        _set(self, "_raw", None)
        _set(self, "value", value)


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
        _set(self, "_raw", None)
        _set(self, "value", value)


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
        _set(self, "_raw", None)
        _set(self, "message_id", message_id)
        _set(self, "user_id", user_id)
        _set(self, "to", to)
        _set(self, "subject", subject)
        _set(self, "reply_to", reply_to)
        _set(self, "correlation_id", correlation_id)
        _set(self, "content_type", content_type)
        _set(self, "content_encoding", content_encoding)
        _set(self, "absolute_expiry_time", absolute_expiry_time)
        _set(self, "creation_time", creation_time)
        _set(self, "group_id", group_id)
        _set(self, "group_sequence", group_sequence)
        _set(self, "reply_to_group_id", reply_to_group_id)


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
        _set(self, "_raw", None)
        _set(self, "value", value)


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
        _set(self, "_raw", None)
        _set(self, "value", value)


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
        _set(self, "_raw", None)
        _set(self, "value", value)


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
        _set(self, "_raw", None)
        _set(self, "value", value)


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
        _set(self, "_raw", None)
        _set(self, "value", value)


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
        _set(self, "_raw", None)
        _set(self, "section_number", section_number)
        _set(self, "section_offset", section_offset)


class Accepted(Composite):
    __slots__ = ()
    NAME = "accepted"
    CODE = 0x24
    SYMBOL = "amqp:accepted:list"
    SOURCE = "list"
    PROVIDES = ("delivery-state", "outcome")
    FIELDS = ()

    def __init__(self) -> None:
        _set(self, "_raw", None)


class Rejected(Composite):
    __slots__ = ("error",)
    NAME = "rejected"
    CODE = 0x25
    SYMBOL = "amqp:rejected:list"
    SOURCE = "list"
    PROVIDES = ("delivery-state", "outcome")
    FIELDS = (Field("error", "error", False, False, None),)

    def __init__(self, error: Any = None) -> None:
        _set(self, "_raw", None)
        _set(self, "error", error)


class Released(Composite):
    __slots__ = ()
    NAME = "released"
    CODE = 0x26
    SYMBOL = "amqp:released:list"
    SOURCE = "list"
    PROVIDES = ("delivery-state", "outcome")
    FIELDS = ()

    def __init__(self) -> None:
        _set(self, "_raw", None)


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
        _set(self, "_raw", None)
        _set(self, "delivery_failed", delivery_failed)
        _set(self, "undeliverable_here", undeliverable_here)
        _set(self, "message_annotations", message_annotations)


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
        _set(self, "_raw", None)
        _set(self, "address", address)
        _set(self, "durable", durable)
        _set(self, "expiry_policy", expiry_policy)
        _set(self, "timeout", timeout)
        _set(self, "dynamic", dynamic)
        _set(self, "dynamic_node_properties", dynamic_node_properties)
        _set(self, "distribution_mode", distribution_mode)
        _set(self, "filter", filter)
        _set(self, "default_outcome", default_outcome)
        _set(self, "outcomes", outcomes)
        _set(self, "capabilities", capabilities)


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
        _set(self, "_raw", None)
        _set(self, "address", address)
        _set(self, "durable", durable)
        _set(self, "expiry_policy", expiry_policy)
        _set(self, "timeout", timeout)
        _set(self, "dynamic", dynamic)
        _set(self, "dynamic_node_properties", dynamic_node_properties)
        _set(self, "capabilities", capabilities)


class DeleteOnClose(Composite):
    __slots__ = ()
    NAME = "delete-on-close"
    CODE = 0x2B
    SYMBOL = "amqp:delete-on-close:list"
    SOURCE = "list"
    PROVIDES = ("lifetime-policy",)
    FIELDS = ()

    def __init__(self) -> None:
        _set(self, "_raw", None)


class DeleteOnNoLinks(Composite):
    __slots__ = ()
    NAME = "delete-on-no-links"
    CODE = 0x2C
    SYMBOL = "amqp:delete-on-no-links:list"
    SOURCE = "list"
    PROVIDES = ("lifetime-policy",)
    FIELDS = ()

    def __init__(self) -> None:
        _set(self, "_raw", None)


class DeleteOnNoMessages(Composite):
    __slots__ = ()
    NAME = "delete-on-no-messages"
    CODE = 0x2D
    SYMBOL = "amqp:delete-on-no-messages:list"
    SOURCE = "list"
    PROVIDES = ("lifetime-policy",)
    FIELDS = ()

    def __init__(self) -> None:
        _set(self, "_raw", None)


class DeleteOnNoLinksOrMessages(Composite):
    __slots__ = ()
    NAME = "delete-on-no-links-or-messages"
    CODE = 0x2E
    SYMBOL = "amqp:delete-on-no-links-or-messages:list"
    SOURCE = "list"
    PROVIDES = ("lifetime-policy",)
    FIELDS = ()

    def __init__(self) -> None:
        _set(self, "_raw", None)


class SaslMechanisms(Composite):
    __slots__ = ("sasl_server_mechanisms",)
    NAME = "sasl-mechanisms"
    CODE = 0x40
    SYMBOL = "amqp:sasl-mechanisms:list"
    SOURCE = "list"
    PROVIDES = ("sasl-frame",)
    FIELDS = (Field("sasl-server-mechanisms", "symbol", True, True, None),)

    def __init__(self, sasl_server_mechanisms: Any = None) -> None:
        _set(self, "_raw", None)
        _set(self, "sasl_server_mechanisms", sasl_server_mechanisms)


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
        _set(self, "_raw", None)
        _set(self, "mechanism", mechanism)
        _set(self, "initial_response", initial_response)
        _set(self, "hostname", hostname)


class SaslChallenge(Composite):
    __slots__ = ("challenge",)
    NAME = "sasl-challenge"
    CODE = 0x42
    SYMBOL = "amqp:sasl-challenge:list"
    SOURCE = "list"
    PROVIDES = ("sasl-frame",)
    FIELDS = (Field("challenge", "binary", True, False, None),)

    def __init__(self, challenge: Any = None) -> None:
        _set(self, "_raw", None)
        _set(self, "challenge", challenge)


class SaslResponse(Composite):
    __slots__ = ("response",)
    NAME = "sasl-response"
    CODE = 0x43
    SYMBOL = "amqp:sasl-response:list"
    SOURCE = "list"
    PROVIDES = ("sasl-frame",)
    FIELDS = (Field("response", "binary", True, False, None),)

    def __init__(self, response: Any = None) -> None:
        _set(self, "_raw", None)
        _set(self, "response", response)


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
        _set(self, "_raw", None)
        _set(self, "code", code)
        _set(self, "additional_data", additional_data)


class Coordinator(Composite):
    __slots__ = ("capabilities",)
    NAME = "coordinator"
    CODE = 0x30
    SYMBOL = "amqp:coordinator:list"
    SOURCE = "list"
    PROVIDES = ("target",)
    FIELDS = (Field("capabilities", "symbol", False, True, None),)

    def __init__(self, capabilities: Any = None) -> None:
        _set(self, "_raw", None)
        _set(self, "capabilities", capabilities)


class Declare(Composite):
    __slots__ = ("global_id",)
    NAME = "declare"
    CODE = 0x31
    SYMBOL = "amqp:declare:list"
    SOURCE = "list"
    PROVIDES = ()
    FIELDS = (Field("global-id", "*", False, False, None),)

    def __init__(self, global_id: Any = None) -> None:
        _set(self, "_raw", None)
        _set(self, "global_id", global_id)


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
        _set(self, "_raw", None)
        _set(self, "txn_id", txn_id)
        _set(self, "fail", fail)


class Declared(Composite):
    __slots__ = ("txn_id",)
    NAME = "declared"
    CODE = 0x33
    SYMBOL = "amqp:declared:list"
    SOURCE = "list"
    PROVIDES = ("delivery-state", "outcome")
    FIELDS = (Field("txn-id", "*", True, False, None),)

    def __init__(self, txn_id: Any = None) -> None:
        _set(self, "_raw", None)
        _set(self, "txn_id", txn_id)


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
        _set(self, "_raw", None)
        _set(self, "txn_id", txn_id)
        _set(self, "outcome", outcome)


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
