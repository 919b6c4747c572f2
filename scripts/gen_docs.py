#!/usr/bin/env python3
"""Writes the shell completion scripts (completions/) and the man pages (man/) from the CLI.

    python scripts/gen_docs.py            # rewrite completions/ and man/ in the repository
    python scripts/gen_docs.py --out DIR  # write DIR/completions and DIR/man instead
    python scripts/gen_docs.py --check    # exit 1 when the checked-in files are out of date

The Click command tree that Typer builds for `amqp` is the one source: every visible
subcommand, argument and option, with its help text, appears in the completions and in the
man pages. Option values complete from the option's declared type (a `Literal`, an `Enum`,
a `Path`); for options declared as plain strings whose values the code knows, `VALUES`
below names where they come from. Hand-written sections of the man pages (description,
examples, environment, files) are in `scripts/man/*.md`, one file per page.
"""

from __future__ import annotations

import argparse
import difflib
import enum
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MAN_SOURCES = Path(__file__).resolve().parent / "man"
sys.path.insert(0, str(REPO))

from amqpcli.cli.app import value_name  # (the checkout's package: sys.path above)

PROG = "amqp"

# --- what an option's values are -----------------------------------------------------------


@dataclass(frozen=True)
class Values:
    """How a value completes: a fixed list, files (optionally only some suffixes),
    directories, network interfaces, profile names (`--profile`), profile references
    (`@NAME/` in a URL),
    or nothing we can guess (``kind="any"``)."""

    kind: str = "any"  # any | choice | file | dir | iface | profile | url
    choices: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()


ANY = Values()
FILE = Values("file")
CAPTURE = Values("file", suffixes=("pcap", "pcapng", "gz"))
# what pcap-dump and tui --pcap read: captures, and frame-trace logs under their usual names
CAPTURE_OR_LOG = Values("file", suffixes=("pcap", "pcapng", "gz", "log", "txt", "trace"))
DIR = Values("dir")
IFACE = Values("iface")
PROFILE = Values("profile")
URL = Values("url")


def _body_types() -> Sequence[str]:
    from amqpcli.net.outgoing import BODY_TYPES

    return BODY_TYPES


def _mechanisms() -> Sequence[str]:
    from amqpcli.net.config import MECHANISMS

    return MECHANISMS


def _decode_forms() -> Sequence[str]:
    from amqpcli.cli.decode_input import FORMATS

    return FORMATS


def _decode_kinds() -> Sequence[str]:
    from amqpcli.cli.decode_input import KINDS

    return KINDS


def _examples() -> Sequence[str]:
    """What `--example` takes: 'list', and each example by the name `--example list`
    prints."""
    from amqpcli.cli.decode import example_names

    return ["list", *example_names()]


def _outcomes() -> Sequence[str]:
    # The forms amqpcli.net.receiving.parse_outcomes reads (reject takes a condition too).
    return ("accept", "release", "reject", "modify", "modify:failed", "modify:undeliverable",
            "modify:failed:undeliverable")


def _engines() -> Sequence[str]:
    from amqpcli.pipeline.run import ENGINES

    return ENGINES


def _table_formats() -> Sequence[str]:
    from amqpcli.pipeline.output import FORMATS

    return FORMATS


def _on_release() -> Sequence[str]:
    # The forms amqpcli.net.sending.parse_on_release reads (retry takes :N too).
    return ("fail", "retry")


def _settle_modes() -> Sequence[str]:
    return ("first", "second")


def _states() -> Sequence[str]:
    from amqpcli.dissect.filters import STATES

    return sorted(STATES)


def _performatives() -> Sequence[str]:
    from amqpcli.dissect.filters import known_performatives

    return sorted(known_performatives())


def _choice(source: Callable[[], Sequence[str]]) -> Callable[[], Values]:
    return lambda: Values("choice", tuple(source()))


# Options declared as plain strings (or paths) whose values are known elsewhere in the code.
# Keyed by "COMMAND LONG-OPTION", "COMMAND ARGUMENT-NAME", or a bare LONG-OPTION for every
# command. Declaring the option with a Literal/Enum/Path type makes its entry unnecessary.
VALUES: dict[str, Callable[[], Values]] = {
    "--body-type": _choice(_body_types),
    "--sasl-mechanism": _choice(_mechanisms),
    "--outcome": _choice(_outcomes),
    "--settle-mode": _choice(_settle_modes),
    "send --on-release": _choice(_on_release),
    "pcap-dump --engine": _choice(_engines),
    "pcap-dump --format": _choice(_table_formats),
    "pcap-dump --state": _choice(_states),
    "pcap-dump --performative": _choice(_performatives),
    "pcap-dump --out": lambda: DIR,
    "--live": lambda: IFACE,
    "decode --input": _choice(_decode_forms),
    "decode --as": _choice(_decode_kinds),
    "decode --example": _choice(_examples),
    "--profile": lambda: PROFILE,
    "url": lambda: URL,
    "proxy url": lambda: ANY,  # the broker's URL: no profiles there
    "--file": lambda: FILE,
    "--from": lambda: FILE,
    "--out": lambda: FILE,
    "--password-file": lambda: FILE,
    "--ca-file": lambda: FILE,
    "--cert": lambda: FILE,
    "--key": lambda: FILE,
    "--record": lambda: CAPTURE,
    "--pcap": lambda: CAPTURE_OR_LOG,
    "--tls-keylog": lambda: FILE,
    "pcap-dump files": lambda: CAPTURE_OR_LOG,
    "decode words": lambda: FILE,
}

