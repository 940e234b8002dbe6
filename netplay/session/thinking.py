"""Bots at a table: a searching bot thinks off the event loop, in a worker thread or in a server's thinking processes."""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import multiprocessing.connection
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol, cast

from engine.bots import Bot, GreedyBot
from engine.games import Move
from engine.match import Round

log = logging.getLogger("cardtui.thinking")


class Searcher(Protocol):
    """A bot that `thinks`: it searches for at most `seconds` a move (engine.expert.ExpertBot)."""

    name: str
    seconds: float | None

    def choose(self, view: Round) -> Move:
        """A legal move for the seat to move."""
        ...


async def choose_off_loop(bot: Bot, view: Round, thinkers: Thinkers | None = None) -> Move:
    """The bot's move for `view`: a bot that `thinks` (the expert) chooses in `thinkers`'
    processes, or without them in a worker thread; at a server (with `thinkers`) every other bot
    chooses in a worker thread too (greedy's Hekata tricks under a house row limit can take tens
    of milliseconds); elsewhere it answers at once, on the loop."""
    if getattr(bot, "thinks", False):
        if thinkers is not None:
            return await thinkers.choose(cast(Searcher, bot), view)
        return await asyncio.to_thread(bot.choose, view)
    if thinkers is not None:
        return await asyncio.to_thread(bot.choose, view)
    return bot.choose(view)


def default_thinkers() -> int:
    """How many thinking processes a server runs unless told: one core left for everything else."""
    return max(1, (os.cpu_count() or 2) - 1)


class Thinkers:
    """Worker processes where a server's searching bots think, `workers` searches at a time.

    Threads of one Python process share its interpreter lock: a dozen tables of expert bots
    thinking in the server's threads took the CPU its event loop needs for every SSH session
    and table (docs/MEASURED.md, "Expert bots at a server"). Here a search runs in another
    process, and waits for a free one at most its thinking time: a bot that could not start
    thinking by then plays greedy's move at once, and one that starts late thinks only for
    the time left. However many bots want to think, no bot's move waits much longer than its
    thinking time, and the server's process does none of their searching.
    """

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"a server needs at least 1 thinking process, not {workers}")
        self.workers = workers
        self.searched = 0  # moves a worker chose
        self.hurried = 0  # moves played as greedy's because no worker was free in time
        self._slots = asyncio.Semaphore(workers)
        self._pool: ProcessPoolExecutor | None = None  # made when first needed: a server
        # whose tables have no expert runs no extra process (not even multiprocessing's tracker)
        self._broken_said = False
        self._hurried_said = (-math.inf, 0)  # when the log last counted hurried moves, how many

    def _hurried(self, move: Move) -> Move:
        """Count (and log, once a minute) a greedy move played for want of a worker in time."""
        self.hurried += 1
        said_at, said = self._hurried_said
        if time.monotonic() - said_at >= 60:
            log.warning("%d expert moves were greedy's since the last count: every thinking"
                        " process was busy (serve --thinkers)", self.hurried - said)
            self._hurried_said = (time.monotonic(), self.hurried)
        return move

    def _current_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # A fresh interpreter, not a fork: a worker holds nothing of the server (its keys,
            # its sockets), only the engine it imports.
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_ready)
        return self._pool

    async def start(self) -> list[int]:
        """Start the workers now, so the first move does not wait for one; the process ids of
        those that answered (every worker is started, not every one need answer)."""
        loop, pool = asyncio.get_running_loop(), self._current_pool()
        return sorted(set(await asyncio.gather(
            *(loop.run_in_executor(pool, os.getpid) for _ in range(self.workers)))))

    async def choose(self, bot: Searcher, view: Round) -> Move:
        """The bot's move for `view`, searched in a worker, or greedy's when none is free in time."""
        seconds = bot.seconds or 1.0  # a bot bound by playouts alone gets a second
        deadline = time.time() + seconds
        try:
            await asyncio.wait_for(self._slots.acquire(), seconds)
        except TimeoutError:
            return self._hurried(await asyncio.to_thread(GreedyBot().choose, view))
        pool = self._current_pool()
        try:
            move, thought, searched = await asyncio.get_running_loop().run_in_executor(
                pool, _think, bot, view, deadline)
        except BrokenProcessPool:
            self._replace_broken(pool)
            return self._hurried(await asyncio.to_thread(GreedyBot().choose, view))
        finally:
            self._slots.release()
        vars(bot).update(vars(thought))  # its random state moves on as if it had thought here
        if not searched:
            return self._hurried(move)
        self.searched += 1
        return move

    def _replace_broken(self, pool: ProcessPoolExecutor) -> None:
        """A worker of `pool` died (killed, out of memory): start new ones once, and say so once."""
        if pool is not self._pool:
            return  # another search found it broken first
        if not self._broken_said:
            log.warning("a thinking process died: starting new ones (said once)")
            self._broken_said = True
        self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    async def close(self) -> None:
        """Stop the workers; a search under way ends within its thinking time."""
        if self._pool is not None:
            await asyncio.to_thread(self._pool.shutdown, True, cancel_futures=True)


def _ready() -> None:
    """Import the search before the first move asks for it, and end with the server."""
    import engine.expert  # noqa: F401

    parent = multiprocessing.parent_process()
    if parent is not None:
        # A server killed without its cleanup (SIGKILL, out of memory) would otherwise leave
        # its thinkers waiting for work forever.
        threading.Thread(target=_end_with, args=(parent.sentinel,), daemon=True).start()


def _end_with(sentinel: int) -> None:
    """Wait for the server's process to end, then end this one."""
    multiprocessing.connection.wait([sentinel])
    os._exit(0)


def _think(bot: Searcher, view: Round, deadline: float) -> tuple[Move, Searcher, bool]:
    """In a worker: the bot's move searched until `deadline`, the bot after it, and whether it
    searched (greedy's move once the deadline has passed)."""
    left = deadline - time.time()
    if left <= 0:
        return GreedyBot().choose(view), bot, False
    seconds = bot.seconds
    bot.seconds = min(seconds or left, left)
    try:
        return bot.choose(view), bot, True
    finally:
        bot.seconds = seconds
