"""The first round's deck, shuffled in the lobby (FAIRNESS.md A8, "Lobby deck"; PROTOCOL.md G9,
"The first round's deck"): a relay, a mental-poker host and people's clients on 127.0.0.1 in
this process. The first round is dealt from a deck every party shuffled before the match
started; a new lineup begins a new deck; a shuffle whose proof fails is blamed on its party and
a party that never shuffles only delays the start: either way the first round shuffles its own
deck, and play goes on."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from netplay.fair import FairnessError
from netplay.fair.context import BOT_PARTY
from netplay.fair.mental_lobby import FIRST_ROUND, LobbyDeck
from netplay.fair.mental_round import WATCHER
from netplay.fair.transcript import TranscriptChain
from netplay.protocol import ChainHead, pack
from netplay.relay.client import RelayConnection
from netplay.relay.launch import start_relay
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host, HostConfig
from tests.netplay.test_prepared_table import patient_bot, run_table, until, zodiak_host
from tests.netplay.test_shuffle_chain_checks import broken_proof

FIRST_DEAL_FROM_LOBBY = "round 1 dealing by mental poker from the deck shuffled in the lobby"


async def test_the_first_round_is_dealt_from_the_deck_shuffled_in_the_lobby() -> None:
    """Once every seat is taken the lobby shuffles round 1's deck (two people and the host's
    bots' key); round 1 names it, nothing is voided, no client records a fault, and a watcher
    who comes in during round 1 is sent the lobby's chain and follows the deal."""
    events, faults, watcher = await run_table(zodiak_host(), rounds=2, watcher_at=1)
    assert "shuffling the first round's deck in the lobby (lobby epoch 0)" in events
    assert FIRST_DEAL_FROM_LOBBY in events
    assert not [line for line in events if "voided" in line]
    assert faults == [[], []]
    assert watcher is not None and not watcher.failures


class LobbyCheat(RemoteSession):
    """Sends a shuffle of the lobby's deck whose proof does not hold (the deck itself is
    fine); every later shuffle it makes is honest."""

    def _lobby_after(self) -> None:
        deck = self.lobby_deck
        if deck is not None:
            deck.outbox = [{**m, "deck": broken_proof(m["deck"], 52)}
                           if m["t"] == "mp_shuffle" else m for m in deck.outbox]
        super()._lobby_after()


async def test_a_lobby_shuffle_that_fails_its_proof_is_blamed_and_round_one_shuffles_anew(
) -> None:
    """The host and the honest person blame party 1 for its lobby shuffle; no card of that
    deck is ever dealt: round 1 shuffles its own deck, and is played."""
    events, faults, _ = await run_table(zodiak_host(), rounds=2, second=LobbyCheat)
    assert any(line.startswith("party 1's shuffle of the first round's deck failed its check")
               for line in events)
    assert "round 1 dealing by mental poker" in events
    assert FIRST_DEAL_FROM_LOBBY not in events
    assert faults[0] and all("party 1" in f or "seat 1" in f for f in faults[0]), faults[0]


class LobbyStall(RemoteSession):
    """Announces its key of the lobby's deck and never shuffles it."""

    def _lobby_after(self) -> None:
        deck = self.lobby_deck
        if deck is not None:
            deck.outbox = [m for m in deck.outbox if m["t"] != "mp_shuffle"]
        super()._lobby_after()


async def test_a_party_that_never_shuffles_in_the_lobby_delays_the_start_only() -> None:
    """The match's first deal waits the reveal timeout for the lobby's deck, then shuffles
    its own; nobody is blamed for a shuffle nobody sent."""
    host = zodiak_host()
    host.config = replace(host.config, reveal_timeout=1.0)
    events, faults, _ = await run_table(host, rounds=2, second=LobbyStall)
    assert "the lobby's deck still waits for [1]: the first round shuffles its own" in events
    assert "round 1 dealing by mental poker" in events
    assert faults == [[], []]


