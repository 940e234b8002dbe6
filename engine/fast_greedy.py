"""Greedy Zodiak (engine.bots.GreedyBot) on the fast representation: its move, and its score of a move.

The expert's playouts play every seat with `greedy_zodiak_move`; its sampling
(engine.sampling) asks `greedy_would_play` whether a dealt hand would have made
the runs an opponent was seen to play, since greedy never plays below its best.
"""

from __future__ import annotations

from engine.playout import (
    ACES,
    DRAW,
    EIGHTS,
    FOLLOW,
    RANK,
    RANK_MASK,
    SUIT,
    SUIT_MASK,
    FastMove,
    FastZodiak,
    bits,
)

GOING_OUT = 1000.0  # greedy's bonus for a run that empties the hand


def ace_comes_back(state: FastZodiak, seat: int) -> bool:
    """Whether answering the pending ace with an ace would pass the penalty round to `seat` itself.

    RULES 1.6: players with no cards are skipped while a penalty is passed on,
    so when every other hand is empty the answer's penalty returns to its player
    (unless the ace was the player's last card, which ends the round).
    """
    hands = state.hands
    return hands[seat].bit_count() > 1 and not any(h for s, h in enumerate(hands) if s != seat)


def matching_mask(top: int, declared: int) -> int:
    """The cards that match the pile for a run's first card, eights aside (RULES 1.3)."""
    if declared >= 0:
        return SUIT_MASK[declared]
    return SUIT_MASK[SUIT[top]] | RANK_MASK[RANK[top]]


def greedy_zodiak_move(state: FastZodiak) -> FastMove:
    """The move engine.bots.GreedyBot would make, nearly: the longest run from each first card."""
    seat = state.turn
    hand = state.hands[seat]
    if state.penalty:
        if state.from_ace and hand & ACES and not ace_comes_back(state, seat):
            return (bits(hand & ACES)[0],), -1
        return DRAW
    nxt = (seat + 1) % state.players
    return greedy_choice(hand, matching_mask(state.top, state.declared), state.zodiac[seat],
                         state.hands[nxt].bit_count() <= 2)[0]


def greedy_choice(hand: int, matching: int, zodiac_card: int, threat: bool,
                  enough: float = 1e9) -> tuple[FastMove, float]:
    """Greedy's move with no penalty pending, and its score (0 for a draw).

    `matching` is the mask of cards that may start a run besides eights; `threat` says
    whether the next player holds two cards or fewer. The search stops at the first move
    that scores more than `enough`.
    """
    starters = hand & (matching | EIGHTS)
    if not starters:
        return DRAW, 0.0
    size = hand.bit_count()
    specials = ACES | EIGHTS | (1 << zodiac_card)
    best: FastMove = DRAW
    best_score = 0.0
    for first in bits(starters):
        if RANK[first] == 8:
            score = _wild_score(first, hand, size)
            if score > best_score:
                best, best_score = ((first,), wild_suit(hand & ~(1 << first))), score
                if score > enough:
                    break
            if not matching >> first & 1:
                continue
        run, length, special_count = longest_run(first, hand & ~(1 << first), specials)
        if length == 1 and RANK[first] == 8:
            continue  # the eight alone was scored as wild above
        score = _run_score(run, hand, size, zodiac_card, threat, special_count)
        if score > best_score:
            best, best_score = (run, -1), score
            if score > enough:
                break
    return best, best_score


def wild_suit(rest: int) -> int:
    """The suit greedy declares with a wild eight: the one it holds most of (first in SUITS on a tie)."""
    return max(range(4), key=lambda s: ((rest & SUIT_MASK[s]).bit_count(), -s))


def greedy_would_play(move: FastMove, hand: int, matching: int, zodiac_card: int,
                      threat: bool) -> bool:
    """Whether greedy, holding `hand` with no penalty pending, could have played the run `move`.

    True when no move scores more by greedy's reckoning (ties allowed, as the two greedy
    versions break them differently) and a wild eight declares greedy's suit.
    """
    if move is None:
        return not hand & (matching | EIGHTS)
    cards, declared = move
    size = hand.bit_count()
    first = cards[0]
    if len(cards) == 1 and RANK[first] == 8 and declared >= 0:
        if declared != wild_suit(hand & ~(1 << first)):
            return False
        score = _wild_score(first, hand, size)
    else:
        specials = ACES | EIGHTS | (1 << zodiac_card)
        special_count = sum(1 for c in cards if specials >> c & 1)
        score = _run_score(cards, hand, size, zodiac_card, threat, special_count)
    return score >= greedy_choice(hand, matching, zodiac_card, threat, score + 1e-9)[1] - 1e-9


def _wild_score(eight: int, hand: int, size: int) -> float:
    """GreedyBot's score of a wild eight: a last resort, or the way out."""
    return (5.0 if size > 1 else GOING_OUT) + 0.5 * (hand & SUIT_MASK[SUIT[eight]]).bit_count()


def _run_score(run: tuple[int, ...], hand: int, size: int, zodiac_card: int, threat: bool,
               special_count: int) -> float:
    """GreedyBot's score of a run that is not a wild eight."""
    length = len(run)
    first = run[0]
    score = 10.0 * length
    if length == size:
        score += GOING_OUT
    if length == 1 and RANK[first] == 1:
        score += 15 if threat else -4
    elif length == 1 and first == zodiac_card:
        score += 40 if threat else 8
    else:
        score -= 6 * special_count
    return score + 0.5 * (hand & SUIT_MASK[SUIT[run[-1]]]).bit_count()


def longest_run(first: int, rest: int, specials: int) -> tuple[tuple[int, ...], int, int]:
    """The longest run from `first` through `rest` (fewest specials among equals), by search."""
    best: tuple[tuple[int, ...], int, int] = ((first,), 1, specials >> first & 1)
    stack: list[tuple[tuple[int, ...], int, int, int]] = [
        ((first,), first, rest, specials >> first & 1)]
    steps = 0
    while stack and steps < 400:  # long hands branch a lot: the first 400 runs are plenty
        steps += 1
        run, last, left, special_count = stack.pop()
        if len(run) > best[1] or (len(run) == best[1] and special_count < best[2]):
            best = (run, len(run), special_count)
        follow = FOLLOW[last] & left
        while follow:
            low = follow & -follow
            follow ^= low
            c = low.bit_length() - 1
            stack.append((run + (c,), c, left ^ low, special_count + (specials >> c & 1)))
    return best