# --- the model read from the Click tree ----------------------------------------------------


@dataclass
class Opt:
    names: list[str]  # long first, then short: ["--count", "-c"]
    off: list[str]  # the negative flags of a --x/--no-x pair
    takes_value: bool
    metavar: str
    help: str
    values: Values
    multiple: bool
    panel: str | None
    default: str = ""  # as --help shows it; "" when none is shown


@dataclass
class Arg:
    name: str
    metavar: str
    help: str
    values: Values
    many: bool  # nargs=-1
    required: bool


@dataclass
class Cmd:
    name: str  # "" for the root
    help: str
    epilog: str
    options: list[Opt] = field(default_factory=list)
    args: list[Arg] = field(default_factory=list)
    commands: list[Cmd] = field(default_factory=list)

    @property
    def full(self) -> str:
        return f"{PROG} {self.name}" if self.name else PROG


def _plain(text: str | None) -> str:
    """Help text without Rich's escapes and markup."""
    if not text:
        return ""
    text = re.sub(r"\[/?(bold|italic|dim|red|green|yellow|cyan|b|i)\]", "", text)
    return text.replace("\\[", "[")


def _choice_values(choices: Iterable[Any]) -> list[str]:
    return [str(c.value) if isinstance(c, enum.Enum) else str(c) for c in choices]


def _values(cmd: str, key: str, p: Any) -> Values:
    td = p.type_descriptor
    if td.is_choice:
        return Values("choice", tuple(_choice_values(td.choices)))
    for k in (f"{cmd} {key}", key):
        if k in VALUES:
            return VALUES[k]()
    if td.is_path:
        return FILE
    return ANY


def _option(cmd: str, p: Any) -> Opt:
    longs = [o for o in p.opts if o.startswith("--")]
    shorts = [o for o in p.opts if not o.startswith("--")]
    names = longs + shorts
    takes = not p.is_flag
    if p.help is None:
        help_text = ""
    else:
        help_text = _plain(p.help)
    return Opt(
        names=names,
        off=list(p.secondary_opts),
        takes_value=takes,
        metavar=value_name(p) if takes else "",
        help=help_text,
        values=_values(cmd, longs[0] if longs else names[0], p) if takes else ANY,
        multiple=bool(p.multiple),
        panel=getattr(p, "rich_help_panel", None),
        default=_default(p) if takes else "",
    )


def _default(p: Any) -> str:
    d = p.default
    if p.show_default is False or d is None or d == () or d == [] or isinstance(d, bool):
        return ""
    if isinstance(d, enum.Enum):
        d = d.value
    return str(d)


def _command(name: str, c: Any, ctx: Any) -> Cmd:
    from typer._click import Context

    # (Click's "\b" marks a paragraph it must not rewrap: --help's business, not a page's)
    out = Cmd(name=name, help=_plain(c.help),
              epilog=_plain(c.epilog.replace("\b\n", "") if c.epilog else c.epilog))
    sub_ctx = Context(c, parent=ctx, info_name=name) if name else ctx
    for p in c.params:
        if getattr(p, "hidden", False):
            continue
        if p.param_type_name == "argument":
            out.args.append(Arg(
                name=p.name,
                metavar=(p.metavar or p.name).upper(),
                help=_plain(p.help),
                values=_values(name, p.name, p),
                many=p.nargs == -1,
                required=bool(p.required),
            ))
        else:
            out.options.append(_option(name, p))
    helps = c.get_help_option_names(sub_ctx)
    out.options.append(Opt(
        names=sorted(helps, key=lambda o: (not o.startswith("--"), o)), off=[],
        takes_value=False, metavar="", help="Show this message and exit.", values=ANY,
        multiple=False, panel=None,
    ))
    return out


def read_cli() -> Cmd:
    """The `amqp` command tree, as the model above."""
    import typer
    from typer._click import Context

    from amqpcli.cli import app as app_module

    app_module._register()
    group: Any = typer.main.get_command(app_module.app)  # a TyperGroup: has .commands
    ctx = Context(group, info_name=PROG, **(group.context_settings or {}))
    root = _command("", group, ctx)
    for name in sorted(group.commands):
        sub = group.commands[name]
        if not sub.hidden:
            root.commands.append(_command(name, sub, ctx))
    return root


