"""One party's side of a whole round of a game dealt by mental poker (FAIRNESS.md A8).

`MentalPlay` joins a `MentalRound` (keys, shuffles, shares) to the engine: it builds the
round from what this party may see (its seats' hands, the face-up cards; every other card
`None`), and applies each move once the cards it needs are open: a face-up play once its mover
has sent its shares of the cards it plays, a draw once the drawn positions are dealt (after a
new chain of shuffles when Zodiak's stock runs out) and, for the drawer, opened. Every message
this party owes the others goes to `outbox`, in order; the caller signs and sends them, and
hands everyone else's to `receive` in the order the host's chain fixes. It does no I/O, so the
host (for its bots' key) and every seat run the same code.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine import hekata, zodiak
from engine.errors import IllegalMove
from engine.games import Game, game_named
from engine.house import STANDARD, HouseRules
from netplay.fair.commit import LOCAL, TABLE, FairnessError
from netplay.fair.mental_round import WATCHER, MentalRound, Owner

Where = tuple[int, int]  # (epoch, position)
MAX_EARLY = 64  # messages a party may send ahead of what this party has applied
NEXT_KINDS = ("mp_key", "mp_shuffle")  # what a party sends of the next round's deck


def played_texts(move: object) -> list[str]:
    """The cards a move puts face up, as text (a Zodiak run's cards, the Hekata card laid)."""
    if isinstance(move, zodiak.Run):
        return [str(c) for c in move.cards]
    if isinstance(move, hekata.HekataMove):
        return [str(move.card)]
    return []


@dataclass
class MentalPlay:
    """One party's view of a round: the mental-poker messages and the engine on what it sees."""

    game: str
    table: str
    round_no: int
    party: int  # or WATCHER: a view that holds no key and sees only what is face up
    seat_parties: tuple[int, ...]  # the party that holds each seat
    signs: tuple[str, ...]
    dealer: int
    scores: tuple[int, ...]
    first_epoch: int = 0
    house: HouseRules = STANDARD  # the table's house rules: every seat checks moves by them
    # Check shuffle proofs only when the caller says (`check`), once what this party owes is
    # sent: its own shuffle goes on without waiting for the chain's checks (FAIRNESS.md A8).
    defer_checks: bool = False
    mental: MentalRound = field(init=False)
    state: Any = None  # the engine's round, built once this party's cards of the deal are open
    outbox: list[dict[str, Any]] = field(default_factory=list)
    seat_of: dict[Where, int | str] = field(default_factory=dict)  # who got each dealt position
    offered: dict[int, list[Where]] = field(default_factory=dict)  # a mover's opened cards
    played: set[Where] = field(default_factory=set)
    moves: list[tuple[int, Any]] = field(default_factory=list)  # (sender, move) not yet applied
    drawing: list[Where] | None = None  # the positions the first waiting move draws
    reshuffling: bool = False
    early: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # not applicable yet
    unshared: set[Where] = field(default_factory=set)  # drawn by the move that ended the round
    held: set[int] = field(default_factory=set)  # parties whose key this party holds, its own too
    # This round's keys and deck, shuffled during the last round (`next` there): its first
    # epoch is theirs, and nothing of it is sent again.
    prepared: MentalRound | None = None
    next: MentalRound = field(init=False)  # the next round's keys and deck, shuffled in this one
    # A deal of a prepared deck this party never saw shuffled: it follows nothing of this deal
    # (a void starts one it can follow), only the next round's deck.
    blind: bool = False

    def __post_init__(self) -> None:
        self.seat_parties = tuple(self.seat_parties)
        parties = tuple(sorted(set(self.seat_parties)))
        if self.party != WATCHER:
            self.held.add(self.party)
        prepared = self.prepared
        if self.blind and prepared is not None:
            raise FairnessError(LOCAL, "a blind deal has no prepared deck")
        if prepared is not None:
            if (prepared.round_no != self.round_no or prepared.parties != parties
                    or prepared.party != self.party or prepared.table != self.table):
                raise FairnessError(LOCAL, "the prepared deck is of another round or parties")
            self.mental, self.first_epoch = prepared, prepared.first_epoch
        else:
            self.mental = MentalRound(self.table, self.round_no, self.party, parties,
                                      self.first_epoch, defer_checks=self.defer_checks)
            if self.party != WATCHER and not self.blind:
                self.outbox.append(self.mental.key_message())
        # The next round's deck is followed from now on, so that whatever anyone sends of it
        # is checked (and blamed) as it comes; it has this deal's first epoch, so a deal voided
        # and made again prepares anew, and what was sent for the voided one is refused.
        self.next = MentalRound(self.table, self.round_no + 1,
                                WATCHER if self.blind else self.party, parties,
                                self.first_epoch, defer_checks=self.defer_checks)
        self._progress()

    @property
    def rules(self) -> Game:
        """The game this round is of."""
        return game_named(self.game)

    def my_seats(self) -> list[int]:
        """The seats this party plays (with the keys handed over to it)."""
        return [s for s, p in enumerate(self.seat_parties) if p in self.held]

    def _tagged(self, msg: dict[str, Any], party: int) -> dict[str, Any]:
        """`msg` as `party` sends it: a key handed over speaks with its party named."""
        return msg if party == self.party else {**msg, "party": party}

    def adopt(self, party: int, secret: object) -> None:
        """Hold `party`'s round key from now on (mp_handover): open its cards, send what it owes,
        and play its seats; FairnessError if the secret is not the key it announced."""
        if party in self.held or party not in self.mental.parties:
            raise FairnessError(party, "it handed over a key that is not another party's")
        self.mental.adopt(party, secret)
        self.held.add(party)
        mental = self.mental
        for epoch, owners in mental.owners.items():  # what it owed and had not sent
            owed = [q for q, owner in enumerate(owners) if owner != party
                    and (epoch, q) not in self.unshared and not mental._has_share(epoch, q, party)]
            if owed:
                self.outbox.append(self._tagged(mental.shares_message(epoch, owed, party), party))
        self._shuffle_if_my_turn()
        self._progress()
        self._fill_held_hands()

    def _fill_held_hands(self) -> None:
        """Put the cards of seats whose key was handed over into the engine's view."""
        state = self.state
        if state is None:
            return
        rules, known = self.rules, self.mental.known
        for seat in self.my_seats():
            if None not in state.hands[seat]:
                continue
            mine = [w for w, s in sorted(self.seat_of.items())
                    if s == seat and w not in self.played and w not in self.unshared]
            if len(mine) == len(state.hands[seat]) and all(w in known for w in mine):
                state.hands[seat] = [rules.parse_card(known[w]) for w in mine]

    def checks_due(self) -> bool:
        """Whether a complete chain of shuffles waits for `check` (with `defer_checks`)."""
        return self.mental.checks_due() or self.next.checks_due()

    def check(self) -> None:
        """Check every complete chain of shuffles (this round's, then the next round's
        deck), then go on: deal, open, apply moves. FairnessError blames the first shuffler
        whose proof fails; no card of that deck opens."""
        self.mental.check_shuffles()
        self._progress()
        self.next.check_shuffles()

    def waiting_for(self) -> set[int]:
        """The parties the round waits for now: a key, a shuffle, a share, or a move."""
        mental, state = self.mental, self.state
        if mental.joint is None:
            return set(mental.parties) - set(mental.announced)
        deck = mental.decks.get(mental.epoch) if mental.decks else None
        if deck is not None and not deck.ready:
            return {deck.next_shuffler} if deck.next_shuffler is not None else set()
        owing = set[int]().union(*self._shares_missing())
        if owing:
            return owing
        if self.moves:
            return {self.moves[0][0]}
        if state is not None and not state.round_over and state.turn is not None:
            return {self.seat_parties[state.turn]}
        return set()

    # -- what the others send ------------------------------------------------------

    def receive(self, sender: int, msg: dict[str, Any]) -> None:
        """Check and apply a message of `sender` (mental poker, or its move), or blame it."""
        # A move without `epoch` is of a deal whose first epoch is 0.
        epoch = msg.get("epoch", 0 if msg.get("t") == "move" else None)
        if type(epoch) is int and 0 <= epoch < self.first_epoch:
            return  # sent for a deal voided since (it crossed the void): nothing of it holds
        if msg.get("t") == "move":
            if not self.blind:
                self._take_move(sender, msg)
            return
        if msg.get("round") == self.round_no + 1 and msg.get("t") in NEXT_KINDS:
            self._receive_next(sender, msg)
            return
        if self.blind:
            return  # a deal of a deck it never saw: nothing of it can be checked here
        if not self._applicable(msg):
            # A party that is behind (waiting for a draw's shares) hears of positions or an
            # epoch it has not dealt or started yet: kept until it has.
            if len(self.early) >= MAX_EARLY:
                raise FairnessError(sender, "it sent too many messages ahead of the round")
            self.early.append((sender, msg))
            return
        self._apply_message(sender, msg)
        self._progress()

    def _applicable(self, msg: dict[str, Any]) -> bool:
        """Whether `msg` names only epochs and positions this party has reached."""
        epoch, mental = msg.get("epoch"), self.mental
        if type(epoch) is not int or mental.joint is None:
            return True  # the round's own checks refuse what is malformed
        if msg.get("t") == "mp_shuffle":
            return epoch <= mental.epoch and bool(mental.decks)
        positions = msg.get("positions")
        if msg.get("t") != "mp_shares" or not isinstance(positions, list):
            return True
        dealt = len(mental.owners.get(epoch, ()))
        return not any(type(q) is int and dealt <= q < 64 for q in positions) and (
            epoch in mental.owners or epoch <= mental.epoch)

    def _apply_message(self, sender: int, msg: dict[str, Any]) -> None:
        self.mental.receive(sender, msg)
        if msg.get("t") == "mp_shares":
            epoch = msg["epoch"]
            mine = [(epoch, q) for q in msg["positions"]]
            if all(self.mental.owners[epoch][q] == sender for _, q in mine):
                self.offered.setdefault(sender, []).extend(mine)  # the cards it is playing

    def _take_move(self, sender: int, msg: dict[str, Any]) -> None:
        # A move names the first epoch of its deal when that is not 0 (a deal made again).
        if (msg.get("round") != self.round_no or msg.get("epoch", 0) != self.first_epoch
                or msg.get("n") != self.moves_seen()):
            raise FairnessError(sender, "its move is not the next one of this round")
        text = msg.get("move")
        try:
            move = self.rules.parse_move(text) if isinstance(text, str) else None
        except IllegalMove:
            move = None
        if move is None:
            raise FairnessError(sender, "its move is not in the notation of tui/RULES.md 3")
        self.moves.append((sender, move))
        self._progress()

    def moves_seen(self) -> int:
        """How many moves of the round this party has heard of (applied or waiting)."""
        return (len(self.state.history) if self.state is not None else 0) + len(self.moves)

    # -- this party's moves --------------------------------------------------------

    def play(self, move: Any) -> None:
        """Make `move` for this party's seat to move: open the cards it plays, then apply it."""
        state = self.state
        if state is None or self.moves or state.round_over:
            raise FairnessError(LOCAL, "no move is waiting for this party")
        seat = state.turn
        party = self.seat_parties[seat]
        if party not in self.held:
            raise FairnessError(LOCAL, f"seat {seat} is not this party's")
        state.check(move, seat)
        chosen: list[Where] = []
        for text in played_texts(move):
            where = next((w for w, card in sorted(self.mental.known.items())
                          if card == text and self.seat_of.get(w) == seat
                          and w not in self.played and w not in chosen), None)
            if where is None:
                raise FairnessError(LOCAL, f"seat {seat} holds no {text} to play")
            chosen.append(where)
        for epoch in sorted({e for e, _ in chosen}):
            positions = [q for e, q in chosen if e == epoch]
            self.outbox.append(self._tagged(
                self.mental.shares_message(epoch, positions, party), party))
        self.offered.setdefault(party, []).extend(chosen)
        made: dict[str, Any] = {"t": "move", "round": self.round_no, "n": self.moves_seen(),
                                "move": str(move)}
        if self.first_epoch:
            made["epoch"] = self.first_epoch
        self.outbox.append(self._tagged(made, party))
        self.moves.append((party, move))
        self._progress()

    # -- moving on -----------------------------------------------------------------

    def _progress(self) -> None:
        """Do everything that can be done now: shuffle, deal, apply waiting moves."""
        mental = self.mental
        if mental.joint is None:
            return
        if not mental.decks:
            mental.start_epoch([str(c) for c in self.rules.deck()])
        self._shuffle_if_my_turn()
        if not mental.decks[mental.epoch].ready:
            return
        if not mental.owners[self.first_epoch]:
            self._deal()
        if self.state is None:
            self._build_state()
        while True:
            epoch = mental.epoch
            retried = self._retry_early()
            if self.state is not None and self.moves and self._apply_first():
                continue
            # A draw that began a reshuffle makes that epoch's shuffles kept early apply now:
            # left waiting, a later shuffle would be applied before them (another step).
            if not retried and mental.epoch == epoch:
                break
        self._fill_held_hands()

    def _retry_early(self) -> bool:
        """Apply the first kept message that applies now; whether one did."""
        for i, (sender, msg) in enumerate(self.early):
            if self._applicable(msg):
                del self.early[i]
                self._apply_message(sender, msg)
                self._shuffle_if_my_turn()
                if self.state is None and self.mental.decks[self.mental.epoch].ready:
                    self._build_state()
                return True
        return False

    def _shuffle_if_my_turn(self) -> None:
        mental = self.mental
        while mental.decks and mental.decks[mental.epoch].next_shuffler in self.held:
            party = mental.decks[mental.epoch].next_shuffler
            assert party is not None
            msg = mental.shuffle_message(party)
            if msg is None:
                return
            self.outbox.append(self._tagged(msg, party))
        if mental.decks and not self.outbox:  # nothing to send first: prepare what comes later
            for party in sorted(self.held):
                mental.decks[mental.epoch].prepare(party)

    def _deal(self) -> None:
        owners: list[Owner] = []
        for position, seat in enumerate(self.rules.deal_layout(len(self.seat_parties))):
            self.seat_of[(self.first_epoch, position)] = TABLE if seat is None else seat
            owners.append(TABLE if seat is None else self.seat_parties[seat])
        self.mental.assign(self.first_epoch, owners)
        for party in sorted(self.held):
            theirs = [q for q, owner in enumerate(owners) if owner != party]
            self.outbox.append(self._tagged(
                self.mental.shares_message(self.first_epoch, theirs, party), party))

    def _build_state(self) -> None:
        known, players = self.mental.known, len(self.seat_parties)
        dealt = sorted(self.seat_of.items())
        # index (here and below): a seat that is not TABLE is a seat number.
        if any(where not in known for where, seat in dealt
               if seat == TABLE or self.seat_parties[seat] in self.held):  # type: ignore[index]
            return
        rules = self.rules
        hands: list[list[Any]] = [[] for _ in range(players)]
        face_up: list[Any] = []
        for where, seat in dealt:
            card = rules.parse_card(known[where]) if where in known else None
            (face_up if seat == TABLE else hands[seat]).append(card)  # type: ignore[index]
        stock: list[Any] = [None] * (len(rules.deck()) - len(dealt))
        self.state = rules.seat_view(hands, face_up, stock, self.signs, self.dealer,
                                     self.scores, self.house)
        self._announce_next()

    # -- the next round's deck, shuffled during this one (FAIRNESS.md A8, "Prepared deck") --

    def _announce_next(self) -> None:
        """Announce this party's key for the next round once its cards of this deal are open
        (not before: the deal's own work comes first), so the next deal's chain of shuffles
        runs while this round is played."""
        nxt = self.next
        if nxt.party == WATCHER or nxt.party in nxt.announced:
            return
        self.outbox.append(nxt.key_message())
        self._progress_next()

    def _receive_next(self, sender: int, msg: dict[str, Any]) -> None:
        nxt = self.next
        if msg.get("epoch") != nxt.first_epoch:
            raise FairnessError(sender, "its message for the next round's deck names another"
                                " epoch than this deal's")
        nxt.receive(sender, msg)
        self._progress_next()

    def _progress_next(self) -> None:
        shuffle_in_turn(self.next, self.rules, self.outbox)

    def prepared_digest(self, checked: bool = True) -> bytes | None:
        """The digest that names the next round's deck (`deal`'s `prepared`) once every party
        has shuffled it (and, with `checked`, every proof holds); None before."""
        return shuffled_digest(self.next, checked)

    def _apply_first(self) -> bool:
        """Apply the first waiting move if its cards are open; whether it was applied."""
        sender, move = self.moves[0]
        state = self.state
        seat = state.turn
        if seat is None or self.seat_parties[seat] != sender:
            raise FairnessError(sender, "it moved for a seat that is not its own, or out of turn")
        texts = played_texts(move)
        offered = self.offered.get(sender, [])
        if len(offered) < len(texts):
            return False  # its shares of the cards it plays have not come yet
        opened = offered[:len(texts)]
        if not all(where in self.mental.public for where in opened):
            return False
        if (sorted(self.mental.known[w] for w in opened) != sorted(texts)
                or any(self.seat_of.get(w) != seat or w in self.played for w in opened)):
            raise FairnessError(sender, "the cards it opened are not the cards it played,"
                                " dealt to that seat and unplayed")
        try:
            trial = state.copy()
            trial.push(move)
        except IllegalMove as exc:
            raise FairnessError(sender, f"its move is illegal: {exc}") from None
        count = len(trial.history[-1].drawn)
        # Cards drawn by the move that ends the round are only counted (tui/RULES.md 1.6):
        # they stay encrypted, so nobody waits for their shares after the round is over.
        ends = trial.round_over
        drawn = self._draw(seat, count, state, share=not ends) if count else []
        if drawn is None:
            return False
        if ends:
            self.unshared.update(drawn)
        cards = [self.mental.known.get(w) for w in drawn]
        if self.seat_parties[seat] in self.held and not ends:
            if None in cards:
                return False  # the others' shares of what it draws have not all come yet
            # arg-type: `cards` holds no None here (checked just above).
            state.push(move, [self.rules.parse_card(c) for c in cards])  # type: ignore[arg-type]
        else:
            state.push(move)
        del self.offered.setdefault(sender, [])[:len(texts)]
        self.played.update(opened)
        self.moves.pop(0)
        self.drawing = None
        return True

    def _draw(self, seat: int, count: int, state: Any, share: bool = True) -> list[Where] | None:
        """The positions a draw of `count` takes, dealt once (after a reshuffle's chain)."""
        if self.drawing is not None:
            return self.drawing
        mental = self.mental
        pile = state.pending_reshuffle() if isinstance(state, zodiak.ZodiakRound) else None
        if pile is not None and not self.reshuffling:
            self.reshuffling = True
            mental.start_epoch([str(c) for c in pile])
            self._shuffle_if_my_turn()
        if not mental.decks[mental.epoch].ready:
            return None
        self.reshuffling = False
        taken: list[Where] = []
        for epoch in sorted(mental.decks):
            left = len(mental.decks[epoch].cards) - len(mental.owners[epoch])
            here = min(left, count - len(taken))
            if here <= 0:
                continue
            positions = mental.assign(epoch, [self.seat_parties[seat]] * here)
            taken += [(epoch, q) for q in positions]
            for q in positions:
                self.seat_of[(epoch, q)] = seat
        if len(taken) != count:
            raise FairnessError(LOCAL, "the engine drew more cards than the decks hold")
        for party in sorted(self.held - {self.seat_parties[seat]} if share else ()):
            for epoch in sorted({e for e, _ in taken}):
                self.outbox.append(self._tagged(self.mental.shares_message(
                    epoch, [q for e, q in taken if e == epoch], party), party))
        self.drawing = taken
        return taken

    def settled(self) -> bool:
        """Whether the round is over and every party has sent every share it owes, so that
        no party still waits for one (the host starts the next round only then)."""
        if self.state is None or not self.state.round_over or self.moves or self.early:
            return False
        return not any(self._shares_missing())

    def _shares_missing(self) -> Iterator[set[int]]:
        """For each dealt card whose shares are owed, the parties whose share is yet to come."""
        mental = self.mental
        for epoch, owners in mental.owners.items():
            for q, owner in enumerate(owners):
                if (epoch, q) in self.unshared:
                    continue
                have = set(mental.shares.get((epoch, q), {})) | set(
                    mental.unchecked.get((epoch, q), {}))
                yield set(mental.parties) - {owner} - have

    def drain(self) -> list[dict[str, Any]]:
        """The messages this party owes the others, oldest first; the outbox is emptied."""
        out, self.outbox = self.outbox, []
        return out


def shuffle_in_turn(prepared: MentalRound, rules: Game, outbox: list[dict[str, Any]]) -> None:
    """Start a deck prepared for a later deal once every key is in, and shuffle it in this
    party's turn (FAIRNESS.md A8, "Prepared deck")."""
    if prepared.joint is None:
        return
    if not prepared.decks:
        prepared.start_epoch([str(c) for c in rules.deck()])
    if prepared.decks[prepared.epoch].next_shuffler == prepared.party:
        msg = prepared.shuffle_message()
        if msg is not None:
            outbox.append(msg)


def shuffled_digest(prepared: MentalRound, checked: bool = True) -> bytes | None:
    """The digest naming a prepared deck once every party has shuffled it (and, with
    `checked`, every proof holds); None before, or when a proof failed."""
    if not prepared.decks:
        return None
    deck = prepared.decks[prepared.first_epoch]
    if not deck.shuffled or deck.refused is not None or (checked and not deck.ready):
        return None
    return prepared_digest(prepared)


def prepared_digest(prepared: MentalRound) -> bytes:
    """SHA-256 of what names a prepared deck: its table, round, first epoch, parties, their
    round keys and the deck as the last shuffle left it (FAIRNESS.md A8, "Prepared deck")."""
    deck = prepared.decks[prepared.first_epoch]
    digest = hashlib.sha256(b"cardtui prepared deck\0")
    digest.update(f"{prepared.table}\0{prepared.round_no}\0{prepared.first_epoch}\0".encode())
    for party in prepared.parties:
        digest.update(bytes([party]) + prepared.announced[party].encode())
    for ciphertext in deck.ciphertexts:
        digest.update(ciphertext.encode())
    return digest.digest()


def party_seats(seats: Sequence[int | None], bot_party: int) -> tuple[int, ...]:
    """The party of each seat: a person's seat number, or `bot_party` for a bot (None)."""
    return tuple(bot_party if person is None else person for person in seats)
