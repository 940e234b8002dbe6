"""The expert bot's strength against greedy, measured with `cardtui sim`, with 95% intervals.

Run: `python benchmarks/bench_expert.py [--playouts N] [--rounds R] [--only NAME] [--log FILE]`.
Each figure plays `cardtui sim GAME --rotate --playouts N --json` in chunks (different seeds,
each chunk a whole number of seat rotations), appends every chunk's JSON line to the log,
and prints the running total with its Wilson 95% interval, so that a run stopped early still
reports what it measured. `--summary` only reads the log. Nothing is asserted: the figures go
in the README. The budget is a fixed number of playouts per move (not time), so a loaded
machine changes how long the run takes, not what it measures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.simulate import wilson_interval

# name: (game, players, bots given to the seats in turn, the side whose wins count, chunk,
# what a chunk plays: --rounds (Hekata: deals) or --matches, whole matches to the game's target)
FIGURES = {
    "zodiak-2": ("zodiak", 2, "expert,greedy", "expert", 50, "--rounds"),
    "zodiak-4": ("zodiak", 4, "expert,greedy,greedy,greedy", "expert", 48, "--rounds"),
    "hekata-2": ("hekata", 2, "expert,greedy", "expert", 50, "--rounds"),
    "hekata-4": ("hekata", 4, "expert,greedy", "expert", 48, "--rounds"),
    "hekata-2-matches": ("hekata", 2, "expert,greedy", "expert", 50, "--matches"),
    "hekata-4-matches": ("hekata", 4, "expert,greedy", "expert", 48, "--matches"),
}


def summary(*logs: Path) -> dict[str, dict[str, object]]:
    """Every figure's rounds, wins, draws and 95% interval so far, from the logs."""
    totals: dict[str, dict[str, int]] = {}
    budgets: dict[str, set[int]] = {}
    for log in logs:
        if not log.exists():
            continue
        for line in log.read_text().splitlines():
            chunk = json.loads(line)
            name = chunk["figure"]
            side = FIGURES[name][3]
            total = totals.setdefault(name, {"rounds": 0, "wins": 0, "no_winner": 0})
            total["rounds"] += chunk.get("matches", chunk["rounds"])
            total["wins"] += chunk["wins"].get(side, 0)
            total["no_winner"] += chunk["no_winner"]
            budgets.setdefault(name, set()).add(chunk["playouts"])
    out: dict[str, dict[str, object]] = {}
    for name, total in totals.items():
        low, high = wilson_interval(total["wins"], total["rounds"])
        out[name] = {**total, "rate": total["wins"] / total["rounds"], "ci95": (low, high),
                     "playouts": sorted(budgets[name])}
    return out


def print_summary(*logs: Path) -> None:
    """The figures so far, one line each."""
    for name, figure in summary(*logs).items():
        interval: tuple[float, float] = figure["ci95"]  # type: ignore[assignment]
        low, high = interval
        print(f"{name}: expert won {figure['wins']}/{figure['rounds']}"
              f" = {100 * figure['rate']:.1f}% (95% CI {100 * low:.1f}-{100 * high:.1f}%),"  # type: ignore[operator]
              f" no winner {figure['no_winner']}, playouts per move {figure['playouts']}",
              flush=True)


def main(argv: list[str] | None = None) -> int:
    """Play the chunks and print the running figures; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--playouts", type=int, default=150, help="expert playouts per move")
    parser.add_argument("--chunk", type=int, help="rounds or matches per process (default: the"
                        " figure's, a whole number of seat rotations)")
    parser.add_argument("--rounds", type=int, default=500,
                        help="rounds (deals, or matches for the -matches figures) per figure")
    parser.add_argument("--only", choices=sorted(FIGURES), action="append",
                        help="measure only these figures")
    parser.add_argument("--log", type=Path, default=Path("bench_expert.jsonl"))
    parser.add_argument("--summary", action="store_true", help="only print the logs' figures")
    parser.add_argument("--first-seed", type=int, default=1,
                        help="the first chunk's seed (a second process on its own log starts"
                        " elsewhere, e.g. 1001, so that the two play different deals)")
    parser.add_argument("--also", type=Path, action="append", default=[],
                        help="with --summary: more logs to add up (another process's)")
    args = parser.parse_args(argv)
    if args.summary:
        print_summary(args.log, *args.also)
        return 0
    for name in args.only or list(FIGURES):
        game, players, bots, _, chunk, unit = FIGURES[name]
        chunk = args.chunk or chunk
        seed = args.first_seed - 1
        while summary(args.log).get(name, {}).get("rounds", 0) < args.rounds:  # type: ignore[operator]
            seed += 1
            done = {json.loads(line)["seed"] for line in args.log.read_text().splitlines()
                    if json.loads(line)["figure"] == name} if args.log.exists() else set()
            if seed in done:
                continue
            result = subprocess.run(
                [sys.executable, "-m", "tui.cli", "sim", game, "--players", str(players),
                 "--bots", bots, unit, str(chunk), "--rotate", "--seed", str(seed),
                 "--playouts", str(args.playouts), "--json"],
                capture_output=True, text=True, check=True, cwd=ROOT)
            line = json.loads(result.stdout)
            line.update(figure=name, seed=seed, playouts=args.playouts)
            with args.log.open("a") as log:
                log.write(json.dumps(line) + "\n")
            print_summary(args.log)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
