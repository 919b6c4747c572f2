"""The checked-in completions and man pages are what scripts/gen_docs.py makes from the CLI
now, the man pages render without a groff warning, and every page has what it must."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT, SCRIPTS_DIR


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, **kw)  # type: ignore[call-overload, no-any-return]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gen")
    r = _run([sys.executable, str(SCRIPTS_DIR / "gen_docs.py"), "--out", str(out)], cwd=REPO_ROOT)
    assert r.returncode == 0, r.stderr
    return out


def _files(base: Path) -> dict[str, str]:
    return {
        f"{folder}/{p.name}": p.read_text(encoding="utf-8")
        for folder in ("completions", "man")
        for p in sorted((base / folder).glob("*"))
        if p.is_file()
    }


def test_checked_in_files_match_the_cli(generated: Path) -> None:
    fresh, checked_in = _files(generated), _files(REPO_ROOT)
    assert fresh, "gen_docs.py wrote nothing"
    stale = sorted(k for k in fresh.keys() | checked_in.keys() if fresh.get(k) != checked_in.get(k))
    assert not stale, f"out of date with the CLI: {stale}; run: python scripts/gen_docs.py"


def test_check_mode_notices_a_difference(tmp_path: Path, generated: Path) -> None:
    shutil.copytree(generated / "completions", tmp_path / "completions")
    shutil.copytree(generated / "man", tmp_path / "man")
    check = [sys.executable, str(SCRIPTS_DIR / "gen_docs.py"), "--check", "--out", str(tmp_path)]
    assert _run(check, cwd=REPO_ROOT).returncode == 0
    page = tmp_path / "man" / "amqp-send.1"
    page.write_text(page.read_text().replace("\\-\\-body\\-type", "\\-\\-body\\-kind"))
    r = _run(check, cwd=REPO_ROOT)
    assert r.returncode == 1 and "man/amqp-send.1" in r.stderr


def _pages() -> list[Path]:
    return sorted((REPO_ROOT / "man").glob("*.1"))


def _gen_docs():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(SCRIPTS_DIR))
    try:
        import gen_docs
    finally:
        sys.path.pop(0)
    return gen_docs


def _model():  # type: ignore[no-untyped-def]
    return _gen_docs().read_cli()


def test_a_page_for_amqp_and_each_subcommand() -> None:
    gen_docs = _gen_docs()
    root = gen_docs.read_cli()
    assert {p.name for p in _pages()} == {"amqp.1", *(f"amqp-{c.name}.1" for c in root.commands)}
    for c in root.commands:
        text = (REPO_ROOT / "man" / f"amqp-{c.name}.1").read_text()
        for o in c.options:
            assert gen_docs._r(o.names[0]) in text, (c.name, o.names[0])
        for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXAMPLES", "EXIT STATUS",
                        "ENVIRONMENT", "SEE ALSO"):
            assert f".SH {section}\n" in text, (c.name, section)
        # FILES: the config file, for the commands that read it
        assert (".SH FILES\n" in text) == any("--profile" in o.names for o in c.options), c.name


def _section(text: str, title: str) -> str:
    m = re.search(rf"^\.SH {title}\n(.*?)(?=^\.SH |\Z)", text, flags=re.MULTILINE | re.DOTALL)
    return m.group(1) if m else ""


def test_each_page_says_what_applies_to_its_command() -> None:
    # the pages of decode, proxy, pcap-dump and serve sent the reader to --password-file
    # and --profile (and the first three to --password), which they do not have
    gen_docs = _gen_docs()
    for c in gen_docs.read_cli().commands:
        text = (REPO_ROOT / "man" / f"amqp-{c.name}.1").read_text()
        env = _section(text, "ENVIRONMENT")
        names = {n for o in c.options for n in o.names}
        for option in ("--password", "--password-file", "--profile"):
            if option not in names:
                assert gen_docs._r(option) + "\\fR" not in env, (c.name, option)
        assert ("AMQP_URL" in env) == ("--profile" in names), c.name
        exits = _section(text, "EXIT STATUS")
        assert "not built yet" not in exits, c.name
        assert "When several apply, one code wins" in exits and "7 (something in doubt" in exits
    serve = _section((REPO_ROOT / "man" / "amqp-serve.1").read_text(), "ENVIRONMENT")
    assert "AMQP_PASSWORD" in serve and "SASL password, when neither" not in serve
    proxy = (REPO_ROOT / "man" / "amqp-proxy.1").read_text()
    assert "password in clear text" in proxy and "pcapng file: raw" in proxy


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_page_renders_without_warnings(page: Path) -> None:
    groff = shutil.which("groff")
    if groff is None:
        pytest.fail("groff is not installed (scripts/test.sh installs man-db, which brings it)")
    r = _run([groff, "-ww", "-man", "-Tutf8", str(page)])
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "EXIT STATUS" in re.sub(".\b", "", r.stdout)  # bold is overstruck
    man = shutil.which("man")
    if man is None:
        pytest.fail("man is not installed (scripts/test.sh installs man-db)")
    r = _run([man, "-l", str(page)], env={**os.environ, "MANPAGER": "cat", "MANWIDTH": "80"})
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert page.stem.upper() in r.stdout


def test_every_subcommand_help_has_examples() -> None:
    for c in _model().commands:
        r = _run([sys.executable, "-m", "amqpcli", c.name, "--help"], cwd=REPO_ROOT,
                 env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"})
        assert r.returncode == 0, r.stderr
        assert "Examples" in r.stdout and f"amqp {c.name} " in r.stdout, c.name


def test_each_synopsis_names_the_arguments_help_names() -> None:
    """The man page's synopsis and `--help`'s usage line name the same arguments (decode's
    said `[DATA]` where the usage said `[DATA] [MORE]...`)."""
    gen_docs = _gen_docs()
    for c in gen_docs.read_cli().commands:
        r = _run([sys.executable, "-m", "amqpcli", c.name, "--help"], cwd=REPO_ROOT,
                 env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1"})
        usage = next(x for x in r.stdout.splitlines() if x.startswith("Usage:"))
        in_usage = re.findall(r"\[?([A-Z][A-Z_]+)\]?(\.\.\.)?", usage.split("[OPTIONS]", 1)[1])
        page = (REPO_ROOT / "man" / f"amqp-{c.name}.1").read_text()
        synopsis = _section(page, "SYNOPSIS").split("[\\fIOPTIONS\\fR]", 1)[1]
        in_page = re.findall(r"\\fI([A-Z][A-Z_]+)\\fR\]?(\.\.\.)?", synopsis)
        assert in_page == in_usage, (c.name, usage, synopsis)
