"""What tripped a new player (issue 13), each checked the way a player meets it, with Pilot."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from textual.widgets import Static

from engine.hekata import HekataEffect, HekataMove, parse_trick
from engine.house import HouseRules
from netplay.session.events import Notice
from tests.tui.conftest import app_from_deal, fresh_app, game_screen, log_text, settle
from tui.app import CardApp
from tui.commands import host as host_command
from tui.matchsetup import MatchOptions, new_match, resume_match, save_path
from tui.screens.dialogs import ConfirmQuit, MatchResult
from tui.screens.hekata import HekataScreen
from tui.screens.help import RULES, HelpScreen, how_to_play
from tui.screens.start import StartScreen
from tui.screens.zodiak import ZodiakScreen
from tui.settings import load_settings, load_stats
from tui.widgets.gamelog import GameLog
from tui.widgets.hand import CardRow
from tui.widgets.trick_builder import TrickBuilder
from tui.words import hekata_words, plain_document, pretty_cards

SEATS = [{"name": "Me", "sign": "leo"}, {"name": "Ada", "sign": "pisces", "bot": "greedy"}]
HEKATA_SEATS = [{"name": "Me"}, {"name": "Ada", "bot": "greedy"}, {"name": "Boris", "bot": "greedy"},
                {"name": "Cleo", "bot": "greedy"}]


def zodiak_app(hand: list[str], pile: str = "9H"):
    """Me to move first against Ada, holding `hand`."""
    return app_from_deal("zodiak", SEATS, 1, {
        "hands": [hand, ["2D", "3D", "4H", "5C", "6C", "7D", "QD"]],
        "pile": [pile], "stock": ["4D", "2H", "6H", "7S"]})


def big_table_app(lays: int = 16):
    """Hekata for four, 18 cards on the table after every seat laid `lays` cards alone."""
    hands = [[0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2], [2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4],
             [4, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 7], [7, 7, 7, 7, 8, 8, 8, 8, 8, 9, 9, 9]]
    laid = {0: "1", 1: "3", 2: "5", 3: "7"}
    moves = [{"seat": i % 4, "play": laid[i % 4]} for i in range(lays)]
    record = {"game": "hekata", "seats": [{"name": s["name"]} for s in HEKATA_SEATS],
              "dealer": 0, "deal": {"hands": hands, "table": [9, 9], "stock": []},
              "moves": moves, "scores": [9774, 3],
              "cardtui": {"seats": HEKATA_SEATS, "my_seat": 0, "seed": 7, "moves_made": 0,
                          "rounds_played": 0}}
    path = save_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return CardApp(resume_match(0.0), pace=0.0)


def status(screen) -> str:
    return str(screen.query_one("#status").render())


def screen_text(app: CardApp) -> str:
    """The screen as plain text, one line per terminal row."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


# -- 1: the host's own seat survives `cardtui host --resume` ------------------------------------


def test_the_hosts_seat_file_lives_beside_the_save() -> None:
    save = Path("/tmp/x/hosted.json")
    assert host_command.host_seat_file(save) == Path("/tmp/x/hosted.seat.json")


# -- 2: enter on an unplayable card does not trap it in the run ---------------------------------


async def test_enter_on_an_unplayable_card_leaves_the_run_empty() -> None:
    app = zodiak_app(["9S", "10S", "5H", "4C"])
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert screen.hand[1].rank == 10
        await pilot.press("right", "enter")  # 10♠ on 9♥
        assert screen.selected == []
        assert "10♠ does not match 9♥" in status(screen)
        await pilot.press("left", "enter")  # 9♠ matches: enter now plays it
        await settle(pilot)
        assert "Me plays 9♠" in log_text(app)


async def test_a_refused_run_says_how_to_clear_it() -> None:
    app = zodiak_app(["9S", "10S", "5H", "4C"])
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        await pilot.press("right", "space", "enter")
        assert screen.selected and "esc clears the run" in status(screen)
        await pilot.press("escape")
        assert screen.selected == []


# -- 3 and 5: long Hekata lines are whole, grouped; big tables fit ------------------------------


