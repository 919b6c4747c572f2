"""Option values converted without pydantic where that gives the same result.

Typer releases that convert values through pydantic (those with `typer._coercion`) build a
pydantic ``TypeAdapter`` for a parameter the first time the parameter is processed, and
every parameter is processed on every run: options left unset and each command's help
option too. So any `amqp` command imported pydantic (and, through its plugin loader,
importlib.metadata) and built an adapter per option: a large share of start-up, for values
that are plain strings, numbers, flags and paths.

`install` puts its own builder in place of `typer.core.build_runtime_param` (the name by
which Typer's parameters build their converter). It gives a `PlainRuntimeParam` for
parameters whose type is str, int, float, bool or pathlib.Path (or a list of one of them)
and that ask for no checks (no min/max, no parser, no path constraints). That converts
only inputs whose result is certain and the same as the adapter's: a value that already
has the type, a decimal integer ("-12"), a plain decimal ("2.5"), a path that does not
exist or is readable. Everything else (a malformed number, "1e3", a flag's value from an
environment variable, an unreadable file) goes to the adapter Typer would have used, built
then, so results and error messages are unchanged; tests/cli/test_coerce.py checks both
against the adapter for every parameter of every command.

With a Typer that converts through Click's types (before `typer._coercion`), `install`
changes nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast, get_args, get_origin

# Not converted here: the adapter decides.
UNSURE: Any = object()

_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?[0-9]{1,17}(?:\.[0-9]{1,17})?")

# ParameterInfo's path settings at their defaults: a Path that asks for no checks but
# "readable if it exists".
_PLAIN_PATH = {"exists": False, "file_okay": True, "dir_okay": True, "writable": False,
               "readable": True, "resolve_path": False, "allow_dash": False,
               "path_type": None}
_MISSING = object()


def _str(value: Any) -> Any:
    return value if type(value) is str else UNSURE


def _int(value: Any) -> Any:
    if type(value) is int:
        return value
    if type(value) is str and _INT.fullmatch(value):
        return int(value)
    return UNSURE


def _float(value: Any) -> Any:
    if type(value) is float:
        return value
    if type(value) is str and _FLOAT.fullmatch(value):
        return float(value)
    return UNSURE


def _bool(value: Any) -> Any:
    # Flags arrive as bools and are not converted at all; unset ones (None) never reach
    # a converter; the rest (text from an environment variable) is the adapter's.
    return UNSURE


def _path(value: Any) -> Any:
    if type(value) is not str or not value or "\x00" in value:
        return UNSURE
    path = Path(value)
    try:
        os.stat(path)
    except OSError:
        return path  # not there: fine when nothing asks for it to exist
    return path if os.access(path, os.R_OK) else UNSURE


def _leaf(annotation: Any, info: Any) -> Callable[[Any], Any] | None:
    if getattr(info, "parser", None) is not None:
        return None
    if annotation is str:
        return _str
    if annotation is bool:
        return _bool
    if annotation in (int, float):
        if getattr(info, "min", None) is not None or getattr(info, "max", None) is not None:
            return None
        return _int if annotation is int else _float
    if annotation is Path:
        if any(getattr(info, k, _MISSING) != v for k, v in _PLAIN_PATH.items()):
            return None
        return _path
    return None


def converter(annotation: Any, info: Any) -> Callable[[Any], Any] | None:
    """How a value of `annotation` (with the parameter's `info`) converts here, or None
    when only the adapter may convert it."""
    if get_origin(annotation) is list:
        args = get_args(annotation)
        item = _leaf(args[0], info) if len(args) == 1 else None
        if item is None:
            return None

        def each(value: Any) -> Any:
            if not isinstance(value, (list, tuple)):
                return UNSURE
            out = [item(v) for v in value]
            return UNSURE if any(v is UNSURE for v in out) else out

        return each
    return _leaf(annotation, info)


# The builder `install` put in Typer's place (None: not installed).
_installed: Callable[[Any], Any] | None = None


def install() -> bool:
    """Have Typer convert plain values here (see the module docstring). True if it now
    does; False with a Typer whose conversion this module does not know (nothing done)."""
    global _installed
    if _installed is not None:
        return True
    try:
        from typer import _coercion, core
    except ImportError:  # a Typer that converts with Click's types: no pydantic to avoid
        return False
    base = getattr(_coercion, "RuntimeParam", None)
    build = getattr(_coercion, "build_runtime_param", None)
    if base is None or build is None or getattr(core, "build_runtime_param", None) is not build:
        return False
    adapter_param: Callable[[Any], Any] = cast("Callable[[Any], Any]", build)  # Typer's own

    @dataclass(frozen=True)
    class PlainRuntimeParam(base):  # type: ignore[misc, valid-type]
        """Converts with `convert`; what that leaves UNSURE goes to Typer's own."""

        convert: Callable[[Any], Any]
        descriptor: Any
        fallback: list[Any] = field(default_factory=list, compare=False, repr=False)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            out = self.convert(value)
            if out is not UNSURE:
                return out
            if not self.fallback:
                self.fallback.append(adapter_param(self.descriptor))
            return self.fallback[0]._coerce_value(value, param=param, ctx=ctx)

    def build_plain(descriptor: Any) -> Any:
        convert = None
        if getattr(descriptor, "file_annotation", None) is None and not getattr(
                descriptor, "is_choice", True):
            convert = converter(descriptor.annotation, descriptor.parameter_info)
        if convert is None:
            return adapter_param(descriptor)
        return PlainRuntimeParam(parameter_info=descriptor.parameter_info,
                                 annotation=descriptor.annotation, convert=convert,
                                 descriptor=descriptor)

    core.build_runtime_param = _installed = build_plain
    return True
