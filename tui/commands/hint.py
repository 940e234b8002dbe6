"""`cardtui hint`: the best Hekata trick, or the move a bot (greedy, expert or random) would make."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from engine import bots, hekata, zodiak
from engine.bots import BOT_KINDS
from engine.cards import french_deck, hekata_deck, parse_cards, parse_digit, parse_suit
from engine.errors import IllegalMove
from engine.hekata import best_trick

HELP = ("Show the best trick for a Hekata table and card, or the move a bot (greedy by default,"
        " or --bot expert) would make with a Zodiak or Hekata hand.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's options."""
    games = parser.add_subparsers(dest="game", metavar="GAME", required=True)
    h = games.add_parser("hekata", help="the best trick, or a bot's move for a hand",
                         description="The highest-scoring trick for --card, or the move a bot"
                         " would make with --hand.")
    h.add_argument("--table", required=True, help='the table cards, e.g. "3 5 9 8"')
    cards = h.add_mutually_exclusive_group(required=True)
    cards.add_argument("--card", help="the card you lay, a digit 0-9: its best trick")
    cards.add_argument("--hand", help='your cards, e.g. "2 5 7": the move --bot would make')
    h.add_argument("--players", type=int, choices=(2, 4), default=2,
                   help="with --hand: seats at the table (default 2); the others hold as many"
                   " cards as you")
    h.add_argument("--stock", type=int, default=0,
                   help="with --hand, two players: cards left in the stock (default 0)")
    add_bot_arguments(h)
    h.add_argument("--json", action="store_true", help="print JSON")
    z = games.add_parser("zodiak", help="a bot's run (greedy unless --bot)",
                         description="The run a bot would play (greedy unless --bot).")
    z.add_argument("--top", required=True, help="the pile's top card, e.g. 2H")
    z.add_argument("--hand", required=True, help='your cards, e.g. "2S 3S 3C 4C 7H 8H"')
    z.add_argument("--declared", help="the declared suit after a wild eight (S, H, D or C)")
    z.add_argument("--penalty", type=int, default=0,
                   help="cards you face: from aces 2, 4, 6 ..., or 7 from a zodiac card")
    z.add_argument("--sign", default="aries", help="your zodiac sign (default aries)")
    add_bot_arguments(z)
    z.add_argument("--json", action="store_true", help="print JSON")


def add_bot_arguments(parser: argparse.ArgumentParser) -> None:
    """The bot that gives the hint, and the expert's thinking budget."""
    parser.add_argument("--bot", choices=BOT_KINDS, default="greedy",
                        help="the bot whose move is shown (default greedy)")
    parser.add_argument("--think", type=float, metavar="SECONDS",
                        help="with --bot expert: its time limit (default 0.8)")
    parser.add_argument("--playouts", type=int, metavar="N",
                        help="with --bot expert: its playouts instead of a time limit")
    parser.add_argument("--seed", type=int, default=0, help="the bot's random seed (default 0)")


def hint_bot(args: argparse.Namespace) -> bots.Bot:
    """The bot the options name, raising IllegalMove for a bad budget."""
    if args.think is not None and not args.think > 0:
        raise IllegalMove("--think is seconds: more than 0")
    if args.playouts is not None and args.playouts < 1:
        raise IllegalMove("--playouts must be at least 1")
    return bots.make_bot(args.bot, args.seed, seconds=args.think, playouts=args.playouts)


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
    """Print the best trick and its total, or say there is none; with --hand, a bot's move."""
    table = [parse_digit(c) for c in args.table.replace(",", " ").split()]
    if len(table) > 49:
        raise IllegalMove("the table cannot hold more than 49 cards")
    if args.hand is not None:
        return hekata_move_hint(args, table)
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


def hekata_move_hint(args: argparse.Namespace, table: list[int]) -> int:
    """Print the move the chosen bot makes with --hand on --table."""
    hand = [parse_digit(c) for c in args.hand.replace(",", " ").split()]
    if not hand:
        raise IllegalMove("--hand needs at least one card")
    players = args.players
    if args.stock < 0 or (args.stock and players == 4):
        raise IllegalMove("--stock is the cards left to draw, 0 or more, with two players only")
    deck, seen = Counter(hekata_deck()), Counter(table) + Counter(hand)
    over = sorted(d for d in seen if seen[d] > deck[d])
    if over:
        raise IllegalMove(f"the deck has only five {over[0]}s, not {seen[over[0]]}")
    unseen = list((deck - seen).elements())  # the others are dealt hands as long as yours
    if len(unseen) < len(hand) * (players - 1) + args.stock:
        raise IllegalMove("not enough cards are left for the other hands and the stock")
    others = [unseen[i * len(hand):(i + 1) * len(hand)] for i in range(players - 1)]
    stock = unseen[len(hand) * (players - 1):][:args.stock]
    deal = hekata.HekataDeal.from_parts([hand, *others], table, stock, 0)
    move = hint_bot(args).choose(deal.view(0))
    assert isinstance(move, hekata.HekataMove)
    total = deal.check(move)
    if args.json:
        print(json.dumps({"move": str(move), "card": move.card,
                          "trick": str(move.trick) if move.trick else None, "total": total}))
    elif move.trick is None:
        print(f"lay {move.card}")
    else:
        print(f"lay {move.card} and take {move.trick} = {total}")
    return 0


def zodiak_hint(args: argparse.Namespace) -> int:
    """Print the run the chosen bot would play, or that it would draw."""
    top = parse_cards(args.top)
    hand = parse_cards(args.hand)
    if not hand:  # an empty hand has gone out: no move to hint
        raise IllegalMove("--hand needs at least one card")
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
    move = hint_bot(args).choose(state.view(0))
    if args.json:
        print(json.dumps({"move": str(move), "draw": isinstance(move, zodiak.Draw)}))
    elif isinstance(move, zodiak.Draw):
        print(f"draw {state.draw_count()}" if args.penalty else "draw")
    else:
        print(str(move))
    return 0

