"""CPU and message sizes of mental-poker dealing (netplay/fair: docs/FAIRNESS.md).

Run: python benchmarks/bench_mental_poker.py [repeats]

For a 52-card (Zodiak) and a 50-card (Hekata) deck, and a 40-card deck for comparison: CPU per
shuffle with its proof, per shuffle verification, per decryption share made and checked, per
card opened to its owner by three other parties; then one client's cryptography for the deal
of a four-person Zodiak round (its round key and the other three checked, its shuffle and the
other three checked, 7 cards of its own opened, 21 shares for the others' cards and the pile's
first card face up). Figures are time.process_time medians; sizes are exact wire bytes.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable

from bench_fairness import machine

from engine.cards import french_deck, hekata_deck
from netplay.fair.context import ProofContext
from netplay.fair.deck import MentalDeck
from netplay.fair.keys import KEY_ANNOUNCEMENT_SIZE, JointKey, RoundKey
from netplay.fair.shares import SHARE_SIZE
from netplay.fair.shuffle import shuffle_size

CONTEXT = ProofContext("bench-table-7c1d", 1, 0)
DECKS = {
    "zodiak 52": [str(card) for card in french_deck()],
    "hekata 50": [str(card) for card in hekata_deck()],
    "40 cards": [str(card) for card in french_deck()][:40],
}


def median_ms(action: Callable[[], object], repeats: int) -> float:
    """The median CPU milliseconds of `action` over `repeats` runs."""
    samples = []
    for _ in range(repeats):
        start = time.process_time()
        action()
        samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples)


def table(parties: int) -> tuple[dict[int, RoundKey], JointKey]:
    keys = {party: RoundKey.generate() for party in range(parties)}
    return keys, JointKey.from_announcements(
        CONTEXT, {party: key.announce(CONTEXT, party) for party, key in keys.items()}
    )


def deck_figures(name: str, cards: list[str], repeats: int) -> None:
    _keys, joint = table(2)

    def fresh() -> MentalDeck:
        return MentalDeck(CONTEXT, joint, cards, [0, 1])

    prove = median_ms(lambda: fresh().shuffle(0), repeats)
    wire = fresh().shuffle(0)
    verify = median_ms(lambda: fresh().accept_shuffle(0, wire), repeats)
    print(
        f"{name}: shuffle+proof {prove:.1f} ms, verification {verify:.1f} ms, "
        f"message {len(wire)} bytes (= {shuffle_size(len(cards))})"
    )


def opening_figures(repeats: int) -> None:
    keys, joint = table(4)
    deck = MentalDeck(CONTEXT, joint, DECKS["zodiak 52"], [0])
    deck.shuffle(0)
    share = deck.share(keys[1], 1, 0)
    make = median_ms(lambda: deck.share(keys[1], 1, 0), repeats * 10)
    check = median_ms(lambda: deck.accept_share(1, 0, share), repeats * 10)
    shares = {party: deck.share(keys[party], party, 0) for party in (1, 2, 3)}

    def open_to_owner() -> str:
        values = {party: deck.accept_share(party, 0, wire) for party, wire in shares.items()}
        return deck.open(0, values, own=(0, keys[0]))

    opened = median_ms(open_to_owner, repeats * 10)
    print(
        f"decryption share: made {make:.2f} ms, checked {check:.2f} ms, {SHARE_SIZE} bytes; "
        f"round key announcement {KEY_ANNOUNCEMENT_SIZE} bytes"
    )
    print(f"card opened to its owner with 3 other parties' shares checked: {opened:.2f} ms")


def client_deal_ms(repeats: int) -> float:
    """One client's CPU for the deal of a four-person Zodiak round (others' work prepared)."""
    cards = DECKS["zodiak 52"]
    keys, joint = table(4)
    announcements = {party: key.announce(CONTEXT, party) for party, key in keys.items()}
    author = MentalDeck(CONTEXT, joint, cards, [1, 2, 0, 3])
    wires = {1: author.shuffle(1), 2: author.shuffle(2)}
    samples = []
    for _ in range(repeats):
        start = time.process_time()
        mine = keys[0].announce(CONTEXT, 0)
        JointKey.from_announcements(CONTEXT, {**announcements, 0: mine})
        view = MentalDeck(CONTEXT, joint, cards, [1, 2, 0, 3])
        view.accept_shuffle(1, wires[1])
        view.accept_shuffle(2, wires[2])
        own = view.shuffle(0)
        elapsed = time.process_time() - start
        last = MentalDeck(CONTEXT, joint, cards, [1, 2, 0, 3])
        for party in (1, 2):
            last.accept_shuffle(party, wires[party])
        last.accept_shuffle(0, own)
        final = last.shuffle(3)  # the fourth party's work, not this client's
        others = {
            position: {p: last.share(keys[p], p, position) for p in (1, 2, 3)}
            for position in [*range(0, 28, 4), 28]
        }
        start = time.process_time()
        view.accept_shuffle(3, final)
        for position in range(29):
            if position % 4 == 0 or position == 28:  # ours, or the pile's first card face up
                values = {p: view.accept_share(p, position, w) for p, w in others[position].items()}
                view.open(position, values, own=(0, keys[0]))
            if position % 4 != 0 or position == 28:
                view.share(keys[0], 0, position)
        samples.append((time.process_time() - start + elapsed) * 1000)
    return statistics.median(samples)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(f"machine: {machine()}")
    for name, cards in DECKS.items():
        deck_figures(name, cards, repeats)
    opening_figures(repeats)
    print(
        "one client's deal of a 4-person Zodiak round (1 key made, 3 checked; 1 shuffle made, "
        f"3 checked; 8 cards opened, 22 shares made): {client_deal_ms(repeats):.0f} ms CPU"
    )


if __name__ == "__main__":
    main()
