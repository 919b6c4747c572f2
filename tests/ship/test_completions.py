"""The checked-in completion scripts load in bash, zsh and fish and complete what the CLI
defines: subcommands, every option, known values (taken from the code), capture files,
and profile names from the config file (through `amqp --list-profiles`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT

COMPLETIONS = REPO_ROOT / "completions"
BASH = COMPLETIONS / "amqp.bash"
ZSH = COMPLETIONS / "_amqp"
FISH = COMPLETIONS / "amqp.fish"
ZSH_DRIVER = Path(__file__).with_name("zsh_complete.zsh")

CONFIG = """
[profiles.prod]
url = "amqps://broker.example.com//queue/"
password_env = "PROD_PW"

[profiles.local]
url = "amqp://127.0.0.1"
"""


def _shell(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed (scripts/test.sh installs it)")
    return path


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with capture files and others, and a config file with two profiles."""
    d = tmp_path_factory.mktemp("complete")
    for name in ("a.pcap", "b.pcapng", "c.pcap.gz", "d.json", "e.log"):
        (d / name).write_bytes(b"")
    (d / "sub").mkdir()
    (d / "config.toml").write_text(CONFIG)
    return d


@pytest.fixture(scope="module")
def env(workdir: Path) -> dict[str, str]:
    amqp = Path(sys.executable).parent / "amqp"
    if not amqp.exists():
        pytest.fail(f"{amqp} missing: the package is not installed in this environment")
    return {
        "PATH": f"{amqp.parent}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(workdir),
        "AMQP_CONFIG": str(workdir / "config.toml"),
        "XDG_CONFIG_HOME": str(workdir),
        "TERM": "dumb",
    }


def _model():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(REPO_ROOT / "scripts"))
    try:
        import gen_docs
    finally:
        sys.path.pop(0)
    return gen_docs.read_cli()


# --- bash -----------------------------------------------------------------------------------

BASH_DRIVER = r"""
source "$1"
shift
for line in "$@"; do
    read -r -a COMP_WORDS <<< "$line"
    [[ $line == *' ' ]] && COMP_WORDS+=('')
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMP_LINE=$line
    COMP_POINT=${#line}
    COMPREPLY=()
    _amqp amqp "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '=== %s\n' "$line"
    printf '%s\n' "${COMPREPLY[@]}"
done
"""


