"""Snapshots of the main screens at 80x24 and 120x40 (update with --snapshot-update)."""

from __future__ import annotations

import pytest

from tests.tui.conftest import app_from_deal, fresh_app, settle
from tui.app import CardApp
from tui.matchsetup import MatchOptions

SIZES = [(80, 24), (120, 40)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_zodiak_with_a_hinted_run(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(fresh_app("zodiak", 3, seed=3), press=["h"], terminal_size=size,
                        run_before=settle)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_hekata_four_players(snap_compare, size: tuple[int, int]) -> None:
    assert snap_compare(fresh_app("hekata", 4, seed=8), terminal_size=size, run_before=settle)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_hekata_trick_builder(snap_compare, size: tuple[int, int]) -> None:
    app = app_from_deal("hekata", [{"name": "Me"}, {"name": "Ada", "bot": "greedy"}], 0, {
        "hands": [[9, 3, 4, 5, 6, 7], [2, 2, 3, 3, 4, 4]], "table": [3, 5, 9, 8],
        "stock": [5, 5, 6, 6, 7, 7, 8, 8]})
    assert snap_compare(app, press=["h"], terminal_size=size, run_before=settle)


def test_start_screen(snap_compare) -> None:
    app = CardApp(defaults=MatchOptions("zodiak", 3, "Me", "leo", seed=1, speed=0.0))
    assert snap_compare(app, terminal_size=(80, 24))


def test_wild_eight_suit_picker(snap_compare) -> None:
    app = app_from_deal("zodiak", [{"name": "Me", "sign": "leo"},
                                   {"name": "Ada", "sign": "pisces", "bot": "greedy"}], 1, {
        "hands": [["2S", "3S", "3C", "4C", "7H", "8H", "KD"],
                  ["AS", "9D", "JC", "QH", "5C", "6C", "10D"]],
        "pile": ["2H"], "stock": ["4D", "5H"]})
    assert snap_compare(app, press=["right", "right", "right", "enter"], run_before=settle)


def test_help(snap_compare) -> None:
    assert snap_compare(fresh_app("zodiak", 2, seed=1), press=["question_mark"],
                        run_before=settle)


def test_help_full_rules(snap_compare) -> None:
    assert snap_compare(fresh_app("zodiak", 2, seed=1), press=["question_mark", "r"],
                        run_before=settle)


def test_big_hekata_table_at_80x24(snap_compare) -> None:
    from tests.tui.test_issue13 import big_table_app

    assert snap_compare(big_table_app(), terminal_size=(80, 24), run_before=settle)


def test_ascii_only_zodiak(snap_compare) -> None:
    options = MatchOptions("zodiak", 3, "Me", "leo", ("greedy",), 3, 0.0)
    from tui.matchsetup import new_match

    app = CardApp(new_match(options), ascii_only=True, pace=0.0)
    assert snap_compare(app, terminal_size=(80, 24), run_before=settle)


def test_match_result_with_score_history(snap_compare) -> None:
    app = app_from_deal("zodiak", [{"name": "Me", "sign": "leo"},
                                   {"name": "Ada", "sign": "pisces", "bot": "greedy"}], 1, {
        "hands": [["7H"], ["AS", "9D", "JC", "QH", "5C", "6C", "10D"]],
        "pile": ["2H"], "stock": ["4D", "5H"]}, scores=[50, 0])
    assert snap_compare(app, press=["enter"], terminal_size=(80, 24), run_before=settle)
