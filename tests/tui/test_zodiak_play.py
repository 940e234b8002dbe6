"""Zodiak through the keyboard alone: runs, illegal runs, a wild eight, ace penalties, a full round."""

from __future__ import annotations

from tests.tui.conftest import app_from_deal, fresh_app, game_screen, log_text, settle
from tui.screens.dialogs import SuitPicker, Summary
from tui.screens.zodiak import ZodiakScreen

SEATS = [{"name": "Me", "sign": "leo"}, {"name": "Ada", "sign": "pisces", "bot": "greedy"}]
# The example hand of tui/RULES.md 1.3; sorted on screen as 2S 3S 7H 8H 3C 4C KD.
MY_HAND = ["2S", "3S", "3C", "4C", "7H", "8H", "KD"]
BOT_HAND = ["AS", "9D", "JC", "QH", "5C", "6C", "10D"]
STOCK = ["4D", "5H", "6D", "7C", "9S", "10S", "JS", "QS"]
ACE_STOCK = ["2C", "3D", "4H", "5S", "6H", "7S", "8C", "9H"]


def example_app() -> object:
    return app_from_deal("zodiak", SEATS, 1, {"hands": [MY_HAND, BOT_HAND], "pile": ["2H"],
                                             "stock": STOCK})


async def test_a_run_built_card_by_card() -> None:
    app = example_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert isinstance(screen, ZodiakScreen) and screen.my_turn
        await pilot.press("space", "right", "space", "right", "right", "right", "space",
                          "right", "space")
        status = str(screen.query_one("#status").render())
        assert "Run: 2♠ 3♠ 3♣ 4♣" in status and "legal" in status
        await pilot.press("enter")
        await settle(pilot)
        assert "Me plays 2♠ 3♠ 3♣ 4♣" in log_text(app)
        held = set(map(str, screen.hand))
        assert {"7H", "8H", "KD"} <= held and not held & {"2S", "3S", "3C", "4C"}


async def test_an_illegal_run_shows_the_reason_and_is_not_sent() -> None:
    app = example_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        # 7H then 3C: the engine's reason is shown and enter sends nothing.
        await pilot.press("right", "right", "space", "right", "right", "space")
        status = str(screen.query_one("#status").render())
        assert "not legal" in status and "3♣ does not follow 7♥" in status
        await pilot.press("enter")
        await settle(pilot)
        assert "Me plays" not in log_text(app)
        assert screen.my_turn


async def test_a_wild_eight_asks_for_the_suit() -> None:
    app = example_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        await pilot.press("right", "right", "right", "enter")
        picker = await settle(pilot)
        assert isinstance(picker, SuitPicker)
        await pilot.press("d")
        await settle(pilot)
        assert "Me plays 8♥ (wild eight: ♦ diamonds next)" in log_text(app)
        assert isinstance(screen, ZodiakScreen)


async def test_an_ace_alone_makes_you_draw_two_with_one_key() -> None:
    bot = ["AH", "KS", "QS", "JS", "10S", "9S", "7D"]
    mine = ["3C", "4C", "5C", "6C", "9C", "10C", "JD"]
    app = app_from_deal("zodiak", SEATS, 0, {"hands": [mine, bot], "pile": ["2H"],
                                             "stock": ACE_STOCK})
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert "Ada plays A♥" in log_text(app)
        status = str(screen.query_one("#status").render())
        assert "draw 2 cards" in status
        await pilot.press("enter")
        await settle(pilot)
        assert "Me draws 2 cards: 2♣ 3♦" in log_text(app)  # your own draws name the cards


async def test_an_ace_answers_an_ace() -> None:
    bot = ["AH", "KS", "QS", "JS", "10S", "9S", "7D"]
    mine = ["AD", "4C", "5C", "6C", "9C", "10C", "JD"]
    app = app_from_deal("zodiak", SEATS, 0, {"hands": [mine, bot], "pile": ["2H"],
                                             "stock": ACE_STOCK})
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert "You face 2 cards" in str(screen.query_one("#status").render())
        assert screen.hand[-2].rank == 1  # AD sorts among the diamonds, before JD
        await pilot.press("left", "left", "space", "enter")
        await settle(pilot)
        text = log_text(app)
        assert "Me plays A♦" in text and "Ada draws 4 cards" in text


async def test_a_whole_round_by_keys() -> None:
    app = fresh_app("zodiak", 3, seed=11)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(300):
            screen = await settle(pilot)
            if isinstance(screen, Summary):
                break
            assert isinstance(screen, ZodiakScreen)
            await pilot.press("h")
            await pilot.press("enter" if screen.selected else "d")
        else:
            raise AssertionError("the round did not end")
        assert "goes out" in log_text(app) or "blocked" in log_text(app)
        await pilot.press("enter")
        screen = await settle(pilot)
        assert game_screen(app).round_number == 2


async def test_clicking_cards_builds_a_run() -> None:
    app = example_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        # The hand's content starts inside its border and padding; each card is 6 columns.
        for index in (0, 1):
            await pilot.click("#hand", offset=(2 + 6 * index + 2, 1 + 2))
        assert [str(c) for c in screen.selected] == ["2S", "3S"]
        assert screen.cursor == 1
        await pilot.click("#hand", offset=(2 + 6 * 1 + 2, 1 + 2))
        assert [str(c) for c in screen.selected] == ["2S"]
