"""Notation or rules: text that is not a move raises InvalidMove, a well-written move the rules forbid
raises IllegalMove, and a game record tells the two apart (docs/RECORDS.md, "Invalid records and
illegal moves"), as python-chess tells InvalidMoveError from IllegalMoveError."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import Card, parse_cards, parse_digit, parse_suit
from engine.errors import IllegalMove, InvalidMove, RecordError
from engine.hekata import HekataMove
from engine.records import Record
from engine.tricks import Row, parse_trick
from engine.zodiak import Run, parse_move
from tui.cli import main

# -- the parsers: InvalidMove for notation (tui/RULES.md 3) ------------------------------------

NOT_NOTATION = [
    (Card.parse, "1S"), (Card.parse, "2X"), (Card.parse, ""), (Card.parse, None),
    (parse_suit, "X"), (parse_cards, "2S 1X"), (parse_digit, "12"), (parse_digit, "x"),
    (parse_digit, True), (Run.parse, ""), (Run.parse, "2H 1X"), (Run.parse, "8H/X"),
    (Run.parse, None), (parse_move, "drw"), (parse_trick, ""), (parse_trick, "5x"),
    (parse_trick, "98 + "), (parse_trick, "_9"), (parse_trick, "9 - 1"),
    (parse_trick, "1" * 2000), (HekataMove.parse, ""), (HekataMove.parse, "x: 98 + 2"),
    (HekataMove.parse, "2: 9z"),
]


@pytest.mark.parametrize(("parser", "text"), NOT_NOTATION, ids=lambda v: repr(v)[:20])
def test_text_that_is_not_notation_is_an_invalid_move(parser: Any, text: Any) -> None:
    """RULES 3: what the notation cannot read raises InvalidMove (an IllegalMove and a ValueError),
    with a reason in words."""
    with pytest.raises(InvalidMove) as info:
        parser(text)
    assert isinstance(info.value, IllegalMove) and isinstance(info.value, ValueError)
    assert len(str(info.value)) > 10


# -- the parsers: IllegalMove for well-written moves the rules forbid anywhere ------------

FORBIDDEN_ANYWHERE = [
    (parse_trick, "05 + 95", "may not start with 0"),  # RULES 2.3: no row of 2+ cards starts with 0
    (parse_trick, "10 + 35__ + 2", "only a single card can be shifted"),  # RULES 2.3
    (parse_trick, "10 + 35_ + 2", "only a single card can be shifted"),  # RULES 2.3
    (parse_trick, "2___ + 8", "hundreds column"),  # RULES 2.3: tens or hundreds column only
    (Run.parse, "8H", "must name a suit"),  # RULES 1.4: an eight alone declares a suit
    (Run.parse, "8H 9H/D", "only an eight played alone declares a suit"),  # RULES 1.4
    (Run.parse, "7H/D", "only an eight played alone declares a suit"),  # RULES 1.4
    (parse_move, "8S", "must name a suit"),  # RULES 1.4
    (HekataMove.parse, "5: 05 + 95", "may not start with 0"),  # RULES 2.3
]


@pytest.mark.parametrize(("parser", "text", "reason"), FORBIDDEN_ANYWHERE,
                         ids=[f[1] for f in FORBIDDEN_ANYWHERE])
def test_well_written_moves_the_rules_forbid_are_illegal_not_invalid(parser: Any, text: str,
                                                                     reason: str) -> None:
    """RULES 1.4, 2.3: a move written in the notation that the rules forbid in every position
    raises IllegalMove, not InvalidMove, and says which rule."""
    with pytest.raises(IllegalMove, match=reason) as info:
        parser(text)
    assert not isinstance(info.value, InvalidMove)


def test_rows_the_rules_forbid_are_illegal_when_built_directly() -> None:
    """RULES 2.3: a Row value refuses a leading 0 or a shifted row of two cards as illegal;
    digits that are not cards are invalid."""
    for digits, shift in (((0, 5), 0), ((3, 5), 2), ((2,), 3)):
        with pytest.raises(IllegalMove) as info:
            Row(digits, shift)
        assert not isinstance(info.value, InvalidMove)
    with pytest.raises(InvalidMove):
        Row((12,), 0)


# -- records: an illegal move is exit 1 with the state before it --------------------------


def hekata_record(moves: list[dict[str, Any]]) -> dict[str, Any]:
    """A two-player Hekata record: seat 0 holds 5 1 4, seat 1 holds 2 7, the table 9 0 9 3 5."""
    return {"game": "hekata", "seats": [{"name": "Ada"}, {"name": "Bo"}], "dealer": 0,
            "deal": {"hands": [["5", "1", "4"], ["2", "7"]], "table": ["9", "0", "9", "3", "5"],
                     "stock": []},
            "moves": moves}


def zodiak_record(moves: list[dict[str, Any]]) -> dict[str, Any]:
    """A two-player Zodiak record: seat 0 holds 2S 8H, seat 1 AS 9D, the pile shows 2H."""
    return {"game": "zodiak", "seats": [{"name": "N", "sign": "leo"}, {"name": "S", "sign": "leo"}],
            "dealer": 1,
            "deal": {"hands": [["2S", "8H"], ["AS", "9D"]], "pile": ["2H"], "stock": ["4D"]},
            "moves": moves}


ILLEGAL_IN_RECORDS = [
    ("row starting with 0", hekata_record([{"seat": 0, "play": "5", "trick": "05 + 95"}]),
     1, 0, "the row '05' starts with 0: a row of two or more cards may not start with 0"),
    ("shifted row of two", hekata_record([{"seat": 0, "play": "4"},
                                          {"seat": 1, "play": "2", "trick": "10 + 35__ + 2"}]),
     2, 1, "only a single card can be shifted with _, not '35__'"),
    ("lone eight without a suit", zodiak_record([{"seat": 0, "play": "8H"}]),
     1, 0, "an eight played alone must name a suit: write `8H/S`"),
    ("suit declared by a run", zodiak_record([{"seat": 0, "play": "2S 8H/D"}]),
     1, 0, "only an eight played alone declares a suit (`8H/D`)"),
]


@pytest.mark.parametrize(("what", "data", "number", "seat", "reason"), ILLEGAL_IN_RECORDS,
                         ids=[i[0] for i in ILLEGAL_IN_RECORDS])
def test_records_report_rule_breaking_moves_as_illegal(what: str, data: dict[str, Any],
                                                       number: int, seat: int,
                                                       reason: str) -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": a well-written move the rules forbid
    (RULES 1.4, 2.3) loads as part of a valid record and stops the replay as an illegal move."""
    result = Record.loads(json.dumps(data)).replay()
    assert result.error == (number, seat, reason)
    assert result.applied == number - 1


