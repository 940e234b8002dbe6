"""Random Zodiak playouts per second (4 players, mid-round) on the fast representation and on the
rules engine, next to OpenSpiel's C++ `crazy_eights` in the same run.

Run: `python benchmarks/bench_playout.py [--seconds S] [--repeats K]
[--openspiel-python /work/venv-openspiel/bin/python]`. Each repeat times, one after the other,
(1) engine.playout.FastZodiak with `random_move` (what the expert's search runs on), (2) the
rules engine (ZodiakRound: a uniformly random move from `legal_moves`, then `push`), and
(3) benchmarks/openspiel_crazy_eights.py under the given Python (open_spiel lives in its own
environment, never in cardtui's). A move is one player's turn; the deal and OpenSpiel's chance
outcomes are not counted. Prints the machine, every repeat and the medians. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_sim import cpu_model

from engine import zodiak
from engine.cards import french_deck
from engine.playout import FastZodiak, random_move, to_engine_move

START_MOVES = 10
LONG_HAND = 14  # the engine lists every run; past this a random move may take seconds to list


def mid_round(rng: random.Random) -> zodiak.ZodiakRound:
    """A four-player round after the deal and START_MOVES random moves, not yet over."""
    while True:
        deck = french_deck()
        rng.shuffle(deck)
        state = zodiak.ZodiakRound.deal(deck, [rng.choice(zodiak.SIGNS) for _ in range(4)], 0)
        fast = FastZodiak.from_round(state, rng)
        for _ in range(START_MOVES):
            if state.round_over:
                break
            move = random_move(fast, rng)
            fast.push(move)
            state.push(to_engine_move(move))
        if not state.round_over:
            return state


def time_fast(starts: list[FastZodiak], seconds: float, rng: random.Random) -> float:
    """Moves per second of random playouts on FastZodiak."""
    moves = playouts = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        state = starts[playouts % len(starts)].copy()
        state.rng = rng
        while state.turn >= 0:
            state.push(random_move(state, rng))
            moves += 1
        playouts += 1
    return moves / (time.perf_counter() - began)


def time_engine(starts: list[zodiak.ZodiakRound], seconds: float, rng: random.Random) -> float:
    """Moves per second of random playouts on the rules engine (long hands draw: see LONG_HAND)."""
    moves = playouts = 0
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        state = starts[playouts % len(starts)].copy()
        steps = 0
        while not state.round_over and steps < 1000:
            hand = state.hands[state.turn]  # type: ignore[index]
            if len(hand) > LONG_HAND:
                state.push(zodiak.Draw())
            else:
                state.push(rng.choice(list(state.legal_moves())))
            moves += 1
            steps += 1
        playouts += 1
    return moves / (time.perf_counter() - began)


def time_openspiel(python: str, seconds: float) -> float | None:
    """OpenSpiel's moves per second, or None when its Python cannot run it."""
    try:
        done = subprocess.run([python, str(ROOT / "benchmarks" / "openspiel_crazy_eights.py"),
                               "--seconds", str(seconds)], capture_output=True, text=True,
                              check=True, timeout=seconds * 10 + 60)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"OpenSpiel not measured: {exc}", file=sys.stderr)
        return None
    return float(json.loads(done.stdout)["moves_per_second"])


def main(argv: list[str] | None = None) -> int:
    """Measure and print; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--openspiel-python", default="/work/venv-openspiel/bin/python")
    args = parser.parse_args(argv)
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    rng = random.Random(0)
    rounds = [mid_round(rng) for _ in range(200)]
    fast_starts = [FastZodiak.from_round(r) for r in rounds]
    figures: dict[str, list[float]] = {"fast": [], "engine": [], "openspiel": []}
    for repeat in range(args.repeats):
        figures["fast"].append(time_fast(fast_starts, args.seconds, rng))
        figures["engine"].append(time_engine(rounds, args.seconds, rng))
        spiel = time_openspiel(args.openspiel_python, args.seconds)
        if spiel is not None:
            figures["openspiel"].append(spiel)
        print(f"repeat {repeat + 1}: " + ", ".join(
            f"{name} {values[-1]:,.0f} moves/s" for name, values in figures.items() if values),
            flush=True)
    medians = {name: statistics.median(v) for name, v in figures.items() if v}
    print("median: " + ", ".join(f"{name} {value:,.0f} moves/s" for name, value in medians.items()))
    if "openspiel" in medians:
        print(f"fast / OpenSpiel: {medians['fast'] / medians['openspiel']:.2f}x;"
              f" engine / OpenSpiel: {medians['engine'] / medians['openspiel']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
