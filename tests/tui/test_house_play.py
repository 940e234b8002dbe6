"""House rules in `cardtui play` (docs/RECORDS.md "House rules"): chosen on the command line,
enforced by the engine, kept in the saved match, shown in the help."""

from __future__ import annotations

import asyncio
import json

import pytest

from engine.errors import IllegalMove
from engine.hekata import HekataMove
from engine.house import HouseRules
from tui.app import CardApp
from tui.cli import build_parser
from tui.commands.play import options_from
from tui.matchsetup import resume_match, save_path
from tui.screens.dialogs import MatchResult
from tui.screens.help import HelpScreen

from .conftest import game_screen, session_of, settle


def test_house_option_reaches_the_match() -> None:
    """`cardtui play hekata --house max-row=4,target=3000` asks for those rules."""
    args = build_parser().parse_args(["play", "hekata", "--house", "max-row=4,target=3000"])
    assert options_from(args).house == HouseRules(4, 3000)
    args = build_parser().parse_args(["play", "hekata"])
    assert options_from(args).house == HouseRules()


def test_bad_house_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """A bad --house is refused with the reason, as argparse refuses any bad option."""
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["play", "hekata", "--house", "max-row=0"])
    assert exited.value.code == 2
    assert "max-row must be a whole number from 1 to 50" in capsys.readouterr().err


def _saved_deal(house: str) -> CardApp:
    seats = [{"name": "Me"}, {"name": "Ada", "bot": "greedy"}]
    record = {"game": "hekata", "seats": [{"name": "Me"}, {"name": "Ada"}], "dealer": 0,
              "deal": {"hands": [["2", "0"], ["1", "1"]], "table": ["3", "5", "9", "8", "1"],
                       "stock": ["4", "4"]},
              "moves": [], "house": house,
              "cardtui": {"seats": seats, "my_seat": 0, "seed": 7, "moves_made": 0,
                          "rounds_played": 0}}
    path = save_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    return CardApp(resume_match(0.0), pace=0.0)


async def test_house_rules_played_kept_and_shown() -> None:
    """RULES 2.3 and 2.4 with max-row=4,target=3000: a 5-card row is refused with the reason, a
    4-card one taken, and 5,500 points win the match; the help names the house rules."""
    app = _saved_deal("max-row=4,target=3000")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        session = session_of(app)
        assert session.match is not None and session.match.house == HouseRules(4, 3000)
        assert app.sub_title.endswith("first to 3,000 · max-row=4")  # on screen while playing
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert "rows of at most 4 cards" in app.screen.house.describe()
        await pilot.press("escape")
        await pilot.pause()
        assert "rows of at most 4 cards" in game_screen(app).score_lines((0, 0))
        with pytest.raises(IllegalMove, match="the row 53198 has 5 cards: the house rules allow"
                                              " rows of at most 4"):
            await session.submit(HekataMove.parse("2: 53198 + 2"))
        await session.submit(HekataMove.parse("2: 5398 + 2 + 1__"))
        result = await settle(pilot)
        assert isinstance(result, MatchResult)
        assert "5,500" in result.body or "5500" in result.body


async def test_resume_keeps_house_rules() -> None:
    """A saved match keeps its house rules: the record written back says them again."""
    app = _saved_deal("target=3000")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        data = session_of(app).saved_json()
        assert data is not None and data["house"] == "target=3000"
        assert session_of(app).match.target == 3000  # type: ignore[union-attr]


async def test_the_table_lobby_shows_the_hosts_house_rules() -> None:
    """docs/PROTOCOL.md welcome `house`: a seat learns the table's house rules and the lobby says them."""
    from netplay.relay.client import RelayConnection
    from netplay.relay.launch import start_relay
    from netplay.seat.remote import RemoteSession
    from netplay.table.host import Host, HostConfig
    from tui.screens.seats import SeatsScreen

    from .test_seats import close_table, wait_until

    relay = await start_relay()
    host = Host(HostConfig(game="hekata", players=2, seed=2, require_ready=True,
                           house=HouseRules(3, 2000)), on_event=lambda _: None)
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    me = RemoteSession(game="", url=relay.url, room=conn.room, name="Me")
    await me.start()
    await me.wait_seated()
    app = CardApp(me)
    try:
        assert me.house == HouseRules(3, 2000) and me.target == 2000
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, SeatsScreen), "the lobby")
            await wait_until(pilot, lambda: "House rules: Hekata rows of at most 3 cards; the match"
                             " is played to 2,000." in str(
                                 app.screen.query_one("#seats-help").render()), "the house rules")
    finally:
        await close_table(relay, conn, serving, me)