@pytest.mark.parametrize(("what", "data", "number", "seat", "reason"), ILLEGAL_IN_RECORDS,
                         ids=[i[0] for i in ILLEGAL_IN_RECORDS])
def test_cardtui_replay_says_illegal_exits_1_and_prints_the_state_before(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str, data: dict[str, Any],
        number: int, seat: int, reason: str) -> None:
    """docs/RECORDS.md, "`cardtui replay`" and "Exit status": `move N (seat S): illegal: REASON`,
    exit status 1, and the state printed is the state before that move."""
    path = tmp_path / "record.json"
    path.write_text(json.dumps(data))
    before = Record.loads(json.dumps({**data, "moves": data["moves"][:number - 1]})).replay()
    assert main(["replay", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"move {number} (seat {seat}): illegal: {reason}" in out
    assert out.split("\nstate:\n")[1].strip() == _state_text(before)
    assert main(["replay", "--json", str(path)]) == 1
    out_json = json.loads(capsys.readouterr().out)
    assert out_json["error"] == {"move": number, "seat": seat, "reason": reason}
    assert out_json["state"] == before.state_json()


def _state_text(result: Any) -> str:
    from tui.commands.replay import render_text

    return render_text(result).split("state:\n")[1].strip()


NOT_RECORDS = [
    ("unknown card in a run", zodiak_record([{"seat": 0, "play": "2S 1X"}]), "'1X' is not a card"),
    ("unknown suit declared", zodiak_record([{"seat": 0, "play": "8H/X"}]), "'X' is not a suit"),
    ("trick not in notation", hekata_record([{"seat": 0, "play": "5", "trick": "95x + 05"}]),
     "contains 'x'"),
    ("card not a digit", hekata_record([{"seat": 0, "play": "15"}]), "not a Hekata card"),
]


@pytest.mark.parametrize(("what", "data", "message"), NOT_RECORDS, ids=[n[0] for n in NOT_RECORDS])
def test_moves_not_in_notation_make_the_file_not_a_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str, data: dict[str, Any],
        message: str) -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves" and "Exit status": a move the notation
    cannot read (RULES 3) is not a record: RecordError naming the move, exit status 2."""
    with pytest.raises(RecordError, match="move 1: ") as info:
        Record.loads(json.dumps(data))
    assert message in str(info.value)
    path = tmp_path / "record.json"
    path.write_text(json.dumps(data))
    assert main(["replay", str(path)]) == 2
    assert "is not a valid record: move 1: " in capsys.readouterr().err


def test_replay_json_of_an_unreadable_file_is_still_one_object(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """docs/RECORDS.md, "`cardtui replay --json`": a file that cannot be read prints the error
    object too, and exits 2."""
    assert main(["replay", "--json", str(tmp_path / "missing.json")]) == 2
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["ok"] is False and out["state"] is None and out["error"]["move"] is None
    assert "cannot read" in captured.err


def invalid_exactly_when_the_notation_is(parse: Any, text: str, data: dict[str, Any]) -> None:
    """The record `data` (whose move 1 is `text`) is not a record exactly when `parse(text)`
    finds the notation wrong; otherwise it replays, legal or stopped as an illegal move 1."""
    try:
        parse(text)
        invalid = False
    except InvalidMove:
        invalid = True
    except IllegalMove:
        invalid = False
    if invalid:
        with pytest.raises(RecordError, match="move 1: "):
            Record.loads(json.dumps(data))
        return
    result = Record.loads(json.dumps(data)).replay()
    assert result.ok or (result.error is not None and result.error[:2] == (1, 0))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789_+ x", max_size=14))
def test_a_trick_is_invalid_only_when_its_notation_is(text: str) -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": a trick in a record makes the file
    not a record exactly when parse_trick finds its notation wrong (InvalidMove); any other
    trick replays, legal or as an illegal move."""
    data = hekata_record([{"seat": 0, "play": "5", "trick": text}])
    invalid_exactly_when_the_notation_is(parse_trick, text, data)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["2S", "8H", "8S", "AS", "9D", "1X"]), min_size=1, max_size=3),
       st.sampled_from(["", "/D", "/X", "/"]))
def test_a_run_is_invalid_only_when_its_notation_is(cards: list[str], suffix: str) -> None:
    """docs/RECORDS.md, "Invalid records and illegal moves": the same line for Zodiak runs."""
    text = " ".join(cards) + suffix
    invalid_exactly_when_the_notation_is(Run.parse, text,
                                         zodiak_record([{"seat": 0, "play": text}]))
