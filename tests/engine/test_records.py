"""Game records exactly as docs/RECORDS.md says: reading, writing, replaying, the JSON state, and
garbage."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cards import french_deck
from engine.errors import IllegalMove, RecordError
from engine.records import Record
from engine.zodiak import Draw, Run, ZodiakRound

RECORDS = Path(__file__).parent / "records"
ZODIAK_KEYS = {"turn", "hands", "round_over", "winner", "scores", "top", "declared", "penalty",
               "stock", "pile"}
HEKATA_KEYS = {"turn", "hands", "round_over", "winner", "scores", "table", "stock", "tricks"}


def load(name: str) -> dict[str, Any]:
    """A sample record as decoded JSON."""
    return json.loads((RECORDS / name).read_text())


def zodiak(hands: list[str], pile: str, stock: str, moves: list[dict[str, Any]],
           signs: tuple[str, ...] = (), dealer: int | None = None, **deal: Any) -> dict[str, Any]:
    """A Zodiak record as decoded JSON, cards given in notation; seat 0 moves first by default."""
    n = len(hands)
    return {
        "game": "zodiak",
        "seats": [{"name": f"P{i}", "sign": (signs or ("aries",) * n)[i]} for i in range(n)],
        "dealer": n - 1 if dealer is None else dealer,
        "deal": {"hands": [h.split() for h in hands], "pile": pile.split(),
                 "stock": stock.split(), **deal},
        "moves": moves,
    }


def hekata(hands: list[str], table: str, stock: str, moves: list[dict[str, Any]],
           dealer: int = 0, scores: list[int] | None = None) -> dict[str, Any]:
    """A Hekata record as decoded JSON, cards given as digit strings."""
    data: dict[str, Any] = {
        "game": "hekata", "seats": [{"name": f"P{i}"} for i in range(len(hands))],
        "dealer": dealer,
        "deal": {"hands": [h.split() for h in hands], "table": table.split(),
                 "stock": stock.split()},
        "moves": moves,
    }
    if scores is not None:
        data["scores"] = scores
    return data


def replay(data: dict[str, Any]) -> dict[str, Any]:
    """The `cardtui replay --json` object for a record given as decoded JSON."""
    return Record.loads(json.dumps(data)).replay().to_json()


def P(seat: int, play: str, trick: str | None = None) -> dict[str, Any]:
    """A play move."""
    move: dict[str, Any] = {"seat": seat, "play": play}
    if trick is not None:
        move["trick"] = trick
    return move


def D(seat: int) -> dict[str, Any]:
    """A draw move."""
    return {"seat": seat, "draw": True}


# -- the docs/RECORDS.md example ("Shape") ------------------------------------------------------


def test_records_md_example_replays() -> None:
    """docs/RECORDS.md, "Shape": the example record (with its stock written out) replays with every move legal."""
    data = load("records_md_example.json")
    assert data["deal"]["stock"][:2] == ["4D", "5H"]
    assert len(data["deal"]["stock"]) + 15 == 52
    out = replay(data)
    assert out == {
        "ok": True, "applied": 3, "error": None,
        "state": {
            "turn": 1,
            "hands": [["7H", "KD"], ["AS", "9D", "JC", "QH", "5C", "6C", "10D", "4D"]],
            "round_over": False, "winner": None, "scores": [0, 0],
            "top": "8H", "declared": "D", "penalty": 0, "stock": 36, "pile": 6,
        },
    }


def test_illegal_move_reports_number_seat_reason_and_state_before() -> None:
    """docs/RECORDS.md, "`cardtui replay`": replay stops at the first illegal move, N counting from 1, state before it."""
    out = replay(load("zodiak_illegal_move.json"))
    assert out["ok"] is False and out["applied"] == 1
    assert out["error"] == {"move": 2, "seat": 1,
                            "reason": "9D does not match 4C: same suit or same rank"}
    assert out["state"]["hands"][1] == ["AS", "9D", "JC", "QH", "5C", "6C", "10D"]
    assert out["state"]["top"] == "4C" and out["state"]["turn"] == 1


def test_wrong_seat_is_an_illegal_move() -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": a move by a seat whose turn it is not is illegal (status 1, not 2)."""
    out = replay(zodiak(["2H 9S", "3H 9D"], "5H", "6D", [P(1, "3H")]))
    assert out["error"] == {"move": 1, "seat": 1, "reason": "it is seat 0's turn, not seat 1's"}
    assert out["applied"] == 0


