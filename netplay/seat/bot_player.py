"""A networked seat played by one of the engine's bots until its match ends (`cardtui join --bot`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from engine.bots import make_bot
from engine.errors import IllegalMove
from netplay.seat.remote import RemoteSession
from netplay.session.events import Event, MatchEnded, Notice, RematchOffered, RoundStarted
from netplay.session.thinking import choose_off_loop

log = logging.getLogger("cardtui.client")


async def play_as_bot(session: RemoteSession, kind: str, seed: int = 0,
                      report: Callable[[Event], None] | None = None, *,
                      seconds: float | None = None,
                      playouts: int | None = None, rematches: int = 0) -> dict[str, Any] | None:
    """Play `session`'s seat with a bot until the match ends; return the result.

    `report` sees every event first (the command line prints them); `seconds` and
    `playouts` bound an expert's search; the bot accepts up to `rematches` rematches the host
    offers (and offers them itself where it may), and returns the last match's result.
    """
    bot = make_bot(kind, seed, seconds=seconds, playouts=playouts)
    session.after_match = rematches > 0
    await session.set_ready(True)
    answered: tuple[int, int] | None = None
    last: dict[str, Any] | None = None
    async for event in session.events():
        if report is not None:
            report(event)
        if isinstance(event, MatchEnded):
            if rematches <= 0:
                break
            last = session.result
            if session.may_offer_rematch:
                await session.offer_rematch()  # where nobody else may be there to offer one
            continue
        if isinstance(event, RoundStarted):
            answered = None  # a round dealt again after a void starts from move 0 again
        if isinstance(event, Notice):
            # A refusal, a reconnection, the host away or back: the move sent for this
            # position may not have counted. Send it again at the next moment no other event
            # waits, even when this notice is not that moment (the rejoin's resync queued
            # behind a refusal of the move sent before the host seated the new connection).
            answered = None
        if isinstance(event, RematchOffered) and rematches > 0:
            rematches -= 1
            session.after_match = rematches > 0
            await session.set_ready(True)
            continue
        view = session.view
        if (view is None or view.round_over or view.turn != session.my_seat
                or not session.trusted or not session.queue.empty()
                or (session.mental is not None and (
                    session.mental.moves or session.my_seat not in session.mental.my_seats()))):
            continue
        position = (session.round_number, len(view.history))
        if position == answered:
            continue
        answered = position
        try:
            await session.submit(await choose_off_loop(bot, view.view(session.my_seat)))
        except IllegalMove as exc:
            log.error("bot chose an illegal move: %s", exc)
    return session.result if session.result is not None else last
