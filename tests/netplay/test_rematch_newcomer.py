"""A newcomer who takes a seat freed for a rematch starts from the rematch, not from the match
before it (issue 13's rematch, found by an attacker audit of `cardtui serve`).

A rematch frees the seats of people who left, for anyone. The table's current chain was still
the last round of the finished match, so a newcomer was sent that round as if it had been dealt
to it: cards sealed for the player who left, their nonces, the match's end. Its checks failed
("a sealed card could not be opened", "never revealed its nonce"), and once the rematch began
the other seat accused the honest host of showing the newcomer another transcript. The offer
now opens a new chain, which the rematch is dealt in. Real relay, host and seats on loopback.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from netplay.fair.identity import Identity
from netplay.protocol import pack
from netplay.seat.remote import RemoteSession
from netplay.table.host import Host
from tests.tui.test_rematch_net import (
    TableOpener,
    ann_and_bo_at_a_server_table,
    open_table,
    play_for,
)

__all__ = ["open_table"]  # the fixture, for the test below
LIMIT = 60.0  # a hang guard only


async def until(check: object, what: str) -> None:
    async with asyncio.timeout(LIMIT):
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.02)


async def rematch_offered(open_table: TableOpener, mental: bool = True) -> tuple[
        Host, RemoteSession, RemoteSession, list[asyncio.Task[None]]]:
    """A server's table for Ann and Bo, its match over and a rematch offered by Ann; the host,
    Ann, Bo and the tasks that play for them."""
    host, ann, bo, players = await ann_and_bo_at_a_server_table(open_table, 0, mental)
    await until(lambda: ann.result is not None and bo.result is not None, "the match's end")
    await ann.offer_rematch()
    await until(lambda: bo.rematch_offered and bo.chain_no == host.round_number, "the offer")
    return host, ann, bo, players


@pytest.mark.parametrize("mental", [False, True], ids=["trusted-dealer", "mental-poker"])
async def test_a_newcomer_in_a_seat_freed_for_the_rematch_is_dealt_only_the_rematch(
        open_table: TableOpener, mental: bool) -> None:
    host, ann, bo, players = await rematch_offered(open_table, mental)
    cy = RemoteSession(game="", url=ann.url, room=ann.room, name="Cy")
    try:
        await bo.close()  # Bo leaves: the rematch frees his seat
        await until(lambda: not host.seats[1].taken, "Bo's seat freed")

        cy.after_match = True
        await cy.start()
        await cy.wait_seated()
        assert cy.my_seat == 1
        assert cy.failures == [] and cy.trusted, cy.failures
        assert cy.result is None, "the finished match is not the newcomer's"
        players.append(asyncio.create_task(play_for(cy)))
        await cy.set_ready(True)
        await until(lambda: host.round_base >= 1 and host.finished and cy.result is not None
                    and ann.result is not None and ann.round_number > host.round_base,
                    "the rematch's end")
        assert [s.name for s in ann.seats] == ["Ann", "Cy"]
        assert ann.failures == [] and ann.trusted, ann.failures
        assert cy.failures == [] and cy.trusted, cy.failures
        assert all("verified" in v for v in ann.verdicts + cy.verdicts), ann.verdicts + cy.verdicts
        assert cy.verdicts and all(f"round {n}" not in " ".join(cy.verdicts)
                                   for n in range(1, host.round_base + 1))
    finally:
        for task in players:
            task.cancel()
        for session in (ann, bo, cy):
            await session.close()


async def test_a_seat_signs_nothing_in_a_rematch_lobby_that_could_pin_its_key(
        open_table: TableOpener) -> None:
    """A hostile seat signs a round key in the rematch's lobby, then leaves: forwarded, it tied
    the seat to that key, and the honest clients blamed the honest host when a newcomer sat
    there. The host refuses it; the newcomer is keyed, and nobody fails a check."""
    host, ann, bo, players = await rematch_offered(open_table)
    cy = RemoteSession(game="", url=ann.url, room=ann.room, name="Cy")
    try:
        number = host.round_number
        bo._sign_mental(pack("mp_key", round=number, epoch=0, key=os.urandom(96)))
        await bo._send_out()
        await asyncio.sleep(0.5)  # a forwarded message would be at Ann's by now
        assert ann.chain is not None and ann.chain.next_seq(1) == 0, "forwarded"
        await bo.close()
        await until(lambda: not host.seats[1].taken, "Bo's seat freed")
        cy.after_match = True
        await cy.start()
        await cy.wait_seated()
        await until(lambda: ann.seats[1].name == "Cy", "Cy in Ann's lobby")
        assert ann.failures == [] and cy.failures == [], (ann.failures, cy.failures)
        # The honest players finish the rematch, its deals checked.
        players.append(asyncio.create_task(play_for(cy)))
        await cy.set_ready(True)
        await until(lambda: host.finished and cy.result is not None
                    and ann.round_number > host.round_base, "the rematch's end")
        assert ann.failures == [] and cy.failures == [], (ann.failures, cy.failures)
        assert cy.verdicts and all("verified" in v for v in ann.verdicts + cy.verdicts)
    finally:
        for task in players:
            task.cancel()
        for session in (ann, bo, cy):
            await session.close()


async def test_a_seat_says_so_when_the_host_lists_it_under_another_key(
        open_table: TableOpener) -> None:
    """A lying host gives a connected player's seat a key of its own in the rematch's lobby,
    to sign for that seat: the player's client reports the host at once."""
    host, ann, bo, players = await rematch_offered(open_table)
    try:
        host.seats[1].ident = Identity.generate().public.to_bytes().hex()  # the host lies
        await host._send_lobby(force=True)
        await until(lambda: bool(bo.failures), "Bo's client to notice")
        assert bo.failures == [
            "the dealer: listed seat 1, this client's, under another player's key"]
    finally:
        for task in players:
            task.cancel()
        for session in (ann, bo):
            await session.close()