async def test_a_new_lineup_in_the_lobby_begins_a_new_deck() -> None:
    """A table that waits for everyone to be ready: two people sit (lobby epoch 0), one
    leaves and another sits (lobby epoch 1, after the pause); round 1 is dealt from that
    second deck once both people's clients said they checked it, and the one who left is no
    party of it."""
    relay = await start_relay()
    events: list[str] = []
    host = Host(HostConfig(game="zodiak", players=2, bots=0, seed=5, bot_delay=0.0,
                           mental=True, require_ready=True))
    host.on_event = events.append
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    people = [RemoteSession(game="", url=relay.url, room=conn.room, name=f"p{i}")
              for i in range(3)]
    tasks: list[asyncio.Task[None]] = []
    try:
        for person in people[:2]:
            await person.start()
            await person.wait_seated()
        await until(lambda: host.lobby_deck is not None
                    and host.lobby_deck.prepared_digest() is not None, "lobby deck 0")
        first = host.lobby_deck
        await people[1].close()
        await people[2].start()
        await people[2].wait_seated()
        await until(lambda: host.lobby_deck is not first and host.lobby_deck is not None
                    and host.lobby_deck.prepared_digest() is not None, "lobby deck 1")
        # Both people's clients say they checked it (mp_checked): the deal waits for no check.
        await until(lambda: host.lobby_deck is not None and host.lobby_deck.checked_by == {0, 1},
                    "both people checked lobby deck 1")
        for i in (0, 2):
            tasks.append(asyncio.create_task(patient_bot(people[i], i)))
        await until(lambda: host.state is not None and len(host.state.history) >= 2,
                    "round 1 played")
        assert host.mental is not None and host.mental.first_epoch == 1
        assert FIRST_DEAL_FROM_LOBBY in events
        assert [line for line in events if line.startswith("shuffling the first round's")] == [
            "shuffling the first round's deck in the lobby (lobby epoch 0)",
            "shuffling the first round's deck in the lobby (lobby epoch 1)"]
        assert not people[0].failures and not people[2].failures
    finally:
        for task in tasks:
            task.cancel()
        for person in people:
            await person.close()
        serving.cancel()
        await conn.close()
        await relay.close()


def test_a_lobby_deck_takes_only_its_own_epochs_keys_and_shuffles() -> None:
    """A key of another lobby epoch, of another round, or a message of any other kind is
    refused and blamed on its sender, and changes nothing."""
    parties = (0, 1, BOT_PARTY)
    mine = LobbyDeck("zodiak", "T", 0, parties, 3)
    theirs = LobbyDeck("zodiak", "T", 1, parties, 3)
    elsewhere = LobbyDeck("zodiak", "T", 1, parties, 4)
    key = theirs.drain()[0]
    for wrong in (elsewhere.drain()[0], {**key, "round": 2},
                  {**key, "t": "mp_shares"}, {**key, "t": "move"}):
        try:
            mine.receive(1, wrong)
        except FairnessError as exc:
            assert exc.blamed == 1
        else:
            raise AssertionError(f"took {wrong['t']} of round {wrong['round']}")
    assert set(mine.next.announced) == {0}
    mine.receive(1, key)
    assert set(mine.next.announced) == {0, 1}
    assert mine.waiting_for() == {BOT_PARTY}
    watcher = LobbyDeck("zodiak", "T", WATCHER, parties, 3)
    assert watcher.drain() == [] and watcher.waiting_for() == set(parties)


def test_a_chain_admits_a_sender_once_and_never_keys_it_again() -> None:
    """A sender named mid-chain (a seat's lobby-deck chain) is admitted with the key the lobby
    showed; naming it again with another key changes nothing."""
    from netplay.fair import Identity

    alice, mallory = Identity.generate(), Identity.generate()
    chain = TranscriptChain("room", {})
    assert chain.admit("0/deck0", alice.public)
    assert not chain.admit("0/deck0", mallory.public)
    assert chain.next_seq("0/deck0") == 0