# --- bash -----------------------------------------------------------------------------------


def _sh_words(words: Iterable[str]) -> str:
    return " ".join(words)


def _bash_value(v: Values) -> str:
    if v.kind == "choice":
        return f'COMPREPLY=($(compgen -W "{_sh_words(v.choices)}" -- "$cur"))'
    if v.kind == "file":
        return f'_amqp_files "{"|".join(v.suffixes)}"'
    if v.kind == "dir":
        return 'compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur"))'
    if v.kind == "iface":
        return 'COMPREPLY=($(compgen -W "$(command ls /sys/class/net 2>/dev/null)" -- "$cur"))'
    if v.kind == "profile":
        return "_amqp_profiles"
    if v.kind == "url":
        return "_amqp_url"
    return ":"


def bash(root: Cmd) -> str:
    out = [
        "# bash completion for amqp.",
        "# Written by scripts/gen_docs.py from the CLI definition: edit the CLI, then rerun it.",
        "# Install: see docs/config.md (or: source completions/amqp.bash).",
        "",
        "_amqp_files() {",
        "    # $1: suffixes to offer (pcap|pcapng); empty: any file. Directories always.",
        "    local IFS=$'\\n'",
        "    compopt -o filenames 2>/dev/null",
        "    if [[ -n $1 ]]; then",
        "        COMPREPLY=($(compgen -d -- \"$cur\"; shopt -s extglob; compgen -f -X \"!*.@($1)\" -- \"$cur\"))",
        "    else",
        "        COMPREPLY=($(compgen -f -- \"$cur\"))",
        "    fi",
        "}",
        "",
        "_amqp_profile_names() {",
        "    # One name a line, each as typed on a command line (a space escaped: printf %q),",
        "    # those that begin with $1.",
        "    local name q",
        "    while IFS= read -r name; do",
        "        q=$(printf '%q' \"$name\")",
        "        [[ $q == \"$1\"* ]] && printf '%s\\n' \"$q\"",
        "    done < <(command amqp --list-profiles 2>/dev/null)",
        "}",
        "",
        "_amqp_profiles() {",
        "    local IFS=$'\\n'",
        "    COMPREPLY=($(_amqp_profile_names \"$cur\"))",
        "}",
        "",
        "_amqp_url() {",
        "    # @NAME/ from the config file's profiles; the rest of a URL is free text.",
        "    [[ $cur == @* && $cur != */* ]] || return 0",
        "    local IFS=$'\\n' name",
        "    COMPREPLY=()",
        "    for name in $(_amqp_profile_names \"${cur#@}\"); do",
        "        COMPREPLY+=(\"@$name/\")",
        "    done",
        "    compopt -o nospace 2>/dev/null",
        "}",
        "",
        "_amqp() {",
        "    local cur prev cword",
        "    local -a words",
        "    COMPREPLY=()",
        "    _amqp_complete",
        "    # bash replaces only what follows the word's last ':' (COMP_WORDBREAKS), so the",
        "    # candidates lose what comes before it too.",
        "    if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then",
        "        local head=${cur%\"${cur##*:}\"} i",
        "        for i in \"${!COMPREPLY[@]}\"; do COMPREPLY[i]=${COMPREPLY[i]#\"$head\"}; done",
        "    fi",
        "}",
        "",
        "_amqp_complete() {",
        "    # Words from the line itself, not COMP_WORDS: bash splits those at ':' and '='.",
        "    local line=${COMP_LINE:0:COMP_POINT} i cmd='' cmd_at=0",
        "    read -ra words <<< \"$line\"",
        "    [[ -z $line || $line == *[[:space:]] ]] && words+=('')",
        "    cword=$(( ${#words[@]} - 1 ))",
        "    cur=${words[cword]}",
        "    prev=${words[cword-1]}",
        "    if [[ $cur == --*=* ]]; then prev=${cur%%=*}; cur=${cur#*=}; fi",
        "    for ((i = 1; i < cword; i++)); do",
        "        case ${words[i]} in",
        # (a root option that takes a value skips it; no such arm when there are none)
        *([f"            {_root_value_opts(root)}) ((i++)) ;;"] if _root_value_opts(root) else []),
        "            -*) ;;",
        "            *) cmd=${words[i]}; cmd_at=$i; break ;;",
        "        esac",
        "    done",
        "    case $cmd in",
        "    '')",
        "        if [[ $cur == -* ]]; then",
        f'            COMPREPLY=($(compgen -W "{_sh_words(_all_names(root))}" -- "$cur"))',
        "        else",
        f'            COMPREPLY=($(compgen -W "{_sh_words(c.name for c in root.commands)}" -- "$cur"))',
        "        fi",
        "        ;;",
    ]
    for c in root.commands:
        out += [f"    {c.name})"]
        out += _bash_command(c)
        out += ["        ;;"]
    out += [
        "    esac",
        "}",
        "",
        "complete -F _amqp amqp",
        "",
    ]
    return "\n".join(out)