def test_a_trick_line_keeps_its_total_grouped() -> None:
    trick = parse_trick("76590 + 1_")
    effect = HekataEffect(1, HekataMove(0, trick), total=76_600)
    assert hekata_words("Boris", effect).endswith("= 76,600")


async def test_the_side_log_wraps_long_lines_instead_of_cutting_them() -> None:
    app = fresh_app("hekata", 4, seed=8)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        text = "Boris lays 8 and takes 48 + 32 + 2_ = 100 and the rest of a very long line ends HERE"
        screen.write_log(text)
        await pilot.pause()
        log = screen.query_one("#side-log", GameLog)
        assert "ends HERE" in screen_text(app)  # wrapped inside the box, not cut at its edge
        assert all(strip.cell_length <= log.scrollable_content_region.width for strip in log.lines)


async def test_a_big_hekata_table_leaves_the_hand_and_status_on_an_80x24_screen() -> None:
    app = big_table_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert isinstance(screen, HekataScreen) and len(screen.view.table) == 18
        hand, status_line = screen.query_one("#hand"), screen.query_one("#status")
        assert hand.region.bottom <= status_line.region.y and status_line.region.bottom <= 23
        assert status_line.region.height >= 1 and hand.region.height >= 5
        assert screen.query_one("#table", CardRow).region.width > 70  # full width, not beside


async def test_long_scores_keep_every_digit_in_the_players_panel() -> None:
    app = big_table_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        screen.scores = (998_774_434_512, 3)
        screen.show_view()
        await pilot.pause()
        assert "998,774,434,512" in screen_text(app)


# -- 6 and 7: the end of a deal and of the match ------------------------------------------------


async def test_deal_titles_name_teams_with_the_right_verb() -> None:
    app = fresh_app("hekata", 4, seed=8)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert screen.round_title(1, 94500) == "Ada & Cleo win the deal, taking 94,500."
        assert screen.round_title(0, 100) == "Your team wins the deal, taking 100."
    two = fresh_app("hekata", 2, seed=8)
    async with two.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert screen.round_title(1, 300) == "Ada wins the deal, taking 300."


async def test_a_deal_the_match_ends_is_not_called_won() -> None:
    """RULES 2.4: the match ends the moment a team reaches 10,000, so its deal is cut short."""
    app = fresh_app("hekata", 4, seed=8)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        screen.scores = (9_400, 10_200)
        assert screen.round_title(1, 800) == (
            "The match ends in this deal; Ada & Cleo took the most in it, 800.")
        assert "Your team took" in screen.round_title(0, 900)


async def test_round_scores_have_a_header_and_only_zodiak_counts_cards_left() -> None:
    zodiak = fresh_app("zodiak", 3, seed=8)
    async with zodiak.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        head, *rows = screen.score_lines((12, 0, 30)).split("\n\n")[0].splitlines()
        assert head.split() == ["Cards", "Score"]
        assert len(rows) == 3 and rows[2].split()[-1] == "30"
        assert rows[2].split()[-2].isdigit()
    hekata = fresh_app("hekata", 2, seed=8)
    async with hekata.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        head, *rows = screen.score_lines((300, 0)).split("\n\n")[0].splitlines()
        assert head.split() == ["Score"] and rows[0].split()[-1] == "300"


async def test_a_won_match_offers_a_rematch_with_the_same_seats() -> None:
    app = app_from_deal("zodiak", SEATS, 1, {
        "hands": [["7H"], ["AS", "9D", "JC", "QH", "5C", "6C", "10D"]],
        "pile": ["2H"], "stock": ["4D", "5H"]}, scores=[50, 0])
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        result = await settle(pilot)
        assert isinstance(result, MatchResult)
        await pilot.press("v")  # look back at the table
        await pilot.pause()
        screen = game_screen(app)
        assert app.screen is screen and screen.reviewing
        assert "r shows the result again" in status(screen)
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, MatchResult)
        old = app.session
        await pilot.press("r")  # rematch
        screen = await settle(pilot)
        assert app.session is not old
        assert [s.name for s in app.session.seats] == ["Me", "Ada"]
        assert screen.scores == (0, 0)
    stats = load_stats()
    assert stats.played == {"zodiak": 1} and stats.won == {"zodiak": 1}


