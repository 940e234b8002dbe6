"""CPU and message sizes of mental-poker dealing (netplay/fair: docs/FAIRNESS.md).

Run: python benchmarks/bench_mental_poker.py [repeats]

For a 52-card (Zodiak) and a 50-card (Hekata) deck, and a 40-card deck for comparison: CPU per
shuffle with its proof, per shuffle verification, per decryption share made and checked, per
card opened to its owner by three other parties. Then four parties (this client, two more
people and the host's key for a bot) exchange FAIRNESS.md A8's messages in this process
(netplay/fair/mental_round.py) and only this client's part is timed: the deal of a
four-person Zodiak round (its key made and 3 checked, its shuffle made and 3 checked, its 7
cards and the pile's first card opened, its shares of the others' 22 positions made), and
whole rounds with the draws, face-up plays and reshuffles of rounds played by greedy bots
(engine/simulate.py). Zodiak's scoring needs only how many cards each hand holds
(tui/RULES.md 1.6), so the end of a round opens nothing. Figures are time.process_time medians;
sizes are exact wire bytes.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench_fairness import machine

from engine import zodiak
from engine.cards import french_deck, hekata_deck
from engine.simulate import play_round
from netplay.fair.commit import TABLE
from netplay.fair.context import BOT_PARTY, ProofContext
from netplay.fair.deck import MentalDeck
from netplay.fair.keys import KEY_ANNOUNCEMENT_SIZE, JointKey, RoundKey
from netplay.fair.mental_round import MentalRound
from netplay.fair.shares import SHARE_SIZE
from netplay.fair.shuffle import shuffle_size

CONTEXT = ProofContext("bench-table-7c1d", 1, 0)
PARTIES = (0, 1, 2, BOT_PARTY)  # this client, two more people, and the host's key for a bot
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


@dataclass
class RoundEvents:
    """What one client sees in a bot-played four-person Zodiak round, from its seat (seat 0)."""

    others_played: int = 0
    own_played: int = 0
    others_drew: int = 0
    own_drew: int = 0
    reshuffles: list[int] = field(default_factory=list)  # cards in each reshuffle


def bot_round(seed: int) -> RoundEvents:
    """Play one greedy-bot round and count the cryptographic events seat 0 takes part in."""
    events = RoundEvents()

    def on_move(state: object, seat: int, move: object) -> None:
        assert isinstance(state, zodiak.ZodiakRound)
        if isinstance(move, zodiak.Run):
            if seat == 0:
                events.own_played += len(move.cards)
            else:
                events.others_played += len(move.cards)
        elif isinstance(move, zodiak.Draw):
            drawn = state.history[-1].drawn if state.history else ()
            if seat == 0:
                events.own_drew += len(drawn)
            else:
                events.others_drew += len(drawn)
        while len(events.reshuffles) < state.reshuffles_done:
            events.reshuffles.append(len(state.reshuffles[len(events.reshuffles)]))

    play_round("zodiak", 4, ["greedy"] * 4, random.Random(seed), on_move=on_move)
    return events


class Client:
    """Four parties' MentalRounds in this process, timing only party 0's work (the client)."""

    def __init__(self, round_no: int) -> None:
        self.rounds = {p: MentalRound("bench-table-7c1d", round_no, p, PARTIES) for p in PARTIES}
        self.cpu = 0.0

    def timed(self, party: int, action: Callable[[], Any]) -> Any:
        start = time.process_time()
        result = action()
        if party == 0:
            self.cpu += time.process_time() - start
        return result

    def say(self, sender: int, make: Callable[[MentalRound], dict[str, Any] | None]) -> None:
        """`sender` makes a message; every other party checks it."""
        msg = self.timed(sender, lambda: make(self.rounds[sender]))
        assert msg is not None
        for party, view in self.rounds.items():
            if party != sender:
                self.timed(party, lambda v=view: v.receive(sender, msg))

    def everyone(self, action: Callable[[MentalRound], object]) -> None:
        for party, view in self.rounds.items():
            self.timed(party, lambda v=view: action(v))

    def shuffle(self, cards: list[str]) -> int:
        self.everyone(lambda v: v.start_epoch(cards))
        for party in PARTIES:
            self.say(party, lambda v: v.shuffle_message())
        return self.rounds[0].epoch

    def deal_to(self, epoch: int, owners: list[Any]) -> list[int]:
        """Assign positions to `owners`; every party but each owner sends its shares."""
        positions: list[int] = []
        self.everyone(lambda v: positions.__setitem__(slice(None), v.assign(epoch, owners)))
        for party in PARTIES:
            theirs = [q for q, owner in zip(positions, owners, strict=True) if owner != party]
            if theirs:
                self.say(party, lambda v, t=theirs: v.shares_message(epoch, t))
        return positions

    def play(self, owner: int, epoch: int, position: int) -> None:
        self.say(owner, lambda v: v.shares_message(epoch, [position]))


def client_round_ms(events: RoundEvents | None) -> float:
    """Party 0's CPU for a four-person Zodiak deal and, given `events`, the rest of the round."""
    client = Client(1)
    for party in PARTIES:
        client.say(party, lambda v: v.key_message())
    client.shuffle(DECKS["zodiak 52"])
    owners = [p for p in PARTIES for _ in range(7)]
    client.deal_to(0, [*owners, TABLE])
    if events is not None:
        # Reshuffles first: their epochs then take the draws that the deal's stock cannot.
        sizes = [len(DECKS["zodiak 52"])] + list(events.reshuffles)
        for size in events.reshuffles:
            client.shuffle(DECKS["zodiak 52"][:size])
        dealt = [29] + [0] * len(events.reshuffles)
        mine = [(0, q) for q in range(7)]
        others = {p: [(0, q) for q in range(7 * i, 7 * i + 7)]
                  for i, p in enumerate(PARTIES) if p != 0}

        def draw(drawer: int) -> tuple[int, int]:
            epoch = next(e for e, size in enumerate(sizes) if dealt[e] < size)
            dealt[epoch] += 1
            return epoch, client.deal_to(epoch, [drawer])[0]

        for i in range(events.others_drew):
            drawer = PARTIES[1 + i % 3]
            others[drawer].append(draw(drawer))
        mine += [draw(0) for _ in range(events.own_drew)]
        for i in range(events.others_played):
            player = PARTIES[1 + i % 3]
            if others[player]:
                client.play(player, *others[player].pop())
        for _ in range(min(events.own_played, len(mine))):
            client.play(0, *mine.pop())
    return client.cpu * 1000


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(f"machine: {machine()}")
    for name, cards in DECKS.items():
        deck_figures(name, cards, repeats)
    opening_figures(repeats)
    deal = statistics.median(client_round_ms(None) for _ in range(repeats))
    print(
        "one client's deal of a 4-person Zodiak round (1 key made, 3 checked; 1 shuffle made, "
        f"3 checked; 8 cards opened, 22 shares made): {deal:.0f} ms CPU"
    )
    rounds = [bot_round(seed) for seed in range(20)]
    totals = sorted(client_round_ms(events) for events in rounds)
    mean = RoundEvents(
        *(round(statistics.mean(getattr(e, name) for e in rounds)) for name in
          ("others_played", "own_played", "others_drew", "own_drew")),
        [n for e in rounds for n in e.reshuffles],
    )
    print(
        f"one client's whole 4-person Zodiak round, 20 greedy-bot rounds: median "
        f"{statistics.median(totals):.0f} ms CPU, worst {totals[-1]:.0f} ms (per round on average "
        f"{mean.others_played} cards played by others and {mean.own_played} by this client, "
        f"{mean.others_drew} drawn by others and {mean.own_drew} by it; "
        f"{len(mean.reshuffles)} reshuffle(s) in 20 rounds)"
    )


if __name__ == "__main__":
    main()
