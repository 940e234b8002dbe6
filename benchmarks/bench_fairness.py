"""CPU cost of fairness checking for one client over one 4-player Zodiak round with one reshuffle.

Run: python benchmarks/bench_fairness.py [rounds]

The dealer's and the other seats' work (building decks, sealing, signing) is prepared first and
not measured. Each measured round is what one client does: parse the lobby keys, commit and
reveal its nonce, verify ~60 signed messages through the transcript chain, open its 10 sealed
cards, check every position as it is dealt and every face-up opening, then run the full audit
(re-derive both decks, recompute every commitment). Figures are time.process_time.
"""

from __future__ import annotations

import platform
import statistics
import sys
import time
from dataclasses import dataclass

import nacl

from engine.cards import french_deck
from netplay.fair import (
    DEALER,
    TABLE,
    CardOpening,
    DeckCommitment,
    Identity,
    MessageSigner,
    PublicIdentity,
    RoundAudit,
    SignedMessage,
    TranscriptChain,
    nonce_commitment,
    open_card,
    seal_card,
    seed_commitment,
)

ROOM = "bench-room-1f9e"
ROUND = 1
SEATS = 4
ME = 0
TARGET_MS = 50.0


@dataclass(frozen=True)
class Event:
    """One thing the client receives: a signed message, and what it means for the audit."""

    sender: int | str
    message: SignedMessage
    kind: str
    args: tuple


def prepare() -> tuple[dict[int | str, bytes], list[Event], bytes]:
    """Play the dealer's and the other seats' side of a round once, recording what I receive."""
    dealer = Identity(b"d" * 32)
    seats = [Identity(bytes([s]) * 32) for s in range(SEATS)]
    lobby = {DEALER: dealer.public.to_bytes()}
    lobby |= {s: seats[s].public.to_bytes() for s in range(SEATS)}
    signers = {DEALER: MessageSigner(dealer, ROOM, DEALER)} | {
        s: MessageSigner(seats[s], ROOM, s) for s in range(1, SEATS)
    }
    events: list[Event] = []

    def send(sender: int | str, kind: str, *args: object) -> None:
        events.append(Event(sender, signers[sender].sign(repr((kind, args)).encode()), kind, args))

    def shuffle(epoch: int, canonical: list[str]) -> DeckCommitment:
        seed = bytes([epoch + 100]) * 32
        send(DEALER, "seed_committed", epoch, seed_commitment(ROOM, ROUND, epoch, seed))
        nonces = [bytes([epoch, s]) * 16 for s in range(SEATS)]
        for s in range(1, SEATS):
            send(s, "nonce_committed", epoch, s, nonce_commitment(ROOM, ROUND, epoch, s, nonces[s]))
        for s in range(1, SEATS):
            send(s, "nonce_revealed", epoch, s, nonces[s])
        deck = DeckCommitment.build(ROOM, ROUND, epoch, seed, nonces, canonical)
        send(DEALER, "deck_committed", epoch, canonical, deck.commitments)
        return deck

    def deal(deck: DeckCommitment, position: int, owner: int | str) -> None:
        opening = deck.opening(position)
        sealed = seal_card(dealer, seats[ME].public, ROOM, ROUND, opening) if owner == ME else b""
        face_up = opening if owner == TABLE else None
        send(DEALER, "dealt", deck.epoch, position, owner, sealed, face_up)

    first = shuffle(0, [str(card) for card in french_deck()])
    for position in range(7 * SEATS):
        deal(first, position, position % SEATS)
    deal(first, 28, TABLE)
    pile = [first.cards[28]]
    for position in range(29, 52):  # every other seat plays a card, then draws the next one
        owner = position % SEATS
        if owner != ME:
            played = first.opening(position - SEATS)
            send(owner, "opened", owner, played)
            pile.append(played.card)
        deal(first, position, owner)
    second = shuffle(1, pile[:-1])
    for position in range(3):
        deal(second, position, position % SEATS)
    for epoch, deck in ((0, first), (1, second)):
        send(DEALER, "seed_revealed", epoch, deck.seed)
    return lobby, events, seats[ME].seed


def client_round(lobby: dict[int | str, bytes], events: list[Event], my_seed: bytes) -> bool:
    """Everything one client computes for the round; returns whether the audit verified."""
    me = Identity(my_seed)
    keys = {sender: PublicIdentity.from_bytes(raw) for sender, raw in lobby.items()}
    chain = TranscriptChain(ROOM, keys)
    mine = MessageSigner(me, ROOM, ME)
    audit = RoundAudit(ROOM, ROUND, ME)
    for epoch in (0, 1):
        nonce = bytes([epoch, ME]) * 16
        mine.sign(nonce_commitment(ROOM, ROUND, epoch, ME, nonce))
        audit.nonce_committed(epoch, ME, nonce_commitment(ROOM, ROUND, epoch, ME, nonce))
    for event in events:
        chain.append(event.sender, event.message)
        if event.kind == "dealt":
            epoch, position, owner, sealed, face_up = event.args
            audit.dealt(epoch, position, owner)
            if owner == ME:
                audit.delivered(open_card(me, keys[DEALER], sealed, ROOM, ROUND))
                mine.sign(b"draw")
            elif isinstance(face_up, CardOpening):
                audit.opened(TABLE, face_up)
        elif event.kind == "nonce_revealed" and event.args[1] == SEATS - 1:
            getattr(audit, event.kind)(*event.args)
            audit.nonce_revealed(event.args[0], ME, bytes([event.args[0], ME]) * 16)
        else:
            getattr(audit, event.kind)(*event.args)
    return audit.verify().ok


def machine() -> str:
    """The CPU model, core count and Python and libsodium-binding versions."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"{model}, {platform.system()} {platform.release()}, Python {platform.python_version()}, "
        f"PyNaCl {nacl.__version__}"
    )


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    lobby, events, my_seed = prepare()
    sealed = sum(1 for e in events if e.kind == "dealt" and e.args[2] == ME)
    signed_by_me = 2 + sealed  # a nonce commitment per epoch and a move per card drawn
    positions = [len(e.args[2]) for e in events if e.kind == "deck_committed"]
    opened = sum(1 for e in events if e.kind == "opened" or (e.kind == "dealt" and e.args[4]))
    assert client_round(lobby, events, my_seed), "the honest round must verify"
    samples = []
    for _ in range(rounds):
        start = time.process_time()
        client_round(lobby, events, my_seed)
        samples.append((time.process_time() - start) * 1000)
    print(f"machine: {machine()}")
    print(
        f"round: 4 seats, {' + '.join(map(str, positions))} positions committed and re-derived "
        f"(1 reshuffle), {sealed} sealed cards opened, {opened} face-up openings checked, "
        f"{len(events)} signed messages verified, {signed_by_me} signed"
    )
    print(
        f"client CPU per round over {rounds} rounds: median {statistics.median(samples):.2f} ms, "
        f"min {min(samples):.2f} ms, max {max(samples):.2f} ms (target < {TARGET_MS:.0f} ms)"
    )


if __name__ == "__main__":
    main()
