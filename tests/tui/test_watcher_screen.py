"""A watcher's screen: told a round's end before anything else (it came in between two rounds,
or a host sends things in a strange order), it shows the scores by seat numbers and keeps
running (it was a crash: `max(8)` of no names); its hand panel says it is watching, and its
footer offers no cursor keys."""

from __future__ import annotations

import random

from textual.widgets import Button, Static

from engine.match import Match
from netplay.session.events import (
    GameSession,
    MatchEnded,
    MatchStarted,
    RematchOffered,
    RoundEnded,
    RoundStarted,
    SeatInfo,
    SeatsChanged,
)
from tests.tui.test_footer_fits import footer_keys
from tests.tui.test_join_flood import wait_for
from tui.app import CardApp
from tui.screens.dialogs import ConfirmQuit, MatchResult
from tui.widgets.hand import CardRow


async def test_a_round_end_before_the_match_start_shows_seat_numbers_and_goes_on() -> None:
    session = GameSession(game="zodiak")  # the base session: the test queues its events
    app = CardApp(session, pace=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        session.emit(RoundEnded(None, 2, 13, (0, 0, 38), "bot 2 goes out and scores 13."))
        board = app.screen.query_one("#score-board", Static)
        await wait_for(pilot, lambda: "38" in str(board.render()), "the score board")
        assert "seat 2" in str(board.render())
        # The match start that comes next names the seats, and the board takes the names.
        match = Match("zodiak", 3, ("leo", "aries", "virgo"), dealer=0)
        state = match.start_round(match.rules.shuffled_deck(random.Random(3)))
        seats = tuple(SeatInfo(f"bot {i}") for i in range(3))
        session.emit(MatchStarted("zodiak", seats, None, 55, (0, 0, 38)))
        session.emit(RoundStarted(2, state.view(None), (0, 0, 38)))
        session.emit(RoundEnded(None, 0, 5, (5, 0, 38), "bot 0 goes out and scores 5."))
        await wait_for(pilot, lambda: "bot 0" in str(board.render()), "the names")
        # The scores won before this screen began head the table: their rounds were not seen.
        rows = str(board.render()).splitlines()
        assert rows[1].split() == ["before", "0", "0", "38"], rows
        hand = app.screen.query_one("#hand", CardRow)
        assert hand.border_title == "Watching" and "hidden" in str(hand.render())
        await pilot.pause()
        keys = footer_keys(app)
        assert "Quit" in keys and "Move" not in keys  # no hand to move along


async def test_rounds_are_numbered_from_the_matchs_first_even_for_one_who_came_late() -> None:
    """A seat back after a rematch began is told the table's rounds before the match, and a
    round whose start it never saw is numbered by its end (a score row read "0")."""
    session = GameSession(game="zodiak")
    app = CardApp(session, pace=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        match = Match("zodiak", 3, ("leo", "aries", "virgo"), dealer=0)
        state = match.start_round(match.rules.shuffled_deck(random.Random(3)))
        seats = tuple(SeatInfo(f"bot {i}") for i in range(3))
        session.emit(MatchStarted("zodiak", seats, None, 55, (0, 0, 0), rounds_before=4))
        session.emit(RoundEnded(None, 0, 5, (5, 0, 0), "bot 0 goes out and scores 5.", 6))
        session.emit(RoundStarted(7, state.view(None), (5, 0, 0)))
        screen = app.screen
        await wait_for(pilot, lambda: getattr(screen, "round_number", 0) == 3, "round 3")
        board = str(screen.query_one("#score-board", Static).render())
        assert board.splitlines()[1].split()[:2] == ["2", "5"], board


async def test_a_hekata_watcher_is_offered_no_hand_keys_and_no_rematch_to_accept() -> None:
    """A Hekata watcher's footer offered ←→ Move (that screen asked only whether a trick was
    being built); told of a rematch offer, a watcher was told "r accepts it" with no rematch
    to accept; its quit question at the match's end offered to keep playing; the result lost
    the name of a seat the table freed for the rematch."""
    session = GameSession(game="hekata")
    app = CardApp(session, pace=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        match = Match("hekata", 2, ("leo", "aries"), dealer=0)
        state = match.start_round(match.rules.shuffled_deck(random.Random(3)))
        seats = tuple(SeatInfo(f"bot {i}") for i in range(2))
        session.emit(MatchStarted("hekata", seats, None, 10_000, (0, 0)))
        session.emit(RoundStarted(1, state.view(None), (0, 0)))
        screen = app.screen
        await wait_for(pilot, lambda: getattr(screen, "round_number", 0) == 1, "the deal")
        await pilot.pause()
        keys = footer_keys(app)
        assert "Quit" in keys and "Move" not in keys and "Lay card" not in keys, keys
        session.emit(MatchEnded(0, (10_200, 300), 40))
        session.emit(SeatsChanged((SeatInfo("bot 0"), SeatInfo(""))))  # bot 1's seat freed
        session.emit(RematchOffered("bot 0"))

        def result_body() -> str:  # the result is shown again with the offer; "" meanwhile
            found = list(app.screen.query(".dialog-body").results(Static))
            return str(found[0].render()) if isinstance(app.screen, MatchResult) and found else ""

        await wait_for(pilot, lambda: "offers a rematch" in result_body(), "the offer on the result")
        body = result_body()
        assert "bot 0 offers a rematch with the same seats." in body
        assert "accepts" not in body
        assert "bot 1" in body, "the result still names who played the match"
        await pilot.press("v")  # look back, then ask to quit
        await wait_for(pilot, lambda: not isinstance(app.screen, MatchResult), "the table")
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmQuit), "the question")
        labels = [str(button.label) for button in app.screen.query(Button)]
        assert labels == ["Stop (y)", "Keep watching (n)"], labels