def test_sample_invalid_record() -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": a deal with two copies of a card is not a valid record."""
    with pytest.raises(RecordError, match="more than one 2S"):
        Record.loads((RECORDS / "zodiak_invalid_duplicate.json").read_text())


# -- the JSON state, field by field -----------------------------------------------


def test_zodiak_state_keys_exactly() -> None:
    """docs/RECORDS.md, "`cardtui replay --json`": the Zodiak state holds exactly the common fields plus
    top/declared/penalty/stock/pile."""
    out = replay(zodiak(["2H 9S", "3H 9D"], "5H", "6D", []))
    assert set(out["state"]) == ZODIAK_KEYS
    assert set(out) == {"ok", "applied", "error", "state"}
    assert out["state"]["declared"] is None and out["state"]["penalty"] == 0


def test_hands_are_in_received_order() -> None:
    """docs/RECORDS.md, "`cardtui replay --json`": `hands` lists each seat's cards in the order received, drawn cards last."""
    out = replay(zodiak(["KS 2H QD", "3C 9D"], "5H", "AC 4C", [D(0), D(1), P(0, "2H")]))
    assert out["state"]["hands"] == [["KS", "QD", "AC"], ["3C", "9D", "4C"]]


def test_winner_is_null_until_the_going_out_penalty_is_drawn() -> None:
    """docs/RECORDS.md, "`cardtui replay --json`" / RULES 1.6: after going out with an ace, round_over and winner wait
    for the draw."""
    data = zodiak(["AH", "KD 9S"], "2H", "4D 5D 6D", [P(0, "AH")])
    state = replay(data)["state"]
    assert state["round_over"] is False and state["winner"] is None
    assert state["turn"] == 1 and state["penalty"] == 2 and state["hands"][0] == []
    data["moves"].append(D(1))
    state = replay(data)["state"]
    assert state == {
        "turn": None, "hands": [[], ["KD", "9S", "4D", "5D"]], "round_over": True, "winner": 0,
        "scores": [4, 0], "top": "AH", "declared": None, "penalty": 0, "stock": 1, "pile": 2,
    }


def test_scores_carry_the_match_scores_before_the_round() -> None:
    """docs/RECORDS.md, "`cardtui replay --json`": `scores` are the match scores before the round; a round's points add
    at its end."""
    data = zodiak(["3H", "KD 9S", "2C"], "2H", "4D", [P(0, "3H")])
    data["scores"] = [10, 20, 30]
    assert replay(data)["state"]["scores"] == [13, 20, 30]
    data["moves"] = []
    assert replay(data)["state"]["scores"] == [10, 20, 30]


def test_blocked_round_has_no_winner() -> None:
    """docs/RECORDS.md, "`cardtui replay --json`" / RULES 1.5: a blocked round is over with winner null and no points."""
    state = replay(zodiak(["KS", "QC"], "2H", "", [D(0), D(1)]))["state"]
    assert state["round_over"] is True and state["winner"] is None and state["turn"] is None
    assert state["scores"] == [0, 0]


def test_moves_after_the_round_are_illegal() -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": a move after the round is over is an illegal move."""
    out = replay(zodiak(["3H", "KD 9S"], "2H", "4D", [P(0, "3H"), D(1)]))
    assert out["applied"] == 1
    assert out["error"] == {"move": 2, "seat": 1, "reason": "the round is over"}


def test_declared_and_penalty_fields() -> None:
    """docs/RECORDS.md, "`cardtui replay --json`": `declared` is a suit letter while declared; `penalty` is what the mover must
    draw."""
    state = replay(zodiak(["8S 2C", "AS 9D 3D", "AH 4C"], "2H", "5D 6D 7D 9C 10C",
                          [P(0, "8S/C"), D(1)]))["state"]
    assert state["declared"] == "C" and state["penalty"] == 0 and state["turn"] == 2
    out = replay(zodiak(["AH 2C", "AS 9D 3D", "KH 4C"], "2H", "5D 6D 7D 9C 10C",
                        [P(0, "AH"), P(1, "AS")]))
    assert out["ok"]
    state = out["state"]
    assert state["penalty"] == 4 and state["turn"] == 2 and state["declared"] is None


