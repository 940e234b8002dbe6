"""A hostile mental-poker host for the end-to-end attack tests, run as its own process.

    python -m tests.e2e.hostile_host MODE PORT OUT [--game G] [--players N] [--bots B]

It is the real `Host` of netplay/table/host.py dealing by mental poker, with its relay in the
same process as `cardtui host` runs it (so it can close a seat's socket and make it reconnect),
overriding the hooks a modified host would use. Honest `cardtui join` processes take the seats.
Seat 1 is the victim. OUT gets a JSON report of what the host did and found.

- `snoop`: deals honestly, records every message it sends and receives, and after each one
  tries every decryption its key for its bots and the shares it holds allow: every subset of
  the shares of every dealt position, and its own key on every ciphertext of every shuffle in
  the chain. It reports each card it recovers: its bots' own, those opened to everyone, and any
  other (a person's card it should never see).
- `exclude`: closes the victim's socket, then deals round 1 naming the victim's seat as its
  bots' party, so the victim neither shuffles nor holds a key (the old forced-reconnect hole).
- `skip`: closes every seat's socket, then, as its bots' party, sends a shuffle made from the
  open deck rather than the people's shuffles: a deck missing every person's shuffle, whose
  order the host knows.
- `lobbyskip`: the same in the lobby, as its bots' party's shuffle of the first round's deck
  (FAIRNESS.md A8, "Lobby deck"); `skip` and `rewind` shuffle nothing in the lobby, so that
  they meet the chain a first round shuffles for itself (as when its lobby deck failed).
- `replay`: round 1 honest; at round 2 it closes every seat's socket, forwards seat 0's signed
  shuffle of round 1, and sends its bots' share of round 1 for the first person's position in
  place of the share of round 2.
- `rewind`: at round 1's deal, closes the victim's socket and answers its join by sending the
  round again from its start, as if the seat had never heard it (to make it forget its key).
- `redeal`: once the seats have sent their shares of round 1's deal, deals round 1 again with
  the same parties (a host that could do so would keep the deal its bots like best).
- `drop`: never forwards the victim's decryption shares of round 1, and closes its socket once
  they arrive (so the victim reconnects and sends them again).
- `flood`: as round 1 is dealt, sends every seat 8,000 refusals and the table 2,000 chat
  lines (more than an honest host's chain holds), as fast as it can, then plays honestly.
- `badshares`: once round 1 is dealt, sends as its bots' party, in its own signed chain, 3,000
  decryption shares of its bots' unplayed cards whose proofs fail (each new in the chain, and
  each one every seat checks, its bots' own cards being needed to open them face up), as fast as
  it can; then voids the deal naming nobody (as a host that started again) and deals honestly.
- `misname`: the first time it deals a round from a deck shuffled during the last round, it
  names that deck by a digest nobody computed (FAIRNESS.md A8, "Prepared deck"), as a host
  would that hoped the seats follow a deck they never saw shuffled.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.house import HouseRules
from netplay.fair import SignedMessage
from netplay.fair.commit import TABLE
from netplay.fair.context import BOT_PARTY
from netplay.fair.elgamal import CardBook, Ciphertext, open_deck
from netplay.fair.group import IDENTITY, Point, Scalar, point_sum
from netplay.fair.mental_lobby import LobbyDeck
from netplay.fair.mental_round import MentalRound
from netplay.fair.shares import SHARE_SIZE, DecryptionShare, make_share
from netplay.fair.shuffle import Shuffle, shuffle_deck
from netplay.messages import MpKey, MpShares, MpShuffle, Propose, as_map
from netplay.protocol import pack
from netplay.relay.client import RelayConnection
from netplay.relay.launch import RunningRelay, start_relay
from netplay.table.host import Host, HostConfig

VICTIM = 1
FLOOD_REFUSALS = 8_000
FLOOD_CHAT = 2_000  # twice what a seat keeps at most (CHAT_KEPT)
BAD_SHARES = 3_000


@dataclass
class HostileHost(Host):
    """The real host with the hooks a modified host would use."""

    mode: str = "snoop"
    out: Path | None = None
    relay_server: RunningRelay | None = None
    report: dict[str, Any] = field(default_factory=lambda: {
        "attempts": 0, "recovered_own": 0, "recovered_public": 0, "recovered_private": [],
        "positions_with_all_other_shares": 0, "wire_messages": 0, "wire_bytes": 0,
        "done": []})
    wire: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # everything seen
    tried: set[tuple[int, int, int, frozenset[int]]] = field(default_factory=set)  # subsets
    round_one: dict[str, Any] = field(default_factory=dict)  # kept for the replay

    # -- forcing reconnects ----------------------------------------------------------

    async def kick(self, seat: int) -> None:
        """Close `seat`'s socket at the relay, as a host can when the relay is its own."""
        conn, running = self.seats[seat].conn, self.relay_server
        if conn is None or running is None:
            return
        for room in running.relay.rooms.values():
            target = room.seats.get(conn)
            if target is not None:
                await target.ws.close()
        self.did(f"closed seat {seat}'s socket")

    async def flood(self) -> None:
        """Refusals to every seat and chat to the table, many more than an honest host sends."""
        for _ in range(FLOOD_REFUSALS):
            for seat in self.seats:
                if seat.conn is not None:
                    await self._send(seat.conn, pack("error", code="not_allowed",
                                                     message="no " * 60))
        for line in range(FLOOD_CHAT):
            await self._broadcast("chat", seat=0, name="p0", text=f"flood {line} " + "x" * 250)
        self.did(f"sent every seat {FLOOD_REFUSALS} refusals and {FLOOD_CHAT} chat lines")

    async def bad_shares(self) -> None:
        """Once round 1's deck is dealt, its bots' shares of their own unplayed cards with
        proofs that fail, each a new message of its chain; then a void, and an honest deal."""
        play = self.mental
        while play is not None and not play.mental.owners.get(play.first_epoch):
            await asyncio.sleep(0.05)
        if play is None or play is not self.mental:
            return
        mental, epoch = play.mental, play.first_epoch
        mine = [q for q, owner in enumerate(mental.owners[epoch]) if owner == BOT_PARTY]
        deck = mental.decks[epoch]
        self.report["bad_started"] = time.time()
        self.did(f"sending {BAD_SHARES} shares of its bots' cards whose proofs fail")
        for i in range(BAD_SHARES):
            q = mine[i % len(mine)]
            share = make_share(mental.key, deck.ciphertext(q), deck.context, BOT_PARTY, q)
            bad = DecryptionShare(share.value, share.proof_challenge, Scalar.random())
            await self._broadcast("mp_shares", round=play.round_no, epoch=epoch,
                                  positions=[q], shares=bad.encode())
        self.report["bad_sent"] = BAD_SHARES
        self.report["bad_ended"] = time.time()
        self.did(f"sent {BAD_SHARES} shares whose proofs fail; voiding the deal")
        await self._locked_void((), "the flood is over", play)

    def did(self, what: str) -> None:
        self.report["done"].append(what)
        self.write()  # before the log says so: a test reads the report when it sees the line
        self.on_event(f"hostile: {what}")

    def write(self) -> None:
        if self.out is not None:
            # Written whole, then renamed: the test reads the report as soon as the log says so.
            partial = self.out.with_suffix(".partial")
            partial.write_text(json.dumps(self.report))
            partial.replace(self.out)

    # -- the hooks -------------------------------------------------------------------

    def _seat_parties(self) -> tuple[int, ...]:
        parties = super()._seat_parties()
        if self.mode == "exclude" and self.round_number == 1:
            return tuple(BOT_PARTY if i == VICTIM else p for i, p in enumerate(parties))
        return parties

    async def _mental_deal(self, number: int) -> None:
        if self.mode == "exclude" and number == 1:
            await self.kick(VICTIM)
            await asyncio.sleep(0.05)
            self.did("dealt round 1 with the victim's seat to its bots' party")
        if self.mode in ("skip", "replay") and number == (1 if self.mode == "skip" else 2):
            for seat in range(len(self.seats)):
                if self.seats[seat].bot is None:
                    await self.kick(seat)
        if self.mode == "rewind" and number == 1:
            self.report["rewind_armed"] = True
        if self.mode == "flood" and number == 1:
            await self.flood()
        await super()._mental_deal(number)
        if self.mode == "badshares" and number == 1 and not self.report.get("bad_armed"):
            self.report["bad_armed"] = True
            self._spawn(self.bad_shares())
        if self.mode == "replay" and number == 2:
            old = self.round_one.get("seat0_shuffle")
            if old is not None:
                await self._broadcast("fwd", seat=0, m=old)
                self.did("forwarded seat 0's signed shuffle of round 1 in round 2")

    def _prepared_deck(self, number: int) -> tuple[MentalRound, bytes] | None:
        found = super()._prepared_deck(number)
        if self.mode != "misname" or found is None or self.report.get("misnamed"):
            return found
        self.report["misnamed"] = number
        self.did(f"named round {number}'s prepared deck by a digest nobody computed")
        return found[0], bytes(32)

    async def _mental_flush(self) -> None:
        play = self.mental
        if play is not None:
            play.outbox = [self._tamper(msg) for msg in play.outbox]
        await super()._mental_flush()

    def _tamper(self, msg: dict[str, Any]) -> dict[str, Any]:
        play = self.mental
        assert play is not None
        mental = play.mental
        if msg["t"] == "mp_shares" and msg["round"] == 1 and msg["epoch"] == 0:
            self.round_one.setdefault("host_shares", dict(zip(
                msg["positions"], (msg["shares"][i:i + SHARE_SIZE]
                                   for i in range(0, len(msg["shares"]), SHARE_SIZE)))))
        if self.mode == "skip" and msg["t"] == "mp_shuffle" and msg["round"] == 1:
            return self._forge_open_shuffle(msg, mental)
        if self.mode == "replay" and msg["t"] == "mp_shares" and msg["round"] == 2:
            old = self.round_one.get("host_shares", {})
            owners = mental.owners.get(msg["epoch"], [])
            blob = bytearray(msg["shares"])
            for i, q in enumerate(msg["positions"]):
                owner = owners[q] if q < len(owners) else None
                if owner not in (TABLE, BOT_PARTY, None) and q in old:
                    blob[i * SHARE_SIZE:(i + 1) * SHARE_SIZE] = old[q]
                    self.report["replayed_share_owner"] = owner
                    self.did(f"sent its share of round 1 for position {q} (seat {owner}'s)"
                             " in round 2")
                    return {**msg, "shares": bytes(blob)}
        return msg

    def _forge_open_shuffle(self, msg: dict[str, Any], mental: MentalRound) -> dict[str, Any]:
        """`msg` with a shuffle of the open deck in place of the chain's: the host knows where
        every card of it is."""
        assert mental.joint is not None
        cards = mental.decks[msg["epoch"]].cards
        start = open_deck(cards, mental.joint.combined)
        order = list(range(len(cards)))
        forged = shuffle_deck(mental.context(msg["epoch"]), BOT_PARTY, msg["step"],
                              mental.joint.combined, start, order)
        self.did(f"sent a shuffle of the open deck of round {msg['round']}, epoch"
                 f" {msg['epoch']}, skipping every person's shuffle")
        return {**msg, "deck": forged.encode()}

    async def _prepare_first_deck(self, now: bool = False) -> LobbyDeck | None:
        if self.mode in ("skip", "rewind"):
            return None  # these attack the chain a first round shuffles for itself
        return await super()._prepare_first_deck(now)

    async def _on_lobby_signed(self, index: int, message: SignedMessage,
                               typed: MpKey | MpShuffle | MpShares | Propose) -> None:
        body = as_map(typed)
        self.wire.append((f"seat {index}", body))
        if body.get("t") == "mp_shuffle" and index == 0:
            self.round_one["seat0_shuffle"] = message.to_wire()  # round 1's, shuffled in the lobby
        await super()._on_lobby_signed(index, message, typed)

    async def _lobby_flush(self) -> None:
        deck = self.lobby_deck
        if deck is not None and self.mode == "lobbyskip":
            deck.outbox = [self._forge_open_shuffle(msg, deck.next)
                           if msg["t"] == "mp_shuffle" else msg for msg in deck.outbox]
        await super()._lobby_flush()

    async def _on_mental_signed(self, index: int, message: SignedMessage,
                                typed: MpKey | MpShuffle | MpShares | Propose) -> None:
        body = as_map(typed)  # the decoded message as the map it travelled as
        self.wire.append((f"seat {index}", body))
        if body.get("round") == 1 and body.get("t") == "mp_shuffle" and index == 0:
            self.round_one["seat0_shuffle"] = message.to_wire()
        if (self.mode == "redeal" and body.get("t") == "mp_shares" and body.get("round") == 1
                and not self.report.get("redealt")):
            self.report["redealt"] = True
            self._spawn(self._locked(lambda: self._mental_deal(1)))
            self.did("dealt round 1 again with the same parties")
        if (self.mode == "drop" and index == VICTIM and body.get("t") == "mp_shares"
                and body.get("round") == 1):
            self.report["dropped"] = self.report.get("dropped", 0) + 1
            self.did(f"dropped seat {index}'s shares of positions {body.get('positions')}")
            if self.report["dropped"] == 1:
                await self.kick(VICTIM)
            return
        await super()._on_mental_signed(index, message, typed)
        self.snoop()

    async def _resync(self, conn: int, first: list[bytes], chain: Any, have: Any) -> None:
        if (self.report.get("rewind_armed") and self.seat_of(conn) == VICTIM
                and type(have) is int and have > 0 and chain == self.round_number):
            self.report["rewind_armed"] = False
            self.did(f"sent round {chain} to the victim again from its start (it had {have})")
            have = 0
        await super()._resync(conn, first, chain, have)

    async def _broadcast_locked(self, t: str, **fields: Any) -> None:
        await super()._broadcast_locked(t, **fields)
        self.report["wire_messages"] += 1
        self.report["wire_bytes"] += len(self.log[-1]) if self.log else 0
        self.wire.append(("host", {"t": t, **fields}))
        if self.mode == "rewind" and t == "mp_shuffle" and self.report.get("rewind_armed"):
            self._spawn(self.kick(VICTIM))
        self.snoop()

    # -- every decryption it can make ------------------------------------------------

    def snoop(self) -> None:
        """Try every decryption the host's own key and the shares it holds allow."""
        play = self.mental
        if self.mode != "snoop" or play is None:
            return
        mental = play.mental
        if mental.joint is None:
            return
        for epoch, deck in mental.decks.items():
            if not deck.ready:
                continue
            owners = mental.owners.get(epoch, [])
            for q, owner in enumerate(owners):
                where = (epoch, q)
                values: dict[int, Point] = dict(mental.shares.get(where, {}))
                values.update({p: s.value for p, s in mental.unchecked.get(where, {}).items()})
                values[BOT_PARTY] = deck.ciphertexts[q].a * mental.key.secret
                if owner not in (TABLE, BOT_PARTY) and set(values) == set(mental.parties) - {
                        owner}:
                    self.tried_all_others(epoch, q)
                self.try_subsets(epoch, q, owner, deck.ciphertexts[q], values, deck.book)
        self.write()

    def tried_all_others(self, epoch: int, q: int) -> None:
        key = (self.round_number, epoch, q, frozenset({-1}))
        if key not in self.tried:
            self.tried.add(key)
            self.report["positions_with_all_other_shares"] += 1

    def try_subsets(self, epoch: int, q: int, owner: object, ciphertext: Ciphertext,
                    values: dict[int, Point], book: CardBook) -> None:
        parties = sorted(values)
        for size in range(len(parties) + 1):
            for subset in itertools.combinations(parties, size):
                key = (self.round_number, epoch, q, frozenset(subset))
                if key in self.tried:
                    continue
                self.tried.add(key)
                self.report["attempts"] += 1
                point = ciphertext.b - point_sum([values[p] for p in subset])
                card = book._cards.get(point.data) if point != IDENTITY else None
                if card is None:
                    continue
                if owner == BOT_PARTY:
                    self.report["recovered_own"] += 1
                elif (epoch, q) in self.mental.mental.public:  # type: ignore[union-attr]
                    self.report["recovered_public"] += 1
                else:
                    self.report["recovered_private"].append(
                        {"round": self.round_number, "epoch": epoch, "position": q,
                         "owner": str(owner), "card": card, "parties": list(subset)})

    def snoop_chain(self) -> None:
        """Its own key on every ciphertext of every shuffle of the chain (the open deck too)."""
        play = self.mental
        if play is None or play.mental.joint is None:
            return
        mental, joint = play.mental, play.mental.joint
        for _, body in self.wire:
            if body.get("t") != "mp_shuffle" or body.get("round") != self.round_number:
                continue
            deck = mental.decks.get(body["epoch"])
            if deck is None:
                continue
            shuffled = Shuffle.decode(body["deck"], len(deck.cards), "host")
            candidates = list(shuffled.outputs) + list(open_deck(deck.cards, joint.combined))
            for ciphertext in candidates:  # none of these is ever opened: any card is a leak
                for point in (ciphertext.b, ciphertext.b - ciphertext.a * mental.key.secret):
                    self.report["attempts"] += 1
                    if point.data in deck.book._cards:
                        self.report["recovered_private"].append(
                            {"round": self.round_number, "epoch": body["epoch"],
                             "step": body["step"], "card": deck.book._cards[point.data]})

    async def _end_round(self) -> None:
        if self.mode == "snoop":
            self.snoop_chain()
            self.report["rounds"] = self.round_number
            self.write()
        await super()._end_round()


async def run(args: argparse.Namespace) -> None:
    running = await start_relay("127.0.0.1", args.port, single_room=True)
    conn = await RelayConnection.open_room(f"ws://127.0.0.1:{running.port}/ws")
    config = HostConfig(game=args.game, players=args.players, bots=args.bots, seed=11,
                        bot_delay=0.0, away_timeout=60.0, mental=True,
                        house=HouseRules(target=args.target),
                        result_path=args.out.with_suffix(".result.json"))
    host = HostileHost(config, mode=args.mode, out=args.out, relay_server=running)
    host.on_event = lambda line: print(line, flush=True)
    host.write()
    print(f"hostile host {args.mode} listening on {running.port}", flush=True)
    try:
        await asyncio.wait_for(host.serve(conn), args.seconds)
    except TimeoutError:
        pass
    host.write()
    await conn.close()
    await running.close()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["snoop", "exclude", "skip", "lobbyskip", "replay", "flood",
                                         "rewind", "redeal", "drop", "misname", "badshares"])
    parser.add_argument("port", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--game", default="zodiak")
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--bots", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--target", type=int, help="a shorter match: the house rules' target")
    asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    main(sys.argv[1:])