async def test_a_rematch_keeps_the_house_rules() -> None:
    """A match to 5 (`--house target=5`) is played again to 5, not to the game's 55."""
    app = app_from_deal("zodiak", SEATS, 1, {
        "hands": [["7H"], ["AS", "9D", "JC", "QH", "5C", "6C", "10D"]],
        "pile": ["2H"], "stock": ["4D", "5H"]}, house="target=5")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # 7H goes out: more than 5 points
        assert isinstance(await settle(pilot), MatchResult)
        old = app.session
        await pilot.press("r")
        await settle(pilot)
        assert app.session is not old
        assert str(app.session.match.house) == "target=5"
        assert app.sub_title.endswith("first to 5"), app.sub_title


# -- 8: back from the trick builder -------------------------------------------------------------


async def test_back_from_the_builder_restores_the_cursor_and_the_status() -> None:
    app = app_from_deal("hekata", [{"name": "Me"}, {"name": "Ada", "bot": "greedy"}], 0, {
        "hands": [[9, 3, 4, 5, 6, 7], [2, 2, 3, 3, 4, 4]], "table": [3, 5, 9, 8],
        "stock": [5, 5, 6, 6, 7, 7, 8, 8]})
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        await pilot.press("h")
        assert screen.query(TrickBuilder)
        await pilot.press("b")
        await pilot.pause()
        assert not screen.query(TrickBuilder)
        assert screen.query_one("#hand", CardRow).cursor == screen.cursor
        assert status(screen).startswith("Your turn")


# -- 9: the start screen ------------------------------------------------------------------------


async def test_a_new_match_asks_before_replacing_the_saved_one() -> None:
    save_path().parent.mkdir(parents=True, exist_ok=True)
    zodiak_app(["9S", "10S"])  # writes the save file
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuit) and "saved match" in app.screen.question
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)


async def test_house_rules_the_game_cannot_use_are_refused_before_the_save_question() -> None:
    """max-row for Zodiak: the start screen asked "Start a new match anyway?" first, and said
    the rules were wrong only after y."""
    save_path().parent.mkdir(parents=True, exist_ok=True)
    zodiak_app(["9S", "10S"])  # writes the save file
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0,
                                        house=HouseRules(max_row=4)))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        assert "max-row caps the rows of a Hekata trick" in str(
            app.screen.query_one("#start-error", Static).render())


# -- 10: errors say what to do ------------------------------------------------------------------