async def test_a_person_sitting_down_and_standing_up_again_makes_a_bounded_number_of_decks(
) -> None:
    """One person stays; another sits down and stands up again twelve times. Each time the
    table is full a new lineup begins a new lobby deck, but at most `lobby_decks` (here 3) in
    the whole lobby; the match then starts with round 1 shuffling its own deck, and is
    played."""
    relay = await start_relay()
    events: list[str] = []
    host = Host(HostConfig(game="zodiak", players=2, bots=0, seed=6, bot_delay=0.0,
                           mental=True, require_ready=True, lobby_pause=0.05, lobby_decks=3))
    host.on_event = events.append
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    stays = RemoteSession(game="", url=relay.url, room=conn.room, name="stays")
    comers: list[RemoteSession] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        await stays.start()
        await stays.wait_seated()
        for i in range(12):
            comer = RemoteSession(game="", url=relay.url, room=conn.room, name=f"c{i}")
            comers.append(comer)
            await comer.start()
            await comer.wait_seated()
            await asyncio.sleep(0.1)
            await comer.close()
            await until(lambda: not host.seats[1].taken, "the seat freed")
        last = RemoteSession(game="", url=relay.url, room=conn.room, name="last")
        comers.append(last)
        await last.start()
        await last.wait_seated()
        for i, person in enumerate((stays, last)):
            tasks.append(asyncio.create_task(patient_bot(person, i)))
        await until(lambda: host.state is not None and len(host.state.history) >= 2,
                    "round 1 played")
        begun = [line for line in events if line.startswith("shuffling the first round's")]
        assert len(begun) == 3, begun
        assert "round 1 dealing by mental poker" in events
        assert not stays.failures and not last.failures
    finally:
        for task in tasks:
            task.cancel()
        for person in [stays, *comers]:
            await person.close()
        serving.cancel()
        await conn.close()
        await relay.close()


async def seated_lobby(host: Host, count: int) -> tuple[
        list[RemoteSession], RelayConnection, asyncio.Task[None], object]:
    """A relay, `host` serving its room, and `count` people seated who have each checked the
    lobby's first deck."""
    relay = await start_relay()
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    people = [RemoteSession(game="", url=relay.url, room=conn.room, name=f"p{i}")
              for i in range(count)]
    for person in people[:2]:
        await person.start()
        await person.wait_seated()
    await until(lambda: host.lobby_deck is not None and host.lobby_deck.checked_by == {0, 1},
                "both people checked lobby deck 0")
    return people, conn, serving, relay


async def close_lobby(people: list[RemoteSession], conn: RelayConnection,
                      serving: asyncio.Task[None], relay: object) -> None:
    for person in people:
        await person.close()
    serving.cancel()
    await conn.close()
    await relay.close()  # type: ignore[attr-defined]


def lobby_host(host_class: type[Host] = Host, **options: object) -> Host:
    host = host_class(HostConfig(game="zodiak", players=2, bots=0, seed=5, bot_delay=0.0,
                                 mental=True, require_ready=True, **options))  # type: ignore[arg-type]
    host.on_event = lambda line: None
    return host


async def test_a_seat_says_it_checked_a_deck_once_and_chain_zero_stays_bounded() -> None:
    """A client that sends its `mp_checked` of the lobby's deck 200 times more has every copy
    refused: nothing more is forwarded into chain 0, which every newcomer is sent."""
    host = lobby_host()
    people, conn, serving, relay = await seated_lobby(host, 2)
    try:
        flooder = people[0]
        deck = flooder.lobby_deck
        assert deck is not None
        digest = deck.prepared_digest()
        before = len(host.log)
        for _ in range(200):
            flooder._sign_mental(pack("mp_checked", round=FIRST_ROUND, epoch=deck.epoch,
                                      digest=digest), f"deck{deck.epoch}")
        await flooder._send_out()
        await until(lambda: host.strikes.get(flooder_conn(host), 0) >= 200, "every copy refused")
        assert len(host.log) == before
        assert not people[1].failures
    finally:
        await close_lobby(people, conn, serving, relay)


