"""A frame filter's term that cannot hold (`side:bogus`, `ch:x`, `conn:` with nothing
after it) is ignored, not applied: the log emptied (`side:bogus`, `ch:x` searched as a
word) or `conn:` kept everything, with no hint. The problem shows under the filter while
typing and as a notice on Enter; a good filter is applied as before."""

from __future__ import annotations

import asyncio
from pathlib import Path

from amqpcli.render.types import quoted
from amqpcli.tui.widgets.framelog import FrameFilter
from tests.tui.replaying import replay_app
from tests.tui.screen import screen_text
from tests.tui.terminal import terminal_keys

CAPTURE = ("captures", "rabbitmq-sasl-plain-send-recv.pcapng")


def _keys(typed: str) -> list[str]:
    return [k for ch in typed for k in terminal_keys(ch)]


def test_parse_says_what_is_wrong_and_ignores_it() -> None:
    f = FrameFilter.parse("side:bogus ch:x conn: transfer")
    assert f.side is None and f.channel is None and f.conn is None
    assert f.words == ["transfer"]  # the good term still holds; ch:x is not a word
    assert len(f.problems) == 3
    assert '"side:bogus"' in f.problems[0] and "client or server" in f.problems[0]
    assert '"ch:x"' in f.problems[1] and "channel number" in f.problems[1]
    assert '"conn:"' in f.problems[2]
    for bad in ("side:", "ch:", "ch:-1", "ch:\u00b2", "ch:70000"):  # ² is a digit int() refuses
        assert FrameFilter.parse(bad).empty and FrameFilter.parse(bad).problems, bad
    good = FrameFilter.parse("side:cl ch:0 conn:c1 -flow open")
    assert not good.problems
    assert (good.side, good.channel, good.conn, good.nots, good.words) == ("cl", 0, "c1", ["flow"], ["open"])
    assert FrameFilter.parse("SIDE:Server").side == "server"


def test_a_negated_structured_term_is_negated_not_searched_as_a_word() -> None:
    f = FrameFilter.parse("-side:server -ch:0 -conn:C1 -flow")
    assert not f.problems and not f.empty
    assert f.nots == ["flow"]  # the structured terms are not words
    assert (f.not_sides, f.not_channels, f.not_conns) == (["server"], [0], ["c1"])
    assert f.side is None and f.channel is None and f.conn is None
    for bad, why in (("-side:bogus", "client or server"), ("-side:", "client or server"),
                     ("-ch:x", "channel number"), ("-ch:\u0661", "channel number"),
                     ("-ch:70000", "channel number"), ("-conn:", "conn:")):
        g = FrameFilter.parse(bad)
        assert g.empty and len(g.problems) == 1, bad
        assert quoted(bad) in g.problems[0] and why in g.problems[0], bad


def test_a_negated_term_hides_what_it_names(testdata: Path) -> None:
    app = replay_app(testdata.joinpath(*CAPTURE))

    async def run() -> None:
        async with app.run_test(size=(160, 40)) as pilot:
            log = app.log_view
            await pilot.press(*terminal_keys("/"))
            await pilot.pause()
            everything = list(log.seqs)
            await pilot.press(*_keys("-side:server"))
            await pilot.pause()
            client = list(log.seqs)
            assert client and len(client) < len(everything)
            assert all(app.source.frames.get(s).side == "client" for s in client)
            assert not app.filter_input.has_class("-invalid")

    asyncio.run(run())


def test_a_bad_term_is_said_not_applied(testdata: Path) -> None:
    app = replay_app(testdata.joinpath(*CAPTURE))

    async def run() -> None:
        async with app.run_test(size=(160, 40)) as pilot:
            def notices() -> list[str]:
                return [str(n.message) for n in app._notifications]  # type: ignore[attr-defined]

            log = app.log_view
            await pilot.press(*terminal_keys("/"))
            await pilot.pause()
            assert app.filter_input.has_focus
            everything = list(log.seqs)
            assert everything

            # a good filter: applied as before, nothing said
            await pilot.press(*_keys("side:server"))
            await pilot.pause()
            server = list(log.seqs)
            assert server and len(server) < len(everything)
            assert all(app.source.frames.get(s).side == "server" for s in server)
            assert app.filter_input.border_subtitle is None
            assert not app.filter_input.has_class("-invalid")
            await pilot.press(*terminal_keys("Enter"))
            await pilot.pause()
            assert notices() == []

            for bad, why in (("side:bogus", "client or server"), ("ch:x", "channel number")):
                await pilot.press(*terminal_keys("/"))
                await pilot.pause()
                app.filter_input.value = ""
                await pilot.press(*_keys(bad))
                await pilot.pause()
                # while typing: said under the input, no notice yet, the log not emptied
                assert app.filter_input.has_class("-invalid")
                assert why in screen_text(app)
                assert notices() == []
                assert log.seqs == everything
                await pilot.press(*terminal_keys("Enter"))
                await pilot.pause()
                said = notices()
                assert len(said) == 1 and f'"{bad}"' in said[0] and why in said[0], said
                assert log.seqs == everything
                assert app.filter_input.has_class("-invalid")  # still, out of focus
                app.clear_notifications()
                await pilot.pause()

    asyncio.run(run())
