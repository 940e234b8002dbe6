"""The expert's hint (H, issue 14): it thinks in a worker thread, and sets up a legal move."""

from __future__ import annotations

from engine.zodiak import Run
from tests.tui.conftest import settle
from tests.tui.test_hekata_play import deal_app
from tests.tui.test_zodiak_play import example_app
from tui.screens.hekata import HekataScreen
from tui.screens.zodiak import ZodiakScreen
from tui.widgets.trick_builder import TrickBuilder


async def wait_for_hint(pilot, screen) -> str:  # type: ignore[no-untyped-def]
    """The status once the expert's hint is shown (the worker thinks about a second)."""
    for worker in [w for w in pilot.app.workers if w.group == "hint"]:
        await worker.wait()
    await pilot.pause()
    return str(screen.query_one("#status").render())


async def test_the_expert_sets_up_a_legal_run_and_enter_plays_it() -> None:
    app = example_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert isinstance(screen, ZodiakScreen) and screen.my_turn
        await pilot.press("H")
        status = await wait_for_hint(pilot, screen)
        assert "The expert's hint" in status
        assert screen.selected, "the expert plays a run here: the 2H on the pile is followed"
        run = Run(tuple(screen.selected), screen.hint_suit)
        view = screen.round_view
        assert view is not None
        view.check(run, 0)  # the engine takes it
        await pilot.press("enter")
        await settle(pilot)
        assert not set(screen.selected) and screen.view is not view


async def test_a_hint_that_comes_after_the_turn_is_dropped() -> None:
    app = example_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert isinstance(screen, ZodiakScreen)
        thought_of = screen.view
        await pilot.press("d")  # the player draws; the bot answers; the turn comes back
        await settle(pilot)
        assert screen.my_turn and screen.view is not thought_of
        screen._think_of_hint(thought_of, screen.composing())  # for the position before
        status = await wait_for_hint(pilot, screen)
        assert "The expert's hint" not in status and not screen.selected


async def test_the_expert_fills_a_hekata_trick_or_names_the_card() -> None:
    app = deal_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert isinstance(screen, HekataScreen) and screen.my_turn
        await pilot.press("H")
        status = await wait_for_hint(pilot, screen)
        builders = screen.query(TrickBuilder)
        if builders:
            trick = builders.first().trick
            assert builders.first().is_legal and trick is not None and trick.total % 100 == 0
        else:
            assert "The expert's hint: no trick worth taking" in status


async def test_pressing_h_again_while_the_expert_thinks_starts_no_second_search() -> None:
    app = example_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert isinstance(screen, ZodiakScreen)
        screen.action_expert_hint()
        for _ in range(20):
            screen.action_expert_hint()
        searches = [w for w in app.workers if w.group == "hint"]
        assert len(searches) == 1
        status = await wait_for_hint(pilot, screen)
        assert "The expert's hint" in status


async def test_a_hint_leaves_alone_a_run_built_while_the_expert_thought() -> None:
    """H, then a card picked before the expert answers: the hint used to replace the run, so
    enter played a card the player had not chosen."""
    app = example_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert isinstance(screen, ZodiakScreen) and screen.my_turn
        asked = screen.composing()  # as H found it
        await pilot.press("end", "space")  # K♦, while the expert thinks
        chosen = list(screen.selected)
        screen._think_of_hint(screen.view, asked)
        status = await wait_for_hint(pilot, screen)
        assert screen.selected == chosen and "The expert's hint" not in status
