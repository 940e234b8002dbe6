"""Whole-history reading of Zodiak opponents: the runs an opponent played, judged from the hand it held then.

A player who sheds all it can (the greedy bot, always) plays the run greedy
scores best (RULES 1.3-1.4). engine.sampling follows each opponent's hidden
cards as *slots*, each with the move that brought it into the hand (the deal
or a draw); a sampled deal puts a card in every slot, so the hand the opponent
held at any of its past runs is known in that deal: the slots it had drawn by
then, and the cards it played later that it had drawn by then. `PastRun`
keeps what greedy needs to judge such a run; `refine` swaps hidden cards
between slots (within a reshuffle pool, as each slot's mask allows) towards
deals in which fewer past runs are ones greedy would not have played. Nothing
here looks at anything the seat could not see.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from engine.cards import Card
from engine.fast_greedy import greedy_would_play
from engine.playout import (
    ACES,
    EIGHTS,
    FOLLOW,
    RANK,
    RANK_MASK,
    SUIT,
    SUIT_MASK,
    FastMove,
    card_index,
)


@dataclass(frozen=True, slots=True)
class PastRun:
    """A run an opponent played, with no penalty pending and the top known."""

    at: int  # its index in the history: the slots drawn before it were in hand
    move: FastMove
    played_held: int  # the cards it played then or later that it already held
    matching: int
    zodiac_card: int
    threat: bool


@dataclass(slots=True)
class Slot:
    """One hidden card of an opponent (or of the stock, `owner` -1) in a sampled deal."""

    owner: int
    pool: int
    forbidden: int  # cards it cannot hold (the history shows the opponent held none then)
    acquired: int  # the history index of the draw that brought it (-1: the deal)
    card: int = -1  # the card dealt to it, as a one-bit mask


def contradictions(runs: list[PastRun], slots: list[Slot], limit: int = 1 << 30) -> int:
    """How many of one opponent's `runs` greedy would not have played with the cards its
    `slots` hold in this deal (counting stops above `limit`)."""
    bad = 0
    for run in runs:
        hand = run.played_held
        for slot in slots:
            if slot.acquired < run.at:
                hand |= slot.card
        if not greedy_would_play(run.move, hand, run.matching, run.zodiac_card, run.threat):
            bad += 1
            if bad > limit:
                break
    return bad


def refine(slots: list[Slot], runs: dict[int, list[PastRun]], rng: random.Random,
           steps: int) -> int:
    """Swap cards between `slots` (every hidden card has one) for `steps` proposals, keeping a
    swap when both slots allow their new cards and no more runs are contradicted; returns the
    contradicted runs left. Every opponent in `runs` is read; the others' cards just move."""
    by_owner: dict[int, list[Slot]] = {}
    by_pool: dict[int, list[Slot]] = {}
    for slot in slots:
        by_owner.setdefault(slot.owner, []).append(slot)
        by_pool.setdefault(slot.pool, []).append(slot)
    bad = {seat: contradictions(seat_runs, by_owner.get(seat, []))
           for seat, seat_runs in runs.items()}
    for _ in range(steps):
        wrong = [seat for seat, count in bad.items() if count]
        if not wrong:
            break
        mine = by_owner.get(rng.choice(wrong), [])
        if not mine:
            continue
        slot = mine[rng.randrange(len(mine))]
        pool = by_pool[slot.pool]
        other = pool[rng.randrange(len(pool))]
        if other is slot or slot.forbidden & other.card or other.forbidden & slot.card:
            continue
        slot.card, other.card = other.card, slot.card
        seats = {slot.owner, other.owner} & bad.keys()
        before = sum(bad[s] for s in seats)
        after = {s: contradictions(runs[s], by_owner[s], before) for s in seats}
        if sum(after.values()) <= before:
            bad.update(after)
        else:
            slot.card, other.card = other.card, slot.card
    return sum(bad.values())


def held_for_sure(played: list[tuple[int, int]], draws_at: list[int], at: int) -> int:
    """The cards a seat played at the history index `at` or later with no draw of its own in
    between: it held them at `at` (when the others it played were drawn is not known)."""
    return sum(card for card, gone in played
               if at <= gone and not any(at < drawn < gone for drawn in draws_at))


def could_start(top: Card | None, declared: str | None, penalty_from_ace: bool) -> int:
    """The cards that could have begun a run when a player drew instead (0: not known)."""
    if penalty_from_ace:
        return ACES
    if top is None:
        return 0
    if declared is not None:
        return SUIT_MASK["SHDC".index(declared)] | EIGHTS
    top_index = card_index(top)
    return SUIT_MASK[SUIT[top_index]] | RANK_MASK[RANK[top_index]] | EIGHTS


def left_unplayed(cards: tuple[Card, ...], top: Card | None, declared: str | None,
                   zodiac_card: Card) -> int:
    """The cards a player who shed as much as it could cannot have kept after playing `cards`.

    Every card added to a run sheds one more, so such a player stops a run only when no card
    in hand may follow its last card (RULES 1.3), and plays a lone wild eight only when nothing
    else could start a run. A lone ace or zodiac card is played for its effect and says nothing.
    """
    first = cards[0]
    if len(cards) == 1 and (first.rank == 1 or first == zodiac_card):
        return 0
    if len(cards) == 1 and first.rank == 8:
        return could_start(top, declared, False) & ~EIGHTS
    return FOLLOW[card_index(cards[-1])]


class HiddenSlots:
    """One opponent's hidden slots as [pool, mask of cards the slot cannot hold, the history
    index of the draw that filled it (-1: the deal)]."""

    def __init__(self, count: int) -> None:
        self.slots = [[0, 0, -1] for _ in range(count)]
        self.trusted = True  # False once a play contradicts what a draw implied

    def exclude(self, mask: int) -> None:
        """The player drew rather than play: no slot it holds now holds a card of `mask`."""
        if self.trusted:
            for slot in self.slots:
                slot[1] |= mask

    def draw(self, pool: int, at: int) -> None:
        """A slot drawn from `pool` by the move `at`: it may hold anything there."""
        self.slots.append([pool, 0, at])

    def play(self, pool: int, card: int) -> None:
        """Free a slot of `pool` that may have held `card` (the most restricted one, so that the
        slots left restrict no more than the history proves)."""
        fits = [slot for slot in self.slots if slot[0] == pool and not slot[1] >> card & 1]
        if not fits:
            self.trusted = False  # it drew while holding a card it could play
            for slot in self.slots:
                slot[1] = 0
            fits = [slot for slot in self.slots if slot[0] == pool]
            if not fits:
                return
        self.slots.remove(max(fits, key=lambda slot: slot[1].bit_count()))
