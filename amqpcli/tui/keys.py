"""Every key of the TUI in one table: the app's bindings and the help screen both read it.

A group names the sources where its keys work (each source lists its groups in
`Source.key_groups`); the app hides the others from the footer and refuses them.
"""

from __future__ import annotations

from textual.binding import Binding

# (key, action, footer label, help text, group, shown in the footer)
# Keys are named as Textual names what a terminal sends: `.` is `full_stop`, `+` is `plus`
# (tests/tui/test_terminal_keys.py feeds the documented keys through its parser).
KEYS: list[tuple[str, str, str, str, str, bool]] = [
    ("question_mark", "help", "Help", "this screen", "everywhere", True),
    ("q", "quit", "Quit", "quit", "everywhere", True),
    ("ctrl+q", "quit", "Quit", "quit, also from a prompt, the filter or the palette", "everywhere", False),
    ("ctrl+c", "interrupt", "Quit", "the same; the command then exits 130 (interrupted)",
     "everywhere", False),
    ("1", "tab('link')", "Link", "link tab: termini, flow, unsettled maps", "everywhere", False),
    ("2", "tab('delivery')", "Delivery", "delivery tab: timeline and message", "everywhere", False),
    ("3", "tab('frames')", "Frames", "frame log", "everywhere", False),
    ("t", "toggle_tree", "Tree", "hide / show the connection tree (more room for the tabs)",
     "everywhere", False),
    ("slash", "filter", "Filter", "filter the frame log (word -word side: ch: conn:)", "everywhere", True),
    ("f", "freeze", "Freeze", "freeze / follow the frame log (frames keep arriving)", "everywhere", True),
    ("x", "raw", "Raw", "delivery: decoded message / hex bytes", "everywhere", False),
    ("p", "play", "Play", "play / pause", "replay", True),
    ("full_stop", "step(1)", "Step", "one frame forward", "replay", True),
    ("comma", "step(-1)", "Back", "one frame back", "replay", True),
    ("greater_than_sign", "step(100)", "+100", "100 frames forward", "replay", False),
    ("less_than_sign", "step(-100)", "-100", "100 frames back", "replay", False),
    ("plus,equals_sign", "speed(2.0)", "Faster", "play twice as fast", "replay", False),
    ("minus", "speed(0.5)", "Slower", "play half as fast", "replay", False),
    ("g", "goto", "Jump", "jump to frame N, a connection's frame (c3:N) or t+seconds", "replay", True),
    ("c", "credit", "Credit", "grant credit on our receiving link", "recv", True),
    ("d", "drain", "Drain", "drain our receiving link", "recv", True),
    ("a", "settle('accepted')", "Accept", "settle the selected delivery: accepted", "settle", True),
    ("r", "settle('rejected')", "Reject", "settle the selected delivery: rejected", "settle", False),
    ("l", "settle('released')", "Release", "settle the selected delivery: released", "settle", False),
    ("m", "settle('modified')", "Modify", "settle the selected delivery: modified (failed)", "settle", False),
    ("s", "send", "Send", "send another message on our sending link", "send", True),
]

GROUP_TITLES = {
    "everywhere": "Everywhere",
    "replay": "Replay (--pcap)",
    "recv": "Our receiving link (URL --recv)",
    "settle": "Settling by hand (URL --recv, and --serve: messages sent to us)",
    "send": "Our sending link (URL --send)",
}

NAV_HELP = [
    ("↑ ↓ Enter", "move in the tree / table; Enter opens a delivery"),
    ("Tab", "next pane"),
    ("ctrl+p", "command palette"),
]


def bindings() -> list[Binding | tuple[str, str] | tuple[str, str, str]]:
    # ctrl keys take priority: they work in the help screen, a prompt, the filter input
    # and the palette too, where plain keys are typed or close the modal.
    return [Binding(k, a, label, show=show, key_display=_pretty(k), priority=k.startswith("ctrl+"))
            for k, a, label, _, _, show in KEYS]


def _pretty(key: str) -> str:
    names = {
        "question_mark": "?", "slash": "/", "full_stop": ".", "comma": ",",
        "greater_than_sign": ">", "less_than_sign": "<", "plus,equals_sign": "+",
        "minus": "-",
    }
    return names.get(key, key)


def action_group(action: str) -> str:
    for _, a, _, _, group, _ in KEYS:
        if a.split("(")[0] == action:
            return group
    return "everywhere"


HELP: list[tuple[str, list[tuple[str, str]]]] = [
    (title, [(_pretty(k), h) for k, _, _, h, g, _ in KEYS if g == group])
    for group, title in GROUP_TITLES.items()
] + [("Navigation", NAV_HELP)]
