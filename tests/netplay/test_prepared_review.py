"""Prepared decks under attack (FAIRNESS.md A8, "Prepared deck"; PROTOCOL.md G9): what a seat
signs for the next round's deck during this one, and what a host names in a deal, checked at
a real table (a relay, a mental-poker host and people's clients on 127.0.0.1 in this process);
and a deal a wrong digest can leave with the host's bots alone.

A message of the next round's deck is signed in this round's chain: when the host moves on to
the next round while such a message waits for its turn, it is of a round that is over, never
the new deal's own (its key would be taken as the seat's key of the new deal, and the seat's
real messages dropped as already seen)."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest

from engine.bots import make_bot
from engine.games import game_named
from netplay.fair.context import BOT_PARTY, ProofContext
from netplay.fair.keys import RoundKey
from netplay.fair.mental_play import MentalPlay
from netplay.protocol import pack
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig
from tests.netplay.test_prepared_table import LyingHost, run_table, zodiak_host


def all_but_the_bots_shuffled(play: MentalPlay) -> bool:
    """Whether every person has shuffled the next round's deck (the host's bots shuffle last)."""
    nxt = play.next
    return (nxt is not None and bool(nxt.decks)
            and nxt.decks[nxt.first_epoch].steps_done >= len(nxt.parties) - 1)


def at_once(play: MentalPlay) -> bool:
    """People who move as soon as it is their turn."""
    return True


class QuietSeat(RemoteSession):
    """A seat that announces no key for round 2's deck (nor shuffles it) during round 1."""

    latest: ClassVar[RemoteSession | None] = None  # the last one started, for LateKeyHost

    async def start(self) -> None:
        QuietSeat.latest = self
        await super().start()

    def _mental_after(self) -> None:
        play = self.mental
        if play is not None and play.round_no == 1:
            play.outbox = [m for m in play.outbox if m.get("round") != 2]
        super()._mental_after()


def assert_host_blamed_for_round_two(faults: list[list[str]]) -> None:
    """Each person's client showed that the host named round 2's deck by a wrong digest, and
    nothing else."""
    for seat_faults in faults:
        assert seat_faults and all(
            f.startswith("the dealer: named round 2's deck by a digest") for f in seat_faults)


class LateKeyHost(Host):
    """A host at which seat 1's key for round 2's deck (signed in round 1's chain) comes in
    while the end of round 1 is being sent: it waits for the send lock, and the host deals
    round 2 meanwhile."""

    late: dict[str, Any]

    async def _broadcast_locked(self, t: str, **fields: Any) -> None:
        if t == "round_end" and fields.get("round") == 1 and "frame" not in self.late:
            head = self.heads[str(1)]
            key = RoundKey.generate().announce(ProofContext(self.table, 2, 0), 1).encode()
            seat = QuietSeat.latest
            assert seat is not None
            signed = head.sign(seat.identity.key, pack("mp_key", round=2, epoch=0, key=key))
            frame = self.late["frame"] = pack("s", c=1, m=signed.to_wire())
            conn = self.seats[1].conn
            assert conn is not None
            self.late["task"] = asyncio.ensure_future(self._on_frame(conn, frame))
            for _ in range(5):  # it is checked against round 1's chain, then waits for the lock
                await asyncio.sleep(0)
        await super()._broadcast_locked(t, **fields)

    async def _refuse(self, conn: int, code: str, message: str) -> None:
        self.late.setdefault("refused", []).append((conn, code))
        await super()._refuse(conn, code, message)


async def test_a_next_round_key_that_waits_while_the_round_changes_is_not_the_new_deals(
        ) -> None:
    """Seat 1 announces no key for round 2's deck during round 1 (so round 2 is dealt from its
    own chain, from epoch 0), and its key of round 1's chain for that deck reaches the host as
    round 1 ends. The host refuses it as of a round that is over: round 2 is played on with
    nobody's client blaming anyone, and nothing is voided."""
    host = LateKeyHost(HostConfig(game="zodiak", players=3, bots=1, seed=11, bot_delay=0.0,
                                  mental=True))
    host.late = {}
    events, faults, _ = await run_table(host, 2, ready=at_once, second=QuietSeat)
    assert faults == [[], []]
    assert "task" in host.late and host.late["task"].done()
    assert "stale" in [code for _, code in host.late.get("refused", [])]
    assert not any("voided" in line for line in events)


