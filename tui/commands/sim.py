"""`cardtui sim`: bot-only rounds, with wins per bot and speed."""

from __future__ import annotations

import argparse
import json
import sys

from engine.bots import BOT_KINDS
from engine.errors import IllegalMove
from engine.games import GAME_NAMES, game_named
from engine.simulate import simulate, simulate_matches, wilson_interval

HELP = ("Play bot-only rounds (or whole matches) and print wins per bot, the average round length"
        " and rounds per second.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    parser.add_argument("game", choices=GAME_NAMES)
    parser.add_argument("--players", type=int, default=4, help="seats (Zodiak 2-4, Hekata 2 or 4)")
    parser.add_argument("--rounds", type=int, default=100, help="rounds (Hekata: deals) to play")
    parser.add_argument("--matches", type=int, metavar="N",
                        help="play N whole matches instead of rounds: wins count matches")
    parser.add_argument("--target", type=int, metavar="POINTS",
                        help="with --matches: the score that wins a match (default the game's:"
                             " 55 in Zodiak, 10,000 in Hekata)")
    parser.add_argument("--bots", default="greedy,random",
                        help="bot kinds, given to the seats in turn (greedy, random, expert)")
    parser.add_argument("--rotate", action="store_true",
                        help="move the bot kinds round the seats, so each sits everywhere equally")
    parser.add_argument("--think", type=float, metavar="SECONDS",
                        help="the expert's time limit per move (default 0.8 s unless --playouts)")
    parser.add_argument("--playouts", type=int, metavar="N",
                        help="the expert's playouts per move: a fixed budget, for repeatable runs")
    parser.add_argument("--seed", type=int, default=0, help="random seed, for repeatable runs")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    """Run the simulation and print its figures."""
    kinds = [k.strip() for k in args.bots.split(",") if k.strip()]
    try:
        game_named(args.game).check_players(args.players)
        unknown = [k for k in kinds if k not in BOT_KINDS]
        if unknown or not kinds:
            raise IllegalMove(f"unknown bot {', '.join(unknown) or '(none)'}:"
                              f" use {', '.join(BOT_KINDS)}")
        if args.rounds < 1:
            raise IllegalMove("--rounds must be at least 1")
        if args.matches is not None and args.matches < 1:
            raise IllegalMove("--matches must be at least 1")
        if args.target is not None and (args.matches is None or args.target < 1):
            raise IllegalMove("--target is a score of 1 or more, and goes with --matches")
        if args.think is not None and not args.think > 0:
            raise IllegalMove("--think is seconds per move: more than 0")
        if args.playouts is not None and args.playouts < 1:
            raise IllegalMove("--playouts must be at least 1")
    except IllegalMove as exc:
        print(f"cardtui sim: {exc}", file=sys.stderr)
        return 2
    if args.matches is not None:
        result = simulate_matches(args.game, args.players, args.matches, kinds, args.seed,
                                  rotate=args.rotate, seconds=args.think, playouts=args.playouts,
                                  target=args.target)
    else:
        result = simulate(args.game, args.players, args.rounds, kinds, args.seed,
                          rotate=args.rotate, seconds=args.think, playouts=args.playouts)
    intervals = {kind: [round(x, 4) for x in wilson_interval(won, result.rounds)]
                 for kind, won in result.wins.items()}
    played = result.deals or result.rounds
    if args.json:
        figures = {"rounds": played, "wins": result.wins, "ci95": intervals,
                   "no_winner": result.no_winner,
                   "average_length": round(result.moves / played, 2),
                   "rounds_per_second": round(played / result.seconds, 1)}
        if args.matches is not None:
            figures = {"matches": result.rounds, **figures}  # wins, ci95, no_winner: matches
        print(json.dumps(figures))
        return 0
    rounds = game_named(args.game).round_word + "s"  # Hekata's are deals
    if args.matches is not None:
        print(f"{result.rounds} {args.game} matches ({played} {rounds}), {args.players} players,"
              f" seed {args.seed}")
    else:
        print(f"{result.rounds} {args.game} {rounds}, {args.players} players, seed {args.seed}")
    for kind in dict.fromkeys([*kinds, *sorted(result.wins)]):  # and mixed Hekata teams
        won = result.wins.get(kind, 0)
        low, high = wilson_interval(won, result.rounds)
        print(f"  {kind:8} won {won:6} ({100 * won / result.rounds:5.1f}%,"
              f" 95% CI {100 * low:.1f}-{100 * high:.1f}%)")
    if result.no_winner:
        print(f"  no winner {result.no_winner}")
    print(f"average {rounds[:-1]} length: {result.moves / played:.1f} moves")
    print(f"speed: {played / result.seconds:.0f} {rounds} per second")
    return 0