# -- reshuffles in records ---------------------------------------------------------


def test_recorded_reshuffle_order_is_used() -> None:
    """docs/RECORDS.md, "Shape": `deal.reshuffles` gives each new stock's order, drawn first first."""
    data = zodiak(["KS 9C", "QC 9D"], "3H 4H 5H", "", [D(0), D(1)], reshuffles=[["4H", "3H"]])
    state = replay(data)["state"]
    assert state["hands"] == [["KS", "9C", "4H"], ["QC", "9D", "3H"]]
    assert state["stock"] == 0 and state["pile"] == 1


def test_reshuffle_without_recorded_order_is_bottom_first() -> None:
    """docs/RECORDS.md, "Shape": with no order left, the new stock is the pile's cards bottom first,
    unshuffled."""
    state = replay(zodiak(["KS 9C", "QC 9D"], "3H 4H 5H", "", [D(0), D(1)]))["state"]
    assert state["hands"] == [["KS", "9C", "3H"], ["QC", "9D", "4H"]]


def test_wrong_reshuffle_order_is_an_invalid_record() -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": a reshuffle that is not exactly the pile under its top makes the
    record invalid."""
    data = zodiak(["KS 9C", "QC 9D"], "3H 4H 5H", "", [D(0)], reshuffles=[["4H", "6S"]])
    with pytest.raises(RecordError, match="reshuffles"):
        Record.loads(json.dumps(data)).replay()


def test_written_record_round_trips_with_reshuffles() -> None:
    """docs/RECORDS.md, "Records the programs write": a record the engine writes (with its reshuffles) loads and replays to the same
    end."""
    import random

    rng = random.Random(7)
    for _ in range(30):
        deck = french_deck()
        rng.shuffle(deck)
        state = ZodiakRound.deal(deck, ["aries", "leo", "virgo"], dealer=rng.randrange(3))
        record = Record.of_round("zodiak", ["a", "b", "c"], state.copy())
        while not state.round_over and len(record.moves) < 400:
            moves = list(state.legal_moves())
            move = moves[0] if rng.random() < 0.3 else rng.choice(moves)
            if isinstance(move, Draw) and (pending := state.pending_reshuffle()) is not None:
                rng.shuffle(pending)
                state.reshuffles.append(pending)
            seat = state.turn
            state.push(move)
            record.add_move(seat, move)
        record.set_reshuffles(state.reshuffles)
        again = Record.loads(record.dumps()).replay()
        assert again.ok and again.applied == len(record.moves)
        assert again.state.hands == state.hands and again.state.pile == state.pile
        assert again.state.stock == state.stock and again.state.scores == state.scores


# -- invalid records (status 2) -----------------------------------------------------


def _base() -> dict[str, Any]:
    return zodiak(["2H 9S", "3H 9D"], "5H", "6D", [P(0, "2H")])


def _with(change: Any) -> dict[str, Any]:
    data = _base()
    change(data)
    return data


INVALID: list[tuple[str, Any, str]] = [
    ("not an object", lambda d: d.clear() or d.update({"x": 1}), '"game"'),
    ("unknown game", lambda d: d.update(game="poker"), '"game" must be'),
    ("five seats", lambda d: d.update(seats=[{"sign": "leo"}] * 5), "2 to 4 players"),
    ("one seat", lambda d: d.update(seats=[{"sign": "leo"}]), "players"),
    ("seats not objects", lambda d: d.update(seats=["a", "b"]), '"seats"'),
    ("no sign", lambda d: d["seats"][1].pop("sign"), "seat 1 has no zodiac sign"),
    ("bad sign", lambda d: d["seats"][1].update(sign="ophiuchus"), "not a zodiac sign"),
    ("dealer out of range", lambda d: d.update(dealer=2), '"dealer" must be a seat'),
    ("dealer bool", lambda d: d.update(dealer=True), '"dealer"'),
    ("scores wrong length", lambda d: d.update(scores=[1]), '"scores" must be a list of 2'),
    ("negative score", lambda d: d.update(scores=[-1, 0]), '"scores"'),
    ("float score", lambda d: d.update(scores=[1.5, 0]), '"scores"'),
    ("no deal", lambda d: d.pop("deal"), '"deal" must be an object'),
    ("unknown card", lambda d: d["deal"]["hands"][0].append("1X"), "not a card"),
    ("card not text", lambda d: d["deal"]["hands"][0].append(7), "not a card"),
    ("hands not a list", lambda d: d["deal"].update(hands="2H"), '"deal.hands" must be a list'),
    ("three hands", lambda d: d["deal"]["hands"].append(["KC"]), "3 hands for 2 seats"),
    ("no pile", lambda d: d["deal"].pop("pile"), "deal.pile"),
    ("empty pile", lambda d: d["deal"].update(pile=[]), "starting card"),
    ("duplicate across stock", lambda d: d["deal"]["stock"].append("2H"), "more than one 2H"),
    ("reshuffles not a list", lambda d: d["deal"].update(reshuffles="x"), "reshuffles"),
    ("moves not a list", lambda d: d.update(moves={}), '"moves" must be a list'),
    ("move not object", lambda d: d.update(moves=["2H"]), '"moves"'),
    ("move without seat", lambda d: d["moves"][0].pop("seat"), 'move 1: "seat"'),
    ("move seat 9", lambda d: d["moves"][0].update(seat=9), 'move 1: "seat"'),
    ("play and draw", lambda d: d["moves"][0].update(draw=True), "exactly one of"),
    ("neither", lambda d: d["moves"][0].pop("play"), "exactly one of"),
    ("draw false", lambda d: d.update(moves=[{"seat": 0, "draw": False}]), '"draw" must be true'),
    ("zodiak trick", lambda d: d["moves"][0].update(trick="98 + 2"), 'no "trick"'),
    ("play not text", lambda d: d["moves"][0].update(play=["2H"]), "written as text"),
    ("bad run", lambda d: d["moves"][0].update(play="2H 1X"), "move 1: '1X' is not a card"),
    ("bad declared suit", lambda d: d["moves"][0].update(play="8H/X"), "'X' is not a suit"),
]


@pytest.mark.parametrize(("what", "change", "message"), INVALID, ids=[i[0] for i in INVALID])
def test_invalid_records(what: str, change: Any, message: str) -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": a file that is not a valid record raises RecordError saying what is wrong."""
    with pytest.raises(RecordError, match=message if message[0] not in "\"'" else None) as info:
        Record.loads(json.dumps(_with(change)))
    assert message.strip("'\"")[:10] in str(info.value)