def flooder_conn(host: Host) -> int:
    conn = host.seats[0].conn
    assert conn is not None
    return conn


async def test_a_newcomer_cannot_sign_on_in_the_chain_of_whoever_sat_there_before() -> None:
    """The lobby has made its last deck (so the host keeps it) when p1 leaves and p2 takes
    seat 1; p2 signs the next message of p1's chain `1/deck0` with its own key: the host
    refuses it, forwards nothing, and nobody records a fault."""
    host = lobby_host(lobby_decks=1)
    people, conn, serving, relay = await seated_lobby(host, 3)
    try:
        await people[1].close()
        comer = people[2]
        await comer.start()
        await comer.wait_seated()
        await until(lambda: comer.phase == "live", "the newcomer follows the table")
        head = host.heads["1/deck0"]
        comer._heads["deck0"] = ChainHead(head.seq, head.head)  # what its catch-up showed
        deck = host.lobby_deck
        assert deck is not None
        before = len(host.log)
        comer._sign_mental(pack("mp_checked", round=FIRST_ROUND, epoch=0,
                                digest=deck.prepared_digest(checked=False)), "deck0")
        await comer._send_out()
        await until(lambda: host.strikes.get(host.seats[1].conn or -1, 0) >= 1, "refused")
        assert len(host.log) == before
        assert not people[0].failures and not comer.failures
    finally:
        await close_lobby(people, conn, serving, relay)


class StaleDeckHost(Host):
    """Deals the first round from the lobby's deck even though whoever sits changed since."""

    def _take_lobby_deck(self) -> LobbyDeck | None:
        deck, self.lobby_deck = self.lobby_deck, None
        return deck


async def test_a_first_deal_from_a_deck_begun_before_this_person_sat_down_is_the_hosts_lie(
) -> None:
    """p1 leaves after lobby deck 0 and p2 sits down; the lobby made its last deck, and the
    host deals round 1 from deck 0 anyway (keyed by p1): p2 cannot follow it, and its client
    blames the host for it (before, it would sit the round out silently)."""
    events: list[str] = []
    host = lobby_host(StaleDeckHost, lobby_decks=1)
    host.on_event = events.append
    people, conn, serving, relay = await seated_lobby(host, 3)
    tasks: list[asyncio.Task[None]] = []
    try:
        await people[1].close()
        await people[2].start()
        await people[2].wait_seated()
        for i in (0, 2):
            tasks.append(asyncio.create_task(patient_bot(people[i], i)))
        await until(lambda: any(f.startswith("the dealer: named round 1's deck")
                                for f in people[2].failures), "the newcomer blames the host")
        assert not people[0].failures
    finally:
        for task in tasks:
            task.cancel()
        await close_lobby(people, conn, serving, relay)


async def test_a_host_started_again_in_the_lobby_names_later_lobby_decks(tmp_path: Path
                                                                          ) -> None:
    """`host --resume` of a table saved in the lobby goes on from the lobby epoch it saved:
    the people come back, a new deck is shuffled, and nobody blames the host."""
    save = tmp_path / "hosted.json"
    host = lobby_host(save_path=save)
    people, conn, serving, relay = await seated_lobby(host, 2)
    try:
        serving.cancel()
        await conn.close()
        resumed, room, secret = Host.resume(HostConfig(game="zodiak", players=2, bots=0,
                                                       bot_delay=0.0, mental=True,
                                                       require_ready=True), save)
        assert resumed.lobby_epoch == 1
        events: list[str] = []
        resumed.on_event = events.append
        conn = await RelayConnection.open_room(relay.url, room, secret)  # type: ignore[attr-defined]
        serving = asyncio.create_task(resumed.serve(conn))
        await until(lambda: resumed.lobby_deck is not None
                    and resumed.lobby_deck.checked_by == {0, 1}, "a new deck, checked")
        assert resumed.lobby_deck is not None and resumed.lobby_deck.epoch >= 1
        assert not people[0].failures and not people[1].failures
    finally:
        await close_lobby(people, conn, serving, relay)


