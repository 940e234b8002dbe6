"""`cardtui hint`: the best Hekata trick, or the run the greedy bot would play in Zodiak."""

from __future__ import annotations

import argparse
import json
import sys

from engine import bots, zodiak
from engine.cards import french_deck, parse_cards, parse_digit, parse_suit
from engine.errors import IllegalMove
from engine.hekata import best_trick

HELP = ("Show the best trick for a Hekata table and card, or the run the greedy bot would play"
        " on a Zodiak pile.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    games = parser.add_subparsers(dest="game", metavar="GAME", required=True)
    h = games.add_parser("hekata", help="the best trick", description="The highest-scoring trick.")
    h.add_argument("--table", required=True, help='the table cards, e.g. "3 5 9 8"')
    h.add_argument("--card", required=True, help="the card you lay, a digit 0-9")
    h.add_argument("--json", action="store_true", help="print JSON")
    z = games.add_parser("zodiak", help="the greedy bot's run",
                         description="The run the greedy bot would play.")
    z.add_argument("--top", required=True, help="the pile's top card, e.g. 2H")
    z.add_argument("--hand", required=True, help='your cards, e.g. "2S 3S 3C 4C 7H 8H"')
    z.add_argument("--declared", help="the declared suit after a wild eight (S, H, D or C)")
    z.add_argument("--penalty", type=int, default=0,
                   help="cards you face: from aces 2, 4, 6 ..., or 7 from a zodiac card")
    z.add_argument("--sign", default="aries", help="your zodiac sign (default aries)")
    z.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    """Print the hint, or a clear error with status 2."""
    try:
        return hekata_hint(args) if args.game == "hekata" else zodiak_hint(args)
    except IllegalMove as exc:
        if args.json:
            print(json.dumps({"error": str(exc)}))
        print(f"cardtui hint: {exc}", file=sys.stderr)
        return 2


def hekata_hint(args: argparse.Namespace) -> int:
    """Print the best trick and its total, or say there is none."""
    table = [parse_digit(c) for c in args.table.replace(",", " ").split()]
    if len(table) > 49:
        raise IllegalMove("the table cannot hold more than 49 cards")
    card = parse_digit(args.card)
    for digit in range(10):
        copies = (table + [card]).count(digit)
        if copies > 5:
            raise IllegalMove(f"the deck has only five {digit}s, not {copies}")
    trick = best_trick(table, card) if table else None
    if args.json:
        print(json.dumps({"trick": str(trick) if trick else None,
                          "total": trick.total if trick else 0}))
    elif trick is None:
        print(f"no trick: laying {card} on {' '.join(map(str, table)) or 'an empty table'}"
              " takes nothing")
    else:
        print(f"{trick} = {trick.total}")
    return 0


def zodiak_hint(args: argparse.Namespace) -> int:
    """Print the run the greedy bot would play, or that it would draw."""
    top = parse_cards(args.top)
    hand = parse_cards(args.hand)
    if len(top) != 1:
        raise IllegalMove("--top takes exactly one card")
    if top[0] in hand:
        raise IllegalMove(f"{top[0]} cannot be both on the pile and in your hand")
    if len(set(hand)) != len(hand):
        raise IllegalMove("your hand names a card twice")
    zodiac_penalty = args.penalty == zodiak.ZODIAC_PENALTY
    if args.penalty < 0 or (args.penalty % 2 and not zodiac_penalty):
        raise IllegalMove("--penalty is what you face: 2, 4, 6 ... from aces, 7 from a zodiac card")
    declared = parse_suit(args.declared) if args.declared else None
    sign = zodiak.parse_sign(args.sign)
    others = [c for c in french_deck() if c not in hand and c != top[0]]
    state = zodiak.ZodiakRound.from_parts([hand, others[:7]], top, others[7:], [sign, "aries"], 1)
    state.declared = declared
    state.penalty = args.penalty
    state.penalty_from_ace = bool(args.penalty) and not zodiac_penalty
    move = bots.GreedyBot().choose(state.view(0))
    if args.json:
        print(json.dumps({"move": str(move), "draw": isinstance(move, zodiak.Draw)}))
    elif isinstance(move, zodiak.Draw):
        print(f"draw {state.draw_count()}" if args.penalty else "draw")
    else:
        print(str(move))
    return 0

