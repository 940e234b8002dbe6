"""The expert bot's strength against greedy, measured with `cardtui sim`, with 95% intervals.

Run: `python benchmarks/bench_expert.py [--playouts N] [--rounds R] [--only NAME] [--log FILE]`.
Each figure plays `cardtui sim GAME --rotate --playouts N --json` in chunks (different seeds,
each chunk a whole number of seat rotations), appends every chunk's JSON line to the log,
and prints the running total with its Wilson 95% interval, so that a run stopped early still
reports what it measured. `--summary` only reads the log; `--rate` prints how many playouts
one core runs per CPU second, to relate a budget to the default thinking time (CPU time, so
that other jobs on the machine do not change it much). Nothing is asserted: the figures go
in the README. The budget is a fixed number of playouts per move (not time), so a loaded
machine changes how long the run takes, not what it measures.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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


def playout_rate(game: str, players: int, moves: int = 30, budget: int = 400) -> float:
    """Playouts per CPU second of the expert's search, over positions of greedy rounds."""
    from engine import bots
    from engine.dealer import DealtRound
    from engine.expert import ExpertBot
    from engine.match import Match
    from engine.zodiak import SIGNS

    rng = random.Random(3)
    expert = ExpertBot(seed=1, seconds=None, playouts=budget, fallback=bots.hekata_choice)
    greedy = bots.GreedyBot()
    played = 0
    cpu = 0.0
    asked = 0
    while asked < moves:
        signs = tuple(rng.choice(SIGNS) for _ in range(players)) if game == "zodiak" else ()
        table = DealtRound.deal(Match(game, players, signs), ["x"] * players, rng)
        state = table.state
        while not state.round_over and asked < moves:
            seat = state.turn
            assert seat is not None
            if len(list(state.legal_moves())) > 1 and rng.random() < 0.3:
                began = time.process_time()
                expert.choose(state.view(seat))
                cpu += time.process_time() - began
                played += expert.last_playouts
                asked += 1
            table.push(greedy.choose(state.view(seat, history=False)))
    return played / cpu


def reading_share(players: int, rounds: int = 40, samples: int = 10) -> float:
    """The share of the opponents' cards that the expert's sampled deals put in the right hand.

    Positions of greedy rounds (greedy at every seat, as the opponents the reading assumes);
    each seat's view is sampled `samples` times. A measure of how much the sampling knows:
    the search is only as good as its deals (with the real hands it wins far more).
    """
    from engine import bots
    from engine.dealer import DealtRound
    from engine.match import Match
    from engine.playout import card_index
    from engine.sampling import ZodiakBelief
    from engine.zodiak import SIGNS, ZodiakRound

    rng = random.Random(5)  # the deals: the same whatever the sampling draws
    sampling = random.Random(6)
    right = held = 0
    for _ in range(rounds):
        signs = tuple(rng.choice(SIGNS) for _ in range(players))
        table = DealtRound.deal(Match("zodiak", players, signs), ["x"] * players, rng)
        state = table.state
        assert isinstance(state, ZodiakRound)
        while not state.round_over:
            seat = state.turn
            assert seat is not None
            belief = ZodiakBelief(state.view(seat))
            real = [sum(1 << card_index(c) for c in hand if c is not None)
                    for hand in state.hands]
            for _ in range(samples):
                dealt = belief.sample(sampling).hands
                for other in range(players):
                    if other != seat:
                        right += (dealt[other] & real[other]).bit_count()
                        held += real[other].bit_count()
            table.push(bots.GreedyBot().choose(state.view(seat, history=False)))
    return right / held