class RepeatingHost(Host):
    """Once the lobby's first deck is made, names lobby deck 0 again (a replay) and lobby deck
    8 (past the bound), as a host would that wanted every client to shuffle again and again."""

    async def _lobby_flush(self) -> None:
        await super()._lobby_flush()
        deck = self.lobby_deck
        if deck is not None and deck.people <= deck.checked_by and not getattr(
                self, "repeated", False):
            self.repeated = True
            for epoch in (0, 8):
                await self._broadcast("mp_prepare", round=FIRST_ROUND, epoch=epoch,
                                      parties=list(deck.seat_parties))


async def test_a_lobby_deck_named_again_or_past_the_bound_is_refused_and_blamed() -> None:
    """Every client refuses lobby deck 0 named a second time and lobby deck 8, blames the
    host for each, shuffles nothing more, and round 1 is still dealt from deck 0."""
    host = lobby_host(RepeatingHost)
    events: list[str] = []
    host.on_event = events.append
    people, conn, serving, relay = await seated_lobby(host, 2)
    tasks: list[asyncio.Task[None]] = []
    try:
        await until(lambda: all(len(p.failures) >= 2 for p in people), "both blame the host")
        for person in people:
            assert person.lobby_deck is not None and person.lobby_deck.epoch == 0
            assert any("named lobby deck 0 after lobby deck 0" in f for f in person.failures)
            assert any("named lobby deck 8: a lobby has at most 8" in f
                       for f in person.failures)
        tasks = [asyncio.create_task(patient_bot(p, i)) for i, p in enumerate(people)]
        await until(lambda: host.state is not None and len(host.state.history) >= 2,
                    "round 1 played")
        assert FIRST_DEAL_FROM_LOBBY in events
    finally:
        for task in tasks:
            task.cancel()
        await close_lobby(people, conn, serving, relay)


async def test_a_client_says_whom_the_lobbys_deck_waits_for_then_that_it_is_ready() -> None:
    """The lobby screen's line (netplay/seat/first_deck.py `first_deck_line`): nothing while a
    seat is empty, then the party the deck waits for by seat and name, and "shuffled and
    checked" once every shuffle came and its proofs held on this client."""
    relay = await start_relay()
    host = Host(HostConfig(game="zodiak", players=2, bots=0, seed=5, bot_delay=0.0,
                           mental=True, require_ready=True, lobby_pause=0.1),
                on_event=lambda _: None)
    conn = await RelayConnection.open_room(relay.url)
    serving = asyncio.create_task(host.serve(conn))
    me = RemoteSession(game="", url=relay.url, room=conn.room, name="me")
    stall = LobbyStall(game="", url=relay.url, room=conn.room, name="slow")
    friend = RemoteSession(game="", url=relay.url, room=conn.room, name="quick")
    try:
        await me.start()
        await me.wait_seated()
        assert me.first_deck_line() == ""
        await stall.start()
        await stall.wait_seated()
        waiting = "Round 1's deck: being shuffled, waiting for seat 1 (slow)."
        await until(lambda: me.first_deck_line() == waiting, "the wait named")
        await stall.close()  # the slow one leaves; another sits down: a new deck
        await friend.start()
        await friend.wait_seated()
        ready = "Round 1's deck: shuffled and checked, ready to deal."
        await until(lambda: me.first_deck_line() == ready == friend.first_deck_line(),
                    "the deck ready")
    finally:
        for person in (me, stall, friend):
            await person.close()
        serving.cancel()
        await conn.close()
        await relay.close()
