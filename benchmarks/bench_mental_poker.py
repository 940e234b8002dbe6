"""CPU, latency and message sizes of mental-poker dealing (netplay/fair: docs/FAIRNESS.md).

Run: python benchmarks/bench_mental_poker.py [repeats] [--no-net] [--think SECONDS]

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
sizes are exact wire bytes. Every timed check starts with this process's caches of checked
shuffles and shares empty (netplay/fair/deck.py), as in a seat's own process.

Then, on loopback with real sockets and processes: a `cardtui host --mental` host (in this
process, with its relay) and four people's seats, each its own process running a greedy bot
that thinks `--think` seconds a move (0.3; people take longer), play rounds 1 and 2 of a Zodiak
match. Printed: the deal's time from the round's start (the host's `deal`) until the last seat
has its cards open, for round 1 (the deck shuffled in the lobby, FAIRNESS.md A8 "Lobby deck")
and round 2 (the deck shuffled during round 1, "Prepared deck"); for round 1 also the time
from the match's start (the last seat taken: the lobby's deck is shuffled after it, as nobody
waits to be ready here) until every seat's cards are open; each seat process's whole CPU for the
round; the time from a seat's move to its own move coming back forwarded (one round trip), and
from a draw to the drawn cards open; the largest message of each kind the host sent, against the
relay's frame limit; and the load average, as the machine may be shared.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_fairness import machine

from engine import zodiak
from engine.bots import make_bot
from engine.cards import french_deck, hekata_deck
from engine.simulate import play_round
from netplay.fair import SignedMessage
from netplay.fair.commit import TABLE
from netplay.fair.context import BOT_PARTY, ProofContext
from netplay.fair.deck import VERIFIED, MentalDeck
from netplay.fair.keys import KEY_ANNOUNCEMENT_SIZE, JointKey, RoundKey
from netplay.fair.mental_round import MentalRound
from netplay.fair.shares import CHECKED, SHARE_SIZE
from netplay.fair.shuffle import shuffle_size
from netplay.protocol import inner, unpack
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.relay.limits import RelayLimits
from netplay.seat.remote import RemoteSession
from netplay.session.events import MoveMade, Notice, RoundEnded, RoundStarted
from netplay.table.host import Host, HostConfig

CONTEXT = ProofContext("bench-table-7c1d", 1, 0)
PARTIES = (0, 1, 2, BOT_PARTY)  # this client, two more people, and the host's key for a bot
DECKS = {
    "zodiak 52": [str(card) for card in french_deck()],
    "hekata 50": [str(card) for card in hekata_deck()],
    "40 cards": [str(card) for card in french_deck()][:40],
}


def uncached() -> None:
    """Forget every check this process made, so that the next one is timed in full."""
    VERIFIED.clear()
    CHECKED.clear()


def median_ms(action: Callable[[], object], repeats: int) -> float:
    """The median CPU milliseconds of `action` over `repeats` runs."""
    samples = []
    for _ in range(repeats):
        uncached()
        start = time.process_time()
        action()
        samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples)


def median_after(setup: Callable[[], MentalDeck], action: Callable[[MentalDeck], object],
                 repeats: int) -> float:
    """The median CPU milliseconds of `action` on a deck made by `setup` (not timed)."""
    samples = []
    for _ in range(repeats):
        deck = setup()
        uncached()
        start = time.process_time()
        action(deck)
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

    def second() -> MentalDeck:  # a deck at step 1: its inputs are no longer the open deck
        deck = fresh()
        deck.accept_shuffle(0, wire)
        return deck

    wire_later = second().shuffle(1)
    prove_later = median_after(second, lambda deck: deck.shuffle(1), repeats)
    verify_later = median_after(second, lambda deck: deck.accept_shuffle(1, wire_later), repeats)
    print(
        f"{name}: shuffle+proof {prove:.1f} ms, verification {verify:.1f} ms (first of the "
        f"chain); later steps {prove_later:.1f} ms and {verify_later:.1f} ms; "
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
        self.rounds = {p: MentalRound("bench-table-7c1d", round_no, p, PARTIES,
                                      defer_checks=True) for p in PARTIES}
        self.cpu = 0.0

    def timed(self, party: int, action: Callable[[], Any]) -> Any:
        if party == 0:
            uncached()  # party 0 checks nothing another party of this process checked first
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
        for party in PARTIES:  # each shuffles the last without checking it (FAIRNESS.md A8)
            self.say(party, lambda v: v.shuffle_message())
        self.everyone(lambda v: v.check_shuffles())  # then every proof of the chain at once
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


# -- on loopback, with real processes and sockets ---------------------------------------

SEATS = 4
ROUNDS = 2  # round 1 is dealt from the lobby's deck, round 2 from the deck prepared in round 1
THINK = 0.3  # seconds a seat takes to choose a move (a person takes longer: see --think)


class TimedHost(Host):
    """The real host, noting when each round's deal starts."""

    deal_started: dict[int, float]

    async def start_match(self) -> None:
        self.deal_started.setdefault(0, time.monotonic())  # the match: the last seat taken
        await super().start_match()

    async def _mental_deal(self, number: int) -> None:
        self.deal_started[number] = time.monotonic()
        await super()._mental_deal(number)


