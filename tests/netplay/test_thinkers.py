"""Issue 14 at a server: its expert bots search in its thinking processes (netplay/session/thinking.py
`Thinkers`), real worker processes running real searches, so no search holds the server's
interpreter lock."""

from __future__ import annotations

import asyncio
import os
import random
import signal

import pytest

from engine import bots
from engine.dealer import DealtRound
from engine.expert import ExpertBot
from engine.match import Match, Round
from netplay.session.thinking import Thinkers, choose_off_loop

pytestmark = pytest.mark.timeout(120)


def position(game: str, seed: int) -> Round:
    """A view of a four-player round after a few greedy moves, with more than one legal move."""
    rng = random.Random(seed)
    signs = ("leo", "virgo", "libra", "aries") if game == "zodiak" else ()
    table = DealtRound.deal(Match(game, 4, signs), ["x"] * 4, rng)
    state = table.state
    while True:
        seat = state.turn
        assert seat is not None
        view = state.view(seat, history=True)
        if len(list(view.legal_moves())) > 1 and len(state.history) >= 4:
            return view
        table.push(bots.GreedyBot().choose(view))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("game", ["zodiak", "hekata"])
async def test_an_expert_searches_in_another_process_and_its_random_state_moves_on(
        game: str) -> None:
    thinkers = Thinkers(1)
    try:
        workers = await thinkers.start()
        assert len(workers) == 1 and os.getpid() not in workers
        view = position(game, 7)
        bot = ExpertBot(3, seconds=0.2)
        before = bot.rng.getstate()
        move = await choose_off_loop(bot, view, thinkers)
        assert view.is_legal(move)
        assert (thinkers.searched, thinkers.hurried) == (1, 0)
        assert bot.rng.getstate() != before and bot.seconds == 0.2
        assert bot.last_playouts > 0  # it searched there, and says so here
    finally:
        await thinkers.close()
    assert not any(alive(pid) for pid in workers)


async def test_bots_that_find_no_thinker_free_in_their_time_play_greedys_move(
        caplog: pytest.LogCaptureFixture) -> None:
    """Six experts of 0.3 s ask one thinking process at once: one searches until its time is
    up, the others cannot start in theirs and play greedy's move; every move is legal, and the
    log counts the greedy moves (once a minute: here the first)."""
    thinkers = Thinkers(1)
    try:
        await thinkers.start()
        views = [position("zodiak", seed) for seed in range(6)]
        moves = await asyncio.gather(*(thinkers.choose(ExpertBot(seed, seconds=0.3), view)
                                       for seed, view in enumerate(views)))
        assert all(view.is_legal(move) for view, move in zip(views, moves))
        assert thinkers.searched + thinkers.hurried == 6
        assert thinkers.searched >= 1 and thinkers.hurried >= 3
        counted = [r.getMessage() for r in caplog.records if r.name == "cardtui.thinking"]
        assert counted == [("1 expert moves were greedy's since the last count: every"
                            " thinking process was busy (serve --thinkers)")]
    finally:
        await thinkers.close()


async def test_a_killed_thinker_is_replaced_and_the_move_still_comes() -> None:
    thinkers = Thinkers(1)
    try:
        (worker,) = await thinkers.start()
        view = position("zodiak", 11)
        os.kill(worker, signal.SIGKILL)
        move = await thinkers.choose(ExpertBot(1, seconds=0.2), view)
        assert view.is_legal(move)
        (replacement,) = await thinkers.start()
        assert replacement != worker
        move = await thinkers.choose(ExpertBot(2, seconds=0.2), view)
        assert view.is_legal(move) and thinkers.searched >= 1
    finally:
        await thinkers.close()


def test_a_server_has_at_least_one_thinker() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Thinkers(0)