def test_a_busy_port_suggests_another(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = host_command.run(_host_args(port, tmp_path))
    assert code == 2
    err = capsys.readouterr().err
    assert f"port {port} is already in use" in err and "--port" in err


def _host_args(port: int, tmp_path: Path):
    import argparse

    parser = argparse.ArgumentParser()
    host_command.add_arguments(parser)
    return parser.parse_args(["--headless", "--bind", "127.0.0.1", "--port", str(port),
                              "--save", str(tmp_path / "hosted.json")])


def test_a_corrupt_save_names_its_file() -> None:
    save_path().parent.mkdir(parents=True, exist_ok=True)
    save_path().write_text("")
    with pytest.raises(ValueError) as caught:
        resume_match(0.0)
    assert str(save_path()) in str(caught.value) and "move it away" in str(caught.value)


# -- 11: --ascii draws only ASCII ---------------------------------------------------------------


@pytest.mark.parametrize("game, players", [("zodiak", 3), ("hekata", 4)])
async def test_ascii_only_shows_no_unicode(game: str, players: int) -> None:
    session = new_match(MatchOptions(game, players, "Me", "leo", ("greedy",), 3, 0.0))
    app = CardApp(session, ascii_only=True, pace=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.pause()
        text = screen_text(app)
        assert all(ord(ch) < 128 for ch in text), [ch for ch in text if ord(ch) >= 128][:10]


# -- 12 and 13: the log in symbols and names, retold after a resume -----------------------------


def test_card_codes_become_symbols_and_a_declared_suit_is_spelled_out() -> None:
    assert pretty_cards("10S does not match 9H") == "10♠ does not match 9♥"
    assert pretty_cards("plays 8D/C") == "plays 8♦ (wild: ♣ clubs)"
    assert pretty_cards("plays 8D/C", ascii_only=True) == "plays 8D (wild: C clubs)"


async def test_a_resumed_match_retells_the_round_in_names() -> None:
    first = zodiak_app(["9S", "10S", "5H", "4C"])
    async with first.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # 9♠
        await settle(pilot)
        await pilot.press("q", "y")
        await pilot.pause()
    again = CardApp(resume_match(0.0), pace=0.0)
    async with again.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = log_text(again)
        assert "Me plays 9♠" in text and "seat " not in text
        # The line under the table shows the round's last move again, not nothing.
        last = str(game_screen(again).query_one("#last-move").render())
        assert last.startswith("Last move: ") and len(last) > len("Last move: "), last


async def test_your_own_zodiac_card_is_starred_and_logged() -> None:
    app = zodiak_app(["KH", "KC", "KS", "KD", "9S", "4C"], pile="9H")  # leo's card is a king
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        faces = screen.query_one("#hand", CardRow).faces
        zodiac = screen.view.zodiac_card(0)
        assert [f.special for f in faces] == [c == zodiac for c in screen.hand]


# -- 14: big and small windows ------------------------------------------------------------------


async def test_a_window_below_80x24_says_so() -> None:
    app = fresh_app("zodiak", 2, seed=1)
    async with app.run_test(size=(70, 20)) as pilot:
        screen = await settle(pilot)
        assert screen.has_class("-too-small")
        assert screen.query_one("#too-small").display and "80" in str(
            screen.query_one("#too-small").render())
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not screen.has_class("-too-small")


async def test_a_window_below_80x24_takes_no_move_keys_until_it_grows() -> None:
    app = zodiak_app(["9S", "10S", "JS", "4C"])
    async with app.run_test(size=(70, 20)) as pilot:
        screen = await settle(pilot)
        hand = list(screen.hand)
        assert screen.check_action("draw", ()) is False
        assert screen.check_action("quit_match", ()) is not False
        await pilot.press("d", "enter", "space")
        await pilot.pause()
        assert list(screen.hand) == hand  # nothing drawn or played blind
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert screen.check_action("draw", ()) is not False


async def test_no_empty_last_run_box_and_a_run_on_one_line_at_120x40() -> None:
    app = zodiak_app(["9S", "10S", "JS", "4C"])
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        assert not screen.query_one("#last-run").visible or not screen.query_one(
            "#last-run").region.height
        await pilot.press("space", "right", "space", "right", "space", "enter")
        await pilot.pause()
        row = screen.query_one("#last-run", CardRow)
        assert row.region.height and len(row.faces) == 3
        assert row.content_region.height == 6  # one line of large cards


# -- 15: quit dialogs ---------------------------------------------------------------------------


async def test_the_quit_question_has_no_literal_backticks() -> None:
    app = fresh_app("zodiak", 2, seed=1)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuit) and "`" not in app.screen.question


# -- 17: the small things -----------------------------------------------------------------------


async def test_you_are_marked_and_home_end_move_the_cursor() -> None:
    app = fresh_app("zodiak", 3, seed=5)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert "Me (you)" in screen_text(app)
        await pilot.press("end")
        assert screen.cursor == len(screen.hand) - 1
        await pilot.press("home")
        assert screen.cursor == 0


def test_bots_never_share_a_sign() -> None:
    for seed in range(30):
        match = new_match(MatchOptions("zodiak", 4, "Me", "leo", ("greedy",), seed, 0.0))
        signs = [s.sign for s in match.seats]
        assert len(set(signs)) == 4


async def test_the_theme_and_the_hand_order_are_remembered() -> None:
    app = fresh_app("zodiak", 3, seed=5)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        await pilot.press("f9")
        theme = app.theme
        await pilot.press("o")
        await pilot.pause()
        ranks = [c.rank for c in screen.hand]
        assert ranks == sorted(ranks)
    assert load_settings().theme == theme and load_settings().hand_order == "rank"
    again = fresh_app("zodiak", 3, seed=5)
    async with again.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert again.theme == theme


async def test_no_your_turn_while_the_host_is_away() -> None:
    app = zodiak_app(["9S", "10S", "5H", "4C"])
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert screen.my_turn and screen.has_class("-your-turn")
        app.session.emit(Notice("the host is away; waiting for it to come back", "warning",
                                state=True))
        await pilot.pause()
        await pilot.pause()
        assert not screen.my_turn and "host is away" in status(screen)
        app.session.emit(Notice("the host is back", state=True))
        await pilot.pause()
        await pilot.pause()
        assert screen.my_turn


async def test_the_last_move_is_highlighted_then_fades() -> None:
    app = zodiak_app(["9S", "10S", "5H", "4C"])
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert screen.last_mover is not None
        assert screen.query_one("#last-move").has_class("-fresh")
        screen.fade_last_move()  # what the timer does after a moment
        assert screen.last_mover is None and not screen.query_one("#last-move").has_class("-fresh")


async def test_the_bell_rings_on_your_turn_when_wanted() -> None:
    from tui.settings import Settings

    rings: list[int] = []
    session = new_match(MatchOptions("zodiak", 2, "Me", "leo", ("greedy",), 3, 0.0))
    app = CardApp(session, pace=0.0, settings=Settings(bell=True))
    app.bell = lambda: rings.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        assert isinstance(screen, ZodiakScreen) and screen.my_turn
        assert rings


# -- settings that stay -------------------------------------------------------------------------


async def test_settings_are_saved_and_become_the_start_screens_defaults() -> None:
    from textual.widgets import Input, Switch

    from tui.screens.settings import SettingsScreen

    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SettingsScreen)
        screen.query_one("#set-name", Input).value = "Zoe"
        screen.query_one("#set-bell", Switch).value = True
        screen.query_one("#set-speed").value = "fast"
        screen.query_one("#set-cards").value = "ascii"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        assert app.screen.query_one("#name", Input).value == "Zoe"
        assert app.ascii_only and app.has_class("-ascii")
    saved = load_settings()
    assert (saved.name, saved.bell, saved.bot_speed, saved.card_style) == (
        "Zoe", True, "fast", "ascii")


