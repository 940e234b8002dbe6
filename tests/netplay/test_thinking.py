"""Issue 14: a searching bot thinks in a worker thread, so the event loop (the app's screen, the
host's table) keeps running while it does."""

from __future__ import annotations

import asyncio
import random
import threading

from engine import zodiak
from engine.bots import GreedyBot
from engine.cards import french_deck
from engine.expert import ExpertBot
from engine.match import Round
from netplay.session.thinking import choose_off_loop


class WatchedExpert(ExpertBot):
    """The real expert, noting when it starts and ends thinking and on which thread."""

    def __init__(self) -> None:
        super().__init__(seed=0, seconds=None, playouts=400)
        self.thinking = threading.Event()
        self.thread: threading.Thread | None = None

    def choose(self, view: Round) -> zodiak.ZodiakMove:  # type: ignore[override]
        self.thread = threading.current_thread()
        self.thinking.set()
        try:
            return super().choose(view)  # type: ignore[return-value]
        finally:
            self.thinking.clear()


def a_round() -> zodiak.ZodiakRound:
    deck = french_deck()
    random.Random(4).shuffle(deck)
    return zodiak.ZodiakRound.deal(deck, ["leo", "virgo", "aries", "pisces"], 0)


async def test_the_expert_thinks_while_the_loop_runs() -> None:
    """The loop ticks while the expert is in the middle of its search, on another thread."""
    state = a_round()
    bot = WatchedExpert()
    ticks_while_thinking = 0

    async def ticker() -> None:
        nonlocal ticks_while_thinking
        while True:
            if bot.thinking.is_set():
                ticks_while_thinking += 1
            await asyncio.sleep(0)

    ticking = asyncio.create_task(ticker())
    move = await choose_off_loop(bot, state.view(state.turn))
    ticking.cancel()
    assert state.is_legal(move)  # type: ignore[arg-type]
    assert bot.thread is not threading.main_thread()
    assert ticks_while_thinking > 0


async def test_quick_bots_stay_on_the_loop() -> None:
    """Greedy and random need no thread: they answer at once, as before."""
    state = a_round()
    move = await choose_off_loop(GreedyBot(), state.view(state.turn, history=False))
    assert state.is_legal(move)  # type: ignore[arg-type]
