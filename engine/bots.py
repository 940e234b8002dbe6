"""Bots: players that choose a move from what their seat can see."""

from __future__ import annotations

import random
from collections import Counter
from typing import Protocol

from engine import hekata, zodiak
from engine.errors import IllegalMove
from engine.match import Round
from engine.tricks import best_trick

BOT_KINDS = ("greedy", "random", "expert")


class Bot(Protocol):
    """A player that picks a legal move for the seat to move in `view`."""

    name: str

    def choose(self, view: Round) -> zodiak.ZodiakMove | hekata.HekataMove:
        """A legal move for the seat to move."""
        ...


class RandomBot:
    """Picks uniformly among the legal moves (Hekata: the moves `legal_moves` lists)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: Round) -> zodiak.ZodiakMove | hekata.HekataMove:
        """A uniformly random legal move."""
        return self.rng.choice(list(view.legal_moves()))


class GreedyBot:
    """A sensible player: sheds the most, saves its specials, takes the best trick, lays safe cards."""

    name = "greedy"

    def choose(self, view: Round) -> zodiak.ZodiakMove | hekata.HekataMove:
        """The move this bot judges best."""
        if isinstance(view, zodiak.ZodiakRound):
            return zodiak_choice(view)
        return hekata_choice(view)


def make_bot(kind: str, seed: int | None = None, *, seconds: float | None = None,
             playouts: int | None = None) -> Bot:
    """A bot by name (`greedy`, `random` or `expert`); `seconds` and `playouts` bound the expert's search."""
    if kind == "random":
        return RandomBot(seed)
    if kind == "greedy":
        return GreedyBot()
    if kind == "expert":
        from engine.expert import DEFAULT_SECONDS, ExpertBot  # the search loads only when used

        if seconds is None and playouts is None:
            seconds = DEFAULT_SECONDS
        return ExpertBot(seed, seconds=seconds, playouts=playouts, fallback=hekata_choice)
    raise IllegalMove(f"{kind!r} is not a bot: choose {', '.join(BOT_KINDS)}")


def bot_view(bot: Bot, state: Round, seat: int) -> Round:
    """What `seat` sees, with the history only for a bot that reads it (it costs a copy)."""
    return state.view(seat, history=getattr(bot, "needs_history", False))


# -- Zodiak ---------------------------------------------------------------


def zodiak_choice(view: zodiak.ZodiakRound) -> zodiak.ZodiakMove:
    """Greedy Zodiak: shed the most cards, keep eights and aces for when they matter."""
    seat = view.turn
    assert seat is not None
    hand = [c for c in view.hands[seat] if c is not None]
    sizes = view.hand_sizes()
    nxt = view.next_seat(seat)
    threat = sizes[nxt] <= 2
    suit_counts = Counter(c.suit for c in hand)
    best: zodiak.ZodiakMove = zodiak.Draw()
    best_score = 0.0
    seen_eight: set[zodiak.Card] = set()
    for move in view.legal_moves():
        if isinstance(move, zodiak.Draw):
            continue
        cards = move.cards
        first = cards[0]
        score = float(len(cards)) * 10
        if len(cards) == len(hand):
            score += 1000  # going out wins the round
        if move.alone and first.rank == 8:
            if first in seen_eight:
                continue
            seen_eight.add(first)
            rest = Counter(c.suit for c in hand if c != first)
            declared = max(rest or {"S": 0}, key=lambda s: (rest.get(s, 0), s))
            move = zodiak.Run(cards, declared)
            score = 5 if len(hand) > 1 else 1000  # a wild eight is a last resort, or the way out
        elif move.alone and first.rank == 1:
            if view.penalty and ace_comes_back(view, move):
                continue  # RULES 1.6: with every other hand empty, the answer's penalty is ours
            score += 15 if (threat or view.penalty) else -4
        elif move.alone and first == view.zodiac_card(seat):
            score += 40 if threat else 8
        else:
            specials = sum(1 for c in cards if c.rank in (1, 8) or c == view.zodiac_card(seat))
            score -= 6 * specials
        # Prefer runs that leave the next player a suit we can answer.
        score += 0.5 * suit_counts.get(cards[-1].suit, 0)
        if score > best_score:
            best, best_score = move, score
    return best


def ace_comes_back(view: zodiak.ZodiakRound, answer: zodiak.Run) -> bool:
    """Whether answering a pending ace with `answer` passes the penalty round to the answering seat.

    RULES 1.6 skips empty hands while a penalty is passed on: when every other
    player is out, the next seat to face it is the one that answered.
    """
    after = view.copy()
    after.push(answer)
    return after.turn == view.turn


# -- Hekata ---------------------------------------------------------------


def hekata_choice(view: hekata.HekataDeal) -> hekata.HekataMove:
    """Greedy Hekata: take the highest trick; otherwise lay the card that leaves opponents least."""
    seat = view.turn
    assert seat is not None
    cards = sorted({c for c in view.hands[seat] if c is not None})
    best_take: hekata.HekataMove | None = None
    best_total = 0
    if view.table:
        for card in cards:
            trick = best_trick(view.table, card, view.max_row)
            if trick is not None and trick.total > best_total:
                best_take, best_total = hekata.HekataMove(card, trick), trick.total
    if best_take is not None:
        return best_take
    return hekata.HekataMove(min(cards, key=lambda c: (_exposure(view.table, c, view.max_row), c)))


def _exposure(table: list[int], card: int, max_row: int | None) -> int:
    """The most an opponent could take after `card` is laid, over every card they might hold."""
    after = [*table, card]
    worst = 0
    for reply in range(10):
        trick = best_trick(after, reply, max_row)
        if trick is not None:
            worst = max(worst, trick.total)
    return worst
