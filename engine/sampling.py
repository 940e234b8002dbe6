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
holds one, and stops a run only when nothing in hand may follow. So the cards an
opponent held when it drew, or kept after a run, are taken to be none of those
(`excluded` slots), until that opponent plays a card that contradicts it: from
then on its moves are taken to prove nothing. Its runs since it last drew say
more: a deal must give it a hand (with those runs' cards back in it) from which
greedy would have chosen them, or `sample` tries another (`DEAL_TRIES`).

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
from engine.playout import (
    ACES,
    EIGHTS,
    FOLLOW,
    RANK,
    RANK_MASK,
    SUIT,
    SUIT_MASK,
    FastHekata,
    FastMove,
    FastZodiak,
    card_index,
    from_engine_move,
)

STOCK = -1  # the owner of the stock's slots
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
        # (owner, pool, mask): one hidden slot of `owner` that holds none of the mask's cards.
        self.excluded: list[tuple[int, int, int]] = []
        # (seat, the cards it held then besides its hand now, run, matching mask, zodiac card,
        # threat): each run an opponent played since it last drew, as greedy must have chosen it.
        self.greedy_runs: list[tuple[int, int, FastMove, int, int, bool]] = []
        # The same as ints, made by the first `sample`: (own hand, top, under, zodiac cards, suit).
        self._int_pools: dict[int, list[int]] = {}
        self._fixed: tuple[int, int, list[int], list[int], int] | None = None
        if not self._replay():
            self._uniform()

    def _uniform(self) -> None:
        """Forget the pools: every hidden card may be in any hidden slot."""
        view = self.view
        self.slots = {(s, 0): len(h) for s, h in enumerate(view.hands) if s != self.seat}
        self.slots[(STOCK, 0)] = len(view.stock)
        self.pools = {0: list(self.hidden)}
        self.unknown_top_pool = None
        self.excluded = []
        self.greedy_runs = []

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
        held = [_Slots(start[s]) for s in range(n)]
        current, pools_made, unknown_top_pool = 0, 0, None
        declared: str | None = None
        penalty_from_ace = forced = False  # a pending ace; a pending zodiac card (no defence)
        sizes = list(start)
        # Per seat, its runs since it last drew: (run, matching mask, threat, readable: no
        # penalty was pending and the top it went on is known).
        runs_since_draw: list[list[tuple[FastMove, int, bool, bool]]] = [[] for _ in range(n)]
        for effect in view.history:
            seat = effect.seat
            if isinstance(effect.move, zodiak.Run):
                cards = effect.move.cards
                top = pile[-1]
                matching = -1 if top is None or penalty_from_ace or forced else matching_mask(
                    card_index(top), "SHDC".index(declared) if declared else -1)
                runs_since_draw[seat].append((from_engine_move(effect.move), matching,
                                              sizes[(seat + 1) % n] <= 2, matching >= 0))
                sizes[seat] -= len(cards)
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
                    pile.append(card)
                if seat != me:
                    held[seat].exclude(_left_unplayed(cards, pile[-len(cards) - 1], declared,
                                                      view.zodiac_card(seat)))
                declared = effect.move.declared
                penalty_from_ace = len(cards) == 1 and cards[0].rank == 1
                forced = len(cards) == 1 and cards[0] == view.zodiac_card(seat)
                continue
            if seat != me and not forced:
                held[seat].exclude(_could_start(pile[-1], declared, penalty_from_ace))
            penalty_from_ace = forced = False
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
                    held[seat].draw(pool)
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
        self.excluded = sorted(((s, pool, mask) for s in range(n) if s != me
                                for pool, mask in held[s].slots if mask),
                               key=lambda slot: -slot[2].bit_count())
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
        hand, top, under, zodiac_cards, declared = self._fixed
        pools = {p: list(cards) for p, cards in self._int_pools.items()}
        if self.unknown_top_pool is not None and pools.get(0):
            never_seen = pools[0]
            first_top = never_seen.pop(rng.randrange(len(never_seen)))
            pools.setdefault(self.unknown_top_pool, []).append(first_top)
        for cards in pools.values():
            rng.shuffle(cards)
        dealt: dict[int, list[int]] = defaultdict(list)
        left = dict(self.slots)
        for owner, pool, mask in self.excluded:  # most restricted first
            cards = pools.get(pool, [])
            for at in range(len(cards) - 1, -1, -1):
                if not mask >> cards[at] & 1:
                    dealt[owner].append(cards.pop(at))
                    left[(owner, pool)] -= 1
                    break
        spare_slots: list[int] = []
        for (owner, pool), count in left.items():
            cards = pools.get(pool, [])
            take = min(count, len(cards))
            dealt[owner].extend(cards[len(cards) - take:])
            del cards[len(cards) - take:]
            spare_slots += [owner] * (count - take)
        # Whatever does not fit its pool (a view the history cannot fully explain) goes anywhere.
        spare_cards = [c for cards in pools.values() for c in cards]
        rng.shuffle(spare_cards)
        for owner, card in zip(spare_slots, spare_cards):
            dealt[owner].append(card)
        hands = []
        for s in range(len(zodiac_cards)):
            mask = 0
            if s == self.seat:
                mask = hand
            else:
                for c in dealt[s]:
                    mask |= 1 << c
            hands.append(mask)
        stock = dealt[STOCK]
        rng.shuffle(stock)
        view = self.view
        fast = FastZodiak(hands, top, list(under), stock, zodiac_cards, self.seat, rng)
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
        self._fixed = (hand, card_index(view.top), [card_index(c) for c in view.pile[:-1]],
                       [card_index(view.zodiac_card(s)) for s in range(view.players)],
                       "SHDC".index(view.declared) if view.declared else -1)


def _could_start(top: Card | None, declared: str | None, penalty_from_ace: bool) -> int:
    """The cards that could have begun a run when a player drew instead (0: not known)."""
    if penalty_from_ace:
        return ACES
    if top is None:
        return 0
    if declared is not None:
        return SUIT_MASK["SHDC".index(declared)] | EIGHTS
    top_index = card_index(top)
    return SUIT_MASK[SUIT[top_index]] | RANK_MASK[RANK[top_index]] | EIGHTS


def _left_unplayed(cards: tuple[Card, ...], top: Card | None, declared: str | None,
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
        return _could_start(top, declared, False) & ~EIGHTS
    return FOLLOW[card_index(cards[-1])]


class _Slots:
    """One opponent's hidden slots as [pool, mask of cards the slot cannot hold]."""

    def __init__(self, count: int) -> None:
        self.slots = [[0, 0] for _ in range(count)]
        self.trusted = True  # False once a play contradicts what a draw implied

    def exclude(self, mask: int) -> None:
        """The player drew rather than play: no slot it holds now holds a card of `mask`."""
        if self.trusted:
            for slot in self.slots:
                slot[1] |= mask

    def draw(self, pool: int) -> None:
        """A slot drawn from `pool`: it may hold anything there."""
        self.slots.append([pool, 0])

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
