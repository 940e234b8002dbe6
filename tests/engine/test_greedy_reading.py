"""The expert reads greedy opponents' runs (issue 14): the fast greedy scores moves as GreedyBot does,
and the deals the expert samples explain the runs each opponent played since it last drew."""

from __future__ import annotations

import random
from collections.abc import Iterator

from engine import bots, zodiak
from engine.dealer import DealtRound
from engine.fast_greedy import greedy_would_play, greedy_zodiak_move, matching_mask
from engine.match import Match
from engine.playout import FastZodiak, card_index, from_engine_move
from engine.sampling import ZodiakBelief


def greedy_rounds(players: int, rounds: int,
                  seed: int) -> Iterator[tuple[zodiak.ZodiakRound, int, zodiak.ZodiakMove]]:
    """Every position of `rounds` rounds that greedy plays at every seat, before its move."""
    rng = random.Random(seed)
    for _ in range(rounds):
        signs = tuple(rng.choice(zodiak.SIGNS) for _ in range(players))
        table = DealtRound.deal(Match("zodiak", players, signs), ["x"] * players, rng)
        state = table.state
        assert isinstance(state, zodiak.ZodiakRound)
        while not state.round_over:
            seat = state.turn
            assert seat is not None
            move = bots.zodiak_choice(state.view(seat, history=False))
            yield state, seat, move
            table.push(move)


def hand_masks(state: zodiak.ZodiakRound) -> list[int]:
    """Every hand of a full round as a fast-playout mask."""
    return [sum(1 << card_index(c) for c in hand if c is not None) for hand in state.hands]


def test_fast_greedy_scores_greedys_moves_as_its_best() -> None:
    """RULES 1.3-1.4: with no penalty pending, GreedyBot's run (or wild eight with its suit) is one
    the fast greedy would play, and the fast greedy's own move scores as much."""
    checked = 0
    for players in (2, 4):
        for state, seat, move in greedy_rounds(players, 40, players):
            if state.penalty or not isinstance(move, zodiak.Run):
                continue
            hand = hand_masks(state)[seat]
            matching = matching_mask(card_index(state.top),
                                     "SHDC".index(state.declared) if state.declared else -1)
            threat = state.hand_sizes()[state.next_seat(seat)] <= 2
            zodiac_card = card_index(state.zodiac_card(seat))
            assert greedy_would_play(from_engine_move(move), hand, matching, zodiac_card, threat), \
                (state.hands[seat], move)
            fast = FastZodiak.from_round(state)
            assert greedy_would_play(greedy_zodiak_move(fast), hand, matching, zodiac_card, threat)
            checked += 1
    assert checked > 300


def test_the_real_deal_explains_every_greedy_run() -> None:
    """RULES 1.7: what the expert reads from greedy players' runs is true of the real hands, so
    the real deal is always one the sampling accepts (for 2, 3 and 4 players)."""
    views = read = 0
    for players in (2, 3, 4):
        for state, seat, _move in greedy_rounds(players, 25, 10 + players):
            belief = ZodiakBelief(state.view(seat))
            assert belief.explained(hand_masks(state)) == len(belief.greedy_runs)
            views += 1
            read += bool(belief.greedy_runs)
    assert views > 500 and read > views // 3


def test_samples_follow_the_greedy_reading() -> None:
    """Most sampled deals (over 80%) give every greedy opponent a hand that explains its runs since it last
    drew (a deal that does not is used only when `DEAL_TRIES` deals found none that does)."""
    rng = random.Random(3)
    explained = total = 0
    for state, seat, _move in greedy_rounds(4, 10, 31):
        belief = ZodiakBelief(state.view(seat))
        if not belief.greedy_runs:
            continue
        for _ in range(4):
            total += 1
            explained += belief.explained(belief.sample(rng).hands) == len(belief.greedy_runs)
    assert total > 100 and explained > 0.8 * total


def test_a_wild_eight_tells_the_suit_greedy_holds_most() -> None:
    """RULES 1.4: greedy declares the suit it holds most of, so a hand that holds more of another
    suit could not have played that wild eight."""
    eight = card_index(zodiak.Card.parse("8S"))
    hearts = sum(1 << card_index(zodiak.Card.parse(c)) for c in ("2H", "5H"))
    spade = 1 << card_index(zodiak.Card.parse("KS"))
    top = card_index(zodiak.Card.parse("3D"))
    zodiac_card = card_index(zodiak.Card.parse("JC"))
    hand = (1 << eight) | hearts | spade
    matching = matching_mask(top, -1)
    assert greedy_would_play(((eight,), 1), hand, matching, zodiac_card, False)
    assert not greedy_would_play(((eight,), 0), hand, matching, zodiac_card, False)
