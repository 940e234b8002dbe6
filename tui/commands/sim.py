"""`cardtui sim`: bot-only rounds, with wins per bot and speed."""

from __future__ import annotations

import argparse
import json
import sys

from engine.bots import BOT_KINDS
from engine.errors import IllegalMove
from engine.games import GAME_NAMES, game_named
from engine.simulate import simulate

HELP = ("Play bot-only rounds and print wins per bot, the average round length and rounds per"
        " second.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    parser.add_argument("game", choices=GAME_NAMES)
    parser.add_argument("--players", type=int, default=4, help="seats (Zodiak 2-4, Hekata 2 or 4)")
    parser.add_argument("--rounds", type=int, default=100, help="rounds (Hekata: deals) to play")
    parser.add_argument("--bots", default="greedy,random",
                        help="bot kinds, given to the seats in turn (greedy, random)")
    parser.add_argument("--seed", type=int, default=0, help="random seed, for repeatable runs")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    """Run the simulation and print its figures."""
    kinds = [k.strip() for k in args.bots.split(",") if k.strip()]
    try:
        game_named(args.game).check_players(args.players)
        unknown = [k for k in kinds if k not in BOT_KINDS]
        if unknown or not kinds:
            raise IllegalMove(f"unknown bot {', '.join(unknown) or '(none)'}: use greedy or random")
        if args.rounds < 1:
            raise IllegalMove("--rounds must be at least 1")
    except IllegalMove as exc:
        print(f"cardtui sim: {exc}", file=sys.stderr)
        return 2
    result = simulate(args.game, args.players, args.rounds, kinds, args.seed)
    if args.json:
        print(json.dumps({"rounds": result.rounds, "wins": result.wins,
                          "no_winner": result.no_winner,
                          "average_length": round(result.average_length, 2),
                          "rounds_per_second": round(result.rounds_per_second, 1)}))
        return 0
    print(f"{result.rounds} {args.game} rounds, {args.players} players, seed {args.seed}")
    for kind in dict.fromkeys([*kinds, *sorted(result.wins)]):  # and mixed Hekata teams
        won = result.wins.get(kind, 0)
        print(f"  {kind:8} won {won:6} ({100 * won / result.rounds:5.1f}%)")
    if result.no_winner:
        print(f"  no winner {result.no_winner}")
    print(f"average round length: {result.average_length:.1f} moves")
    print(f"speed: {result.rounds_per_second:.0f} rounds per second")
    return 0