def _oracle_bot(know: str, players: int, seed: int, playouts: int) -> Any:
    """An expert whose sampled deals hold the real hands of `know` ("all" opponents, the
    "two" seats after it, the "next" seat only, or "none": every hidden card at random, no
    reading), the stock shuffled;
    set its `real` to the round before asking it."""
    from engine.expert import ExpertBot
    from engine.playout import FastZodiak, bits
    from engine.sampling import ZodiakBelief
    from engine.zodiak import ZodiakRound

    class RealHands(ZodiakBelief):
        """The real deal, with the stock in a random order."""

        def __init__(self, view: ZodiakRound, real: ZodiakRound) -> None:
            super().__init__(view)
            self.real = real
            me = self.seat
            known = {"all": players - 1, "two": 2, "next": 1, "none": 0}[know]
            self.unknown = [(me + k) % players for k in range(1 + known, players)]

        def sample(self, rng: random.Random) -> FastZodiak:
            world = FastZodiak.from_round(self.real, rng)
            hidden = list(world.stock)
            for seat in self.unknown:
                hidden += bits(world.hands[seat])
            rng.shuffle(hidden)
            for seat in self.unknown:
                size = world.hands[seat].bit_count()
                world.hands[seat] = sum(1 << c for c in hidden[:size])
                hidden = hidden[size:]
            world.stock = hidden
            return world

    class Oracle(ExpertBot):
        real: ZodiakRound

        def zodiak_belief(self, view: ZodiakRound) -> ZodiakBelief:
            return RealHands(view, self.real)

    return Oracle(seed, seconds=None, playouts=playouts)


def zodiak_table(signs: tuple[str, ...], dealer: int, rng: random.Random) -> tuple[Any, Any]:
    """A Zodiak round dealt at random, a player for each of `signs`: its table and its state."""
    from engine.dealer import DealtRound
    from engine.match import Match
    from engine.zodiak import ZodiakRound

    table = DealtRound.deal(Match("zodiak", len(signs), signs, dealer=dealer),
                            ["x"] * len(signs), rng)
    assert isinstance(table.state, ZodiakRound)
    return table, table.state


def oracle_share(rounds: int, playouts: int, players: int = 4,
                 know: str = "all") -> tuple[int, int]:
    """Rounds won by an expert whose sampled deals hold the real hands (`_oracle_bot`), one
    against greedy at every other seat, seats and dealer rotating: how strong the search would
    be if its reading of the opponents were perfect. Returns (wins, rounds)."""
    from engine import bots
    from engine.zodiak import SIGNS

    rng = random.Random(7)
    wins = 0
    for number in range(rounds):
        signs = tuple(rng.choice(SIGNS) for _ in range(players))
        me = number // players % players
        oracle = _oracle_bot(know, players, rng.randrange(2**32), playouts)
        table, state = zodiak_table(signs, number % players, rng)
        oracle.real = state
        while not state.round_over:
            seat = state.turn
            assert seat is not None
            bot: bots.Bot = oracle if seat == me else bots.GreedyBot()
            table.push(bot.choose(bots.bot_view(bot, state, seat)))
        wins += state.winner == me
    return wins, rounds


def move_kind(move: Any, zodiac_card: int) -> str:
    """A fast Zodiak move's kind: draw, wild eight, ace or zodiac card alone, another single
    card, or a run of 2, 3 or 4 and more cards."""
    from engine.playout import RANK

    if move is None:
        return "draw"
    cards, declared = move
    if len(cards) > 1:
        return f"run of {min(len(cards), 4)}"
    if RANK[cards[0]] == 8 and declared >= 0:
        return "wild eight"
    if RANK[cards[0]] == 1:
        return "ace"
    return "zodiac card" if cards[0] == zodiac_card else "single"