@pytest.mark.parametrize("text", ["", "{", "[]", "null", "42", '"zodiak"', "{'game': 1}",
                                  "[" * 100_000, '{"game": "zodiak", "seats": ' + "[" * 50_000,
                                  "[" * 5000 + "]" * 5000], ids=range(10))
def test_not_json_or_not_an_object(text: str) -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": bad JSON (even absurdly nested) is an invalid record, never a crash."""
    with pytest.raises(RecordError):
        Record.loads(text)


def test_not_utf8_bytes() -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": a file that is not text is an invalid record."""
    with pytest.raises(RecordError, match="not valid JSON"):
        Record.loads(b"\xff\xfe\x00garbage")


def test_partial_deck_is_fine() -> None:
    """docs/RECORDS.md, "Shape": a record need not hold a full deck (a puzzle may use a few cards)."""
    assert replay(zodiak(["2H", "3C"], "5H", "", [P(0, "2H")]))["ok"]


# -- Hekata records ------------------------------------------------------------------


def test_hekata_state_fields() -> None:
    """docs/RECORDS.md, "`cardtui replay --json`": Hekata's state has table (laid order), stock size and the tricks taken."""
    data = hekata(["2 7", "4 1", "6 6", "0 5"], "3 5 9 8", "",
                  [P(0, "2", "5398 + 2"), P(1, "4")])
    out = replay(data)
    state = out["state"]
    assert set(state) == HEKATA_KEYS
    assert state == {
        "turn": 2, "hands": [["7"], ["1"], ["6", "6"], ["0", "5"]], "round_over": False,
        "winner": None, "scores": [5400, 0], "table": ["4"], "stock": 0,
        "tricks": [{"seat": 0, "trick": "5398 + 2", "total": 5400}],
    }


