"""Option values converted without pydantic (amqpcli/cli/coerce.py) come out exactly as
Typer's own pydantic adapters make them, and what is not converted there (bad numbers,
flags from the environment, unreadable files) still fails with Typer's own message."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_coercion = pytest.importorskip("typer._coercion", reason="a Typer without pydantic adapters")

import typer.main
from typer import core
from typer.models import OptionInfo

from amqpcli.cli import coerce
from amqpcli.cli.app import _register, app

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# Text that looks like numbers, near misses included, and anything else.
NUMBERISH = st.one_of(
    st.from_regex(r"\A[-+ ]?[0-9_]{0,22}(\.[0-9_]{0,20})?([eE][-+]?[0-9]{1,3})?[ ]?\Z"),
    st.sampled_from(["", "-", ".", "-0", "+5", " 5", "1_000", "0x10", "1e3", "inf", "nan",
                     "-inf", "٣", "1.", ".5", "9" * 19, "9" * 40, "1.5e-3", "True"]),
    st.text(max_size=12),
)


def _adapter_result(annotation: Any, value: Any) -> tuple[str, Any]:
    from typer._adapters import try_build_adapter

    adapter = try_build_adapter(annotation, OptionInfo())
    assert adapter is not None
    try:
        out = adapter.validate_python(value)
    except Exception as e:  # noqa: BLE001 - any failure: ours must not convert it
        return "error", type(e).__name__
    return "ok", out


def _same(ours: Any, theirs: Any) -> bool:
    if isinstance(ours, float) and math.isnan(ours):
        return isinstance(theirs, float) and math.isnan(theirs)
    return type(ours) is type(theirs) and ours == theirs


@pytest.fixture(scope="module", autouse=True)
def installed() -> None:
    assert coerce.install()  # done when amqpcli.cli.app is imported; again is a no-op


@pytest.mark.parametrize("annotation", [int, float, str])
@SETTINGS
@given(text=NUMBERISH)
def test_plain_values_convert_as_the_adapter_does(annotation: type, text: str) -> None:
    convert = coerce.converter(annotation, OptionInfo())
    assert convert is not None
    ours = convert(text)
    if ours is coerce.UNSURE:
        return  # the adapter decides, as before
    kind, theirs = _adapter_result(annotation, text)
    assert kind == "ok", f"{text!r}: converted here to {ours!r}, the adapter refuses it"
    assert _same(ours, theirs), (text, ours, theirs)


@SETTINGS
@given(items=st.lists(NUMBERISH, max_size=4))
def test_lists_convert_as_the_adapter_does(items: list[str]) -> None:
    convert = coerce.converter(list[int], OptionInfo())
    assert convert is not None
    ours = convert(tuple(items))
    if ours is coerce.UNSURE:
        return
    kind, theirs = _adapter_result(list[int], tuple(items))
    assert kind == "ok" and ours == theirs and type(ours) is list


def test_values_that_already_have_the_type_pass_unchanged() -> None:
    for annotation, value in [(int, 5), (float, 10.0), (str, "x\udcff")]:
        convert = coerce.converter(annotation, OptionInfo())
        assert convert is not None and convert(value) is value
    assert coerce.converter(bool, OptionInfo())("1") is coerce.UNSURE  # type: ignore[misc]
    assert coerce.converter(int, OptionInfo())(True) is coerce.UNSURE  # type: ignore[misc]


def test_paths(tmp_path: Path) -> None:
    readable = tmp_path / "capture.pcapng"
    readable.write_bytes(b"")
    convert = coerce.converter(Path, OptionInfo())
    assert convert is not None
    for text in [str(readable), str(tmp_path), str(tmp_path / "missing"), "-", "a/b"]:
        ours = convert(text)
        assert ours == _adapter_result(Path, text)[1] and type(ours) is type(Path(text))
    for text in ["", "a\x00b"]:
        assert convert(text) is coerce.UNSURE


def test_checked_parameters_are_left_to_typer() -> None:
    assert coerce.converter(int, OptionInfo(min=1)) is None
    assert coerce.converter(Path, OptionInfo(exists=True)) is None
    assert coerce.converter(str, OptionInfo(parser=str)) is None
    assert coerce.converter(list[int], OptionInfo(max=3)) is None
    assert coerce.converter(tuple[int, int], OptionInfo()) is None


def _params() -> list[tuple[str, Any, Any]]:
    _register()
    group: Any = typer.main.get_command(app)
    out = [("amqp", group, p) for p in group.params]
    for name, cmd in group.commands.items():
        out += [(name, cmd, p) for p in cmd.params]
    return out


SAMPLES = [None, (), "", "5", "-7", "2.5", "abc", "1e3", " 5", ("1", "2"), ("x",), "-",
           "amqpcli/examples", "/nonexistent/file", "true"]


def test_every_amqp_parameter_coerces_as_typer_would() -> None:
    """For every option and argument of every command: the value, or the error message,
    is the one Typer's own pydantic-backed conversion gives."""
    from typer._click import Context

    checked = 0
    for name, cmd, param in _params():
        if not isinstance(param, core._TyperParameter):
            continue
        ours = core.build_runtime_param(param.type_descriptor)
        theirs = _coercion.build_runtime_param(param.type_descriptor)
        ctx = Context(cmd, info_name=name)
        for value in SAMPLES:
            results = []
            for rp in (ours, theirs):
                try:
                    results.append(("ok", rp.coerce(value, param=param, ctx=ctx)))
                except Exception as e:  # noqa: BLE001 - compare whatever it raises
                    results.append((type(e).__name__, str(getattr(e, "message", e))))
            (k1, v1), (k2, v2) = results
            assert k1 == k2, (name, param.name, value, results)
            assert v1 == v2 or _same(v1, v2), (name, param.name, value, results)
            checked += 1
    assert checked > 1000


def test_no_adapter_for_values_converted_here() -> None:
    param = next(p for name, _, p in _params() if name == "pcap-dump" and p.name == "stall")
    rp = core.build_runtime_param(param.type_descriptor)
    assert rp.coerce("2.5", param=param, ctx=None) == 2.5
    assert rp.fallback == []  # no pydantic adapter was built


def test_running_a_command_needs_no_pydantic() -> None:
    import json
    import subprocess
    import sys

    from tests.paths import REPO_ROOT

    code = (
        "import json, sys\n"
        "from amqpcli.cli.app import main\n"
        "main(['pcap-dump', 'amqpcli/examples/serve-session.pcapng', '--frames-only',\n"
        "      '--stall', '2', '--amqp-port', '5673', '--since', '0'])\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120, check=False,
                          env={**os.environ, "COLUMNS": "100"})
    assert proc.returncode == 0, proc.stderr
    modules = json.loads(proc.stderr.strip().splitlines()[-1])
    assert "sasl-mechanisms" in proc.stdout
    assert [m for m in modules if m.split(".")[0] == "pydantic" or m == "typer._adapters"] == []
