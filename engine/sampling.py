"""Hidden cards, sampled as one seat may believe them: each sample is a full deal consistent with the seat's view.

Zodiak (RULES 1.5, 1.7): every hidden card is in an opponent's hand or in the
stock. The seat knows more than which cards are hidden: a card it saw on the
pile before a reshuffle can only be in the stock or in the hand of someone who
drew after that reshuffle. `ZodiakBelief` replays the view's history to give
every hidden card and every hidden slot a *pool* (0: never seen; k: the k-th
reshuffle) and deals each pool's cards only into that pool's slots.

Moves say something too, read as a player who sheds all it can (the greedy bot,
always) makes them, though RULES 1.3 allows other play: such a player draws only
when nothing in hand may start a run, meets a pending ace with an ace when it
holds one, and stops a run only when nothing in hand may follow. So each hidden
card an opponent holds is a *slot* (engine.reading.HiddenSlots) that remembers
the draw that filled it and the cards it cannot be (those it would have played
when the opponent later drew instead), until that opponent plays a card that
contradicts it: from then on its moves are taken to prove nothing. Its runs,
over the whole round, say more: greedy must have chosen each from the hand it
held then. `sample` deals `PARTICLES` deals once per view, each refined by
engine.reading towards one that explains those runs, and hands them out with
fresh stock orders; with `PARTICLES` 0 it reads only the runs since each
opponent last drew, trying up to `DEAL_TRIES` deals.

Hekata (RULES 2.6): every card played stays in view (on the table or in a
taken trick), so the hidden cards are the deck less the seat's hand, the table
and the tricks, dealt at random among the other hands and the stock.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict

from engine import hekata, zodiak
from engine.cards import Card, french_deck, hekata_deck
from engine.fast_greedy import greedy_would_play, matching_mask
from engine.playout import FastHekata, FastMove, FastZodiak, card_index, from_engine_move
from engine.reading import (
    HiddenSlots,
    PastRun,
    Slot,
    could_start,
    held_for_sure,
    left_unplayed,
    refine,
)

STOCK = -1  # the owner of the stock's slots
# Deals refined once per view by engine.reading, with three or more players (0: read only the
# runs since each opponent last drew, as with two players, whose figure was measured so).
PARTICLES = 32
REFINE_STEPS = 60  # swaps tried per particle
DEAL_TRIES = 10  # deals tried for one that explains the opponents' runs: bounds the sampling's cost


class ZodiakBelief:
    """Which hidden Zodiak cards may be where, from one seat's view; `sample` deals them."""

    def __init__(self, view: zodiak.ZodiakRound) -> None:
        assert view.turn is not None, "the round is over"
        self.view = view
        self.seat = view.turn
        hidden = set(french_deck()) - set(view.pile) - {c for c in view.hands[self.seat] if c}
        self.hidden = sorted(hidden)
        # (owner, pool) -> slots; pool -> its hidden cards; a pool that holds the unseen first top.
        self.slots: dict[tuple[int, int], int] = {}
        self.pools: dict[int, list[Card]] = {}
        self.unknown_top_pool: int | None = None
        # (seat, the cards it held then besides its hand now, run, matching mask, zodiac card,
        # threat): each run an opponent played since it last drew, as greedy must have chosen it.
        self.greedy_runs: list[tuple[int, int, FastMove, int, int, bool]] = []
        # Every hidden slot, opponents' most restricted first: (owner, pool, mask, the history
        # index of the draw that filled it, -1 for the deal).
        self.hidden_slots: list[tuple[int, int, int, int]] = []
        # Each greedy-read opponent's readable runs over the whole round (engine.reading).
        self.past_runs: dict[int, list[PastRun]] = {}
        self._particles: list[tuple[list[int], list[int]]] | None = None
        self.fewest = 0  # the runs the particles kept still contradict
        # The same as ints, made by the first `sample`: (own hand, top, under, zodiac cards, suit).
        self._int_pools: dict[int, list[int]] = {}
        self._fixed: tuple[int, int, list[int], list[int], int] | None = None
        self._owners: list[int] = []  # each hidden slot's owner, as `_deal` reads them
        if not self._replay():
            self._uniform()

    def _uniform(self) -> None:
        """Forget the pools: every hidden card may be in any hidden slot."""
        view = self.view
        self.slots = {(s, 0): len(h) for s, h in enumerate(view.hands) if s != self.seat}
        self.slots[(STOCK, 0)] = len(view.stock)
        self.pools = {0: list(self.hidden)}
        self.unknown_top_pool = None
        self.greedy_runs = []
        self.hidden_slots = [(owner, 0, 0, -1) for (owner, _pool), count in self.slots.items()
                             for _ in range(count)]
        self.past_runs = {}

    def _replay(self) -> bool:
        """Follow the history from the deal; False when it does not add up to the view."""
        view, me = self.view, self.seat
        n = view.players
        played = [0] * n
        drawn = [0] * n
        for effect in view.history:
            if isinstance(effect.move, zodiak.Run):
                played[effect.seat] += len(effect.move.cards)
            else:
                drawn[effect.seat] += len(effect.drawn)
        start = [len(h) - drawn[s] + played[s] for s, h in enumerate(view.hands)]
        stock_size = 52 - sum(start) - 1
        if stock_size < 0 or any(size < 0 for size in start):
            return False
        top_known = view.reshuffles_done == 0
        pile: list[Card | None] = [view.pile[0] if top_known else None]
        pool_of: dict[Card, int] = {}
        owned: list[Counter[int]] = [Counter({0: start[s]}) for s in range(n)]
        held = [HiddenSlots(start[s]) for s in range(n)]
        current, pools_made, unknown_top_pool = 0, 0, None
        declared: str | None = None
        penalty_from_ace = forced = False  # a pending ace; a pending zodiac card (no defence)
        sizes = list(start)
        # Per seat, its runs since it last drew: (run, matching mask, threat, readable: no
        # penalty was pending and the top it went on is known).
        runs_since_draw: list[list[tuple[FastMove, int, bool, bool]]] = [[] for _ in range(n)]
        # Per seat: (card, history index) of every card it played; (history index, run, matching
        # mask, threat) of every readable run; the history index of every draw.
        played_cards: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        readable_runs: list[list[tuple[int, FastMove, int, bool]]] = [[] for _ in range(n)]
        draws_at: list[list[int]] = [[] for _ in range(n)]
        for at, effect in enumerate(view.history):
            seat = effect.seat
            if isinstance(effect.move, zodiak.Run):
                cards = effect.move.cards
                top = pile[-1]
                matching = -1 if top is None or penalty_from_ace or forced else matching_mask(
                    card_index(top), "SHDC".index(declared) if declared else -1)
                threat = sizes[(seat + 1) % n] <= 2
                runs_since_draw[seat].append((from_engine_move(effect.move), matching, threat,
                                              matching >= 0))
                sizes[seat] -= len(cards)
                if matching >= 0:
                    readable_runs[seat].append((at, from_engine_move(effect.move), matching, threat))
                for card in cards:
                    if seat != me:
                        pool = pool_of.pop(card, 0)
                        if not owned[seat][pool] and unknown_top_pool is not None \
                                and owned[seat][unknown_top_pool]:
                            pool, unknown_top_pool = unknown_top_pool, None  # it was the first top
                        if not owned[seat][pool]:
                            return False
                        owned[seat][pool] -= 1
                        held[seat].play(pool, card_index(card))
                        played_cards[seat].append((1 << card_index(card), at))
                    pile.append(card)
                if seat != me:
                    held[seat].exclude(left_unplayed(cards, pile[-len(cards) - 1], declared,
                                                      view.zodiac_card(seat)))
                declared = effect.move.declared
                penalty_from_ace = len(cards) == 1 and cards[0].rank == 1
                forced = len(cards) == 1 and cards[0] == view.zodiac_card(seat)
                continue
            forbidden = 0 if forced else could_start(pile[-1], declared, penalty_from_ace)
            if seat != me:
                held[seat].exclude(forbidden)
            penalty_from_ace = forced = False
            draws_at[seat].append(at)
            count = len(effect.drawn)
            sizes[seat] += count
            runs_since_draw[seat] = []
            if effect.reshuffles:
                before, old = stock_size, current
                pools_made += 1
                current = pools_made
                under, pile = pile[:-1], pile[-1:]
                for seen in under:
                    if seen is None:
                        unknown_top_pool = current
                    else:
                        pool_of[seen] = current
                stock_size = len(under) - (count - before)
                sources = [old] * before + [current] * (count - before)
            else:
                stock_size -= count
                sources = [current] * count
            if stock_size < 0 or len(sources) != count:
                return False
            for got, pool in zip(effect.drawn, sources):
                if seat == me:
                    if got is None:
                        return False
                    if pool_of.get(got, 0) != pool and unknown_top_pool == pool:
                        unknown_top_pool = None  # a never-seen card from a reshuffle: the first top
                    pool_of.pop(got, None)
                else:
                    owned[seat][pool] += 1
                    held[seat].draw(pool, at)
        if stock_size != len(view.stock) or [x for x in pile if x is not None] != view.pile:
            return False
        if any(sum(owned[s].values()) != len(view.hands[s]) for s in range(n) if s != me):
            return False
        self.slots = {(s, p): k for s in range(n) if s != me for p, k in owned[s].items() if k}
        if stock_size:
            self.slots[(STOCK, current)] = stock_size
        pools: dict[int, list[Card]] = defaultdict(list)
        for card in self.hidden:
            pools[pool_of.get(card, 0)].append(card)
        self.pools = dict(pools)
        self.unknown_top_pool = unknown_top_pool
        self.hidden_slots = sorted(((s, pool, mask, acquired) for s in range(n) if s != me
                                    for pool, mask, acquired in held[s].slots),
                                   key=lambda slot: -slot[2].bit_count())
        self.hidden_slots += [(STOCK, current, 0, -1)] * stock_size
        self.past_runs = {}
        for s in range(n):
            if s != me and held[s].trusted and readable_runs[s]:
                zodiac_card = card_index(view.zodiac_card(s))
                self.past_runs[s] = [
                    PastRun(at, move, held_for_sure(played_cards[s], draws_at[s], at),
                            matching, zodiac_card, threat)
                    for at, move, matching, threat in readable_runs[s]]
        self.greedy_runs = []
        for s in range(n):
            if s == me or not held[s].trusted:
                continue
            later = 0  # the cards of this run and the seat's later runs: in hand before this run
            for move, matching, threat, readable in reversed(runs_since_draw[s]):
                assert move is not None
                later |= sum(1 << c for c in move[0])
                if readable:
                    self.greedy_runs.append((s, later, move, matching,
                                             card_index(view.zodiac_card(s)), threat))
        return True

    def sample(self, rng: random.Random) -> FastZodiak:
        """One full deal the seat cannot tell from the real one, as a fast round.

        Deals are drawn until one gives every opponent a hand with which greedy would have
        played its runs since it last drew (at most `DEAL_TRIES`; else the deal that
        explained most of them before one it could not).
        """
        if self.past_runs and PARTICLES and self.view.players > 2:
            return self._from_particles(rng)
        best: FastZodiak | None = None
        most = -1
        for _ in range(DEAL_TRIES if self.greedy_runs else 1):
            world = self._deal(rng)
            explained = self.explained(world.hands)
            if explained == len(self.greedy_runs):
                return world
            if explained > most:
                best, most = world, explained
        assert best is not None
        return best

    def _from_particles(self, rng: random.Random) -> FastZodiak:
        """A deal from the particles, made at the first call: `PARTICLES` deals, each refined
        (engine.reading) towards one in which greedy would have played every opponent's runs
        over the whole round; those that contradict fewest runs are kept."""
        if self._particles is None:
            made = []
            for _ in range(PARTICLES):
                slots = self._deal_slots(rng)
                bad = refine(slots, self.past_runs, rng, REFINE_STEPS)
                made.append((bad, self._hands_and_stock(slots)))
            self.fewest = min(bad for bad, _ in made)
            self._particles = [deal for bad, deal in made if bad == self.fewest]
        hands, stock = self._particles[rng.randrange(len(self._particles))]
        return self._world(hands, stock, rng)

    def explained(self, hands: list[int]) -> int:
        """How many of the opponents' runs, in order, greedy would have played with these hands
        before the first it would not."""
        for done, (seat, later, move, matching, zodiac_card, threat) in enumerate(self.greedy_runs):
            if not greedy_would_play(move, hands[seat] | later, matching, zodiac_card, threat):
                return done
        return len(self.greedy_runs)

    def _deal(self, rng: random.Random) -> FastZodiak:
        """One deal of the hidden cards that respects the pools and the excluded slots."""
        if self._fixed is None:
            self._prepare()
        assert self._fixed is not None
        hands = [0] * self.view.players
        hands[self.seat] = self._fixed[0]
        stock = []
        for owner, card in zip(self._owners, self._deal_cards(rng)[0]):
            if card < 0:
                continue
            if owner == STOCK:
                stock.append(card)
            else:
                hands[owner] |= 1 << card
        return self._world(hands, stock, rng)

    def _deal_cards(self, rng: random.Random) -> tuple[list[int], list[int]]:
        """The card dealt to each of `hidden_slots` (most restricted first, each a random card of
        its pool that its mask allows), and which slots got a card their pool or mask forbids
        (a view the history cannot fully explain: -1 when no card was left for it)."""
        if self._fixed is None:
            self._prepare()
        pools = {p: list(cards) for p, cards in self._int_pools.items()}
        if self.unknown_top_pool is not None and pools.get(0):
            never_seen = pools[0]
            first_top = never_seen.pop(rng.randrange(len(never_seen)))
            pools.setdefault(self.unknown_top_pool, []).append(first_top)
        for cards in pools.values():
            rng.shuffle(cards)
        dealt: list[int] = []
        loose: list[int] = []
        for index, (_owner, pool, mask, _acquired) in enumerate(self.hidden_slots):
            cards = pools.get(pool, [])
            if not cards:
                dealt.append(-1)
                loose.append(index)
            elif not mask:
                dealt.append(cards.pop())
            else:
                for at in range(len(cards) - 1, -1, -1):
                    if not mask >> cards[at] & 1:
                        dealt.append(cards.pop(at))
                        break
                else:
                    dealt.append(cards.pop())
                    loose.append(index)
        spare = [c for cards in pools.values() for c in cards]
        rng.shuffle(spare)
        for index, card in zip([i for i in loose if dealt[i] < 0], spare):
            dealt[index] = card
        return dealt, loose

    def _deal_slots(self, rng: random.Random) -> list[Slot]:
        """Every hidden slot with a card dealt to it (`_deal_cards`); a slot dealt a card its
        pool or mask forbids is put in a pool of its own and allowed anything."""
        cards, loose = self._deal_cards(rng)
        slots = [Slot(owner, pool, mask, acquired, 1 << card if card >= 0 else 0)
                 for (owner, pool, mask, acquired), card in zip(self.hidden_slots, cards)]
        for index in loose:
            slots[index].pool, slots[index].forbidden = -1, 0
        return slots

    def _hands_and_stock(self, slots: list[Slot]) -> tuple[list[int], list[int]]:
        """The hands (masks, the seat's own too) and the stock (cards) of dealt slots."""
        assert self._fixed is not None
        hands = [0] * self.view.players
        hands[self.seat] = self._fixed[0]
        stock = []
        for slot in slots:
            if slot.owner == STOCK:
                if slot.card:
                    stock.append(slot.card.bit_length() - 1)
            else:
                hands[slot.owner] |= slot.card
        return hands, stock

    def _world(self, hands: list[int], stock: list[int], rng: random.Random) -> FastZodiak:
        """The fast round of a deal, its stock shuffled."""
        assert self._fixed is not None
        _hand, top, under, zodiac_cards, declared = self._fixed
        stock = list(stock)
        rng.shuffle(stock)
        view = self.view
        fast = FastZodiak(list(hands), top, list(under), stock, zodiac_cards, self.seat, rng)
        fast.declared = declared
        fast.penalty, fast.from_ace = view.penalty, view.penalty_from_ace
        fast.winner = -1 if view.winner is None else view.winner
        fast.idle = view.idle_turns
        return fast

    def _prepare(self) -> None:
        """The view's cards as fast-playout ints, once: sampling is in the search's inner loop."""
        view = self.view
        hand = 0
        for card in view.hands[self.seat]:
            if card is not None:
                hand |= 1 << card_index(card)
        self._int_pools = {p: [card_index(c) for c in cards] for p, cards in self.pools.items()}
        self._owners = [owner for owner, _pool, _mask, _acquired in self.hidden_slots]
        self._fixed = (hand, card_index(view.top), [card_index(c) for c in view.pile[:-1]],
                       [card_index(view.zodiac_card(s)) for s in range(view.players)],
                       "SHDC".index(view.declared) if view.declared else -1)