def _sections(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for chunk in text.split("=== ")[1:]:
        line, _, rest = chunk.partition("\n")
        out[line] = rest
    return out


def bash_complete(lines: list[str], env: dict[str, str], cwd: Path) -> dict[str, set[str]]:
    r = subprocess.run(
        [_shell("bash"), "--norc", "--noprofile", "-c", BASH_DRIVER, "bash", str(BASH), *lines],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=120, check=False,
    )
    assert r.returncode == 0 and not r.stderr, r.stderr
    return {k: set(v.split()) for k, v in _sections(r.stdout).items()}


def zsh_complete(lines: list[str], env: dict[str, str], cwd: Path) -> dict[str, str]:
    r = subprocess.run(
        [_shell("zsh"), "-f", str(ZSH_DRIVER), str(COMPLETIONS), *lines],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=300, check=False,
    )
    assert r.returncode == 0, r.stderr
    return _sections(r.stdout)


def fish_complete(line: str, env: dict[str, str], cwd: Path) -> set[str]:
    r = subprocess.run(
        [_shell("fish"), "--no-config", "-c", f"source {FISH}; complete -C {_fish_quote(line)}"],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=60, check=False,
    )
    assert r.returncode == 0 and not r.stderr, r.stderr
    return {x.split("\t")[0] for x in r.stdout.splitlines()}


def _fish_quote(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


# (line, words every shell offers, words none offers); bash/fish see the full candidates,
# zsh's output is the completed line or the list it shows.
def _cases() -> list[tuple[str, set[str], set[str]]]:
    from amqpcli.cli.decode import example_names
    from amqpcli.net.config import MECHANISMS
    from amqpcli.net.outgoing import BODY_TYPES
    from amqpcli.pipeline.run import ENGINES

    return [
        ("amqp se", {"send", "serve"}, {"recv"}),
        ("amqp send --body-type ", set(BODY_TYPES), {"accept"}),
        ("amqp send -b ", set(BODY_TYPES), set()),
        ("amqp recv --sasl-mechanism ", set(MECHANISMS), set()),
        ("amqp recv --outcome re", {"reject", "release"}, {"accept"}),
        # captures, and frame-trace logs by their usual names
        ("amqp pcap-dump ", {"a.pcap", "b.pcapng", "c.pcap.gz", "e.log"}, {"d.json"}),
        ("amqp tui --pcap ", {"a.pcap", "b.pcapng", "e.log"}, {"d.json"}),
        ("amqp send --profile ", {"prod", "local"}, set()),
        ("amqp --debug browse --count 3 --profile p", {"prod"}, {"local"}),
        ("amqp recv --cou", {"--count"}, set()),
        ("amqp decode --as ", {"frames", "message", "values"}, set()),
        # the names `amqp decode --example list` prints, not the files' names
        ("amqp decode --example ", {"list", *example_names()}, {"client-session.amqp"}),
        ("amqp pcap-dump --engine ", set(ENGINES), set()),
        ("amqp pcap-dump --state re", {"rejected", "released", "received"}, {"accepted"}),
        ("amqp pcap-dump --performative tr", {"transfer"}, {"flow"}),
        ("amqp tui --live ", {"lo"}, set()),
    ]


def test_bash(env: dict[str, str], workdir: Path) -> None:
    cases = _cases()
    extra = ["amqp send @", "amqp send @pr", "amqp ", "amqp recv --outcome modify:f",
             "amqp send --body-type=va", "amqp recv amqp://h:5672//queue/x --sasl-mechanism A"]
    got = bash_complete([c[0] for c in cases] + extra, env, workdir)
    for line, want, never in cases:
        assert want <= got[line], (line, got[line])
        assert not never & got[line], (line, got[line])
    assert got["amqp send @"] == {"@prod/", "@local/"}
    assert got["amqp send @pr"] == {"@prod/"}
    assert got["amqp "] == {c.name for c in _model().commands}
    # bash replaces only what follows the last ':' or '=' of the word.
    assert got["amqp recv --outcome modify:f"] == {"failed", "failed:undeliverable"}
    assert got["amqp send --body-type=va"] == {"value"}
    assert got["amqp recv amqp://h:5672//queue/x --sasl-mechanism A"] == {"ANONYMOUS"}


def test_bash_profile_name_with_a_space(env: dict[str, str], workdir: Path) -> None:
    """A profile name is one word as typed (its space escaped), not two (it was offered
    as @with/ and @space/)."""
    config = workdir / "spaced.toml"
    config.write_text('[profiles."with space"]\nurl = "amqp://127.0.0.1"\n')
    r = subprocess.run(
        [_shell("bash"), "--norc", "--noprofile", "-c", BASH_DRIVER, "bash", str(BASH),
         "amqp send @w", "amqp send --profile w", "amqp send @x"],
        capture_output=True, text=True, env={**env, "AMQP_CONFIG": str(config)}, cwd=workdir,
        timeout=120, check=False)
    assert r.returncode == 0 and not r.stderr, r.stderr
    got = {k: [x for x in v.splitlines() if x] for k, v in _sections(r.stdout).items()}
    assert got["amqp send @w"] == ["@with\\ space/"]
    assert got["amqp send --profile w"] == ["with\\ space"]
    assert got["amqp send @x"] == []


def test_bash_every_option_of_every_command(env: dict[str, str], workdir: Path) -> None:
    model = _model()
    lines = [f"amqp {c.name} -" for c in model.commands]
    got = bash_complete(lines, env, workdir)
    for c in model.commands:
        names = {n for o in c.options for n in (*o.names, *o.off)}
        assert names == got[f"amqp {c.name} -"], c.name


def test_zsh(env: dict[str, str], workdir: Path) -> None:
    cases = _cases()
    got = zsh_complete([c[0] for c in cases] + ["amqp send @", "amqp send @pr"], env, workdir)
    for line, want, never in cases:
        words = set(re.findall(r"[\w.:/@-]+", got[line]))
        assert want <= words, (line, got[line])
        assert not never & words, (line, got[line])
    # Several profiles are listed by name; one is completed in full.
    assert {"prod", "local"} <= set(got["amqp send @"].split())
    assert "amqp send @prod/" in got["amqp send @pr"]


def test_fish(env: dict[str, str], workdir: Path) -> None:
    for line, want, never in _cases():
        got = fish_complete(line, env, workdir)
        assert want <= got, (line, got)
        assert not never & got, (line, got)
    assert fish_complete("amqp send @", env, workdir) == {"@prod/", "@local/"}
    assert fish_complete("amqp ", env, workdir) >= {c.name for c in _model().commands}


def test_fish_every_option_of_every_command(env: dict[str, str], workdir: Path) -> None:
    for c in _model().commands:
        got = fish_complete(f"amqp {c.name} --", env, workdir)
        longs = {n for o in c.options for n in (*o.names, *o.off) if n.startswith("--")}
        assert longs == got, c.name


def test_scripts_load_cleanly(env: dict[str, str]) -> None:
    for argv in (
        [_shell("bash"), "--norc", "--noprofile", "-c", f"source {BASH} && complete -p amqp"],
        [_shell("zsh"), "-f", "-c", f"autoload -Uz compinit && compinit -u -D && source {ZSH} && print -r -- $_comps[amqp]"],
        [_shell("fish"), "--no-config", "-c", f"source {FISH}; and complete -c amqp | count"],
    ):
        r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)
        assert r.returncode == 0 and not r.stderr, (argv[0], r.stderr)
        assert r.stdout.strip() and r.stdout.strip() != "0", (argv[0], r.stdout)


def test_list_profiles(env: dict[str, str], workdir: Path) -> None:
    r = subprocess.run(["amqp", "--list-profiles"], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert (r.returncode, r.stdout, r.stderr) == (0, "local\nprod\n", "")
    broken = {**env, "AMQP_CONFIG": str(workdir / "missing.toml")}
    r = subprocess.run(["amqp", "--list-profiles"], capture_output=True, text=True, env=broken, timeout=60, check=False)
    assert (r.returncode, r.stdout) == (0, "")


def test_installed_as_docs_config_md_says(tmp_path: Path, env: dict[str, str]) -> None:
    """The one-liners of docs/config.md, run with HOME in a temporary directory; then a new
    interactive shell (or fish's autoloader) finds the completion by itself."""
    home = tmp_path / "home"
    home.mkdir()
    doc = (REPO_ROOT / "docs" / "config.md").read_text()
    lines = [
        "echo \"source $PWD/completions/amqp.bash\" >> ~/.bashrc",
        "install -Dm644 completions/_amqp ~/.zfunc/_amqp",
        "echo 'fpath=(~/.zfunc $fpath); autoload -Uz compinit; compinit' >> ~/.zshrc",
        "install -Dm644 completions/amqp.fish ~/.config/fish/completions/amqp.fish",
    ]
    henv = {**env, "HOME": str(home)}
    henv.pop("XDG_CONFIG_HOME")
    for line in lines:
        assert line in doc, f"docs/config.md no longer says: {line}"
        r = subprocess.run(["bash", "-c", line], cwd=REPO_ROOT, env=henv, capture_output=True,
                           text=True, timeout=60, check=False)
        assert r.returncode == 0, r.stderr
    checks = [
        ([_shell("bash"), "-i", "-c", "complete -p amqp"], "_amqp"),
        ([_shell("zsh"), "-i", "-c", "print -r -- $_comps[amqp]"], "_amqp"),
        ([_shell("fish"), "-c", "complete -C 'amqp se'"], "send"),
    ]
    for argv, want in checks:
        r = subprocess.run(argv, cwd=home, env=henv, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL, timeout=60, check=False)
        assert r.returncode == 0 and want in r.stdout, (argv[0], r.stdout, r.stderr)
