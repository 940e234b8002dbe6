"""The per-game objects: each game's facts in one place, agreeing with its rules module."""

from __future__ import annotations

import random

import pytest

from engine import hekata, zodiak
from engine.errors import IllegalMove
from engine.games import GAME_NAMES, GAMES, HEKATA, ZODIAK, game_named, game_of


def test_every_game_is_known_by_its_name() -> None:
    assert GAME_NAMES == ("zodiak", "hekata")
    assert all(game_named(name).name == name == str(GAMES[name]) for name in GAME_NAMES)


@pytest.mark.parametrize("name", ["", "Zodiak", "poker", None, 3])
def test_an_unknown_game_says_which_games_there_are(name: object) -> None:
    with pytest.raises(IllegalMove, match="choose zodiak or hekata"):
        game_named(name)


def test_players_each_game_allows() -> None:
    """RULES 1 (Zodiak: 2 to 4 players), 2.1 and 2.5 (Hekata: 4, or 2)."""
    assert ZODIAK.players == (2, 3, 4) and HEKATA.players == (2, 4)
    ZODIAK.check_players(3)
    with pytest.raises(IllegalMove, match="Hekata is for 2 or 4 players, not 3"):
        HEKATA.check_players(3)


def test_targets_match_the_rules_modules() -> None:
    """RULES 1.6 (a Zodiak match is played to 55) and 2.4 (a Hekata game to 10,000)."""
    assert ZODIAK.target == zodiak.MATCH_TARGET == 55
    assert HEKATA.target == hekata.GAME_TARGET == 10_000


@pytest.mark.parametrize(("game", "players"),
                         [(g, n) for g in GAMES.values() for n in g.players])
def test_the_deal_layout_is_what_the_engine_deals(game, players) -> None:
    """The layout on the wire (who gets each dealt position) agrees with the engine's deal."""
    deck = game.shuffled_deck(random.Random(players))
    state = game.deal(deck, players, game.signs_for([None] * players), 0, [0] * game.sides(players))
    layout = list(game.deal_layout(players))
    for seat in range(players):
        dealt = [deck[i] for i, owner in enumerate(layout) if owner == seat]
        assert sorted(map(str, dealt)) == sorted(map(str, state.hands[seat]))
    face_up = [deck[i] for i, owner in enumerate(layout) if owner is None]
    assert len(face_up) == game.face_up_at_start
    assert game_of(state) is game and game.owns(state)


def test_cards_and_moves_parse_by_the_games_notation() -> None:
    """RULES 3: a French card for Zodiak, a digit for Hekata."""
    assert str(ZODIAK.parse_card("10S")) == "10S" and HEKATA.parse_card("7") == 7
    assert str(ZODIAK.parse_move("2S 3S")) == "2S 3S"
    assert str(HEKATA.parse_move("5")) == "5"
    with pytest.raises(IllegalMove):
        HEKATA.parse_card("7H")


def test_summaries_name_the_winning_side() -> None:
    names = ["Ada", "Boris", "Cleo", "Dan"]
    assert ZODIAK.summary(names, 1, 12) == "Boris goes out and scores 12."
    assert ZODIAK.summary(names, None, 0).startswith("The round is blocked")
    assert HEKATA.summary(names, 0, 300) == "Ada & Cleo win the deal by taking 300."
    assert HEKATA.summary(names[:2], 1, 100) == "Boris wins the deal by taking 100."
    assert HEKATA.plays_in_teams(4) and not HEKATA.plays_in_teams(2)
    assert not ZODIAK.plays_in_teams(4)
