"""The expert reads every run a Zodiak opponent played over the whole round (issue 14, engine.reading):
its samples still keep every public fact, use nothing the seat cannot see, explain greedy
opponents' runs, and still come when the opponents do not play like greedy."""

from __future__ import annotations

import random

from engine import bots, zodiak
from engine.cards import Card
from engine.dealer import DealtRound
from engine.fast_greedy import matching_mask
from engine.match import Match
from engine.playout import CARDS, FastZodiak, bits, card_index
from engine.reading import PastRun, Slot, contradictions
from engine.sampling import ZodiakBelief


def rounds(players: int, count: int, seed: int, kind: str = "greedy"):  # type: ignore[no-untyped-def]
    """Every position of `count` rounds with `kind` at every seat, before its move."""
    rng = random.Random(seed)
    for _ in range(count):
        signs = tuple(rng.choice(zodiak.SIGNS) for _ in range(players))
        table = DealtRound.deal(Match("zodiak", players, signs), ["x"] * players, rng)
        state = table.state
        assert isinstance(state, zodiak.ZodiakRound)
        bot = bots.make_bot(kind, rng.randrange(1000))
        while not state.round_over:
            seat = state.turn
            assert seat is not None
            yield state, seat
            table.push(bot.choose(state.view(seat, history=False)))


def assert_consistent(sample: FastZodiak, state: zodiak.ZodiakRound, seat: int) -> None:
    """RULES 1.7: the sample keeps the public facts and the seat's own hand."""
    hands = [bits(mask) for mask in sample.hands]
    assert [len(h) for h in hands] == state.hand_sizes()
    assert {CARDS[c] for c in hands[seat]} == set(state.hands[seat])
    assert len(sample.stock) == len(state.stock)
    assert [CARDS[c] for c in sample.under] + [CARDS[sample.top]] == state.pile
    everything = [c for h in hands for c in h] + sample.stock + sample.under + [sample.top]
    assert sorted(everything) == list(range(52))


def test_four_player_samples_keep_the_view() -> None:
    """RULES 1.5 and 1.7: with three greedy opponents read over the whole round, every sample is
    a full deal with the view's hand sizes, stock size, pile and the seat's own hand."""
    rng = random.Random(1)
    read = 0
    for state, seat in rounds(4, 6, 3):
        belief = ZodiakBelief(state.view(seat))
        read += bool(belief.past_runs)
        for _ in range(3):
            assert_consistent(belief.sample(rng), state, seat)
    assert read > 50


def test_samples_use_nothing_hidden() -> None:
    """RULES 1.7: two rounds that differ only in cards the seat cannot see (two opponents' cards
    swapped) give the same view and, with the same seed, the same samples."""
    swapped = 0
    for state, seat in rounds(4, 3, 5):
        others = [s for s in range(4) if s != seat and state.hands[s]]
        if len(others) < 2:
            continue
        twin = state.copy()
        twin.hands = [list(h) for h in state.hands]
        a, b = others[:2]
        twin.hands[a][0], twin.hands[b][0] = twin.hands[b][0], twin.hands[a][0]
        view, twin_view = state.view(seat), twin.view(seat)
        assert view == twin_view
        first = ZodiakBelief(view).sample(random.Random(9))
        second = ZodiakBelief(twin_view).sample(random.Random(9))
        assert first.key() == second.key()
        swapped += 1
    assert swapped > 30


def test_samples_explain_greedy_runs_over_the_whole_round() -> None:
    """RULES 1.3-1.4: against greedy, most sampled deals (over 90%) give every opponent cards from
    which greedy would have played each of its runs (a run it could not have played counts)."""
    rng = random.Random(4)
    explained = total = 0
    for state, seat in rounds(4, 8, 7):
        belief = ZodiakBelief(state.view(seat))
        if not belief.past_runs:
            continue
        belief.sample(rng)
        assert belief._particles
        total += 1
        explained += belief.fewest == 0
    assert total > 100 and explained > 0.9 * total


def test_random_opponents_still_give_samples() -> None:
    """A belief that greedy's reading contradicts (opponents playing at random, as a person may)
    still deals: every sample keeps the view."""
    rng = random.Random(6)
    views = 0
    for state, seat in rounds(4, 4, 8, kind="random"):
        belief = ZodiakBelief(state.view(seat))
        for _ in range(2):
            assert_consistent(belief.sample(rng), state, seat)
        views += 1
    assert views > 60


def test_a_run_greedy_would_have_made_longer_is_a_contradiction() -> None:
    """RULES 1.3: a player who shed all it could would not play 5♥ alone on 4♥ while holding 6♥
    (the run 5♥ 6♥ sheds more), unless the 6♥ came with a later draw."""
    card = {name: card_index(Card.parse(name)) for name in ("4H", "5H", "6H", "KS", "JC")}
    run = PastRun(at=3, move=((card["5H"],), -1), played_held=1 << card["5H"],
                  matching=matching_mask(card["4H"], -1), zodiac_card=card["JC"],
                  threat=False)
    held_then = [Slot(1, 0, 0, -1, 1 << card["6H"]), Slot(1, 0, 0, -1, 1 << card["KS"])]
    drawn_after = [Slot(1, 0, 0, 5, 1 << card["6H"]), Slot(1, 0, 0, -1, 1 << card["KS"])]
    assert contradictions([run], held_then) == 1
    assert contradictions([run], drawn_after) == 0