def _root_value_opts(root: Cmd) -> str:
    return "|".join(n for o in root.options if o.takes_value for n in o.names)


def _all_names(c: Cmd) -> list[str]:
    return [n for o in c.options for n in (*o.names, *o.off)]


def _bash_command(c: Cmd) -> list[str]:
    lines = ["        case $prev in"]
    by_action: dict[str, list[str]] = {}
    for o in c.options:
        if o.takes_value:
            by_action.setdefault(_bash_value(o.values), []).extend(o.names)
    for action, names in by_action.items():
        lines.append(f"        {'|'.join(names)}) {action}; return ;;")
    lines.append("        esac")
    lines.append("        if [[ $cur == -* ]]; then")
    lines.append(f'            COMPREPLY=($(compgen -W "{_sh_words(_all_names(c))}" -- "$cur"))')
    lines.append("            return")
    lines.append("        fi")
    if c.args:
        value_opts = "|".join(n for o in c.options if o.takes_value for n in o.names)
        lines.append("        # Which positional argument this word is: count the others.")
        lines.append("        local n=0")
        lines.append("        for ((i = cmd_at + 1; i < cword; i++)); do")
        lines.append("            case ${words[i]} in")
        if value_opts:
            lines.append(f"            {value_opts}) ((i++)) ;;")
        lines.append("            -*) ;;")
        lines.append("            *) ((n++)) ;;")
        lines.append("            esac")
        lines.append("        done")
        lines.append("        case $n in")
        for i, a in enumerate(c.args):
            pattern = "*" if a.many else str(i)
            lines.append(f"        {pattern}) {_bash_value(a.values)} ;;")
            if a.many:
                break
        lines.append("        esac")
    return lines


# --- zsh ------------------------------------------------------------------------------------


def _zq(text: str) -> str:
    """Inside single quotes."""
    return text.replace("'", "'\\''")


def _zdesc(text: str) -> str:
    """An _arguments description in [...]: first sentence, brackets and colons escaped."""
    first = _first_sentence(text)
    return first.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def _first_sentence(text: str) -> str:
    """Up to the first '.' or ';' that ends a sentence outside parentheses."""
    text = " ".join(text.split())
    for m in re.finditer(r"[.;](?=\s|$)", text):
        head = text[: m.start()]
        if head.count("(") == head.count(")") and head.count("[") == head.count("]"):
            return head
    return text.rstrip(".;")


def _zaction(v: Values) -> str:
    if v.kind == "choice":
        return "(" + " ".join(c.replace(":", "\\:").replace(" ", "\\ ") for c in v.choices) + ")"
    if v.kind == "file":
        if v.suffixes:
            return "_files -g \"*.(" + "|".join(v.suffixes) + ")(-.)\""
        return "_files"
    if v.kind == "dir":
        return "_files -/"
    if v.kind == "iface":
        return "_net_interfaces"
    if v.kind == "profile":
        return "_amqp_profiles"
    if v.kind == "url":
        return "_amqp_url"
    return " "


def _zsh_opt(o: Opt) -> list[str]:
    excl = " ".join([*o.names, *o.off])
    group = f"({excl})" if len(o.names) + len(o.off) > 1 and not o.multiple else ""
    star = "*" if o.multiple else ""
    desc = _zdesc(o.help) if o.help else ""
    tail = ""
    if o.takes_value:
        tail = ":" + o.metavar.replace(":", "\\:") + ":" + _zaction(o.values)
    specs = []
    for n in o.names:
        suffix = ("=" if n.startswith("--") else "+") if o.takes_value else ""
        specs.append(f"'{_zq(group + star + n + suffix + '[' + desc + ']' + tail)}'")
    for n in o.off:
        specs.append(f"'{_zq(group + n + '[' + _zdesc('Not ' + o.names[0]) + ']')}'")
    return specs


def _zsh_arg(i: int, a: Arg) -> str:
    pos = "*" if a.many else str(i + 1)
    opt = "" if a.required else ":"
    return f"'{_zq(f'{pos}:{opt}{a.metavar.lower()}:{_zaction(a.values)}')}'"