class TimedSeat(RemoteSession):
    """A real seat, noting when each of its own moves comes back forwarded by the host."""

    echoes: list[float]

    def _on_mental_fwd(self, seat: int, wire: Any) -> None:
        if seat == self.my_seat and inner(SignedMessage.from_wire(wire).payload)["t"] == "move":
            self.echoes.append(time.monotonic())
        super()._on_mental_fwd(seat, wire)


async def seat_main(url: str, out: Path, think: float) -> None:
    """One person's seat played by a greedy bot, `think` seconds a move as a person would take,
    until round 2 ends; its figures go to `out`."""
    session = TimedSeat(game="", url=url, room=None, name=out.stem)
    session.echoes = []
    cpu_start = time.process_time()
    await session.start()
    await session.set_ready(True)
    bot = make_bot("greedy", hash(out.stem) & 0xFFFF)
    figures: dict[str, Any] = {"plays": [], "draws": [], "echoes": [], "round_started": {}}
    submitted: tuple[float, Any] | None = None
    thinking: asyncio.Task[None] | None = None
    ended = 0
    async for event in session.events():
        if isinstance(event, RoundStarted):
            figures["round_started"][event.number] = time.monotonic()
            if event.number == 1:
                figures["cpu_ms"] = (time.process_time() - cpu_start) * 1000
        if isinstance(event, RoundEnded):
            ended += 1
            if ended == 1:
                figures["round_cpu_ms"] = (time.process_time() - cpu_start) * 1000
            if ended == ROUNDS:
                break
        if isinstance(event, MoveMade) and submitted is not None and event.seat == session.my_seat:
            took = time.monotonic() - submitted[0]
            figures["draws" if isinstance(event.move, zodiak.Draw) else "plays"].append(took)
            submitted = None
        view = session.view
        if (view is None or view.round_over or view.turn != session.my_seat
                or submitted is not None or not session.queue.empty()
                or (session.mental is not None and session.mental.moves)):
            continue
        if thinking is None:  # think as a person would, then look again
            thinking = asyncio.create_task(asyncio.sleep(think))
            thinking.add_done_callback(lambda _: session.queue.put_nowait(Notice("")))
            continue
        if not thinking.done():
            continue
        thinking = None
        move = bot.choose(view.view(session.my_seat))
        submitted = (time.monotonic(), move)
        echoes = len(session.echoes)
        await session.submit(move)
        figures["echo_from"] = figures.get("echo_from", []) + [(submitted[0], echoes)]
    figures["echoes"] = [session.echoes[i] - t for t, i in figures.get("echo_from", [])
                         if i < len(session.echoes)]
    out.write_text(json.dumps(figures))
    await session.close()