async def test_escape_leaves_the_settings_as_they_were() -> None:
    from textual.widgets import Input

    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("s")
        await pilot.pause()
        app.screen.query_one("#set-name", Input).value = "Zoe"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
    assert load_settings().name == ""


def test_a_garbled_settings_file_gives_defaults(tmp_path: Path) -> None:
    from tui.settings import Settings, settings_path

    settings_path().parent.mkdir(parents=True, exist_ok=True)
    for text in ("", "[]", '{"bot_speed": "warp", "bell": "yes", "name": 7}', "{"):
        settings_path().write_text(text)
        assert load_settings() == Settings()
    settings_path().write_text('{"bot_speed": "slow", "sign": "virgo", "junk": 1}')
    assert (load_settings().bot_speed, load_settings().sign) == ("slow", "virgo")


# -- the start screen leads everywhere ----------------------------------------------------------


@pytest.mark.usefixtures("mdns_alone")  # no flood of another test in its list
async def test_join_lists_lan_tables_and_enter_joins_one() -> None:
    from netplay.relay.lan import LanAnnouncement
    from tui.screens.netstart import JoinScreen

    announcement = await LanAnnouncement.start(17957, "127.0.0.1", "zodiak", 3, "Hana",
                                               interfaces=["127.0.0.1"])
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0))
    app.lan_interfaces = ["127.0.0.1"]
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("j")
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, JoinScreen)
            for _ in range(400):
                await pilot.pause(0.05)
                if screen.browser is not None and any(
                        t.port == 17957 for t in screen.browser.tables.values()):
                    break
            screen.show_tables()
            await pilot.pause()
            table = screen.query_one("#lan-tables")
            keys = [key.value for key in table.rows]
            table.move_cursor(row=next(i for i, k in enumerate(keys)
                                       if screen.browser.tables[k].port == 17957))
            table.focus()
            await pilot.press("enter")
            await pilot.pause()
    finally:
        await announcement.close()
    assert app.next_command == ["join", "127.0.0.1:17957", "--name", "Me", "--sign", "leo"]