def test_hekata_team_scores_and_laid_order() -> None:
    """docs/RECORDS.md, "`cardtui replay --json`" / RULES 2.1: team 0 is seats 0 and 2; the table keeps the order
    cards were laid."""
    data = hekata(["1 7", "5", "2", "3"], "9 8", "", [P(0, "1"), P(1, "5"), P(2, "2", "98 + 2")])
    state = replay(data)["state"]
    assert state["scores"] == [100, 0] and state["table"] == ["1", "5"]
    assert state["tricks"] == [{"seat": 2, "trick": "98 + 2", "total": 100}]


def test_hekata_two_players_draw_after_each_play() -> None:
    """docs/RECORDS.md, "Moves" / RULES 2.5: in the two-player game the draw is part of the play."""
    data = hekata(["1 2", "3 4"], "9 8", "5 6 7", [P(0, "1"), P(1, "3"), P(0, "2", "98 + 2")])
    state = replay(data)["state"]
    assert state["hands"] == [["5", "7"], ["4", "6"]] and state["stock"] == 0
    assert state["table"] == ["1", "3"] and state["scores"] == [100, 0]


def test_hekata_winner_at_the_moment_of_10000() -> None:
    """docs/RECORDS.md, "`cardtui replay --json`" / RULES 2.4: a team reaching 10,000 wins at once: round over, turn null."""
    data = hekata(["2 7", "4 1", "6 6", "0 5"], "3 5 9 8", "",
                  [P(0, "2", "5398 + 2"), P(1, "4")], scores=[4600, 9000])
    out = replay(data)
    assert out["applied"] == 1 and out["error"]["move"] == 2
    assert out["error"]["reason"] == "the deal is over"
    state = out["state"]
    assert state["round_over"] is True and state["winner"] == 0 and state["turn"] is None
    assert state["scores"] == [10000, 9000]


def test_hekata_round_over_when_every_card_is_played() -> None:
    """docs/RECORDS.md, "`cardtui replay --json`": a Hekata deal is over when every card has been played; leftovers
    score nothing."""
    data = hekata(["1", "2", "3", "4"], "", "", [P(0, "1"), P(1, "2"), P(2, "3"), P(3, "4")])
    state = replay(data)["state"]
    assert state["round_over"] is True and state["turn"] is None and state["winner"] is None
    assert state["table"] == ["1", "2", "3", "4"] and state["scores"] == [0, 0]


HEKATA_INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("three seats", hekata(["1", "2", "3"], "", "", []), "2 or 4 players"),
    ("stock with four", hekata(["1", "2", "3", "4"], "", "5", []), "no stock"),
    ("six fives", hekata(["5 5 5", "5 5 5"], "", "", []), "more than five of 5"),
    ("not a digit", hekata(["1 x", "2"], "", "", []), "not a Hekata card"),
    ("two digits", hekata(["12", "2"], "", "", []), "not a Hekata card"),
    ("draw", hekata(["1", "2"], "", "", [D(0)]), "Hekata has no draw move"),
    ("bad play", hekata(["1", "2"], "", "", [P(0, "11")]), "move 1"),
    ("scores per seat", {**hekata(["1", "2", "3", "4"], "", "", []), "scores": [0] * 4}, "2"),
]


@pytest.mark.parametrize(("what", "data", "message"), HEKATA_INVALID,
                         ids=[i[0] for i in HEKATA_INVALID])
