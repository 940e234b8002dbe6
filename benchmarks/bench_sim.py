"""Complete four-player Zodiak rounds per second with `random` bots on one core, and the machine.

Run: `python benchmarks/bench_sim.py [--rounds N] [--repeats K] [--game zodiak|hekata]
[--bots random]`. It prints the machine, then rounds per second for each repeat and the best
and median; a bot-only round is the same engine path a real table takes (a view per move,
the check, the push, the record). Nothing is asserted: the figure goes in the README.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.simulate import simulate


def cpu_model() -> str:
    """The CPU's model name, from /proc/cpuinfo where there is one."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def pin_to_one_core() -> str:
    """Pin this process to a single CPU where the OS allows it, and say which."""
    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[-1]})
        return f"pinned to CPU {cpus[-1]} of {len(cpus)}"
    return "not pinned (no sched_setaffinity here)"


def main(argv: list[str] | None = None) -> int:
    """Measure and print; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="zodiak", choices=("zodiak", "hekata"))
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--bots", default="random", help="bot kinds given to the seats in turn")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.bots.split(",") if k.strip()]

    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} "
          f"{platform.release()}, {platform.python_implementation()} {platform.python_version()}")
    print(f"process: {pin_to_one_core()}")
    print(f"workload: {args.rounds} complete {args.players}-player {args.game} rounds per repeat,"
          f" bots {','.join(kinds)}")
    simulate(args.game, args.players, min(20, args.rounds), kinds, seed=args.seed + 999)  # warm up
    rates = []
    for repeat in range(args.repeats):
        result = simulate(args.game, args.players, args.rounds, kinds, seed=args.seed + repeat)
        rates.append(result.rounds_per_second)
        print(f"  repeat {repeat + 1}: {result.rounds_per_second:8.1f} rounds/s"
              f"  ({result.average_length:.1f} moves a round,"
              f" {result.moves / result.seconds:,.0f} moves/s, {result.seconds:.2f} s)")
    print(f"rounds per second: best {max(rates):.1f}, median {statistics.median(rates):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