async def test_a_deck_named_by_a_digest_a_seat_did_not_compute_is_blamed_on_the_host() -> None:
    """A host names round 2's deck by a digest nobody computed, though each person's client saw
    the whole chain of the deck shuffled during round 1 (so an honest host names it by the very
    digest that client computed). Each client says mp_lost (it holds no key of such a deck),
    and shows a failed check blaming the host, which could otherwise deal every person out of
    every other round, their cards shown to its bots, with no client ever seeing it lie."""
    events, faults, _ = await run_table(zodiak_host(LyingHost), rounds=3)
    assert any(line.startswith("round 2 voided (seat ") for line in events)
    assert_host_blamed_for_round_two(faults)


class WithholdingHost(Host):
    """Never sends its bots' shuffle of the next round's deck (the last of its chain), yet
    names that deck, checked on its own, by its true digest."""

    async def _mental_flush(self) -> None:
        play = self.mental
        if play is not None:
            play.outbox = [m for m in play.outbox if not (
                m["t"] == "mp_shuffle" and m["round"] == play.round_no + 1)]
        await super()._mental_flush()


async def test_a_deck_named_before_its_whole_chain_was_sent_is_blamed_on_the_host() -> None:
    """The host deals round 2 from a deck whose last shuffle it never sent: no person's client
    can follow it (each says mp_lost and is dealt out), and each, having followed all of
    round 1's chain, blames the host."""
    events, faults, _ = await run_table(zodiak_host(WithholdingHost), 3,
                                        ready=all_but_the_bots_shuffled)
    assert "round 2 dealing by mental poker from the deck shuffled during round 1" in events
    assert any(line.startswith("round 2 voided (seat ") for line in events)
    assert_host_blamed_for_round_two(faults)


class EpochlessHost(Host):
    """Names round 2's deck by its true digest, but leaves out the deck's first epoch."""

    async def _broadcast(self, t: str, **fields: Any) -> None:
        if t == "deal" and fields.get("round") == 2 and "prepared" in fields:
            fields.pop("epoch")
        await super()._broadcast(t, **fields)


async def test_a_deck_named_without_its_first_epoch_is_blamed_on_the_host() -> None:
    """A `deal` that names a prepared deck and not its first epoch cannot be followed (each
    client says mp_lost), and each client that followed round 1 blames the host for it."""
    events, faults, _ = await run_table(zodiak_host(EpochlessHost), rounds=3)
    assert any(line.startswith("round 2 voided (seat ") for line in events)
    assert_host_blamed_for_round_two(faults)


class AllOutHost(LyingHost):
    """Misnames round 2's deck, then at once voids that deal naming every person as gone."""

    voided: list[tuple[int, ...]]

    async def _mental_deal(self, number: int) -> None:
        await super()._mental_deal(number)
        if number == 2:
            play = self.mental
            assert play is not None and play.prepared is not None
            await self._mental_void([0, 1], "a lie")
            assert self.mental is not None
            self.voided.append(self.mental.seat_parties)


async def test_a_misnamed_deck_lets_a_host_deal_every_person_out_at_once_but_it_is_blamed(
        ) -> None:
    """What a wrong digest allows (FAIRNESS.md A8, "Not guaranteed"): every person's client
    holds no key of the named deck, so each takes a void naming it as gone, and the host's
    bots play every seat of that round (seeing every hand) at once; each client shows that
    the host named a deck it did not shuffle."""
    host = zodiak_host(AllOutHost)
    host.voided = []
    events, faults, _ = await run_table(host, rounds=3)
    assert host.voided == [(255, 255, 255)]
    assert any(line.startswith("round 2 voided (a lie)") for line in events)
    assert_host_blamed_for_round_two(faults)


@pytest.mark.parametrize(("game", "players"), [("zodiak", 3), ("hekata", 2)])
def test_a_deal_left_with_the_bots_key_alone_is_played_to_its_end(game: str, players: int) -> None:
    """Every person dealt out (a void naming them all, or all away at the deal): the host's
    bots' key is the only party, so no other share ever comes for its cards; they open with
    that key alone and the round is played to its end, not waited on for ever."""
    rules = game_named(game)
    play = MentalPlay(game, "table-9f", 2, BOT_PARTY, (BOT_PARTY,) * players,
                      rules.signs_for([None] * players), 0, (0,) * rules.sides(players),
                      first_epoch=1, defer_checks=True)
    bot = make_bot("greedy", 1)
    for _ in range(500):
        if play.checks_due():
            play.check()
        play.drain()
        if play.state is None or play.state.round_over:
            break
        play.play(bot.choose(play.state.view(play.state.turn)))
    assert play.state is not None and play.state.round_over and play.settled()