def test_hekata_invalid_records(what: str, data: dict[str, Any], message: str) -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": a Hekata file that is not a valid record raises RecordError saying
    what is wrong."""
    with pytest.raises(RecordError, match=message):
        Record.loads(json.dumps(data))


def test_hekata_illegal_tricks_are_illegal_moves() -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves" / RULES 2.2-2.3: a trick that does not add up, or on an empty table,
    is illegal."""
    out = replay(hekata(["2 7", "4 1", "6 6", "0 5"], "3 5 9 8", "", [P(0, "2", "98 + 3")]))
    assert out["error"]["move"] == 1 and out["applied"] == 0
    out = replay(hekata(["2 7", "4", "6", "0"], "", "", [P(0, "2", "98 + 2")]))
    assert out["error"]["reason"] == "the table is empty: lay a card without taking a trick"
    out = replay(hekata(["2 7", "4", "6", "0"], "9 8", "", [P(0, "3")]))
    assert out["error"]["reason"] == "you hold no 3"


# -- fuzzing -----------------------------------------------------------------------------


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 60) | st.floats(allow_nan=False)
    | st.text(max_size=6) | st.sampled_from(["2H", "8H/D", "draw", "5398 + 2", "7", "zodiak",
                                             "hekata", "leo", "AS"]),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.sampled_from(["game", "seats", "dealer", "scores", "deal", "moves",
                                       "hands", "pile", "stock", "table", "seat", "play", "draw",
                                       "trick", "sign", "name", "reshuffles"]), children,
                      max_size=6),
    max_leaves=25,
)


def _replay_or_record_error(text: str) -> None:
    try:
        record = Record.loads(text)
        result = record.replay()
    except RecordError as exc:
        assert str(exc)
        return
    out = result.to_json()
    json.dumps(out)
    if result.error is not None:
        assert out["error"]["reason"]


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_fuzz_random_json(value: Any) -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": any JSON value is a record or a RecordError with a message, never a crash."""
    _replay_or_record_error(json.dumps(value))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60) | st.text(max_size=60))
def test_fuzz_random_text(text: Any) -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": any bytes or text is a record or a RecordError, never a crash."""
    _replay_or_record_error(text)


def _valid_records() -> list[dict[str, Any]]:
    return [
        load("records_md_example.json"),
        zodiak(["AH 8S 2C", "AS 9D 3D", "KH 4C"], "2H", "5D 6D 7D 9C 10C",
               [P(0, "AH"), P(1, "AS"), D(2)], reshuffles=[["2H"]]),
        hekata(["2 7", "4 1", "6 6", "0 5"], "3 5 9 8", "", [P(0, "2", "5398 + 2"), P(1, "4")]),
        hekata(["1 2", "3 4"], "9 8", "5 6 7", [P(0, "1"), P(1, "3"), P(0, "2", "98 + 2")]),
    ]


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    paths = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            paths += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            paths += _paths(v, prefix + (i,))
    return paths


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 3), st.data())
def test_fuzz_mutated_valid_records(which: int, data: st.DataObject) -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": a valid record with one value replaced or removed is valid, invalid or illegal:
    never a crash."""
    record = copy.deepcopy(_valid_records()[which])
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(record)[1:]
        path = data.draw(st.sampled_from(paths))
        parent = record
        for key in path[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()):
            parent[path[-1]] = data.draw(json_values)
        elif isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    _replay_or_record_error(json.dumps(record))


def test_run_and_digit_parsers_raise_only_illegal_move() -> None:
    """RULES 3: the parsers the records use raise IllegalMove (a ValueError), never TypeError."""
    for bad in (None, 3, [], {}):
        with pytest.raises(IllegalMove):
            Run.parse(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", sorted(RECORDS.glob("*.json")), ids=lambda p: p.stem)
def test_sample_records(path: Path) -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": every sample record is valid, illegal or invalid as its name says."""
    if "invalid" in path.stem:
        with pytest.raises(RecordError):
            Record.loads(path.read_text())
        return
    result = Record.loads(path.read_text()).replay()
    assert result.ok == ("illegal" not in path.stem)
    record = Record.loads(path.read_text())
    assert json.loads(record.dumps()) == {**json.loads(path.read_text()),
                                          "scores": record.scores}  # written back unchanged
    if path.stem.startswith(("hekata_", "zodiak_four")):
        state = result.to_json()["state"]
        assert state["round_over"] is True and state["turn"] is None
