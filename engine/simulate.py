"""Bot-only rounds and matches, for `cardtui sim`, the benchmarks and the playthrough tests."""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine import zodiak
from engine.bots import Bot, bot_view, make_bot
from engine.dealer import DealtRound, deal_winner
from engine.games import game_named
from engine.house import HouseRules
from engine.match import Match, Round
from engine.records import Record

MoveHook = Callable[[Round, int, object], None]


@dataclass(frozen=True)
class SimResult:
    """What a simulation produced: wins per bot kind, moves, rounds (or matches) and time."""

    rounds: int  # rounds, or matches when `deals` counts the rounds the matches took
    wins: dict[str, int]
    no_winner: int
    moves: int
    seconds: float
    deals: int = 0

    @property
    def average_length(self) -> float:
        """Moves per round."""
        return self.moves / self.rounds if self.rounds else 0.0

    @property
    def rounds_per_second(self) -> float:
        """Rounds played per second of wall time."""
        return self.rounds / self.seconds if self.seconds else float("inf")


def wilson_interval(wins: int, rounds: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval for a win rate of `wins` in `rounds`, as fractions."""
    if rounds <= 0:
        return (0.0, 1.0)
    rate = wins / rounds
    centre = (rate + z * z / (2 * rounds)) / (1 + z * z / rounds)
    spread = z * math.sqrt(rate * (1 - rate) / rounds + z * z / (4 * rounds * rounds))
    return (max(0.0, centre - spread / (1 + z * z / rounds)),
            min(1.0, centre + spread / (1 + z * z / rounds)))


def side_name(game: str, kinds: Sequence[str], winner: int) -> str:
    """The bot kind credited with a win: the seat's, or a four-player Hekata team's (RULES 2.1)."""
    if game_named(game).plays_in_teams(len(kinds)) and kinds[winner] != kinds[winner + 2]:
        return f"{kinds[winner]}+{kinds[winner + 2]}"  # partners of different kinds share the win
    return kinds[winner]


def play_round(
    game: str, players: int, kinds: Sequence[str], rng: random.Random, dealer: int = 0,
    on_move: MoveHook | None = None, seconds: float | None = None, playouts: int | None = None,
) -> tuple[Record, Round]:
    """Deal and play one round with bots, returning its record and its end state."""
    signs = (tuple(rng.choice(zodiak.SIGNS) for _ in range(players))
             if game_named(game).uses_signs else ())
    match = Match(game, players, signs, dealer=dealer)
    bots = [make_bot(k, rng.randrange(2**32), seconds=seconds, playouts=playouts) for k in kinds]
    return _play_dealt(match, kinds, bots, rng, on_move)


def _play_dealt(match: Match, kinds: Sequence[str], bots: Sequence[Bot], rng: random.Random,
                on_move: MoveHook | None = None) -> tuple[Record, Round]:
    """Deal the match's next round and play it with `bots`, one per seat."""
    dealt = DealtRound.deal(match, [f"{k}-{i}" for i, k in enumerate(kinds)], rng)
    state, record = dealt.state, dealt.record
    while not state.round_over:
        seat = state.turn
        assert seat is not None
        move = bots[seat].choose(bot_view(bots[seat], state, seat))
        dealt.push(move)
        if on_move is not None:
            on_move(state, seat, move)
    return record, state


def simulate(
    game: str, players: int, rounds: int, bot_kinds: Sequence[str], seed: int = 0,
    rotate: bool = False, seconds: float | None = None, playouts: int | None = None,
) -> SimResult:
    """Play `rounds` independent rounds; seats take the bot kinds in turn; the dealer rotates.

    With `rotate`, the kinds also move one seat on every round, so that each kind sits
    in every seat equally often; `seconds` and `playouts` bound the expert's search.
    """
    rng = random.Random(seed)
    seated = [bot_kinds[i % len(bot_kinds)] for i in range(players)]
    wins: Counter[str] = Counter()
    no_winner = moves = 0
    started = time.perf_counter()
    for number in range(rounds):
        shift = number // players % players if rotate else 0  # the dealer moves every round
        kinds = seated[players - shift:] + seated[:players - shift]
        record, state = play_round(game, players, kinds, rng, dealer=number % players,
                                   seconds=seconds, playouts=playouts)
        moves += len(record.moves)
        winner = deal_winner(record.scores, state)
        if winner is None:
            no_winner += 1
        else:
            wins[side_name(game, kinds, winner)] += 1
    return SimResult(rounds, dict(wins), no_winner, moves, time.perf_counter() - started)


MAX_MATCH_ROUNDS = 1000  # a match of blocked rounds (RULES 1.5: no points) never ends: give up


def play_match(
    game: str, players: int, kinds: Sequence[str], rng: random.Random, dealer: int = 0,
    seconds: float | None = None, playouts: int | None = None, target: int | None = None,
) -> tuple[Match, int]:
    """Play a whole match with bots (to the game's target, or `target`); the match and its moves."""
    signs = (tuple(rng.choice(zodiak.SIGNS) for _ in range(players))
             if game_named(game).uses_signs else ())
    match = Match(game, players, signs, dealer=dealer, house=HouseRules(target=target))
    bots = [make_bot(k, rng.randrange(2**32), seconds=seconds, playouts=playouts) for k in kinds]
    moves = 0
    while not match.over and match.rounds_played < MAX_MATCH_ROUNDS:
        record, state = _play_dealt(match, kinds, bots, rng)
        moves += len(record.moves)
        match.end_round(state)
    return match, moves


def simulate_matches(
    game: str, players: int, matches: int, bot_kinds: Sequence[str], seed: int = 0,
    rotate: bool = False, seconds: float | None = None, playouts: int | None = None,
    target: int | None = None,
) -> SimResult:
    """Play `matches` whole matches, seated as `simulate` seats rounds; the first dealer rotates."""
    rng = random.Random(seed)
    seated = [bot_kinds[i % len(bot_kinds)] for i in range(players)]
    wins: Counter[str] = Counter()
    no_winner = moves = deals = 0
    started = time.perf_counter()
    for number in range(matches):
        shift = number // players % players if rotate else 0
        kinds = seated[players - shift:] + seated[:players - shift]
        match, played = play_match(game, players, kinds, rng, dealer=number % players,
                                   seconds=seconds, playouts=playouts, target=target)
        moves += played
        deals += match.rounds_played
        winner = match.winner
        if winner is None:
            no_winner += 1
        else:
            wins[side_name(game, kinds, winner)] += 1
    return SimResult(matches, dict(wins), no_winner, moves, time.perf_counter() - started, deals)


__all__ = ["SimResult", "deal_winner", "play_match", "play_round", "side_name", "simulate",
           "simulate_matches", "wilson_interval"]
