"""A watcher's screen: told a round's end before anything else (it came in between two rounds,
or a host sends things in a strange order), it shows the scores by seat numbers and keeps
running (it was a crash: `max(8)` of no names); its hand panel says it is watching, and its
footer offers no cursor keys."""

from __future__ import annotations

import random

from textual.widgets import Static

from engine.match import Match
from netplay.session.events import GameSession, MatchStarted, RoundEnded, RoundStarted, SeatInfo
from tests.tui.test_footer_fits import footer_keys
from tests.tui.test_join_flood import wait_for
from tui.app import CardApp
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