async def net_figures(think: float) -> None:
    """Rounds 1 and 2 of a four-person Zodiak match on loopback: deal times, round trips,
    sizes."""
    running = await start_relay("127.0.0.1", 0, single_room=True)
    url = f"ws://127.0.0.1:{running.port}/ws"
    conn = await RelayConnection.open_room(url)
    host = TimedHost(HostConfig(game="zodiak", players=SEATS, seed=7, mental=True))
    host.deal_started = {}
    host.on_event = lambda line: None
    serving = asyncio.create_task(host.serve(conn))
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        outs = [Path(tmp) / f"seat{i}.json" for i in range(SEATS)]
        procs = [await asyncio.create_subprocess_exec(sys.executable, __file__, "--seat", url,
                                                      str(out), str(think)) for out in outs]
        for proc in procs:
            await proc.wait()
        seats = [json.loads(out.read_text()) for out in outs]
    sizes: dict[str, int] = {}
    for body in host._prev_log + host.log:
        kind = str(inner(SignedMessage.from_wire(unpack(body)["m"]).payload).get("t"))
        if kind == "fwd":
            forwarded = unpack(body)["m"]
            kind = "fwd " + str(inner(SignedMessage.from_wire(
                inner(SignedMessage.from_wire(forwarded).payload)["m"]).payload).get("t"))
        sizes[kind] = max(sizes.get(kind, 0), len(body))
    serving.cancel()
    await conn.close()
    await running.close()
    deals = [max(seat["round_started"][str(n)] for seat in seats) - host.deal_started[n]
             for n in range(1, ROUNDS + 1)]
    plays = [t for seat in seats for t in seat["plays"]]
    draws = [t for seat in seats for t in seat["draws"]]
    echoes = [t for seat in seats for t in seat["echoes"]]
    print(f"loopback, {SEATS} seat processes and the host (load average before "
          f"{load[0]:.1f}, after {os.getloadavg()[0]:.1f}):")
    whole = max(seat["round_started"]["1"] for seat in seats) - host.deal_started[0]
    print(f"  deal complete (every seat's cards open) after the round's start: round 1"
          f" {deals[0] * 1000:.0f} ms (the deck shuffled in the lobby); round 2"
          f" {deals[1] * 1000:.0f} ms (the deck shuffled during round 1); people think"
          f" {think:g} s a move")
    print(f"  round 1's cards open after the match's start (the last seat taken; the lobby's"
          f" deck is shuffled in between): {whole * 1000:.0f} ms")
    print(f"  seat process CPU (everything: crypto, engine, network, bot): until round 1 is"
          f" dealt, median {statistics.median(seat['cpu_ms'] for seat in seats):.0f} ms;"
          f" round 1 with round 2's deck, median"
          f" {statistics.median(seat['round_cpu_ms'] - seat['cpu_ms'] for seat in seats):.0f} ms")
    print(f"  own move forwarded back (one round trip): median"
          f" {statistics.median(echoes) * 1000:.1f} ms over {len(echoes)};"
          f" face-up play shown: median {statistics.median(plays) * 1000:.1f} ms;"
          f" draw until its cards are open: median"
          f" {statistics.median(draws) * 1000 if draws else float('nan'):.1f} ms over"
          f" {len(draws)}")
    limit = RelayLimits().max_frame_bytes
    print(f"  largest host message of each kind (bytes; relay frame limit {limit}): "
          + ", ".join(f"{kind} {size}" for kind, size in sorted(sizes.items())))


def main() -> None:
    if sys.argv[1:2] == ["--seat"]:
        asyncio.run(seat_main(sys.argv[2], Path(sys.argv[3]), float(sys.argv[4])))
        return
    think = THINK
    if "--think" in sys.argv:
        think = float(sys.argv[sys.argv.index("--think") + 1])
        del sys.argv[sys.argv.index("--think"):sys.argv.index("--think") + 2]
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    repeats = int(args[0]) if args else 5
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
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
        f"{len(mean.reshuffles)} reshuffle(s) in 20 rounds); load average "
        f"{os.getloadavg()[0]:.1f}"
    )
    if "--no-net" not in sys.argv:
        asyncio.run(net_figures(think))


if __name__ == "__main__":
    main()