def zsh(root: Cmd) -> str:
    out = [
        "#compdef amqp",
        "# zsh completion for amqp.",
        "# Written by scripts/gen_docs.py from the CLI definition: edit the CLI, then rerun it.",
        "# Install: put this file, named _amqp, in a directory on $fpath (see docs/config.md).",
        "",
        "_amqp_profiles() {",
        "    local -a names",
        "    names=(${(f)\"$(_call_program profiles command amqp --list-profiles 2>/dev/null)\"})",
        "    _describe -t profiles 'named connection' names",
        "}",
        "",
        "_amqp_url() {",
        "    # @NAME/ from the config file's profiles; the rest of a URL is free text.",
        "    if [[ $PREFIX == @* && $PREFIX != */* ]]; then",
        "        local -a names",
        "        names=(${(f)\"$(_call_program profiles command amqp --list-profiles 2>/dev/null)\"})",
        "        compset -P @",
        "        compadd -S / -- $names",
        "    else",
        "        _message 'URL: amqp[s]://[user@]host[:port][/address] or @NAME/ADDRESS'",
        "    fi",
        "}",
        "",
    ]
    for c in root.commands:
        fn = "_amqp_cmd_" + c.name.replace("-", "_")
        out.append(f"{fn}() {{")
        out.append("    _arguments -s -S \\")
        for o in c.options:
            for spec in _zsh_opt(o):
                out.append(f"        {spec} \\")
        for i, a in enumerate(c.args):
            out.append(f"        {_zsh_arg(i, a)} \\")
            if a.many:
                break
        out[-1] = out[-1].removesuffix(" \\")
        out.append("}")
        out.append("")
    out.append("_amqp() {")
    out.append("    local curcontext=$curcontext state line ret=1")
    out.append("    local -a commands")
    out.append("    commands=(")
    for c in root.commands:
        out.append(f"        '{_zq(c.name + ':' + _zdesc(c.help))}'")
    out.append("    )")
    out.append("    _arguments -C \\")
    for o in root.options:
        for spec in _zsh_opt(o):
            out.append(f"        {spec} \\")
    out.append("        '1: :->command' \\")
    out.append("        '*:: :->args' && ret=0")
    out.append("    case $state in")
    out.append("    command) _describe -t commands 'amqp command' commands && ret=0 ;;")
    out.append("    args)")
    out.append("        curcontext=${curcontext%:*:*}:amqp-$words[1]:")
    out.append("        case $words[1] in")
    for c in root.commands:
        out.append(f"        {c.name}) _amqp_cmd_{c.name.replace('-', '_')} && ret=0 ;;")
    out.append("        esac")
    out.append("        ;;")
    out.append("    esac")
    out.append("    return ret")
    out.append("}")
    out.append("")
    out.append('if [[ $zsh_eval_context[-1] == loadautofunc ]]; then')
    out.append('    _amqp "$@"')
    out.append("else")
    out.append("    compdef _amqp amqp")
    out.append("fi")
    out.append("")
    return "\n".join(out)


# --- fish -----------------------------------------------------------------------------------


