"""The fast playout representation (engine.playout) against the rules engine, move by move on random positions."""

from __future__ import annotations

import random

import pytest

from engine import hekata, zodiak
from engine.bots import GreedyBot
from engine.cards import french_deck, hekata_deck
from engine.playout import FastHekata, FastZodiak, from_engine_move, random_move, to_engine_move


def random_zodiak_round(rng: random.Random, players: int) -> zodiak.ZodiakRound:
    """A fresh round (no record: a reshuffle keeps the pile's order, which FastZodiak copies)."""
    deck = french_deck()
    rng.shuffle(deck)
    signs = [rng.choice(zodiak.SIGNS) for _ in range(players)]
    return zodiak.ZodiakRound.deal(deck, signs, rng.randrange(players))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_fast_zodiak_follows_the_engine(players: int) -> None:
    """RULES section 1 (every subsection): same legal moves and same position after every move."""
    rng = random.Random(players)
    checked = 0
    for _ in range(40):
        state = random_zodiak_round(rng, players)
        fast = FastZodiak.from_round(state)
        greedy = GreedyBot()
        for _ in range(400):
            if state.round_over:
                break
            if len(state.hands[state.turn]) <= 14:  # a long hand has too many runs to list
                engine_moves = {from_engine_move(m) for m in state.legal_moves()}
                fast_moves = fast.legal_moves()
                assert len(fast_moves) == len(set(fast_moves))
                assert set(fast_moves) == engine_moves
            # Mostly the greedy bot (penalties, wild eights, going out), sometimes a random move.
            if rng.random() < 0.3:
                move = to_engine_move(random_move(fast, rng))
                assert state.is_legal(move)
            else:
                move = greedy.choose(state.view(state.turn, history=False))
            state.push(move)
            fast.push(from_engine_move(move))
            assert fast.key() == FastZodiak.from_round(state).key()
            checked += 1
        assert fast.turn == (-1 if state.turn is None else state.turn)
        assert fast.points() == state.points()
    assert checked > 1000


def test_fast_zodiak_reshuffles_and_blocks_like_the_engine() -> None:
    """RULES 1.5: a long drawing round reshuffles the pile and may end blocked, in both."""
    rng = random.Random(7)
    reshuffled = blocked = 0
    for _ in range(30):
        state = random_zodiak_round(rng, 2)
        fast = FastZodiak.from_round(state)
        while not state.round_over:
            # Draw far more than the rules' bots would, to empty the stock again and again.
            move = zodiak.Draw() if rng.random() < 0.8 else to_engine_move(random_move(fast, rng))
            assert state.is_legal(move)
            state.push(move)
            fast.push(from_engine_move(move))
            assert fast.key() == FastZodiak.from_round(state).key()
        reshuffled += state.reshuffles_done > 0
        blocked += state.blocked
    assert reshuffled > 0


@pytest.mark.parametrize("players", [2, 4])
def test_fast_hekata_follows_the_engine(players: int) -> None:
    """RULES section 2: same moves (each card with its best trick, or alone) and same deal after each."""
    rng = random.Random(10 + players)
    checked = 0
    for _ in range(40):
        deck = hekata_deck()
        rng.shuffle(deck)
        deal = hekata.HekataDeal.deal(deck, players, rng.randrange(players))
        fast = FastHekata.from_deal(deal)
        while not deal.round_over:
            engine_moves = list(deal.legal_moves())
            assert sorted(fast.legal_moves()) == sorted(
                (m.card, m.trick is not None) for m in engine_moves)
            move = rng.choice(engine_moves)
            total = deal.check(move)
            assert fast.push(move.card, move.trick is not None) == total
            deal.push(move)
            assert fast.key() == FastHekata.from_deal(deal).key()
            checked += 1
    assert checked > 200
