"""Random playouts of OpenSpiel's C++ `crazy_eights` (4 players) from mid-game states: moves per second.

Run with the Python of a separate environment that has `open_spiel` (never a cardtui
dependency): `/work/venv-openspiel/bin/python benchmarks/openspiel_crazy_eights.py --seconds 5`.
A *move* is a player's action (play a card, draw a card, pass); chance outcomes (the deal and
the cards drawn) are sampled at random and counted apart. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import time

import pyspiel


def mid_game_state(game: pyspiel.Game, rng: random.Random, moves: int) -> pyspiel.State:
    """A state after the deal and `moves` random player moves (not yet over)."""
    while True:
        state = game.new_initial_state()
        made = 0
        while not state.is_terminal() and made < moves:
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
            else:
                actions = state.legal_actions()
                state.apply_action(actions[rng.randrange(len(actions))])
                made += 1
        if not state.is_terminal():
            return state


def main() -> None:
    """Measure and print JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start-moves", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    game = pyspiel.load_game("crazy_eights", {"players": 4})
    starts = [mid_game_state(game, rng, args.start_moves) for _ in range(200)]
    moves = chance = playouts = 0
    began = time.perf_counter()
    while time.perf_counter() - began < args.seconds:
        state = starts[playouts % len(starts)].clone()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.randrange(len(outcomes))][0])
                chance += 1
            else:
                actions = state.legal_actions()
                state.apply_action(actions[rng.randrange(len(actions))])
                moves += 1
        playouts += 1
    elapsed = time.perf_counter() - began
    print(json.dumps({"engine": "open_spiel crazy_eights (C++, via pyspiel)",
                      "version": getattr(pyspiel, "__version__", "?"),
                      "moves": moves, "chance_outcomes": chance, "playouts": playouts,
                      "seconds": elapsed, "moves_per_second": moves / elapsed}))


if __name__ == "__main__":
    main()
