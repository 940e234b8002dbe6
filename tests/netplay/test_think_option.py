"""Issue 14: `--think SECONDS` bounds the expert's time per move in `play`, `host` and `serve`,
and `cardtui serve` tables seat expert bots when asked."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from engine.expert import ExpertBot
from netplay.relay.launch import start_relay
from netplay.session.events import SeatInfo
from netplay.session.local import LocalMatch
from netplay.table.host import Host, HostConfig
from netplay.table.service import BadTableRequest, TableLimits, TableRequest, TablesService
from tui.cli import build_parser
from tui.commands.play import options_from


@pytest.mark.parametrize("command", [["play", "zodiak"], ["host", "--game", "hekata"], ["serve"]])
def test_think_is_an_option_of_play_host_and_serve(command: list[str]) -> None:
    """Each command reads --think as seconds and answers a time that is not one with an error."""
    parser = build_parser(command[0])
    assert parser.parse_args([*command, "--think", "0.25"]).think == 0.25
    assert parser.parse_args(command).think is None  # the expert's default
    for bad in ("0", "-1", "nan", "inf", "soon"):
        with pytest.raises(SystemExit) as stopped:
            parser.parse_args([*command, "--think", bad])
        assert stopped.value.code == 2


def test_serve_chooses_its_tables_bot_kind() -> None:
    """`serve --bot-kind expert` makes expert the bots of tables whose creator names none."""
    parser = build_parser("serve")
    assert parser.parse_args(["serve"]).bot_kind == "greedy"
    assert parser.parse_args(["serve", "--bot-kind", "expert"]).bot_kind == "expert"
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--bot-kind", "wizard"])


async def test_play_gives_its_expert_bots_the_time() -> None:
    """`cardtui play --bots expert,greedy --think 0.3`: the expert seats think 0.3 s per move."""
    args = build_parser("play").parse_args(
        ["play", "zodiak", "--players", "3", "--bots", "expert,greedy", "--think", "0.3",
         "--speed", "0"])
    options = options_from(args)
    assert options.think == 0.3
    seats = [SeatInfo("You", "leo"), SeatInfo("A", "virgo", "expert"),
             SeatInfo("B", "aries", "greedy")]
    session = LocalMatch.new("zodiak", seats, seed=1, delay=0.0, think=options.think)
    await session.start()
    try:
        expert = session._bots[1]
        assert isinstance(expert, ExpertBot) and expert.seconds == 0.3
        assert session._bots[2].name == "greedy"
    finally:
        await session.close()


def test_host_makes_its_bots_with_the_time() -> None:
    """`cardtui host --bot-kind expert --think 0.2`: the host's expert bots think 0.2 s a move."""
    host = Host(HostConfig(game="hekata", players=2, bots=1, bot_kind="expert", think=0.2),
                on_event=lambda _: None)
    bot = host.make_bot(1, "expert")
    assert isinstance(bot, ExpertBot) and bot.seconds == 0.2
    assert host.make_bot(1, None).name == "greedy"
    default = Host(HostConfig(game="hekata", players=2), on_event=lambda _: None)
    assert default.make_bot(0, "expert").seconds == pytest.approx(0.8)


def test_table_requests_name_a_bot_kind_or_get_a_clear_error() -> None:
    """POST /tables accepts "bot_kind" (greedy, random, expert) and refuses anything else."""
    request = TableRequest.parse({"game": "zodiak", "players": 2, "bots": 1,
                                  "bot_kind": "expert"})
    assert request.bot_kind == "expert"
    assert TableRequest.parse({"game": "zodiak", "players": 2, "bots": 1}).bot_kind is None
    for bad in ("wizard", "", 3, ["expert"], {"kind": "expert"}):
        with pytest.raises(BadTableRequest, match="bot_kind must be"):
            TableRequest.parse({"game": "zodiak", "players": 2, "bots": 1, "bot_kind": bad})
    with pytest.raises(ValueError, match="bot_kind"):
        TableLimits(bot_kind="wizard")
    with pytest.raises(ValueError, match="think"):
        TableLimits(think=0)


async def test_served_tables_seat_expert_bots() -> None:
    """A served table's bots are the kind its request names, else the server's; they think as the
    server says, and a person who sits down sees them in the lobby as experts."""
    relay = await start_relay()
    service = TablesService(TableLimits(bot_kind="expert", think=0.1))
    service.relay_url = relay.url
    try:
        by_default = await service.create(TableRequest("zodiak", 3, 2), None)
        asked = await service.create(TableRequest("hekata", 2, 1, "random"), None)
        for _ in range(200):  # the host seats its bots once it is serving its room
            if sum(1 for s in by_default.host.seats if s.bot) == 2 and any(
                    s.bot for s in asked.host.seats):
                break
            await asyncio.sleep(0.05)
        assert [s.bot for s in by_default.host.seats if s.bot] == ["expert", "expert"]
        assert [s.bot for s in asked.host.seats if s.bot] == ["random"]
        bot = by_default.host.make_bot(1, "expert")
        assert isinstance(bot, ExpertBot) and bot.seconds == 0.1
    finally:
        await service.close()
        await relay.close()


def test_build_parser_is_argparse() -> None:
    """The tests above use the real command line."""
    assert isinstance(build_parser("play"), argparse.ArgumentParser)