async def test_join_takes_a_typed_address() -> None:
    from textual.widgets import Input

    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0))
    app.lan_interfaces = ["127.0.0.1"]
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("j")
        await pilot.pause()
        app.screen.query_one("#join-address", Input).focus()
        await pilot.press(*"127.0.0.1:7777", "enter")
        await pilot.pause()
    assert app.next_command == ["join", "127.0.0.1:7777", "--name", "Me", "--sign", "leo"]


async def test_host_from_the_start_screen_makes_the_host_command() -> None:
    from textual.widgets import Select, Static

    from tui.screens.netstart import HostSetup

    app = CardApp(defaults=MatchOptions("hekata", 4, "Me", "leo", seed=1, speed=0.0))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, HostSetup)
        app.screen.query_one("#host-bots", Select).value = 3
        await pilot.pause()
        app.screen.query_one("#host-players", Select).value = 2
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "at least your own seat" in str(app.screen.query_one("#host-error", Static).render())
        app.screen.query_one("#host-bots", Select).value = 1
        await pilot.press("ctrl+s")
        await pilot.pause()
    assert app.next_command == ["host", "--game", "hekata", "--players", "2", "--bots", "1",
                                "--port", "7777", "--name", "Me"]


def test_the_help_texts_in_ascii_are_ascii() -> None:
    for text in (how_to_play("zodiak"), how_to_play("hekata"), how_to_play(), RULES.read_text()):
        assert plain_document(text).isascii()
    assert plain_document("2♠ 3♠ on a 2♥; ←→↑↓ • — Šibenik") == "2S 3S on a 2H; arrows * - Sibenik"


async def test_ascii_only_help_pages_show_no_unicode() -> None:
    """Both help pages, top to bottom: suits as letters, keys in words, ASCII bullets, tables
    and rules without box-drawing lines (Textual's own Markdown has them all)."""
    session = new_match(MatchOptions("zodiak", 3, "Me", "leo", ("greedy",), 3, 0.0))
    app = CardApp(session, ascii_only=True, pace=0.0)
    async with app.run_test(size=(80, 150)) as pilot:  # tall: fewer pages to turn
        await settle(pilot)
        await pilot.press("question_mark")
        for page in ("how", "rules"):
            if page == "rules":
                await pilot.press("r")
            await pilot.pause()
            help_screen = app.screen
            assert isinstance(help_screen, HelpScreen) and help_screen.showing == page
            scroller = help_screen.query_one(f"#{page}")
            seen = ""
            while True:
                await pilot.pause()
                seen += screen_text(app)
                if scroller.scroll_y >= scroller.max_scroll_y:
                    break
                await pilot.press("pagedown")
            assert all(ord(ch) < 128 for ch in seen), sorted({ch for ch in seen if ord(ch) > 127})
            assert "arrows" in seen or page == "rules"
        assert "* " in seen and "(our reading)" in seen


async def test_ascii_only_scroll_bars_draw_no_block_glyphs() -> None:
    """A long log scrolls; Textual's scroll bar ends (▁…▇) would not be ASCII."""
    session = new_match(MatchOptions("zodiak", 3, "Me", "leo", ("greedy",), 3, 0.0))
    app = CardApp(session, ascii_only=True, pace=0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settle(pilot)
        for number in range(60):
            screen.write_log(f"line {number}", note=True)
        await pilot.pause()
        for top in range(0, 40, 3):  # the bar's ends fall between cells at most positions
            screen.log_widget.scroll_to(y=top, animate=False)
            await pilot.pause()
            text = screen_text(app)
            assert all(ord(ch) < 128 for ch in text), [ch for ch in text if ord(ch) >= 128][:10]
