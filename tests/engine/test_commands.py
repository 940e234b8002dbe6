"""`cardtui replay`, `hint` and `sim` through `tui.cli.main` and as real processes
(exit statuses)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tui.cli import main

RECORDS = Path(__file__).parent / "records"
EXAMPLE = RECORDS / "records_md_example.json"
ILLEGAL = RECORDS / "zodiak_illegal_move.json"
INVALID = RECORDS / "zodiak_invalid_duplicate.json"
ROOT = Path(__file__).resolve().parents[2]


def run(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`cardtui ARGS` as a separate process."""
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], check=False,
                          capture_output=True,
                          text=True, input=stdin, cwd=ROOT, timeout=120)


# -- replay ------------------------------------------------------------------------------


def test_replay_example_text(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/RECORDS.md, "`cardtui replay`": replay prints each move with its effect, then the state; status 0."""
    assert main(["replay", str(EXAMPLE)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:3] == [
        "1. seat 0 plays 2S 3S 3C 4C", "2. seat 1 draws 1 card (drew 4D)",
        "3. seat 0 plays 8H/D",
    ]
    assert "seat 0 (North): 7H KD" in out and "declared: D" in out and "turn: 1" in out
    assert "round_over: false" in out and "winner: null" in out


def test_replay_text_shows_penalties_and_the_end(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """docs/RECORDS.md, "`cardtui replay`": each move is printed with its effect: cards drawn, penalties, the round's end."""
    record = {
        "game": "zodiak", "seats": [{"sign": "aries"}, {"sign": "leo"}, {"sign": "leo"}],
        "dealer": 2,
        "deal": {"hands": [["AH"], ["AS", "9S"], ["KD"]], "pile": ["2H"],
                 "stock": ["4D", "5D", "6D", "7D"]},
        "moves": [{"seat": 0, "play": "AH"}, {"seat": 1, "play": "AS"}, {"seat": 2, "draw": True}],
    }
    path = tmp_path / "aces.json"
    path.write_text(json.dumps(record))
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == [
        "1. seat 0 plays AH and goes out (seat 1 faces 2)",
        "2. seat 1 plays AS (seat 2 faces 4)",
        "3. seat 2 draws 4 cards (drew 4D 5D 6D 7D; seat 0 wins the round)",
    ]
    assert "  turn: null" in out and "  winner: 0" in out and "  scores: 6 0 0" in out


def test_replay_example_json(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/RECORDS.md, "`cardtui replay --json`": `replay --json` prints one JSON object of the documented shape."""
    assert main(["replay", "--json", str(EXAMPLE)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True and out["applied"] == 3 and out["error"] is None
    assert out["state"]["hands"][0] == ["7H", "KD"] and out["state"]["turn"] == 1


def test_replay_illegal_move_text(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/RECORDS.md, "`cardtui replay`": an illegal move prints `move N (seat S): illegal: REASON`, the state before;
    status 1."""
    assert main(["replay", str(ILLEGAL)]) == 1
    out = capsys.readouterr().out
    assert "move 2 (seat 1): illegal: 9D does not match 4C: same suit or same rank" in out
    assert "seat 1 (South): AS 9D JC QH 5C 6C 10D" in out and "top: 4C" in out
    assert "2. seat 1" not in out


def test_replay_illegal_move_json(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/RECORDS.md, "`cardtui replay --json`": `--json` reports the illegal move as {"move", "seat", "reason"}; status 1."""
    assert main(["replay", "--json", str(ILLEGAL)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["applied"] == 1
    assert out["error"] == {"move": 2, "seat": 1,
                            "reason": "9D does not match 4C: same suit or same rank"}


def test_replay_invalid_record(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/RECORDS.md, "Exit status": a file that is not a valid record says what is wrong; status 2."""
    assert main(["replay", str(INVALID)]) == 2
    err = capsys.readouterr().err
    assert "not a valid record" in err and "more than one 2S" in err


def test_replay_exit_statuses_as_processes(tmp_path: Path) -> None:
    """docs/RECORDS.md, "Exit status": exit status 0 all legal, 1 an illegal move, 2 not a valid record."""
    assert run(["replay", str(EXAMPLE)]).returncode == 0
    assert run(["replay", str(ILLEGAL)]).returncode == 1
    assert run(["replay", "--json", str(ILLEGAL)]).returncode == 1
    assert run(["replay", str(INVALID)]).returncode == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    done = run(["replay", str(bad)])
    assert done.returncode == 2 and "not valid JSON" in done.stderr
    missing = run(["replay", str(tmp_path / "missing.json")])
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\x00\xfe")
    assert run(["replay", str(binary)]).returncode == 2
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000)
    assert run(["replay", str(deep)]).returncode == 2


def test_replay_reads_standard_input() -> None:
    """docs/RECORDS.md, "`cardtui replay`": `-` reads the record from standard input."""
    done = run(["replay", "--json", "-"], stdin=EXAMPLE.read_text())
    assert done.returncode == 0 and json.loads(done.stdout)["applied"] == 3


def test_replay_hekata_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/RECORDS.md, "`cardtui replay --json`": a Hekata record replays with its tricks in the text and JSON output."""
    record = {
        "game": "hekata", "seats": [{"name": n} for n in ("N", "E", "S", "W")], "dealer": 0,
        "deal": {"hands": [["2", "7"], ["4", "1"], ["6", "6"], ["0", "5"]],
                 "table": ["3", "5", "9", "8"], "stock": []},
        "moves": [{"seat": 0, "play": "2", "trick": "5398 + 2"}, {"seat": 1, "play": "4"}],
    }
    path = tmp_path / "hekata.json"
    path.write_text(json.dumps(record))
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1. seat 0 lays 2 and takes 5398 + 2 = 5400" in out
    assert "trick by seat 0: 5398 + 2 = 5400" in out
    assert main(["replay", "--json", str(path)]) == 0
    state = json.loads(capsys.readouterr().out)["state"]
    assert state["tricks"] == [{"seat": 0, "trick": "5398 + 2", "total": 5400}]


# -- hint ------------------------------------------------------------------------------------


def test_hint_hekata_best_trick(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue / RULES 2.3: `hint hekata --table "3 5 9 8" --card 2` prints `5398 + 2 = 5400`."""
    assert main(["hint", "hekata", "--table", "3 5 9 8", "--card", "2"]) == 0
    assert capsys.readouterr().out.strip() == "5398 + 2 = 5400"


def test_hint_hekata_no_trick(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue: when the card takes nothing the hint says so."""
    assert main(["hint", "hekata", "--table", "3 5", "--card", "2"]) == 0
    assert "no trick" in capsys.readouterr().out
    assert main(["hint", "hekata", "--table", "", "--card", "2"]) == 0
    assert "no trick" in capsys.readouterr().out


def test_hint_hekata_json_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue: `--json` gives the trick and total; a bad card is status 2 with a reason."""
    assert main(["hint", "hekata", "--table", "9 8", "--card", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["total"] == 100 and out["trick"] in ("98 + 2", "92 + 8")
    assert main(["hint", "hekata", "--table", "9 8", "--card", "12"]) == 2
    assert "not a Hekata card" in capsys.readouterr().err
    done = run(["hint", "hekata", "--table", "9 x", "--card", "2"])
    assert done.returncode == 2 and "not a Hekata card" in done.stderr
    assert main(["hint", "hekata", "--table", "9 9 9 9 9", "--card", "9"]) == 2
    assert "only five 9s, not 6" in capsys.readouterr().err


def test_replay_json_for_an_invalid_record() -> None:
    """docs/RECORDS.md, "`cardtui replay --json`": `--json` on an invalid record still prints one JSON object, and exits 2."""
    done = run(["replay", "--json", str(INVALID)])
    assert done.returncode == 2
    out = json.loads(done.stdout)
    assert out["ok"] is False and out["state"] is None and "2S" in out["error"]["reason"]


def test_hint_zodiak_rules_example(capsys: pytest.CaptureFixture[str]) -> None:
    """RULES 1.3 example: the greedy bot plays `2S 3S 3C 4C` on 2H from 2S 3S 3C 4C 7H 8H."""
    assert main(["hint", "zodiak", "--top", "2H", "--hand", "2S 3S 3C 4C 7H 8H"]) == 0
    assert capsys.readouterr().out.strip() == "2S 3S 3C 4C"
    assert main(["hint", "zodiak", "--top", "2h", "--hand", "2♠ 3s 3C 4c 7H 8H", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"move": "2S 3S 3C 4C", "draw": False}


def test_hint_zodiak_declared_and_penalty(capsys: pytest.CaptureFixture[str]) -> None:
    """RULES 1.4: `--declared` makes the hint follow the suit; `--penalty` allows an ace or the
    draw."""
    assert main(["hint", "zodiak", "--top", "8S", "--hand", "2S 9H 10H", "--declared", "H"]) == 0
    assert capsys.readouterr().out.strip() == "9H 10H"
    assert main(["hint", "zodiak", "--top", "AH", "--hand", "2H AC 3H", "--penalty", "2"]) == 0
    assert capsys.readouterr().out.strip() == "AC"
    assert main(["hint", "zodiak", "--top", "AH", "--hand", "2H 3H", "--penalty", "4"]) == 0
    assert capsys.readouterr().out.strip() == "draw 4"
    assert main(["hint", "zodiak", "--top", "JC", "--hand", "AC 2C", "--penalty", "7"]) == 0
    assert capsys.readouterr().out.strip() == "draw 7"  # RULES 1.4: no defence
    assert main(["hint", "zodiak", "--top", "AH", "--hand", "KS QS", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"move": "draw", "draw": True}


@pytest.mark.parametrize(("args", "reason"), [
    (["--top", "2H 3H", "--hand", "2S"], "exactly one card"),
    (["--top", "2H", "--hand", "2H"], "both on the pile and in your hand"),
    (["--top", "2H", "--hand", "2S 2S"], "twice"),
    (["--top", "2H", "--hand", "1X"], "not a card"),
    (["--top", "2H", "--hand", "2S", "--penalty", "3"], "--penalty"),
    (["--top", "2H", "--hand", "2S", "--declared", "X"], "not a suit"),
    (["--top", "2H", "--hand", "2S", "--sign", "dragon"], "not a zodiac sign"),
    (["--top", "2H", "--hand", ""], "at least one card"),
], ids=["two tops", "top in hand", "twice", "bad card", "odd penalty", "bad suit", "bad sign",
        "no cards"])
def test_hint_zodiak_errors(args: list[str], reason: str,
                            capsys: pytest.CaptureFixture[str]) -> None:
    """Issue: bad hint input is status 2 with a reason a player understands."""
    assert main(["hint", "zodiak", *args]) == 2
    assert reason in capsys.readouterr().err


# -- sim ---------------------------------------------------------------------------------------


def test_sim_zodiak_text(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue: `sim zodiak --players N --rounds R --bots greedy,random --seed S` reports wins and
    speed."""
    args = ["sim", "zodiak", "--players", "4", "--rounds", "6", "--bots", "greedy,random",
            "--seed", "3"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "6 zodiak rounds, 4 players, seed 3" in out
    assert "greedy" in out and "random" in out and "rounds per second" in out


def test_sim_json_is_deterministic_for_a_seed(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue / DESIGN: the same seed plays the same rounds, so wins and lengths repeat."""
    outs = []
    for _ in range(2):
        assert main(["sim", "hekata", "--players", "2", "--rounds", "3", "--bots",
                     "greedy,random", "--seed", "11", "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert set(outs[0]) == {"rounds", "wins", "ci95", "no_winner", "average_length",
                            "rounds_per_second"}
    assert outs[0]["rounds"] == 3
    for key in ("wins", "no_winner", "average_length"):
        assert outs[0][key] == outs[1][key]
    assert sum(outs[0]["wins"].values()) + outs[0]["no_winner"] == 3


def test_sim_expert_rotated_with_intervals(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 14: `sim --bots expert,greedy --rotate --playouts N` seats the expert and reports
    each side's wins with a 95% interval."""
    assert main(["sim", "zodiak", "--players", "2", "--rounds", "4", "--bots", "expert,greedy",
                 "--rotate", "--playouts", "8", "--seed", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert sum(out["wins"].values()) + out["no_winner"] == 4
    for kind, (low, high) in out["ci95"].items():
        assert 0 <= low <= out["wins"][kind] / 4 <= high <= 1
    assert main(["sim", "hekata", "--players", "4", "--rounds", "1", "--bots", "expert,greedy",
                 "--playouts", "4"]) == 0
    assert "95% CI" in capsys.readouterr().out


def test_sim_whole_matches(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 14: `sim --matches N` plays whole matches, to the game's target (RULES 1.6: 55;
    2.4: 10,000) or `--target`'s, and counts wins in matches."""
    assert main(["sim", "hekata", "--players", "2", "--matches", "4", "--bots", "greedy,random",
                 "--rotate", "--seed", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["matches"] == 4 and out["rounds"] >= 4
    assert sum(out["wins"].values()) + out["no_winner"] == 4
    assert main(["sim", "zodiak", "--players", "3", "--matches", "2", "--target", "15",
                 "--bots", "expert,greedy", "--playouts", "4", "--seed", "1"]) == 0
    assert "2 zodiak matches (" in capsys.readouterr().out


def test_sim_matches_reach_the_target() -> None:
    """RULES 1.6 and 2.4: a simulated match ends when a seat or team reaches the target."""
    import random

    from engine.simulate import play_match

    for game, players, target in [("zodiak", 2, 55), ("hekata", 4, 10_000), ("hekata", 2, 3000)]:
        match, moves = play_match(game, players, ["greedy", "random"] * (players // 2),
                                  random.Random(players), target=target)
        assert match.winner is not None and moves > 0
        assert max(match.scores) >= target and match.target == target


def test_hint_with_the_expert(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 14: `hint --bot expert` for both games gives a legal move; RULES 1.3's example run
    and RULES 2.3's `98 + 2` are what it finds."""
    assert main(["hint", "zodiak", "--top", "2H", "--hand", "2S 3S 3C 4C 7H 8H", "--bot", "expert",
                 "--playouts", "200"]) == 0
    run_text = capsys.readouterr().out.strip()
    hand = Counter(["2S", "3S", "3C", "4C", "7H", "8H"])
    cards = run_text.split("/")[0].split()
    assert cards and all(hand[c] for c in cards)
    assert cards[0][-1] == "H" or cards[0][0] in "28"  # RULES 1.3: it matches 2H (or is wild)
    assert main(["hint", "hekata", "--table", "9 8", "--hand", "2", "--bot", "expert",
                 "--playouts", "20", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["card"] == 2 and (out["total"] == 0 or out["total"] == 100)
    assert main(["hint", "hekata", "--table", "9 8", "--hand", "2 5 7", "--players", "4",
                 "--bot", "expert", "--think", "0.2"]) == 0
    assert capsys.readouterr().out.startswith("lay ")


@pytest.mark.parametrize(("args", "reason"), [
    (["zodiak", "--top", "2H", "--hand", "3H", "--bot", "expert", "--think", "0"], "--think"),
    (["zodiak", "--top", "2H", "--hand", "3H", "--bot", "expert", "--playouts", "0"],
     "--playouts must be at least 1"),
    (["hekata", "--table", "9 8", "--hand", "2 2 2 2 2 2"], "only five 2s, not 6"),
    (["hekata", "--table", "9 8", "--hand", "2", "--players", "4", "--stock", "3"], "--stock"),
], ids=["no time", "no playouts", "six twos", "stock with four"])
def test_hint_bot_errors(args: list[str], reason: str) -> None:
    """Issue 14: a bad hint budget or hand exits with status 2 and says why."""
    done = run(["hint", *args])
    assert done.returncode == 2 and reason in done.stderr


@pytest.mark.parametrize(("args", "reason"), [
    (["zodiak", "--players", "5"], "Zodiak is for 2 to 4 players, not 5"),
    (["hekata", "--players", "3"], "Hekata is for 2 or 4 players, not 3"),
    (["zodiak", "--bots", "greedy,clever"], "unknown bot clever"),
    (["zodiak", "--rounds", "0"], "--rounds must be at least 1"),
    (["zodiak", "--matches", "0"], "--matches must be at least 1"),
    (["zodiak", "--target", "20"], "goes with --matches"),
    (["zodiak", "--matches", "1", "--target", "0"], "--target is a score of 1 or more"),
], ids=["zodiak 5", "hekata 3", "bad bot", "no rounds", "no matches", "target alone",
        "no target"])
def test_sim_errors(args: list[str], reason: str) -> None:
    """Issue: bad sim options exit with status 2 and say why."""
    done = run(["sim", *args])
    assert done.returncode == 2 and reason in done.stderr


def test_sim_hekata_mixed_teams_are_named(capsys: pytest.CaptureFixture[str]) -> None:
    """RULES 2.1: with three kinds for four seats, a team of mixed partners is credited as both."""
    from engine.simulate import side_name

    kinds = ["greedy", "random", "random", "greedy"]
    assert side_name("hekata", kinds, 0) == "greedy+random"
    assert side_name("hekata", kinds, 1) == "random+greedy"
    assert side_name("zodiak", kinds, 3) == "greedy"
    assert main(["sim", "hekata", "--rounds", "2", "--bots", "greedy,random,random"]) == 0
    assert "+" in capsys.readouterr().out


def test_version_names_the_installed_package() -> None:
    """`cardtui --version` prints the version pip installed and exits 0, with or without a
    command after it (argparse stops at the flag)."""
    from importlib import metadata

    for args in (["--version"], ["--version", "play"]):
        done = run(args)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"cardtui {metadata.version('cardtui')}"