def compare_moves(rounds: int, playouts: int, first_seed: int = 1,
                  players: int = 4) -> dict[str, Any]:
    """At every turn with a choice of the expert's, one against greedy at every other seat,
    the move of the expert, of an expert dealt the real hands (`_oracle_bot`) and of greedy:
    how often they agree and how often each plays each kind of move (`move_kind`). The round
    goes on with the expert's move."""
    from collections import Counter

    from engine import bots
    from engine.expert import ExpertBot
    from engine.playout import FastZodiak, from_engine_move
    from engine.zodiak import SIGNS

    rng = random.Random(first_seed)
    counts: Counter[str] = Counter()
    wins = 0
    for number in range(rounds):
        signs = tuple(rng.choice(SIGNS) for _ in range(players))
        me = number % players
        expert = ExpertBot(rng.randrange(2**32), seconds=None, playouts=playouts)
        oracle = _oracle_bot("all", players, rng.randrange(2**32), playouts)
        table, state = zodiak_table(signs, number // players % players, rng)
        oracle.real = state
        while not state.round_over:
            seat = state.turn
            assert seat is not None
            if seat != me:
                table.push(bots.GreedyBot().choose(state.view(seat, history=False)))
                continue
            view = bots.bot_view(expert, state, seat)
            move = expert.choose(view)
            if len(list(view.legal_moves())) > 1:
                zodiac_card = FastZodiak.from_round(state).zodiac[seat]
                chosen = {
                    "expert": from_engine_move(move),
                    "oracle": from_engine_move(oracle.choose(bots.bot_view(oracle, state, seat))),
                    "greedy": from_engine_move(bots.GreedyBot().choose(
                        state.view(seat, history=False)))}
                counts["turns"] += 1
                counts["expert = oracle"] += chosen["expert"] == chosen["oracle"]
                counts["greedy = oracle"] += chosen["greedy"] == chosen["oracle"]
                counts["expert = greedy"] += chosen["expert"] == chosen["greedy"]
                for who, chosen_move in chosen.items():
                    counts[f"{who}: {move_kind(chosen_move, zodiac_card)}"] += 1
            table.push(move)
        wins += state.winner == me
    return {"rounds": rounds, "expert wins": wins, **dict(sorted(counts.items()))}


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
    parser.add_argument("--rate", action="store_true",
                        help="only print the search's playouts per CPU second")
    parser.add_argument("--reading", action="store_true",
                        help="only print the share of opponents' Zodiak cards the sampling places"
                        " right (4 players)")
    parser.add_argument("--oracle", type=int, metavar="ROUNDS",
                        help="only play ROUNDS 4-player Zodiak rounds with an expert that is"
                        " dealt the real hands (--playouts a move) and print its wins")
    parser.add_argument("--know", choices=("all", "two", "next", "none"), default="all",
                        help="with --oracle: the real hands of all opponents, of the two seats"
                        " after it, of the next seat"
                        " only, or of nobody (every hidden card dealt at random, no reading)")
    parser.add_argument("--compare", type=int, metavar="ROUNDS",
                        help="only play ROUNDS 4-player Zodiak rounds, one expert against three"
                        " greedy, and print how often the expert, an expert dealt the real"
                        " hands and greedy choose alike, and which kinds of move each chooses")
    parser.add_argument("--first-seed", type=int, default=1,
                        help="the first chunk's seed (a second process on its own log starts"
                        " elsewhere, e.g. 1001, so that the two play different deals)")
    parser.add_argument("--also", type=Path, action="append", default=[],
                        help="with --summary: more logs to add up (another process's)")
    args = parser.parse_args(argv)
    if args.summary:
        print_summary(args.log, *args.also)
        return 0
    if args.rate:
        for game, players in (("zodiak", 2), ("zodiak", 4), ("hekata", 2), ("hekata", 4)):
            print(f"{game}, {players} players: {playout_rate(game, players):,.0f} playouts per"
                  " CPU second", flush=True)
        return 0
    if args.oracle:
        wins, rounds = oracle_share(args.oracle, args.playouts, know=args.know)
        low, high = wilson_interval(wins, rounds)
        print(f"zodiak, 4 players, the real hands of {args.know}: expert won {wins}/{rounds} ="
              f" {100 * wins / rounds:.1f}% (95% CI {100 * low:.1f}-{100 * high:.1f}%),"
              f" playouts per move {args.playouts}", flush=True)
        return 0
    if args.compare:
        print(json.dumps(compare_moves(args.compare, args.playouts, args.first_seed),
                         indent=1), flush=True)
        return 0
    if args.reading:
        print(f"zodiak, 4 players: {100 * reading_share(4):.1f}% of the opponents' cards in the"
              " right hand", flush=True)
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
