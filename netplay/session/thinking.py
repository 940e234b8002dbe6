"""Bots at a table: a searching bot thinks in a worker thread, so the event loop keeps running."""

from __future__ import annotations

import asyncio

from engine.bots import Bot
from engine.games import Move
from engine.match import Round


async def choose_off_loop(bot: Bot, view: Round) -> Move:
    """The bot's move for `view`; a bot that `thinks` (the expert) chooses in a worker thread."""
    if getattr(bot, "thinks", False):
        return await asyncio.to_thread(bot.choose, view)
    return bot.choose(view)