class HekataBelief:
    """Which Hekata cards are hidden from one seat; `sample` deals them at random."""

    def __init__(self, view: hekata.HekataDeal) -> None:
        assert view.turn is not None, "the deal is over"
        self.view = view
        self.seat = view.turn
        seen = Counter(c for c in view.hands[self.seat] if c is not None) + Counter(view.table)
        for taken in view.tricks:
            seen += Counter(taken.trick.cards)
        left = Counter(hekata_deck()) - seen
        self.hidden = sorted(left.elements())
        self.slots = [(s, len(h)) for s, h in enumerate(view.hands) if s != self.seat]
        self.slots.append((STOCK, len(view.stock)))

    def sample(self, rng: random.Random) -> FastHekata:
        """One full deal the seat cannot tell from the real one, as a fast deal."""
        cards = list(self.hidden)
        rng.shuffle(cards)
        need = sum(count for _, count in self.slots)
        while len(cards) < need:  # a view whose tricks are not all known: fill from the deck
            cards.append(rng.randrange(10))
        view = self.view
        hands = [[0] * 10 for _ in view.hands]
        for c in view.hands[self.seat]:
            if c is not None:
                hands[self.seat][c] += 1
        stock: list[int] = []
        at = 0
        for owner, count in self.slots:
            part = cards[at:at + count]
            at += count
            if owner == STOCK:
                stock = part
            else:
                for c in part:
                    hands[owner][c] += 1
        table = [0] * 10
        for c in view.table:
            table[c] += 1
        return FastHekata(hands, table, stock, list(view.scores), self.seat)