def _fq(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_values(v: Values) -> str:
    if v.kind == "choice":
        return f"-x -a {_fq(' '.join(v.choices))}"
    if v.kind == "file":
        if v.suffixes:
            return f"-x -a {_fq('(__amqp_files ' + ' '.join(v.suffixes) + ')')}"
        return "-r -F"
    if v.kind == "dir":
        return "-x -a '(__fish_complete_directories)'"
    if v.kind == "iface":
        return "-x -a '(__fish_print_interfaces)'"
    if v.kind == "profile":
        return "-x -a '(__amqp_profiles)'"
    return "-x"


def fish(root: Cmd) -> str:
    out = [
        "# fish completion for amqp.",
        "# Written by scripts/gen_docs.py from the CLI definition: edit the CLI, then rerun it.",
        "# Install: copy to ~/.config/fish/completions/amqp.fish (see docs/config.md).",
        "",
        "function __amqp_cmd --description 'The amqp subcommand on the command line, if any'",
        "    set -l skip 0",
        "    for tok in (commandline -opc)[2..-1]",
        "        if test $skip = 1",
        "            set skip 0",
        "            continue",
        "        end",
        "        switch $tok",
    ]
    root_value = [n for o in root.options if o.takes_value for n in o.names]
    if root_value:
        out.append(f"            case {' '.join(root_value)}")
        out.append("                set skip 1")
    out += [
        "            case '-*'",
        "            case '*'",
        "                echo $tok",
        "                return 0",
        "        end",
        "    end",
        "    return 1",
        "end",
        "",
        "function __amqp_is --description 'Is the amqp subcommand $argv[1]?'",
        "    set -l cmd (__amqp_cmd)",
        "    test \"$cmd\" = $argv[1]",
        "end",
        "",
        "function __amqp_files --description 'Directories, and files with one of these suffixes'",
        "    set -l pattern '\\.('(string join '|' -- $argv)')$'",
        "    for f in (commandline -ct)*",
        "        if test -d $f",
        "            echo $f/",
        "        else if string match -qr -- $pattern $f",
        "            echo $f",
        "        end",
        "    end",
        "end",
        "",
        "function __amqp_profiles --description 'Named connections from the config file'",
        "    command amqp --list-profiles 2>/dev/null",
        "end",
        "",
        "function __amqp_url --description '@NAME/ for a URL'",
        "    string match -q -- '@*' (commandline -ct); or return",
        "    string match -q -- '*/*' (commandline -ct); and return",
        "    for name in (__amqp_profiles)",
        "        echo @$name/",
        "    end",
        "end",
        "",
        "complete -c amqp -f",
    ]
    for o in root.options:
        out.append(_fish_opt("__fish_use_subcommand", o))
    for c in root.commands:
        out.append(f"complete -c amqp -n __fish_use_subcommand -a {c.name} -d {_fq(_first_sentence(c.help))}")
    for c in root.commands:
        cond = f"'__amqp_is {c.name}'"
        out.append("")
        for o in c.options:
            out.append(_fish_opt(cond, o))
        for a in c.args[:1] if not any(a.many for a in c.args) else [a for a in c.args if a.many]:
            if a.values.kind == "url":
                out.append(f"complete -c amqp -n {_fq(f'__amqp_is {c.name}')} -k -a '(__amqp_url)'")
            elif a.values.kind == "file":
                if a.values.suffixes:
                    files = "(__amqp_files " + " ".join(a.values.suffixes) + ")"
                    out.append(f"complete -c amqp -n {cond} -a {_fq(files)}")
                else:
                    out.append(f"complete -c amqp -n {cond} -F")
    out.append("")
    return "\n".join(out)


def _fish_opt(cond: str, o: Opt) -> str:
    parts = ["complete -c amqp -n", cond]
    for n in o.names:
        parts.append(f"-l {n[2:]}" if n.startswith("--") else f"-s {n[1:]}")
    if o.takes_value:
        parts.append(_fish_values(o.values))
    if o.help:
        parts.append(f"-d {_fq(_first_sentence(o.help))}")
    line = " ".join(parts)
    for n in o.off:
        line += f"\ncomplete -c amqp -n {cond} -l {n[2:]} -d {_fq('Not ' + o.names[0])}"
    return line


# --- man pages ------------------------------------------------------------------------------


def _r(text: str) -> str:
    """Plain text as roff: backslashes, hyphens, and a leading dot or quote escaped."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    # groff reads ASCII; anything else by its Unicode name.
    text = re.sub(r"[^\x00-\x7f]", lambda m: f"\\[u{ord(m.group()):04X}]", text)
    return re.sub(r"^([.'])", r"\\&\1", text, flags=re.MULTILINE)


def _inline(text: str) -> str:
    """Hand-written markup: `code` in bold, *term* in italics."""
    parts = re.split(r"(`[^`]+`|\*[^*\s][^*]*\*)", text)
    out = []
    for p in parts:
        if p.startswith("`") and p.endswith("`") and len(p) > 1:
            out.append("\\fB" + _r(p[1:-1]) + "\\fR")
        elif p.startswith("*") and p.endswith("*") and len(p) > 1:
            out.append("\\fI" + _r(p[1:-1]) + "\\fR")
        else:
            out.append(_r(p))
    return "".join(out)


def read_source(name: str) -> dict[str, str]:
    """A page's hand-written sections: `## TITLE` headings, text below each."""
    path = MAN_SOURCES / f"{name}.md"
    if not path.exists():
        return {}
    sections: dict[str, str] = {}
    title = None
    lines: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            if title is not None:
                sections[title] = "\n".join(lines).strip("\n")
            title, lines = line[3:].strip().upper(), []
        elif title is not None:
            lines.append(line)
    if title is not None:
        sections[title] = "\n".join(lines).strip("\n")
    return sections


def _md_to_roff(text: str) -> list[str]:
    """Paragraphs, `- ` bullets, `term:: definition` entries, and 4-space-indented blocks
    (shown verbatim)."""
    out: list[str] = []
    blocks = re.split(r"\n\s*\n", text.strip("\n"))
    for block in blocks:
        lines = block.split("\n")
        if all(line.startswith("    ") for line in lines):
            out += [".PP", ".RS 4", ".nf"] + [_r(line[4:]) for line in lines] + [".fi", ".RE"]
        elif lines[0].startswith("- "):
            items: list[list[str]] = []
            for line in lines:
                if line.startswith("- "):
                    items.append([line[2:]])
                else:
                    items[-1].append(line.strip())
            for item in items:
                out += [".IP \\(bu 2", _inline(" ".join(item))]
        elif "::" in lines[0]:
            term, _, rest = lines[0].partition("::")
            out += [".TP", _inline(term.strip()), _inline(" ".join([rest.strip(), *(x.strip() for x in lines[1:])]).strip())]
        else:
            out += [".PP", _inline(" ".join(x.strip() for x in lines))]
    return out


def _epilog_md(text: str) -> str:
    """A --help epilog in the page source's markup: its indented lines are commands."""
    blocks = []
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        lines = block.split("\n")
        if block.strip() in ("Examples:", "Example:"):
            continue
        if all(line.startswith(" ") for line in lines):
            blocks.append("\n".join("    " + line.strip() for line in lines))
        else:
            blocks.append(block)
    return "\n\n".join(blocks)


def _exit_codes() -> list[tuple[int, str, str]]:
    """(code, name, meaning) from amqpcli.errors.Exit and the comments beside it."""
    import inspect

    from amqpcli import errors

    src = inspect.getsource(errors.Exit)
    notes = dict(re.findall(r"^\s+([A-Z_]+)\s*=\s*\d+\s*#\s*(.+)$", src, flags=re.MULTILINE))
    return [(int(e), e.name, notes.get(e.name, "")) for e in errors.Exit]


def _synopsis(c: Cmd) -> list[str]:
    words = ["[\\fIOPTIONS\\fR]"]
    if c.commands:
        words.append("\\fICOMMAND\\fR [\\fIARGS\\fR]...")
    for a in c.args:
        w = f"\\fI{_r(a.metavar)}\\fR" + ("..." if a.many else "")
        words.append(w if a.required else f"[{w}]")
    return [f".B {_r(c.full)}", " ".join(words)]


# the most values a man page lists for an option; more are left to the shell's completion
_MAN_CHOICES = 24


def _opt_entry(o: Opt) -> list[str]:
    shown = [n for n in o.names if not n.startswith("--")] + [n for n in o.names if n.startswith("--")]
    head = ", ".join(f"\\fB{_r(n)}\\fR" for n in [*shown, *o.off])
    if o.takes_value:
        head += f" \\fI{_r(o.metavar)}\\fR"
    body = _r(o.help) if o.help else ""
    listed = all(v in o.help for v in o.values.choices)
    if o.values.kind == "choice" and o.values.choices and not o.metavar.startswith("[") and not listed:
        if len(o.values.choices) > _MAN_CHOICES:  # a long list reads better from completion
            body += (" " if body else "") + (f"Shell completion offers all "
                                              f"{len(o.values.choices)} of them.")
        else:
            body += (" " if body else "") + "One of: " + ", ".join(f"\\fB{_r(v)}\\fR" for v in o.values.choices) + "."
    if o.multiple and "repeatable" not in o.help:
        body += (" " if body else "") + "Repeatable."
    if o.default and "default" not in o.help.lower():
        body += (" " if body else "") + f"Default: \\fB{_r(o.default)}\\fR."
    return [".TP", head, body or "\\&"]


def _takes(*options: str) -> Callable[[Cmd], bool]:
    return lambda c: any(n in (*o.names, *o.off) for o in c.options for n in options)


# Entries of the shared ENVIRONMENT and FILES (scripts/man/common.md) that only some
# commands read, by the options through which they read them; the others are on every
# page, and amqp(1) has them all. A page's own entry of the same name replaces the shared
# one (`amqp serve` reads AMQP_PASSWORD for another purpose).
SHARED_ENTRIES: dict[str, Callable[[Cmd], bool]] = {
    "AMQP_URL": _takes("--profile"),
    "AMQP_PASSWORD": _takes("--password-file"),
    "AMQP_CONFIG": _takes("--profile"),
    "XDG_CONFIG_HOME": _takes("--profile"),
    "SSLKEYLOGFILE": _takes("--tls-keylog"),
    "~/.config/amqp/config.toml": _takes("--profile"),
}


def _entries(text: str) -> list[tuple[str, str]]:
    """(name, block) of each `term:: text` block of a section (name "" for other blocks)."""
    out = []
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        head = block.split("\n", 1)[0]
        out.append((head.split("::", 1)[0].strip().strip("`") if "::" in head else "", block))
    return out


def shared_section(title: str, c: Cmd, own: str | None) -> str:
    """The page of `c`'s ENVIRONMENT or FILES: the shared entries that apply to it, with the
    page's `own` entries in place of those of the same name and after them."""
    mine = dict(_entries(own)) if own else {}
    blocks = []
    for name, block in _entries(read_source("common").get(title, "")):
        if name in mine:
            blocks.append(mine.pop(name))
        elif not c.name or SHARED_ENTRIES.get(name, lambda _: True)(c):
            blocks.append(block)
    blocks += mine.values()
    return "\n\n".join(blocks)


def man_page(c: Cmd, root: Cmd, version: str) -> str:
    page = c.full.replace(" ", "-")
    src = read_source(page)
    out = [
        ".\\\" Written by scripts/gen_docs.py from the CLI definition and scripts/man/" + page + ".md.",
        '.TH ' + _r(page.upper()) + f' 1 "" "amqp {version}" "amqp manual"',
        ".SH NAME",
        f"{_r(page)} \\- {_r(_first_sentence(c.help))}",
        ".SH SYNOPSIS",
        *_synopsis(c),
        ".SH DESCRIPTION",
    ]
    out += _md_to_roff(src.pop("DESCRIPTION", c.help))
    if c.commands:
        out.append(".SH COMMANDS")
        for sub in c.commands:
            out += [".TP", f"\\fB{_r(sub.name)}\\fR", _r(_first_sentence(sub.help)) + f". See \\fB{_r(PROG + '-' + sub.name)}\\fR(1)."]
    if c.args:
        out.append(".SH ARGUMENTS")
        for a in c.args:
            out += [".TP", f"\\fI{_r(a.metavar)}\\fR" + ("..." if a.many else ""), _r(a.help) or "\\&"]
    out.append(".SH OPTIONS")
    panels: dict[str | None, list[Opt]] = {}
    for o in c.options:
        panels.setdefault(o.panel, []).append(o)
    for panel, opts in sorted(panels.items(), key=lambda kv: kv[0] is not None):
        if panel is not None:
            out.append(f".SS {_r(panel)}")
        for o in opts:
            out += _opt_entry(o)
    for title in list(src):
        if title not in ("EXAMPLES", "ENVIRONMENT", "FILES", "SEE ALSO", "NOTES", "EXIT STATUS"):
            out.append(f".SH {_r(title)}")
            out += _md_to_roff(src.pop(title))
    if "EXAMPLES" in src:
        out.append(".SH EXAMPLES")
        out += _md_to_roff(src.pop("EXAMPLES"))
    elif c.epilog:
        out.append(".SH EXAMPLES")
        out += _md_to_roff(_epilog_md(c.epilog))
    if "NOTES" in src:
        out.append(".SH NOTES")
        out += _md_to_roff(src.pop("NOTES"))
    out.append(".SH EXIT STATUS")
    for code, name, note in _exit_codes():
        out += [".TP", f"\\fB{code}\\fR", _r(f"{name.lower().replace('_', ' ')}: {note}" if note else name.lower())]
    exits = src.pop("EXIT STATUS", None) or read_source("common").get("EXIT STATUS")
    if exits:
        out += _md_to_roff(exits)
    for title in ("ENVIRONMENT", "FILES"):
        text = shared_section(title, c, src.pop(title, None))
        if text:
            out.append(f".SH {title}")
            out += _md_to_roff(text)
    out.append(".SH SEE ALSO")
    others = [f"{PROG}-{s.name}" for s in root.commands if s is not c]
    if c is not root:
        others.insert(0, PROG)
    see = ", ".join(f"\\fB{_r(n)}\\fR(1)" for n in others)
    extra = src.pop("SEE ALSO", None)
    out.append(see)
    if extra:
        out += _md_to_roff(extra)
    out.append("")
    return "\n".join(out)


# --- writing and checking -------------------------------------------------------------------


def render(root: Cmd) -> dict[str, str]:
    """Every generated file: path relative to the repository -> text."""
    from amqpcli import __version__

    files = {
        "completions/amqp.bash": bash(root),
        "completions/_amqp": zsh(root),
        "completions/amqp.fish": fish(root),
        "man/amqp.1": man_page(root, root, __version__),
    }
    for c in root.commands:
        files[f"man/amqp-{c.name}.1"] = man_page(c, root, __version__)
    return files


def write(files: dict[str, str], base: Path) -> None:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def stale(files: dict[str, str], base: Path) -> list[str]:
    """Generated files that differ from (or are missing in) `base`, and files in the
    generated folders that nothing generates any more."""
    out = []
    for rel, text in files.items():
        path = base / rel
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            out.append(rel)
    for folder in ("completions", "man"):
        for path in sorted((base / folder).glob("*")):
            rel = f"{folder}/{path.name}"
            if path.is_file() and rel not in files:
                out.append(rel)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=REPO, help="write under this directory")
    ap.add_argument("--check", action="store_true", help="only compare with the files under --out")
    args = ap.parse_args(argv)
    files = render(read_cli())
    if args.check:
        bad = stale(files, args.out)
        for rel in bad:
            old = (args.out / rel).read_text(encoding="utf-8").splitlines() if (args.out / rel).exists() else []
            new = files.get(rel, "").splitlines()
            sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(old, new, rel, rel + " (from the CLI)", lineterm="", n=1))
        if bad:
            print(f"out of date: {', '.join(bad)} (run: python scripts/gen_docs.py)", file=sys.stderr)
            return 1
        return 0
    write(files, args.out)
    for rel in stale(files, args.out):
        print(f"gen_docs: {rel} is no longer generated (remove it)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
