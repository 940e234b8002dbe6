"""The app around the games: start screen, help, resize, quitting (with a save) and resuming."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import ContentSwitcher, Input, Markdown, Select

from engine.house import HouseRules
from tests.tui.conftest import app_from_deal, fresh_app, game_screen, log_text, settle
from tui.app import CardApp
from tui.matchsetup import MatchOptions, resume_match, save_path
from tui.screens.dialogs import ConfirmQuit, MatchResult
from tui.screens.game import GameScreen
from tui.screens.hekata import HekataScreen
from tui.screens.help import HelpScreen
from tui.screens.start import StartScreen
from tui.screens.zodiak import ZodiakScreen
from tui.widgets.hand import CardRow

SEATS = [{"name": "Me", "sign": "leo"}, {"name": "Ada", "sign": "pisces", "bot": "greedy"}]


async def test_start_screen_plays_the_chosen_game() -> None:
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        # Open the game drop-down, pick Hekata, then p plays (4 players by default).
        await pilot.press("space", "down", "enter")
        assert isinstance(app.screen, StartScreen)
        # Issue 13.9: enter on the drop-down opens it again; it never starts a match.
        await pilot.press("enter")
        assert isinstance(app.screen, StartScreen)
        assert app.screen.query_one("#game", Select).expanded
        await pilot.press("escape", "p")
        screen = await settle(pilot)
        assert isinstance(screen, HekataScreen)
        assert len(screen.seats) == 4 and screen.seats[0].name == "Me"


async def test_escape_in_the_start_screens_name_field_leaves_the_field_not_the_program() -> None:
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.screen.query_one("#name", Input).focus()
        await pilot.press("b", "o", "escape")
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, StartScreen)
        assert app.screen.query_one("#name", Input).value == "bo"  # typed over the selection
        await pilot.press("escape")  # from nowhere in particular: quit
        await pilot.pause()
        assert not app.is_running


async def test_start_screen_seats_the_chosen_bot_kind() -> None:
    """Issue 14: the start screen's Bots field offers the expert; the match seats it."""
    app = CardApp(defaults=MatchOptions("zodiak", 2, "Me", "leo", seed=1, speed=0.0))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        bots = app.screen.query_one("#bot-kind", Select)
        assert bots.value == "greedy"
        bots.value = "expert"  # a Select refuses a value it does not offer
        await pilot.pause()
        assert app.screen.options().bots == ("expert",)
        await pilot.press("p")
        for _ in range(2000):  # the expert may be thinking: the screen is enough here
            await pilot.pause()
            if isinstance(app.screen, GameScreen):
                break
        assert isinstance(app.screen, GameScreen)
        assert app.screen.session.seats[1].bot == "expert"


async def test_help_shows_the_rules() -> None:
    """Help opens on how to play the game at hand; `r` shows the full rules of both games."""
    app = fresh_app("zodiak", 2, seed=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        switcher = app.screen.query_one(ContentSwitcher)
        assert switcher.current == "how"
        how = app.screen.query_one("#how-text", Markdown).source
        assert how.startswith("# How to play Zodiak") and "## Hekata" not in how
        await pilot.press("r")
        assert switcher.current == "rules"
        markdown = app.screen.query_one("#rules-text", Markdown)
        assert "Zodiak" in markdown.source and "Hekata" in markdown.source
        await pilot.press("r")
        assert switcher.current == "how"
        await pilot.press("escape")
        assert isinstance(app.screen, ZodiakScreen)


async def test_help_in_hekata_is_about_hekata() -> None:
    """From a Hekata table, help opens on how to play Hekata and the keys used everywhere."""
    app = fresh_app("hekata", 4, seed=8)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        how = app.screen.query_one("#how-text", Markdown).source
        assert how.startswith("# How to play Hekata") and "## Everywhere" in how
        assert "## Zodiak" not in how and "trick builder" in how


async def test_help_from_the_start_screen_covers_both_games() -> None:
    """Before a game is chosen, help explains both games."""
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        how = app.screen.query_one("#how-text", Markdown).source
        assert "## Zodiak" in how and "## Hekata" in how


async def test_resize_moves_the_log_and_rewraps_the_hand() -> None:
    app = fresh_app("zodiak", 4, seed=2)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        hand = screen.query_one("#hand", CardRow)
        narrow = hand.per_line()
        assert not screen.has_class("-wide")
        await pilot.resize_terminal(140, 40)
        await pilot.pause()
        assert screen.has_class("-wide") and screen.query_one("#side-log").display
        assert hand.big  # room for large card faces
        await pilot.resize_terminal(140, 24)
        await pilot.pause()
        assert not hand.big and hand.per_line() > narrow
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not screen.has_class("-wide")


async def test_quit_saves_and_resume_continues(data_dir: Path) -> None:
    app = fresh_app("zodiak", 3, seed=5)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        await pilot.press("h")
        await pilot.press("enter" if screen.selected else "d")
        screen = await settle(pilot)
        hand = list(screen.hand)
        moves = len(log_text(app).splitlines())
        await pilot.press("q")
        assert isinstance(app.screen, ConfirmQuit)
        await pilot.press("n")
        assert isinstance(app.screen, ZodiakScreen)
        await pilot.press("q", "y")
        await pilot.pause()
    assert save_path().exists() and save_path().parent == data_dir
    assert "cardtui play --resume" in (app.return_value or "")

    again = CardApp(resume_match(0.0), pace=0.0)
    async with again.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert screen.hand == hand and screen.my_turn
        await pilot.press("h")
        await pilot.press("enter" if screen.selected else "d")
        await settle(pilot)
        assert "Me " in log_text(again)
        assert moves > 0


async def test_you_cannot_act_out_of_turn() -> None:
    # Ada moves first and takes a minute about it: every key of yours is refused.
    app = app_from_deal("zodiak", SEATS, 0, {
        "hands": [["2S", "3S", "3C", "4C", "7H", "8H", "KD"],
                  ["AS", "9D", "JC", "QH", "5C", "6C", "10D"]],
        "pile": ["2H"], "stock": ["4D", "5H"]}, delay=60)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(20):
            await pilot.pause()
        screen = game_screen(app)
        assert screen.view is not None and screen.view.turn == 1 and not screen.my_turn
        await pilot.press("space", "enter", "d", "h")
        await pilot.pause()
        assert "Me " not in log_text(app)
        assert screen.check_action("play", ()) is None  # greyed out in the footer
        assert "Ada to move" in str(screen.query_one("#status").render())


async def test_ascii_mode_draws_letters() -> None:
    options = MatchOptions("zodiak", 2, "Me", "leo", ("greedy",), 3, 0.0)
    from tui.matchsetup import new_match

    app = CardApp(new_match(options), ascii_only=True, pace=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        text = str(screen.query_one("#hand", CardRow).render())
        assert "|" in text and not any(s in text for s in "♠♥♦♣╭")


async def test_the_match_result_ends_the_match() -> None:
    # 50 points and one card left: going out takes you past 55.
    app = app_from_deal("zodiak", SEATS, 1, {
        "hands": [["7H"], ["AS", "9D", "JC", "QH", "5C", "6C", "10D"]],
        "pile": ["2H"], "stock": ["4D", "5H"]}, scores=[50, 0])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        # Issue 13.6: a round that wins the match goes straight to the match's result.
        result = await settle(pilot)
        assert isinstance(result, MatchResult) and result.title_text == "You win the match!"
        assert "You go out and score 7." in result.body and "57" in result.body
        assert "Round" in result.body  # the score history (issue 13.7)
        await pilot.press("enter")
        await pilot.pause()
    assert app.return_value == "You win the match!"
    assert not save_path().exists()


async def test_start_screen_resumes_a_saved_match() -> None:
    saved = app_from_deal("zodiak", SEATS, 1, {
        "hands": [["7H", "8H"], ["AS", "9D", "JC", "QH", "5C", "6C", "10D"]],
        "pile": ["2H"], "stock": ["4D", "5H"]})
    del saved  # its match is the save file the start screen finds
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        await pilot.press("r")
        screen = await settle(pilot)
        assert isinstance(screen, ZodiakScreen)
        assert [str(c) for c in screen.hand] == ["7H", "8H"]


async def test_a_resumed_hekata_deal_shows_the_scores_of_the_tricks_already_taken(
        data_dir: Path) -> None:
    """The players panel took the deal's starting scores on a resume and showed the tricks
    already replayed only after the next move (seen at 3,700 for 3,800)."""
    app = fresh_app("hekata", 4, seed=5)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await settle(pilot)
        for _ in range(40):  # the hint's move, until a trick has scored in this deal
            assert isinstance(screen, GameScreen) and screen.view is not None
            if any(screen.view.scores) and screen.view.history and not screen.view.round_over:
                break
            await pilot.press("h", "enter")
            screen = await settle(pilot)
        else:
            raise AssertionError("no trick scored")
        taken = tuple(screen.view.scores)
        await pilot.press("q", "y")
        await pilot.pause()
    again = CardApp(resume_match(0.0), pace=0.0)
    async with again.run_test(size=(100, 30)) as pilot:
        screen = await settle(pilot)
        assert isinstance(screen, GameScreen)
        assert screen.scores == taken


async def test_leaving_a_finished_match_begun_at_the_start_screen_goes_back_there() -> None:
    """It ended the app, where the start screen is where one chooses the next match."""
    app = CardApp(defaults=MatchOptions("zodiak", 2, "Me", "leo", seed=1, speed=0.0,
                                        house=HouseRules(target=1)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        await pilot.press("p")
        for _ in range(200):  # the hint's move, until the match (one round, to 1 point) ends
            screen = await settle(pilot)
            if isinstance(screen, MatchResult):
                break
            await pilot.press("h", "enter")
        else:
            raise AssertionError("the match did not end")
        await pilot.press("enter")  # Leave
        for _ in range(50):
            await pilot.pause()
            if isinstance(app.screen, StartScreen):
                break
        assert isinstance(app.screen, StartScreen) and app.is_running
        assert app.session is None
